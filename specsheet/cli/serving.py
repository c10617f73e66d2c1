"""The serving options shared by ``serve``, ``check``, ``compare`` and ``sweep``: the GPU, the
layout, the request shape, the efficiencies and the price (api/serve.py plans them)."""

from __future__ import annotations

from typing import Annotated

import typer

from specsheet.cli.options import parse_tokens

SERVE = "Serving (docs/serving.md)"
GpuOpt = Annotated[str | None, typer.Option(
    "--gpu", help="Accelerator: a built-in name (h100-sxm, h200, ...) or a hardware YAML file.",
    show_default=False, rich_help_panel=SERVE)]
GpusOpt = Annotated[int | None, typer.Option(
    "--gpus", help="GPUs in all [default: tp x pp, or 1].", show_default=False,
    rich_help_panel=SERVE)]
TpOpt = Annotated[int | None, typer.Option(
    "--tp", help="Tensor-parallel size [default: gpus / pp].", show_default=False,
    rich_help_panel=SERVE)]
PpOpt = Annotated[int | None, typer.Option(
    "--pp", help="Pipeline-parallel size [default: 1].", show_default=False,
    rich_help_panel=SERVE)]
EpOpt = Annotated[bool, typer.Option(
    "--ep", help="Expert parallelism (vLLM's --enable-expert-parallel): whole experts spread "
    "over the tp GPUs instead of every expert split.", rich_help_panel=SERVE)]
DpOpt = Annotated[int | None, typer.Option(
    "--dp", help="Data-parallel engines (vLLM's --data-parallel-size), each with its own KV "
    "pool; with --ep the experts spread over tp x dp GPUs [default: 1].", show_default=False,
    rich_help_panel=SERVE)]
DcpOpt = Annotated[int | None, typer.Option(
    "--dcp", help="Decode context parallelism (vLLM's --decode-context-parallel-size): each "
    "request's KV split over dcp of the tp GPUs; MLA models [default: 1].", show_default=False,
    rich_help_panel=SERVE)]
DraftOpt = Annotated[str | None, typer.Option(
    "--draft", help="Speculative decoding's draft model (vLLM's speculative_config model): a "
    "preset, config.json, folder or Hub repository; an EAGLE head for eagle and eagle3.",
    show_default=False, metavar="MODEL", rich_help_panel=SERVE)]
SpeculativeTokensOpt = Annotated[int | None, typer.Option(
    "--speculative-tokens", help="Tokens the draft proposes a step (num_speculative_tokens) "
    "[default with mtp: its MTP layers].", show_default=False, rich_help_panel=SERVE)]
SpeculativeMethodOpt = Annotated[str | None, typer.Option(
    "--speculative-method", help="vLLM's speculative method: draft_model, eagle, eagle3, mtp "
    "(the checkpoint's own layers) or ngram (no draft) [default with --draft: draft_model, "
    "or eagle / eagle3 by the draft's name, as vLLM detects them].",
    show_default=False, rich_help_panel=SERVE)]
MaxLorasOpt = Annotated[int | None, typer.Option(
    "--max-loras", help="LoRA adapters served at once (vLLM's --enable-lora --max-loras): the "
    "slots it preallocates on every GPU [default: no LoRA; 1 with --max-lora-rank].",
    show_default=False, rich_help_panel=SERVE)]
MaxLoraRankOpt = Annotated[int | None, typer.Option(
    "--max-lora-rank", help="The rank of those slots (vLLM's --max-lora-rank) [default: 16].",
    show_default=False, rich_help_panel=SERVE)]
PrefixCachingOpt = Annotated[bool, typer.Option(
    "--enable-prefix-caching", help="Prefix caching as vLLM's --enable-prefix-caching: on by "
    "default in vLLM but for hybrids, where it keeps more state pages a request (see "
    "--mamba-cache-mode); it changes no figure of a model without state layers.",
    rich_help_panel=SERVE)]
MambaCacheModeOpt = Annotated[str | None, typer.Option(
    "--mamba-cache-mode", metavar="none|align|all", help="The state pages a hybrid's request "
    "keeps with prefix caching (vLLM's --mamba-cache-mode): align 2, all one per block "
    "[default: all for Mamba-2 hybrids, else align; none without prefix caching].",
    show_default=False, rich_help_panel=SERVE)]
KvOffloadOpt = Annotated[str | None, typer.Option(
    "--kv-offload", metavar="BYTES", help="CPU memory for vLLM's native KV offload, over the "
    "engine's GPUs, e.g. 64GiB (vLLM's --kv-offloading-size, in GiB): the CPU blocks and "
    "tokens it holds; it adds no GPU block [default: off].", show_default=False,
    rich_help_panel=SERVE)]
