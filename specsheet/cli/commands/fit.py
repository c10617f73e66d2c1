"""``specsheet fit``: will a GGUF run on this machine with llama.cpp, layer by layer, GPU and
host memory (docs/local.md)."""

from typing import TYPE_CHECKING, Any

import typer

from specsheet.cli.model_source import NO_SOURCE, ModelSource, model_options
from specsheet.cli.options import (
    FORMAT_OPT,
    HTML_OPT,
    JSON_OPT,
    OPTION_NAMES,
    SVG_OPT,
    emit,
    output_format,
    parse_tokens,
)
from specsheet.errors import SpecError, quoted

if TYPE_CHECKING:
    from specsheet.views.table import TableView

SETTINGS: dict[str, Any] = {
    "epilog": "Sizes are MiB (2^20 bytes) with two decimals, as llama.cpp prints its buffer "
              "lines; compute buffers are an estimate. Exit codes: 0 an answer (fits or not), "
              "2 bad input; 'specsheet check' is the one for CI."}
LLAMA = "llama.cpp's settings"
MACHINE = "The machine"


def _auto_int(text: str) -> int | str:
    if text.strip().lower() in ("auto", "all"):
        return text.strip().lower()
    try:
        value = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise SpecError(f"option --n-gpu-layers: expected a number, auto or all, got "
                        f"{quoted(text)}") from None
    return value


def _ctx(text: str) -> int | str:
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return parse_tokens(text)
    except typer.BadParameter as e:
        raise SpecError(f"option --ctx: {e.message}") from None


def _split(text: str) -> tuple[float, ...]:
    try:
        shares = tuple(float(part) for part in text.replace("/", ",").split(",") if part.strip())
    except ValueError:
        shares = ()
    if not shares:
        raise SpecError(f"option --tensor-split: expected shares such as 3,1, got {quoted(text)}")
    return shares


def _bytes(text: str, option: str = "--host-memory") -> int:
    from specsheet.units import parse_quantity

    return parse_quantity(text, "bytes", option)


