"""The serving options shared by ``serve``, ``check``, ``compare`` and ``sweep``: the GPU, the
layout, the request shape, the efficiencies and the price (api/serve.py plans them)."""

from __future__ import annotations

import typer

from specsheet.api.defaults import DEFAULT_MBU, DEFAULT_MFU, DEFAULT_UTILIZATION
from specsheet.cli.options import parse_tokens

SERVE = "Serving (docs/serving.md)"
GPU_OPT: str | None = typer.Option(
    None, "--gpu",
    help="Accelerator: a built-in name (h100-sxm, h200, ...) or a hardware YAML file.",
    show_default=False, rich_help_panel=SERVE)
GPUS_OPT: int | None = typer.Option(
    None, "--gpus", help="GPUs in all [default: tp x pp, or 1].", show_default=False,
    rich_help_panel=SERVE)
TP_OPT: int | None = typer.Option(
    None, "--tp", help="Tensor-parallel size [default: gpus / pp].", show_default=False,
    rich_help_panel=SERVE)
PP_OPT: int | None = typer.Option(
    None, "--pp", help="Pipeline-parallel size [default: 1].", show_default=False,
    rich_help_panel=SERVE)
EP_OPT: bool = typer.Option(
    False, "--ep",
    help="Expert parallelism (vLLM's --enable-expert-parallel): whole experts spread "
    "over the tp GPUs instead of every expert split.", rich_help_panel=SERVE)
DP_OPT: int | None = typer.Option(
    None, "--dp", help="Data-parallel engines (vLLM's --data-parallel-size), each with its own KV "
    "pool; with --ep the experts spread over tp x dp GPUs [default: 1].", show_default=False,
    rich_help_panel=SERVE)
DCP_OPT: int | None = typer.Option(
    None, "--dcp", help="Decode context parallelism (vLLM's --decode-context-parallel-size): each "
    "request's KV split over dcp of the tp GPUs; MLA models [default: 1].", show_default=False,
    rich_help_panel=SERVE)
DRAFT_OPT: str | None = typer.Option(
    None, "--draft", help="Speculative decoding's draft model (vLLM's speculative_config model): a "
    "preset, config.json, folder or Hub repository; an EAGLE head for eagle and eagle3.",
    show_default=False, metavar="MODEL", rich_help_panel=SERVE)
SPECULATIVE_TOKENS_OPT: int | None = typer.Option(
    None, "--speculative-tokens", help="Tokens the draft proposes a step (num_speculative_tokens) "
    "[default with mtp: its MTP layers].", show_default=False, rich_help_panel=SERVE)
SPECULATIVE_METHOD_OPT: str | None = typer.Option(
    None, "--speculative-method", help="vLLM's speculative method: draft_model, eagle, eagle3, mtp "
    "(the checkpoint's own layers) or ngram (no draft) [default with --draft: draft_model, "
    "or eagle / eagle3 by the draft's name, as vLLM detects them].",
    show_default=False, rich_help_panel=SERVE)
MAX_LORAS_OPT: int | None = typer.Option(
    None, "--max-loras",
    help="LoRA adapters served at once (vLLM's --enable-lora --max-loras): the "
    "slots it preallocates on every GPU [default: no LoRA; 1 with --max-lora-rank].",
    show_default=False, rich_help_panel=SERVE)
MAX_LORA_RANK_OPT: int | None = typer.Option(
    None, "--max-lora-rank", help="The rank of those slots (vLLM's --max-lora-rank) [default: 16].",
    show_default=False, rich_help_panel=SERVE)
PREFIX_CACHING_OPT: bool = typer.Option(
    False, "--enable-prefix-caching",
    help="Prefix caching as vLLM's --enable-prefix-caching: on by "
    "default in vLLM but for hybrids, where it keeps more state pages a request (see "
    "--mamba-cache-mode); it changes no figure of a model without state layers.",
    rich_help_panel=SERVE)
MAMBA_CACHE_MODE_OPT: str | None = typer.Option(
    None, "--mamba-cache-mode", metavar="none|align|all", help="The state pages a hybrid's request "
    "keeps with prefix caching (vLLM's --mamba-cache-mode): align 2, all one per block "
    "[default: all for Mamba-2 hybrids, else align; none without prefix caching].",
    show_default=False, rich_help_panel=SERVE)
KV_OFFLOAD_OPT: str | None = typer.Option(
    None, "--kv-offload", metavar="BYTES", help="CPU memory for vLLM's native KV offload, over the "
    "engine's GPUs, e.g. 64GiB (vLLM's --kv-offloading-size, in GiB): the CPU blocks and "
    "tokens it holds; it adds no GPU block [default: off].", show_default=False,
    rich_help_panel=SERVE)