# the request length has one name on every command, --tokens; vLLM's name for it is an alias
MaxModelLenOpt = Annotated[int | None, typer.Option(
    "--tokens", "-t", "--max-model-len", parser=parse_tokens, metavar="T",
    help="Tokens T a request may reach (vLLM's --max-model-len), for the KV cache, the FLOPs "
    "and the serving plan: 8192 or 8k (k = 1,024) [default: the model's context].",
    show_default=False)]
PromptOpt = Annotated[int | None, typer.Option(
    "--prompt", parser=parse_tokens, metavar="T",
    help="Prompt tokens of a request, for the estimates [default: 1,024, fewer when "
    "max-model-len is shorter than prompt + output].", show_default=False,
    rich_help_panel=SERVE)]
OutputOpt = Annotated[int | None, typer.Option(
    "--output", parser=parse_tokens, metavar="T",
    help="Output tokens of a request, for the estimates [default: 256, at most a quarter of "
    "max-model-len].", show_default=False, rich_help_panel=SERVE)]
AllowLongContextOpt = Annotated[bool, typer.Option(
    "--allow-long-context", help="Allow a max-model-len over the model's context (vLLM's "
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1).", rich_help_panel=SERVE)]
ConcurrencyOpt = Annotated[int | None, typer.Option(
    "--concurrency", min=1, help="Requests decoded at once, for the estimates [default: as "
    "many of prompt + output tokens as the KV pool holds, at most max-num-seqs].",
    show_default=False, rich_help_panel=SERVE)]
UtilizationOpt = Annotated[str, typer.Option(
    "--memory-utilization", help="Share of the GPU memory vLLM may use "
    "(gpu_memory_utilization).", rich_help_panel=SERVE)]
KvMemoryOpt = Annotated[str | None, typer.Option(
    "--kv-memory", help="The KV pool per GPU in bytes, e.g. 40GiB (vLLM's "
    "kv_cache_memory_bytes); the memory utilization is then not used.", show_default=False,
    rich_help_panel=SERVE)]
BatchedTokensOpt = Annotated[int | None, typer.Option(
    "--max-num-batched-tokens", min=1, help="vLLM's max_num_batched_tokens [default: 8,192 on "
    "a GPU of 70 GiB or more but an A100, else 2,048, as 'vllm serve'].", show_default=False,
    rich_help_panel=SERVE)]
MaxSeqsOpt = Annotated[int | None, typer.Option(
    "--max-num-seqs", min=1, help="vLLM's max_num_seqs [default: 1,024 on a GPU of 70 GiB or "
    "more but an A100, else 256].", show_default=False, rich_help_panel=SERVE)]
MoeKernelOpt = Annotated[str | None, typer.Option(
    "--moe-kernel", help="vLLM's MXFP4 MoE kernel, whose padding the experts follow: marlin, "
    "triton, flashinfer [default: as vLLM picks for the GPU: triton on Hopper, flashinfer on "
    "Blackwell, marlin on the others].", show_default=False, rich_help_panel=SERVE)]
VllmLogOpt = Annotated[str | None, typer.Option(
    "--vllm-log", help="A vLLM start-up log (or an excerpt): its figures beside specsheet's, "
    "then the plan with its measured KV pool, activation peak and non-torch memory; tp, "
    "max-model-len and utilization from the log unless given.", show_default=False,
    rich_help_panel=SERVE)]
BlockSizeOpt = Annotated[int | None, typer.Option(
    "--block-size", help="Tokens per KV block (vLLM's --block-size) [default: as the attention "
    "backend forces it: 64 for MLA on Hopper (FlashMLA), 64 or 128 on Blackwell, 16 else; a "
    "hybrid's is raised to hold its state].", show_default=False, rich_help_panel=SERVE)]
PriceOpt = Annotated[str | None, typer.Option(
    "--price", help="US dollars per GPU-hour, for the costs.", show_default=False,
    rich_help_panel=SERVE)]
MfuOpt = Annotated[float, typer.Option(
    "--mfu", help="Share of the peak FLOP/s reached (estimates).", rich_help_panel=SERVE)]
MbuOpt = Annotated[float, typer.Option(
    "--mbu", help="Share of the memory bandwidth reached (estimates).", rich_help_panel=SERVE)]
TokensPerWordOpt = Annotated[float | None, typer.Option(
    "--tokens-per-word", help="Tokens per word of your text, for the cost per word.",
    show_default=False, rich_help_panel=SERVE)]

TextOpt = Annotated[str | None, typer.Option(
    "--text", help="A UTF-8 text file: measure tokens per word with the model's own "
    "tokenizer.json (needs pip install 'specsheet[tokenizers]').", show_default=False,
    rich_help_panel=SERVE)]
TokenizerOpt = Annotated[str | None, typer.Option(
    "--tokenizer", help="The tokenizer.json for --text (or a folder holding one) [default: "
    "beside the model's config.json].", show_default=False, rich_help_panel=SERVE)]