@model_options
def fit(
    model: str | None = typer.Argument(
        None,
        help="A .gguf file (its own tensor types are used), or anything count takes: a preset "
             "name, a preset YAML file, a config.json or a model folder, ORG/NAME. Leave out "
             "to give the five numbers as options.",
        show_default=False),
    quant: str | None = typer.Option(
        None, "--quant", "-q", help="The GGUF mixture: gguf-q4_k_m, gguf-q8_0, ... [default: a "
        ".gguf's own types, else gguf-q4_k_m]; with --engine mlx: mlx-4bit (default), "
        "mlx-8bit, mlx-3bit, mlx-6bit, mlx-4bit-g32, mlx-8bit-g32, mlx-4bit-g128.",
        show_default=False),
    ctx: str | None = typer.Option(
        None, "--ctx", "-c", metavar="N|auto", help="Context tokens (8192, 32k), or auto: the "
        "longest that fits with every layer on the GPUs [default: the engine's default: "
        "llama.cpp the training context, Ollama 4k/32k/256k by VRAM].", rich_help_panel=LLAMA,
        show_default=False),
    parallel: int = typer.Option(
        1, "--parallel", "-np", help="Sequences (llama-server slots); each gets ctx / N cells.",
        rich_help_panel=LLAMA),
    cache_type_k: str = typer.Option(
        "f16", "--cache-type-k", "-ctk",
        help="K cache type: f16, bf16, f32, q8_0, q5_1, q5_0, q4_1, "
        "q4_0, iq4_nl.", rich_help_panel=LLAMA),
    cache_type_v: str = typer.Option(
        "f16", "--cache-type-v", "-ctv", help="V cache type (quantized needs flash attention).",
        rich_help_panel=LLAMA),
    flash_attn: str = typer.Option(
        "auto", "--flash-attn", "-fa", help="on, off or auto (taken as on).",
        rich_help_panel=LLAMA),
    gpu: str | None = typer.Option(
        None, "--gpu", help="GPUs from the catalog, NAME[,NAME...] (uneven cards allowed; an Apple "
        "GPU uses its Metal working set) [default: none, the host only].",
        rich_help_panel=MACHINE, show_default=False),
    tensor_split: str | None = typer.Option(
        None, "--tensor-split", "-ts", help="Shares of the layers per GPU, e.g. 3,1 [default: by "
        "each GPU's memory].", rich_help_panel=LLAMA, show_default=False),
    split_mode: str = typer.Option(
        "layer", "--split-mode", "-sm", help="layer, or none (the first GPU only).",
        rich_help_panel=LLAMA),
    host_memory: str | None = typer.Option(
        None, "--host-memory", metavar="BYTES", help="The host's RAM, e.g. 64GiB [default: not "
        "checked].", rich_help_panel=MACHINE, show_default=False),
    n_gpu_layers: str = typer.Option(
        "auto", "--n-gpu-layers", "-ngl", metavar="N|auto", help="Layers on the GPUs (blocks + the "
        "output layer), auto: the most that fit, or all.", rich_help_panel=LLAMA),
    n_cpu_moe: int = typer.Option(
        0, "--n-cpu-moe", "-ncmoe", help="Keep the experts of the first N layers on the host.",
        rich_help_panel=LLAMA),
    override_tensor: list[str] | None = typer.Option(
        None, "--override-tensor", "-ot", metavar="PATTERN=BUFFER", help="As llama.cpp's -ot: "
        "tensors whose name matches the regular expression go to BUFFER (CPU, CUDA0, ...); "
        "repeatable or comma-separated, the first match wins.", rich_help_panel=LLAMA,
        show_default=False),
    host_bandwidth: str | None = typer.Option(
        None, "--host-bandwidth", metavar="BYTES/S", help="The host memory's bandwidth, e.g. 90GB, "
        "for the decode estimate when layers stay on the host.", rich_help_panel=MACHINE,
        show_default=False),
    wired_limit: str | None = typer.Option(
        None, "--wired-limit", metavar="BYTES", help="An Apple GPU's working set as sysctl "
        "iogpu.wired_limit_mb sets it, e.g. 26000MiB [default: macOS's, 2/3 of the RAM up to "
        "32 GB, else 3/4].", rich_help_panel=MACHINE, show_default=False),
    ubatch_size: int = typer.Option(
        512, "--ubatch-size", "-ub", help="Micro-batch tokens (compute buffers, SWA cache).",
        rich_help_panel=LLAMA),
    mmproj_offload: bool = typer.Option(
        True, "--mmproj-offload/--no-mmproj-offload", help="A multimodal model's mmproj file (its "
        "vision tower and projector) on the first GPU, as llama.cpp does by default, or on "
        "the host.", rich_help_panel=LLAMA),
    output_rule: str = typer.Option(
        "output-first", "--output-rule",
        help="output-first (llama.cpp since PR #18148, Dec 2025) or "
        "blocks-first (b7437 and before): which layer -ngl offloads first.",
        rich_help_panel=LLAMA),
    kv_bits: int | None = typer.Option(
        None, "--kv-bits", help="With --engine mlx: mlx-lm's quantized KV cache, 2, 4 or 8 bits "
        "[default: the model's dtype].", rich_help_panel="MLX",
        show_default=False),
    kv_group_size: int = typer.Option(
        64, "--kv-group-size", help="With --kv-bits: values per scale and bias.",
        rich_help_panel="MLX"),
    engine: str = typer.Option(
        "llama.cpp", "--engine",
        help="llama.cpp, ollama (llama-server under Ollama's defaults) or mlx "
        "(mlx-lm on an Apple GPU)."),
    fmt: str | None = FORMAT_OPT,
    json_: bool = JSON_OPT,
    svg: str | None = SVG_OPT,
    html: str | None = HTML_OPT,
    src: ModelSource = NO_SOURCE,
) -> None:
    """Will a GGUF run here: where llama.cpp puts every layer, the KV cache and the compute
    buffers on each GPU and the host, the longest context, and the command line.

    Example: 'specsheet fit llama3-8b --gpu rtx-4090 --ctx 8192'.
    """
    from specsheet.api.fit import FitRequest
    from specsheet.api.fit import fit as run_fit
    from specsheet.cli.errors import as_options

    output_fmt = output_format(fmt, json_)
    request = FitRequest(
        gpu=tuple(g.strip() for g in gpu.split(",") if g.strip()) if gpu else (),
        quant=quant, ctx=None if ctx is None else _ctx(ctx), parallel=parallel,
        cache_type_k=cache_type_k, cache_type_v=cache_type_v, flash_attn=flash_attn,
        tensor_split=_split(tensor_split) if tensor_split else (), split_mode=split_mode,
        host_memory=None if host_memory is None else _bytes(host_memory),
        n_gpu_layers=_auto_int(n_gpu_layers), n_cpu_moe=n_cpu_moe, engine=engine,
        output_rule=output_rule, n_ubatch=ubatch_size,
        override_tensor=tuple(part.strip() for item in override_tensor or ()
                              for part in item.split(",") if part.strip()),
        host_bandwidth=None if host_bandwidth is None else
        _bytes(host_bandwidth, "--host-bandwidth"),
        wired_limit_mb=None if wired_limit is None else
        _bytes(wired_limit, "--wired-limit") >> 20, kv_bits=kv_bits,
        kv_group_size=kv_group_size, mmproj_offload=mmproj_offload)
    with as_options():
        placed = src.placed(model)
        result = run_fit(placed, request)
    document = result.to_dict()

    def views() -> "list[TableView]":
        from specsheet.api.fit_ways import fit_ways
        from specsheet.views.fit import fit_views

        # a "no" says what would make it "yes", each way placed again (the tables alone)
        with as_options():
            ways = fit_ways(placed, request, result)
        return fit_views(result, ways, OPTION_NAMES)

    emit(output_fmt, document, [document], views, svg=svg, html=html)
