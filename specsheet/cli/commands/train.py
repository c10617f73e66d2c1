"""``specsheet train``: training FLOPs, tokens, GPU-hours and cost, and memory per GPU."""

from typing import TYPE_CHECKING, Any

import typer

from specsheet.cli.model_source import NO_SOURCE, ModelSource, model_options
from specsheet.cli.options import (
    FORMAT_OPT,
    JSON_OPT,
    MODEL_ARG,
    emit,
    output_format,
    parse_tokens,
)

if TYPE_CHECKING:
    from specsheet.views.table import TableView

SETTINGS: dict[str, Any] = {
    "epilog": "FLOPs: matrix multiplications only, a multiply-add is 2 FLOPs; the backward of "
              "each is two of the same size, so training is 3 x the forward (model FLOPs, what "
              "MFU counts; state-space layers have their own backward); "
              "recomputation adds hardware FLOPs. Bytes in SI units "
              "(1 GB = 10^9 B). docs/training.md has every formula and its source."}

RUN = "Run"
PARALLEL = "Parallelism"
MEMORY = "Memory"
FINE_TUNE = "Fine-tuning"


@model_options
def train(
    model: str | None = MODEL_ARG,
    tokens_total: str | None = typer.Option(
        None, "--tokens-total", "-D", help="Tokens to train on: 300B, 15.6T, 2e12 [default: the "
        "Chinchilla-optimal 20 x parameters; with --lora-rank none: one step is reported].",
        show_default=False, rich_help_panel=RUN),
    epochs: float | None = typer.Option(
        None, "--epochs", help="Epochs over --dataset-tokens (tokens = epochs x dataset tokens).",
        show_default=False, rich_help_panel=RUN),
    dataset_tokens: str | None = typer.Option(
        None, "--dataset-tokens", help="Tokens in the dataset, with --epochs: 50M, 1.2B.",
        show_default=False, rich_help_panel=RUN),
    seq_len: int | None = typer.Option(
        None, "--tokens", "-t", "--seq-len", "-s", parser=parse_tokens, metavar="T",
        help="Tokens T in a training sequence, the sequence length s: 4096 or 4k "
        "(k = 1,024) [default: the model's context, at most 8k].",
        show_default=False, rich_help_panel=RUN),
    micro_batch: int = typer.Option(
        1, "--micro-batch", "-b", help="Sequences per GPU per step, b.", rich_help_panel=RUN),
    gpu: str | None = typer.Option(
        None, "--gpu", help="A built-in accelerator (h100-sxm, h200, ...) or a hardware YAML file "
        "[default: h100-sxm, or the GPU of the model's training recipe].", show_default=False,
        rich_help_panel=RUN),
    gpus: int | None = typer.Option(
        None, "--gpus", "-n", help="GPUs in the run, = dp x tp x pp [default: dp x tp x pp].",
        show_default=False, rich_help_panel=RUN),
    mfu: float = typer.Option(
        0.40, "--mfu", help="Model FLOPs utilization, above 0 and at most 1.",
        rich_help_panel=RUN),
    price: float | None = typer.Option(
        None, "--price", help="Dollars per GPU-hour, for the cost.", show_default=False,
        rich_help_panel=RUN),
    recompute: str | None = typer.Option(
        None, "--recompute", help="Activation recomputation: none, selective (the attention core) "
        "or full (every layer) [default: none; full with --lora-rank, as peft does].",
        show_default=False, rich_help_panel=RUN),
    recompute_modules: str | None = typer.Option(
        None, "--recompute-modules", help="With --recompute selective, what is rebuilt in the "
        "backward (Megatron Core's): core_attn, layernorm, mla_up_proj, moe_act, "
        "comma-separated [default: core_attn].", show_default=False,
        rich_help_panel=RUN),
    attention: str = typer.Option(
        "flash", "--attention", help="flash: a FlashAttention / SDPA kernel (no s x s activations; "
        "FLOPs counted in full, the MFU convention); full: every s x s score kept, as eager "
        "attention; causal: flash, counting only the causal half of the score FLOPs.",
        rich_help_panel=RUN),
    precision: str = typer.Option(
        "bf16-mixed", "--precision",
        help="bf16-mixed (bf16 weights, fp32 gradients and master weights), "
        "fp16-mixed (the ZeRO paper's 2 + 2 + 12 bytes), bf16 (pure) or fp32.",
        rich_help_panel=MEMORY),
    optimizer: str = typer.Option(
        "adamw", "--optimizer", help="adamw, adamw-8bit, sgd-momentum or adafactor.",
        rich_help_panel=MEMORY),
    zero: int | None = typer.Option(
        None, "--zero", help="ZeRO stage over the data-parallel ranks: 0 none, 1 optimizer states, "
        "2 + gradients, 3 + weights [default: 0; with no layout given and a full run one GPU "
        "cannot hold: 8 GPUs with 3].", show_default=False, rich_help_panel=PARALLEL),
    fsdp: bool = typer.Option(
        False, "--fsdp", help="Fully sharded data parallel: the same as --zero 3.",
        rich_help_panel=PARALLEL),
    dp: int | None = typer.Option(
        None, "--dp", help="Data-parallel ranks [default: gpus / (tp x pp)].", show_default=False,
        rich_help_panel=PARALLEL),
    tp: int = typer.Option(1, "--tp", help="Tensor-parallel ranks (divide the heads).",
                           rich_help_panel=PARALLEL),
    pp: int = typer.Option(1, "--pp", help="Pipeline stages (the layers split).",
                           rich_help_panel=PARALLEL),
    sp: bool = typer.Option(False, "--sp", help="Sequence parallelism (with --tp).",
                            rich_help_panel=PARALLEL),
    cp: int = typer.Option(
        1, "--cp", help="Context-parallel ranks: each sequence split cp ways (ring attention); "
        "gpus = dp x tp x pp x cp.", rich_help_panel=PARALLEL),
    ep: int = typer.Option(
        1, "--ep", help="Expert-parallel ranks: the routed experts sharded over ep of the "
        "dp x cp x tp ranks.", rich_help_panel=PARALLEL),
    schedule: str | None = typer.Option(
        None, "--schedule", help="Pipeline schedule: 1f1b, interleaved (with --vpp), zero-bubble "
        "(ZB-H1) or dualpipe (DeepSeek-V3's: two copies of the parameters, PP + 1 micro-batches "
        "of activations) [default: 1f1b, or the model's training recipe's].",
        show_default=False, rich_help_panel=PARALLEL),
    vpp: int = typer.Option(
        1, "--vpp", help="Virtual pipeline stages a GPU (--schedule interleaved).",
        rich_help_panel=PARALLEL),
    grad_accum: int | None = typer.Option(
        None, "--grad-accum", help="Micro-batches a step (gradient accumulation) [default: pp].",
        show_default=False, rich_help_panel=PARALLEL),
    shard_group: int | None = typer.Option(
        None, "--shard-group", help="HSDP: ZeRO shards within groups of N data-parallel ranks and "
        "replicates across them.", show_default=False, rich_help_panel=PARALLEL),
    optimizer_states: str | None = typer.Option(
        None, "--optimizer-states", help="The optimizer states' dtype: fp32 or bf16 (DeepSeek-V3's "
        "BF16 AdamW moments; master weights and gradients stay fp32) [default: the "
        "--precision recipe's].", show_default=False, rich_help_panel=MEMORY),
    activation_cache: str | None = typer.Option(
        None, "--activation-cache", help="How kept activations are stored: bf16, or fp8 (the "
        "Linear operators' inputs in FP8, as DeepSeek-V3 caches them) [default: bf16].",
        show_default=False, rich_help_panel=MEMORY),
    recipe: str | None = typer.Option(
        None, "--recipe", help="none: no training recipe; a preset's name: its recipe [default: "
        "the model's own, where its preset publishes one; each item yields to its option].",
        show_default=False, rich_help_panel=RUN),
    offload: str = typer.Option(
        "none", "--offload",
        help="none, or optimizer: its states and master weights in host memory "
        "(with --zero 1 or more).", rich_help_panel=MEMORY),
    step_time: float | None = typer.Option(
        None, "--step-time", help="A measured step, in seconds: the MFU it implies, and the run's "
        "time and cost at that rate.", show_default=False, rich_help_panel=RUN),
    tokens_per_second: float | None = typer.Option(
        None, "--tokens-per-second", help="A measured rate, for the whole run (or per GPU with "
        "--per-gpu): the MFU it implies.", show_default=False, rich_help_panel=RUN),
    per_gpu: bool = typer.Option(
        False, "--per-gpu", help="--tokens-per-second is per GPU.", rich_help_panel=RUN),
    lora_rank: int | None = typer.Option(
        None, "--lora-rank", help="Train LoRA adapters of rank r on a frozen base.",
        show_default=False, rich_help_panel=FINE_TUNE),
    lora_targets: str | None = typer.Option(
        None, "--lora-targets", help="Comma-separated: q, k, v, o, gate, up, down, experts "
        "[default: all of them; experts adapts every routed expert].", show_default=False,
        rich_help_panel=FINE_TUNE),
    qlora: bool = typer.Option(
        False, "--qlora", help="QLoRA: the frozen base in bnb-nf4 (or --quant bnb-nf4-dq).",
        rich_help_panel=FINE_TUNE),
    quant: str | None = typer.Option(
        None, "--quant", "-q",
        help="The frozen base's format with --lora-rank: a dtype (bf16) or a "
        "quantization format (bnb-nf4 ...) [default: bf16; bnb-nf4 with --qlora].",
        show_default=False, rich_help_panel=FINE_TUNE),
    fmt: str | None = FORMAT_OPT,
    json_: bool = JSON_OPT,
    src: ModelSource = NO_SOURCE,
) -> None:
    """What training a model costs: FLOPs (exact, and the 6N, PaLM and Megatron estimates),
    GPU-hours, days and dollars, and whether a step fits in each GPU's memory.

    Examples: 'specsheet train llama3.1-8b --tokens-total 15.6T --gpus 1024',
    'specsheet train gpt2-small --zero 2 --gpus 8 --micro-batch 16',
    'specsheet train llama3-8b --lora-rank 16 --qlora --seq-len 4096'.
    """
    output = output_format(fmt, json_)
    from specsheet.api.hardware import load_gpu
    from specsheet.api.train import TrainRequest, check_request, plan_train
    from specsheet.cli import streams
    from specsheet.cli.errors import as_options
    from specsheet.sources.resolve import resolve

    request = TrainRequest(
        tokens_total=tokens_total, epochs=epochs, dataset_tokens=dataset_tokens,
        seq_len=seq_len, micro_batch=micro_batch, gpu=gpu, gpus=gpus,
        mfu=mfu, price=price, recompute=recompute, attention=attention, precision=precision,
        optimizer=optimizer, zero=zero, fsdp=fsdp, dp=dp, tp=tp, pp=pp, sp=sp,
        lora_rank=lora_rank, lora_targets=lora_targets, qlora=qlora, quant=quant, cp=cp,
        ep=ep, vpp=vpp, schedule=schedule, shard_group=shard_group, offload=offload,
        grad_accum=grad_accum, step_time=step_time, tokens_per_second=tokens_per_second,
        per_gpu=per_gpu, recompute_modules=recompute_modules,
        optimizer_states=optimizer_states, activation_cache=activation_cache, recipe=recipe)
    notes: list[str] = []
    try:
        with as_options({"zero": "option --fsdp"} if fsdp else None):
            check_request(request)
            if gpu is not None:
                load_gpu(gpu)
            loaded = resolve(src.ref(model), src.overrides(), notes,
                             src.checked_timeout())
            training = plan_train(loaded, request)
    finally:
        for note in dict.fromkeys(notes):
            streams.say(f"specsheet: note: {note}")
    document = training.to_dict()

    def views() -> "list[TableView]":
        from specsheet.views.train import train_views

        return train_views(training.model, training.plan, training.suggestions)

    emit(output, document, [document], views, inputs={"--mfu": mfu, "--price": price})