# the request length has one name on every command, --tokens; vLLM's name for it is an alias
MAX_MODEL_LEN_OPT: int | None = typer.Option(
    None, "--tokens", "-t", "--max-model-len", parser=parse_tokens, metavar="T",
    help="Tokens T a request may reach (vLLM's --max-model-len), for the KV cache, the FLOPs "
    "and the serving plan: 8192 or 8k (k = 1,024) [default: the model's context].",
    show_default=False)
PROMPT_OPT: int | None = typer.Option(
    None, "--prompt", parser=parse_tokens, metavar="T",
    help="Prompt tokens of a request, for the estimates [default: 1,024, fewer when "
    "max-model-len is shorter than prompt + output].", show_default=False,
    rich_help_panel=SERVE)
OUTPUT_OPT: int | None = typer.Option(
    None, "--output", parser=parse_tokens, metavar="T",
    help="Output tokens of a request, for the estimates [default: 256, at most a quarter of "
    "max-model-len].", show_default=False, rich_help_panel=SERVE)
ALLOW_LONG_CONTEXT_OPT: bool = typer.Option(
    False, "--allow-long-context", help="Allow a max-model-len over the model's context (vLLM's "
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1).", rich_help_panel=SERVE)
CONCURRENCY_OPT: int | None = typer.Option(
    None, "--concurrency", min=1, help="Requests decoded at once, for the estimates [default: as "
    "many of prompt + output tokens as the KV pool holds, at most max-num-seqs].",
    show_default=False, rich_help_panel=SERVE)
UTILIZATION_OPT: str = typer.Option(
    DEFAULT_UTILIZATION, "--memory-utilization", help="Share of the GPU memory vLLM may use "
    "(gpu_memory_utilization).", rich_help_panel=SERVE)
KV_MEMORY_OPT: str | None = typer.Option(
    None, "--kv-memory", help="The KV pool per GPU in bytes, e.g. 40GiB (vLLM's "
    "kv_cache_memory_bytes); the memory utilization is then not used.", show_default=False,
    rich_help_panel=SERVE)
BATCHED_TOKENS_OPT: int | None = typer.Option(
    None, "--max-num-batched-tokens", min=1,
    help="vLLM's max_num_batched_tokens [default: 8,192 on "
    "a GPU of 70 GiB or more but an A100, else 2,048, as 'vllm serve'].", show_default=False,
    rich_help_panel=SERVE)
MAX_SEQS_OPT: int | None = typer.Option(
    None, "--max-num-seqs", min=1, help="vLLM's max_num_seqs [default: 1,024 on a GPU of 70 GiB or "
    "more but an A100, else 256].", show_default=False, rich_help_panel=SERVE)
MOE_KERNEL_OPT: str | None = typer.Option(
    None, "--moe-kernel", help="vLLM's MXFP4 MoE kernel, whose padding the experts follow: marlin, "
    "triton, flashinfer [default: as vLLM picks for the GPU: triton on Hopper, flashinfer on "
    "Blackwell, marlin on the others].", show_default=False, rich_help_panel=SERVE)
VLLM_LOG_OPT: str | None = typer.Option(
    None, "--vllm-log", help="A vLLM start-up log (or an excerpt): its figures beside specsheet's, "
    "then the plan with its measured KV pool, activation peak and non-torch memory; tp, "
    "max-model-len and utilization from the log unless given.", show_default=False,
    rich_help_panel=SERVE)
BLOCK_SIZE_OPT: int | None = typer.Option(
    None, "--block-size",
    help="Tokens per KV block (vLLM's --block-size) [default: as the attention "
    "backend forces it: 64 for MLA on Hopper (FlashMLA), 64 or 128 on Blackwell, 16 else; a "
    "hybrid's is raised to hold its state].", show_default=False, rich_help_panel=SERVE)
PRICE_OPT: str | None = typer.Option(
    None, "--price", help="US dollars per GPU-hour, for the costs.", show_default=False,
    rich_help_panel=SERVE)
MFU_OPT: float = typer.Option(
    DEFAULT_MFU, "--mfu",
    help="Share of the peak FLOP/s reached (estimates).", rich_help_panel=SERVE)
MBU_OPT: float = typer.Option(
    DEFAULT_MBU, "--mbu",
    help="Share of the memory bandwidth reached (estimates).", rich_help_panel=SERVE)
TOKENS_PER_WORD_OPT: float | None = typer.Option(
    None, "--tokens-per-word", help="Tokens per word of your text, for the cost per word.",
    show_default=False, rich_help_panel=SERVE)

TEXT_OPT: str | None = typer.Option(
    None, "--text", help="A UTF-8 text file: measure tokens per word with the model's own "
    "tokenizer.json (needs pip install 'specsheet[tokenizers]').", show_default=False,
    rich_help_panel=SERVE)
TOKENIZER_OPT: str | None = typer.Option(
    None, "--tokenizer", help="The tokenizer.json for --text (or a folder holding one) [default: "
    "beside the model's config.json].", show_default=False, rich_help_panel=SERVE)

