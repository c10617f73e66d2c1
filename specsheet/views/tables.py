"""Reports laid out as neutral tables of text, shared by the rich and Markdown renderers."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, NamedTuple

from specsheet.figures import Axis, Point, Report
from specsheet.units import (
    bits_per_weight,
    exact,
    human_bytes,
    human_count,
    human_flops,
    human_si,
    percent,
    ratio,
    signed_percent,
)
from specsheet.views.formulas import (
    attention_formula,
    layer_norm_formula,
    mlp_formula,
    norm_formula,
)

if TYPE_CHECKING:
    from specsheet.hardware.catalog import Accelerator
    from specsheet.model.spec import Model
    from specsheet.plan.budgets import CheckResult, ServeCheck
    from specsheet.plan.inspection import Inspection
    from specsheet.plan.roofline import Estimates
    from specsheet.plan.serving import ServePlan
    from specsheet.plan.training import TrainingPlan

RowStyle = Literal["", "sub", "total"]


class Row(NamedTuple):
    cells: tuple[str, ...]
    style: RowStyle = ""  # sub: a detail of the row above; total: a closing sum


class TableView:
    """A titled table of text cells, filled row by row; numeric columns are right-justified.
    ``optional`` columns repeat what another column says (a readable form beside the exact
    integer, a bar beside a share): a narrow terminal may leave them out.

    A plain class: creating a dataclass costs start-up time on every run.
    """

    def __init__(self, title: str, headers: tuple[str, ...], numeric: tuple[bool, ...],
                 caption: str = "", optional: tuple[bool, ...] | None = None) -> None:
        self.title = title
        self.headers = headers
        self.numeric = numeric
        self.caption = caption
        self.optional = optional or tuple(False for _ in headers)
        self.rows: list[Row] = []

    def add(self, *cells: str, style: RowStyle = "") -> None:
        self.rows.append(Row(tuple(cells), style))

    def without_optional(self) -> TableView:
        """A copy without the optional columns."""
        keep = [i for i, optional in enumerate(self.optional) if not optional]
        copy = TableView(self.title, tuple(self.headers[i] for i in keep),
                         tuple(self.numeric[i] for i in keep), self.caption)
        for row in self.rows:
            copy.add(*(row.cells[i] for i in keep), style=row.style)
        return copy


_BLOCKS = " ▏▎▍▌▋▊▉█"


def share_bar(part: int, whole: int, width: int = 16) -> str:
    """A bar of ``width`` characters filled in proportion to part / whole (eighths)."""
    eighths = round(8 * width * part / whole) if whole else 0
    full, rest = divmod(eighths, 8)
    return ("█" * full + (_BLOCKS[rest] if rest else "")).ljust(width)


def describe_layers(indices: tuple[int, ...], layers: int) -> str:
    """Layer indices in words: "all 32 layers", "21 of 42 layers (0, 2, 4, ..., 40)",
    "22 of 26 layers (all but 5, 11, 17, 23)"."""
    if len(indices) == layers:
        return f"all {layers} layers"

    def listed(values: list[int]) -> str:
        if len(values) <= 4:
            return ", ".join(map(str, values))
        return f"{', '.join(map(str, values[:3]))}, ..., {values[-1]}"

    others = sorted(set(range(layers)) - set(indices)) if layers <= 100_000 else []
    if others and len(others) < len(indices):
        return f"{len(indices)} of {layers} layers (all but {listed(others)})"
    return f"{len(indices)} of {layers} layers ({listed(list(indices))})"


def _layers(n: int) -> str:
    return f"{n} layer" if n == 1 else f"{n} layers"


# ---- count ------------------------------------------------------------------------------------

def breakdown_view(report: Report) -> TableView:
    """Part | Formula | Parameters | Share | bar, as in the worked GPT-2 small example."""
    spec, p = report.model.spec, report.params
    total = p.total
    view = TableView(
        title=f"{report.model.name}: where the {exact(total)} parameters live",
        headers=("Part", "Formula", "Parameters", "Share", ""),
        numeric=(False, False, True, True, False),
        optional=(False, False, False, False, True),
    )

    def line(part: str, formula: str, value: int, style: RowStyle = "") -> None:
        view.add(part, formula, exact(value), percent(value, total), share_bar(value, total),
                 style=style)

    def note(part: str, formula: str, value: int, text: str = "") -> None:
        view.add(part, formula, exact(value), "", text, style="sub")

    e = "e" if spec.embedding_dim != spec.d_model else "d"
    line("Embeddings", "token + position", p.embeddings)
    line("  token", f"V × {e}", p.token_embedding, "sub")
    if spec.positions == "learned":
        pos = "(n_max + 2) × d" if spec.position_offset == 2 else "n_max × d"
        if spec.position_offset not in (0, 2):
            pos = f"(n_max + {spec.position_offset}) × d"
    else:
        pos = f"{spec.positions}: no parameters"
    line("  position", pos, p.position_embedding, "sub")
    if p.embedding_projections:
        line("Embedding projections", "e × d in + d × e out", p.embedding_projections)
    weights = p.block.attention + p.block.mlp
    line(f"Attention, {_layers(spec.attention_layers)}", "L × per layer", p.attention)
    note("  per layer", attention_formula(spec), p.block.attention,
         f"{percent(p.block.attention, weights)} of attention + MLP")
    if p.ssm:
        kinds = ", ".join(f"{n} {kind}" for kind, n in spec.layers_by_kind.items()
                          if kind not in ("attention", "none"))
        line(f"State-space layers, {kinds}", "projections, convolution, A, D, dt", p.ssm)
    if not spec.experts:
        line(f"MLP, {_layers(spec.layers)}", "L × per layer", p.mlp)
        note("  per layer", mlp_formula(spec), p.block.mlp,
             f"{percent(p.block.mlp, weights)} of attention + MLP")
    else:
        moe = p.moe
        line(f"MLP and experts, {_layers(spec.layers)}", "dense + router + experts", p.mlp)
        shared = " + shared" if moe.shared_experts else ""
        note("  per MoE layer", f"router + {spec.experts} experts{shared}", p.block.mlp,
             f"{percent(p.block.mlp, weights)} of attention + MLP")
        if spec.dense_mlp_layers:
            line(f"  dense MLP, {_layers(spec.dense_mlp_layers)}", mlp_formula(spec), moe.dense,
                 "sub")
        router = "E × d + E (bias) per layer" if spec.router_bias else "E × d per layer"
        line(f"  router, {_layers(spec.moe_layers)}", router, moe.router, "sub")
        line(f"  routed experts ({spec.experts} × {spec.moe_layers})",
             f"{mlp_formula(spec, 'f_e')} each", moe.routed_experts, "sub")
        if moe.shared_experts:
            gate = " + d (gate)" if spec.shared_expert_gate else ""
            line("  shared experts", f"{mlp_formula(spec, 'f_s')}{gate} per layer",
                 moe.shared_experts, "sub")
    line("Norms", norm_formula(spec) + (" + the mixers' norms" if p.ssm else ""), p.norms)
    note("  per layer", layer_norm_formula(spec), p.block.norms)
    if spec.tied_embeddings:
        head = "tied to the token embedding"
    else:
        head = f"V × {e}"
    if spec.head_bias:
        head += " + V (bias)"
    line("Output head", head, p.output_head)
    block = "attention + MoE MLP + norms" if spec.experts else "attention + MLP + norms"
    note("One layer", block, p.block.total)
    line("Total", "sum of the parts", total, "total")
    if spec.experts:
        k = spec.experts_per_token
        note("Active per token", f"total - (E - {k}) experts per MoE layer", p.active,
             f"{percent(p.active, total)} of the total")
    return view


def summary_view(report: Report) -> TableView:
    """Totals, memory, KV cache and FLOPs: a readable figure and the exact integer."""
    p, kv, fl, model = report.params, report.kv, report.flops, report.model
    t = exact(kv.tokens)
    view = TableView(
        title=f"{model.name}: memory and compute at T = {t} tokens",
        headers=("Figure", "Value", "Exact"),
        numeric=(False, True, True),
        optional=(False, True, False),
    )
    view.add("Parameters", human_count(p.total), exact(p.total))
    view.add("  without embeddings", human_count(p.non_embedding), exact(p.non_embedding),
             style="sub")
    if model.spec.experts:
        view.add(f"  active per token ({model.spec.experts_per_token} of "
                 f"{model.spec.experts} experts)", human_count(p.active), exact(p.active),
                 style="sub")
    if model.counted != "whole model":
        view.add(f"  counted: {model.counted} ({model.description.rsplit(', ', 1)[-1]})", "",
                 "", style="sub")
    if model.published_total is not None:
        verdict = "matches" if model.published_total == p.total else "DIFFERS"
        view.add(f"  published total ({verdict})", human_count(model.published_total),
                 exact(model.published_total), style="sub")
    w = report.weights
    bound = ", a lower bound: no scales or zero points" if w.lower_bound else ""
    view.add(f"Weights ({w.format}{bound})", human_bytes(w.weights_bytes),
             f"{exact(w.weights_bytes)} B")
    if w.quantized:
        view.add(f"  {bits_per_weight(w.weights_bytes, p.total)} bits per weight", "", "",
                 style="sub")
        view.add("  scales, zero points and indices", human_bytes(w.overhead_bytes),
                 f"{exact(w.overhead_bytes)} B", style="sub")
        for kind, size in w.tensor_types.items():
            view.add(f"  in {kind} tensors", human_bytes(size), f"{exact(size)} B",
                     style="sub")
    quantized_kv = " (quantized, a scale per tensor)" if kv.dtype in ("fp8", "int8", "int4") \
        else ""
    spec = model.spec
    if kv.state_bytes:
        kinds = ", ".join(f"{n} {kind}" for kind, n in spec.layers_by_kind.items())
        view.add(f"Request memory (T = {t}: KV + state; {kinds})",
                 human_bytes(kv.bytes_per_request), f"{exact(kv.bytes_per_request)} B")
        view.add(f"  KV cache ({kv.dtype}, {spec.attention_layers} attention layers){quantized_kv}",
                 human_bytes(kv.kv_bytes), f"{exact(kv.kv_bytes)} B", style="sub")
        view.add("    per token", human_bytes(kv.bytes_per_token),
                 f"{exact(kv.bytes_per_token)} B", style="sub")
        view.add(f"  state, whatever T (convolutions {kv.dtype}, recurrent fp32)",
                 human_bytes(kv.state_bytes), f"{exact(kv.state_bytes)} B", style="sub")
    else:
        view.add(f"KV cache per request (T = {t}, {kv.dtype}){quantized_kv}",
                 human_bytes(kv.bytes_per_request), f"{exact(kv.bytes_per_request)} B")
        view.add("  per token", human_bytes(kv.bytes_per_token),
                 f"{exact(kv.bytes_per_token)} B", style="sub")
    if spec.sliding_layers:
        view.add(f"  {describe_layers(spec.sliding_layers, spec.layers)} hold at most "
                 f"{exact(spec.sliding_window)} positions (sliding window)", "", "", style="sub")
    if spec.latent_attention:
        view.add("  caches the MLA latent (kv_lora_rank + qk_rope_head_dim per layer)", "", "",
                 style="sub")
    view.add(f"Forward FLOPs per token (T = {t})", human_flops(fl.total), exact(fl.total))
    for name, label in FLOP_LABELS.items():
        value = fl.parts()[name]
        if value or name not in ("embedding_projections", "ssm"):
            view.add(f"  {label}", human_flops(value), exact(value), style="sub")
    view.add(f"  2N rule (estimate, {signed_percent(report.flops_2n_error)})",
             human_flops(report.flops_2n), exact(report.flops_2n), style="sub")
    view.caption = (
        "FLOPs: matrix multiplications only, a multiply-add is 2 FLOPs, each token attends to "
        "all T positions (no causal halving). Sizes in SI units (1 MB = 10^6 bytes)."
    )
    if fl.ssm:
        view.caption += (" State-space layers: their depthwise convolution counts as "
                         "FlopCounterMode counts it, and their scan as transformers' PyTorch "
                         "path runs it (docs/conventions.md).")
    return view


FLOP_LABELS = {
    "attention_projections": "attention projections",
    "attention_context": "attention over the context",
    "ssm": "state-space layers (projections, convolution, scan)",
    "mlp": "MLP",
    "logits": "logits (output head)",
    "embedding_projections": "embedding projections",
}


def count_views(report: Report) -> list[TableView]:
    return [breakdown_view(report), summary_view(report)]


# ---- compare ----------------------------------------------------------------------------------

def compare_view(reports: list[Report],
                 served: list[tuple[ServePlan, Estimates | None, dict[str, float | None]]]
                 | None = None) -> TableView:
    """A column per model, a row per figure; later models show their ratio to the first."""
    names = tuple(r.model.name for r in reports)
    view = TableView(
        title=f"{' vs '.join(names)} (ratios to {names[0]})" if len(names) > 1 else names[0],
        headers=("Figure", *names),
        numeric=(False, *(True for _ in names)),
    )
    base = reports[0]

    def figure(label: str, get: Callable[[Report], int],
               human: Callable[[int], str] = human_count, style: RowStyle = "") -> None:
        cells = []
        for r in reports:
            value = get(r)
            cell = human(value)
            if r is not base:
                cell += f" ({ratio(value, get(base))})"
            cells.append(cell)
        view.add(label, *cells, style=style)

    def share(label: str, get: Callable[[Report], int], whole: Callable[[Report], int],
              style: RowStyle = "sub") -> None:
        view.add(label, *(f"{human_count(get(r))} · {percent(get(r), whole(r))}" for r in reports),
                 style=style)

    figure("Parameters", lambda r: r.params.total)
    figure("  without embeddings", lambda r: r.params.non_embedding, style="sub")
    if any(r.model.spec.experts for r in reports):
        figure("  active per token", lambda r: r.params.active, style="sub")
    def total(r: Report) -> int:
        return r.params.total

    share("  token embedding", lambda r: r.params.token_embedding, total)
    share("  position embedding", lambda r: r.params.position_embedding, total)
    share("  attention", lambda r: r.params.attention, total)
    if any(r.params.ssm for r in reports):
        share("  state-space layers", lambda r: r.params.ssm, total)
    share("  MLP", lambda r: r.params.mlp, total)
    share("  norms", lambda r: r.params.norms, total)
    share("  output head", lambda r: r.params.output_head, total)
    if any(r.params.embedding_projections for r in reports):
        share("  embedding projections", lambda r: r.params.embedding_projections, total)
    share("  embeddings + output head", lambda r: r.params.embeddings + r.params.output_head,
          total)
    def block(r: Report) -> int:
        return r.params.block.attention + r.params.block.mlp

    figure("One layer", lambda r: r.params.block.total)
    share("  attention (of attention + MLP)", lambda r: r.params.block.attention, block)
    share("  MLP (of attention + MLP)", lambda r: r.params.block.mlp, block)
    view.add("Layers · d_model · heads (KV)",
             *(f"{r.model.spec.layers} · {r.model.spec.d_model} · {r.model.spec.heads} "
               f"({r.model.spec.kv_heads})" for r in reports))
    figure(f"Weights ({base.weights.format})", lambda r: r.weights_bytes, human_bytes)
    view.add("Tokens T (KV cache, FLOPs)", *(exact(r.kv.tokens) for r in reports))
    figure(f"KV cache per request ({base.kv.dtype})", lambda r: r.kv.bytes_per_request,
           human_bytes)
    figure("  per token", lambda r: r.kv.bytes_per_token, human_bytes, style="sub")
    if any(r.kv.state_bytes for r in reports):
        figure("  of which state (fixed)", lambda r: r.kv.state_bytes, human_bytes, style="sub")
    figure("Forward FLOPs per token", lambda r: r.flops.total, human_flops)
    for name, label in FLOP_LABELS.items():
        if name not in ("embedding_projections", "ssm") or any(
                r.flops.parts()[name] for r in reports):
            figure(f"  {label}", _flop_part(name), human_flops, style="sub")
    view.add("  2N rule (estimate)",
             *(f"{human_flops(r.flops_2n)} ({signed_percent(r.flops_2n_error)})"
               for r in reports), style="sub")
    view.caption = ("Ratios in parentheses are to the first model; shares are of each model's "
                    "total." if len(reports) > 1 else "Shares are of the model's total.")
    if served:
        _serve_rows(view, served)
    return view


def _serve_rows(view: TableView,
                served: list[tuple[ServePlan, Estimates | None, dict[str, float | None]]]) -> None:
    """The serve rows of ``compare --gpu``: memory per GPU and the fit (exact), then the
    estimates."""
    plan0 = served[0][0]
    layout = plan0.layout
    view.add(f"Served on {layout.gpus} x {plan0.hardware.name}",
             *(f"tp {p.layout.tp} · pp {p.layout.pp}" for p, _, _ in served))
    view.add("  weights per GPU", *(human_bytes(p.binding.weights_bytes) for p, _, _ in served),
             style="sub")
    view.add("  KV pool per GPU", *(human_bytes(p.binding.kv_pool_bytes) for p, _, _ in served),
             style="sub")
    view.add("  KV per request (max-model-len)",
             *(f"{human_bytes(p.binding.kv_bytes_per_request)} at "
               f"{human_count(p.request.max_model_len)}" for p, _, _ in served), style="sub")
    if any(p.binding.state_bytes_per_request for p, _, _ in served):
        view.add("    of which state",
                 *(human_bytes(p.binding.state_bytes_per_request) for p, _, _ in served),
                 style="sub")
    view.add("  fits", *("yes" if p.fits else "NO" for p, _, _ in served), style="sub")
    view.add("  max concurrency", *(exact(p.max_concurrency) for p, _, _ in served),
             style="sub")
    view.add("  longest request alone", *(exact(p.max_context) for p, _, _ in served),
             style="sub")

    def estimate(label: str, text: Callable[[Estimates, dict[str, float | None]], str]) -> None:
        view.add(f"  {label} (estimate)",
                 *("-" if e is None else text(e, c) for _, e, c in served), style="sub")

    estimate("time to first token", lambda e, c: _seconds(e.prefill_s))
    estimate("tokens/s per request", lambda e, c: f"{e.tokens_per_s_per_request:,.1f}")
    estimate("tokens/s in total", lambda e, c: f"{e.tokens_per_s_total:,.0f}")
    if any(c.get("usd_per_million_output_tokens") is not None for _, _, c in served):
        estimate("$ per million output tokens",
                 lambda e, c: _usd(c["usd_per_million_output_tokens"]))
    if any(c.get("usd_per_million_output_words") is not None for _, _, c in served):
        estimate("$ per million output words",
                 lambda e, c: _usd(c["usd_per_million_output_words"]))


def _flop_part(name: str) -> Callable[[Report], int]:
    return lambda r: r.flops.parts()[name]


# ---- check ------------------------------------------------------------------------------------

def check_view(report: Report, results: list[CheckResult]) -> TableView:
    """Each checked figure with its limit, the margin left and the verdict."""
    failed = sum(not r.ok for r in results)
    verdict = "all within budget" if not failed else f"{failed} over budget"
    view = TableView(
        title=f"{report.model.name} at T = {exact(report.kv.tokens)}: {verdict}",
        headers=("Figure", "Value", "Limit", "Margin", "Verdict", "Exact value", "Exact limit"),
        numeric=(False, True, True, True, False, True, True),
        optional=(False, True, True, True, False, False, False),
    )
    for r in results:
        human = human_bytes if r.budget.kind == "bytes" else human_count
        if r.budget.name == "flops.forward_per_token":
            human = human_flops
        label = r.budget.label
        if r.budget.name == "memory.weights_bytes":
            label += f" ({report.weights.format})"
        elif r.budget.name == "kv_cache.bytes_per_request":
            label += f" ({report.kv.dtype})"
        margin = f"{'+' if r.margin >= 0 else '-'}{human(abs(r.margin))}"
        margin += f" ({percent(r.margin, r.limit)})" if r.limit else ""
        view.add(label, human(r.value), human(r.limit), margin, "ok" if r.ok else "OVER",
                 exact(r.value), exact(r.limit))
    view.caption = "A figure equal to its limit is within budget. Margin = limit - value."
    return view


# ---- presets ----------------------------------------------------------------------------------

def presets_view(reports: list[Report]) -> TableView:
    view = TableView(
        title="Presets",
        headers=("Name", "L", "d", "heads", "KV heads", "vocab", "context", "total", "Description"),
        numeric=(False, True, True, True, True, True, True, True, False),
    )
    for r in reports:
        s = r.model.spec
        view.add(r.model.name, str(s.layers), str(s.d_model), str(s.heads), str(s.kv_heads),
                 exact(s.vocab), exact(s.context), exact(r.params.total),
                 r.model.description)
    return view


# ---- hardware ---------------------------------------------------------------------------------

def _per_s(n: int, unit: str) -> str:
    return human_si(n, f"{unit}/s") if n else "-"


def hardware_view(accelerators: list[Accelerator]) -> TableView:
    """The catalog: one row per accelerator, its headline figures readable."""
    view = TableView(
        title="Hardware",
        headers=("Name", "Label", "Memory", "Bandwidth", "bf16", "fp8", "fp4", "Interconnect"),
        numeric=(False, False, True, True, True, True, True, True),
        caption="Dense peak FLOP/s (never the 2:4-sparse figure); memory as the device reports "
                "it where known; interconnect per GPU, one way. 'specsheet hardware NAME' shows "
                "every figure and its source.",
        optional=(False, True, False, False, False, False, False, False),
    )
    for a in accelerators:
        peaks = a.peak_flops_per_s
        view.add(a.name, a.label, human_si(a.memory_bytes, "B"),
                 _per_s(a.bandwidth_bytes_per_s, "B"),
                 *(_per_s(peaks.get(dtype, 0), "FLOP") for dtype in ("bf16", "fp8", "fp4")),
                 _per_s(a.interconnect_bytes_per_s, "B"))
    return view


def accelerator_view(accelerator: Accelerator) -> TableView:
    """One accelerator: every figure exact and readable, with its source."""
    from specsheet.hardware.catalog import PEAK_DTYPES

    a = accelerator
    view = TableView(
        title=f"{a.name}: {a.label}" if a.label != a.name else a.name,
        headers=("Figure", "Value", "Readable", "Source"),
        numeric=(False, True, True, False),
        caption=a.notes,
        optional=(False, False, True, False),
    )
    sources = a.sources
    view.add("memory", exact(a.memory_bytes), human_si(a.memory_bytes, "B"),
             sources.get("memory_bytes", ""))
    view.add("bandwidth", exact(a.bandwidth_bytes_per_s), _per_s(a.bandwidth_bytes_per_s, "B"),
             sources.get("bandwidth_bytes_per_s", ""))
    peak_source = sources.get("peak_flops_per_s", "")
    for dtype in PEAK_DTYPES:
        if dtype in a.peak_flops_per_s:
            value = a.peak_flops_per_s[dtype]
            view.add(f"{dtype} dense peak", exact(value), _per_s(value, "FLOP"),
                     sources.get(f"peak_flops_per_s.{dtype}", peak_source))
    link = f"interconnect: {a.interconnect}" if a.interconnect else "interconnect"
    view.add(link, exact(a.interconnect_bytes_per_s), _per_s(a.interconnect_bytes_per_s, "B"),
             sources.get("interconnect_bytes_per_s", ""))
    return view


# ---- inspect ----------------------------------------------------------------------------------

COMPONENT_LABELS = {
    "token_embedding": "Token embedding", "position_embedding": "Position embedding",
    "embedding_projections": "Embedding projections", "attention": "Attention",
    "ssm": "State-space layers", "mlp": "MLP", "norms": "Norms", "output_head": "Output head",
    "other": "Other (not in count)",
}


def inspect_views(inspection: Inspection) -> list[TableView]:
    """The tensors by component, the file's bytes and format, and the check's differences."""
    check = inspection.check
    total = sum(inspection.params.values())
    name = inspection.files[0] if len(inspection.files) == 1 else \
        f"{inspection.files[0]} and {len(inspection.files) - 1} more files"
    headers: tuple[str, ...] = ("Component", "Tensors", "Element types", "Parameters", "Bytes")
    numeric: tuple[bool, ...] = (False, True, False, True, True)
    if check is not None:
        headers += ("From the config", "Match")
        numeric += (True, False)
    view = TableView(title=f"{name}: {exact(len(inspection.named))} tensors, "
                           f"{exact(total)} parameters", headers=headers, numeric=numeric)
    for component, label in COMPONENT_LABELS.items():
        tensors = [n for n in inspection.named if n.component == component]
        params = inspection.params[component]
        if not tensors and (check is None or not check.components[component][1]):
            continue
        types: dict[str, int] = {}
        for n in tensors:
            types[n.tensor.dtype] = types.get(n.tensor.dtype, 0) + 1
        cells = [label, exact(len(tensors)),
                 ", ".join(f"{t} × {c}" for t, c in types.items()),
                 exact(params), exact(inspection.bytes_by_component[component])]
        if check is not None:
            file, computed = check.components[component]
            cells += [exact(computed), "ok" if file == computed else "DIFFERS"]
        view.add(*cells)
    cells = ["Total", exact(len(inspection.named)), "", exact(total),
             exact(inspection.data_bytes)]
    if check is not None:
        computed_total = sum(c for _, c in check.components.values())
        cells += [exact(computed_total), "ok" if check.matches else "DIFFERS"]
    view.add(*cells, style="total")
    view.caption = ("Parameters as the unquantized model has them (a GPTQ qweight of [K/8, N] "
                    "int32 is K × N); scales, zero points and indices count as bytes only.")
    return [view, _inspect_summary(inspection), *_differences_view(inspection)]


def _inspect_summary(inspection: Inspection) -> TableView:
    view = TableView(title="The file", headers=("Figure", "Value", "Exact"),
                     numeric=(False, True, True), optional=(False, True, False))
    view.add(f"Format ({len(inspection.files)} file{'s' if len(inspection.files) > 1 else ''})",
             inspection.format, "")
    view.add("Data bytes", human_bytes(inspection.data_bytes), f"{exact(inspection.data_bytes)} B")
    for dtype, nbytes in inspection.bytes_by_dtype.items():
        view.add(f"  {dtype}", human_bytes(nbytes), f"{exact(nbytes)} B", style="sub")
    layouts = ", ".join(f"{name} ({exact(n)} modules)" for name, n in inspection.layouts.items())
    view.add("Quantization (--quant)", inspection.quant or "none", layouts)
    if inspection.predicted_bytes is not None:
        verdict = "matches" if inspection.predicted_bytes == inspection.known_bytes \
            else "DIFFERS"
        view.add(f"  specsheet's bytes ({verdict})", human_bytes(inspection.predicted_bytes),
                 f"{exact(inspection.predicted_bytes)} B", style="sub")
    check = inspection.check
    if check is not None:
        view.add("Config", check.config, "")
        view.add("Check", "matches" if check.matches else
                 f"{len(check.differences)} difference{'s' if len(check.differences) > 1 else ''}",
                 "")
    elif inspection.note:
        view.add("Config", "none", inspection.note)
    return view


def _differences_view(inspection: Inspection) -> list[TableView]:
    check = inspection.check
    if check is None or not check.differences:
        return []
    view = TableView(title="Differences from the config",
                     headers=("Component", "Layer", "File", "Config", "Tensors"),
                     numeric=(False, True, True, True, False))
    for d in check.differences:
        shown = d.tensors[:5] + ([f"and {len(d.tensors) - 5} more"] if len(d.tensors) > 5 else [])
        view.add(COMPONENT_LABELS[d.component], "" if d.layer is None else str(d.layer),
                 exact(d.file), exact(d.computed), "; ".join(shown))
    return [view]


def train_views(model: Model, plan: TrainingPlan) -> list[TableView]:
    """``train``: FLOPs and time, then memory per GPU."""
    return [_train_compute_view(model, plan), _train_memory_view(model, plan)]


def _train_compute_view(model: Model, plan: TrainingPlan) -> TableView:
    from specsheet.plan.training import estimate_errors

    fl, tokens, layout = plan.flops, plan.tokens_total, plan.layout
    errors = estimate_errors(plan)
    view = TableView(
        title=f"{model.name}: training on {human_count(tokens)} tokens of sequence length "
              f"{exact(fl.tokens)}",
        headers=("Figure", "Value", "Exact"), numeric=(False, True, True),
        optional=(False, True, False))
    view.add("Training FLOPs per token (model: forward + backward)", human_flops(fl.model),
             exact(fl.model))
    kinds = model.spec.layers_by_kind
    attention = f" ({fl.attention} attention)" if {"attention", "hybrid"} & kinds.keys() else ""
    view.add(f"  forward{attention}", human_flops(fl.forward), exact(fl.forward), style="sub")
    if fl.ssm_backward:
        extra = ", and gated DeltaNet's own terms" if "linear_attention" in kinds else ""
        view.add(f"  backward (2 x forward{extra})",
                 human_flops(fl.backward), exact(fl.backward), style="sub")
        view.add("    of which state-space and DeltaNet layers", human_flops(fl.ssm_backward),
                 exact(fl.ssm_backward), style="sub")
    else:
        view.add("  backward (2 x forward)", human_flops(fl.backward), exact(fl.backward),
                 style="sub")
    if fl.recomputed:
        view.add(f"  recomputed ({fl.recompute}; hardware only)", human_flops(fl.recomputed),
                 exact(fl.recomputed), style="sub")
        view.add("  hardware FLOPs per token", human_flops(fl.hardware), exact(fl.hardware),
                 style="sub")
    default = " (20 x N, Chinchilla)" if plan.tokens_default else ""
    view.add(f"Tokens{default}", human_count(tokens), exact(tokens))
    view.add("Training FLOPs, total (model)", human_flops(plan.total_model_flops),
             exact(plan.total_model_flops))
    if fl.recomputed:
        view.add("  hardware, with recomputation", human_flops(plan.total_hardware_flops),
                 exact(plan.total_hardware_flops), style="sub")
    megatron = "Megatron, full recompute; of hardware FLOPs" if fl.recompute == "full" \
        else "Megatron"
    for name, label, per_token in (("approx_6n", "6N, Kaplan", plan.approx_6n),
                                   ("approx_palm", "6N + 12 L H Q T, PaLM", plan.approx_palm),
                                   ("approx_megatron", megatron, plan.approx_megatron)):
        error = signed_percent(errors[name])
        view.add(f"  {label} (estimate, {error})", human_flops(per_token * tokens),
                 exact(per_token * tokens), style="sub")
    acc = plan.accelerator
    hours = plan.time.gpu_hours
    view.add(f"GPU-hours on {acc.name} at {plan.mfu:.0%} MFU", human_count(round(hours)),
             f"{hours:,.0f}")
    view.add(f"  peak ({plan.recipe.compute_dtype}, dense)",
             human_si(plan.peak_flops_per_s, "FLOP/s"), exact(plan.peak_flops_per_s),
             style="sub")
    plural = "s" if layout.gpus != 1 else ""
    view.add(f"  days on {exact(layout.gpus)} GPU{plural}", "", f"{plan.time.days:,.1f}",
             style="sub")
    if plan.time.usd is not None:
        view.add(f"  cost at ${plan.time.price:,.2f} per GPU-hour", "",
                 f"${plan.time.usd:,.0f}", style="sub")
    view.caption = ("FLOPs: matrix multiplications only, a multiply-add is 2 FLOPs; MFU counts "
                    "model FLOPs, never recomputation. " + "; ".join(plan.assumptions) + ".")
    return view


def _train_memory_view(model: Model, plan: TrainingPlan) -> TableView:
    layout, states, act = plan.layout, plan.states, plan.activations
    parts = [f"dp {layout.dp}", f"tp {layout.tp}", f"pp {layout.pp}"]
    if layout.sp:
        parts.append("sp")
    if layout.zero:
        parts.append(f"ZeRO-{layout.zero}")
    view = TableView(
        title=f"{model.name}: memory per GPU ({', '.join(parts)}; {plan.recipe.precision}, "
              f"{plan.optimizer})",
        headers=("Figure", "Value", "Exact"), numeric=(False, True, True),
        optional=(False, True, False))
    if plan.lora_rank:
        view.add(f"LoRA rank {plan.lora_rank} ({', '.join(plan.lora_targets)}): trainable "
                 "parameters", human_count(states.trainable_params),
                 exact(states.trainable_params))
        view.add(f"Frozen base ({plan.base_format})", human_bytes(states.frozen_bytes),
                 f"{exact(states.frozen_bytes)} B")
        view.add("Adapter weights", human_bytes(states.weights_bytes - states.frozen_bytes),
                 f"{exact(states.weights_bytes - states.frozen_bytes)} B")
    else:
        view.add("Weights", human_bytes(states.weights_bytes), f"{exact(states.weights_bytes)} B")
    view.add("Gradients", human_bytes(states.gradients_bytes),
             f"{exact(states.gradients_bytes)} B")
    view.add("Optimizer states (with master weights)", human_bytes(states.optimizer_bytes),
             f"{exact(states.optimizer_bytes)} B")
    view.add(f"Activations (micro-batch {exact(act.micro_batch)}, {act.form})",
             human_bytes(act.total), f"{exact(act.total)} B")
    view.add("  per layer, one sequence", human_bytes(act.per_layer),
             f"{exact(act.per_layer)} B", style="sub")
    view.add("Total", human_bytes(plan.total_bytes), f"{exact(plan.total_bytes)} B",
             style="total")
    verdict = "fits" if plan.fits else "DOES NOT FIT"
    view.add(f"  {plan.accelerator.label} holds ({verdict})", human_bytes(plan.capacity_bytes),
             f"{exact(plan.capacity_bytes)} B", style="sub")
    view.add("  largest micro-batch that fits", exact(plan.max_micro_batch), "", style="sub")
    view.caption = "Sizes in SI units (1 GB = 10^9 bytes)."
    return view


# ---- serve ------------------------------------------------------------------------------------

def stacked_bar(start: int, end: int, whole: int, width: int = 24) -> str:
    """The part from ``start`` to ``end`` of ``whole`` as a segment of a ``width``-character bar
    (the parts before it shaded light), so that the rows of a table stack into one bar, also
    where a renderer trims the spaces of a cell (Markdown)."""
    first = round(width * start / whole) if whole else 0
    last = round(width * end / whole) if whole else 0
    if end > start:  # a part too small for a character still shows one
        first = min(first, width - 1)
        last = max(last, first + 1)
    return ("░" * first + "█" * max(0, last - first)).ljust(width)


def _seconds(value: float) -> str:
    if value >= 1:
        return f"{value:,.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} µs"


def _usd(value: float | None) -> str:
    if value is None:
        return "- (give --price)"
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def _blocks(count: int) -> str:
    return f"{exact(count)} block{'' if count == 1 else 's'}"


def serve_views(plan: ServePlan, est: Estimates | None,
                costs: dict[str, float | None]) -> list[TableView]:
    """Memory per GPU as a stacked bar against the capacity, then the fit, then the estimates."""
    s, layout, hw = plan.binding, plan.layout, plan.hardware
    name = plan.report.model.name
    where = f"{layout.gpus} x {hw.name}" + (f", tp {layout.tp}" if layout.tp > 1 else "") + (
        f", pp {layout.pp}" if layout.pp > 1 else "") + (
        f", ep {layout.ep}" if layout.ep > 1 else "")
    stage = f" (stage {s.stage} of {layout.pp}: {_layers(s.layers)})" if layout.pp > 1 else ""
    memory = TableView(
        title=f"{name} ({plan.report.weights.format}) on {where}: memory per GPU{stage}",
        headers=("Part", "Bytes", "Of capacity", "", "Exact"),
        numeric=(False, True, True, False, True),
        optional=(False, False, True, True, False),
    )
    cap = s.capacity_bytes
    parts = [("Weights", s.weights_bytes), ("Activation peak (estimate)", s.activation_bytes),
             ("Runtime overhead (estimate)", s.overhead_bytes),
             (f"KV pool ({plan.report.kv.dtype})" + (" (given)" if plan.kv_memory_given else ""),
              s.kv_pool_bytes)]
    at = 0
    for label, value in parts:
        memory.add(label, human_bytes(value), percent(value, cap),
                   stacked_bar(min(at, cap), min(at + value, cap), cap), exact(value))
        at += value
    if not plan.kv_memory_given:
        memory.add(f"Budget: {float(plan.utilization):g} x capacity",
                   human_bytes(s.budget_bytes), percent(s.budget_bytes, cap),
                   stacked_bar(0, min(s.budget_bytes, cap), cap), exact(s.budget_bytes),
                   style="sub")
    memory.add(f"Capacity ({hw.label})", human_bytes(cap), "100%", stacked_bar(0, cap, cap),
               exact(cap), style="total")
    memory.caption = ("Each bar is one part's place in the GPU's memory, stacked left to right. "
                      "The activation peak and the overhead are estimates (docs/serving.md).")

    fit = TableView(title=f"Fit at max-model-len {exact(plan.request.max_model_len)}: "
                          f"{'fits' if plan.fits else 'DOES NOT FIT'}",
                    headers=("Figure", "Value"), numeric=(False, True))
    fit.add("KV cache per token (one GPU)", f"{exact(s.kv_bytes_per_token)} B")
    state_blocks = s.state_blocks_per_request
    attention = s.blocks_per_request > state_blocks
    if state_blocks:
        if attention:
            fit.add(f"KV cache per request (blocks of {exact(s.block_size)})",
                    f"{human_bytes(s.kv_bytes_per_request - s.state_bytes_per_request)} "
                    f"({_blocks(s.blocks_per_request - state_blocks)})")
        fit.add("State per request (padded pages)" if attention else
                "State per request (a page a layer)",
                f"{human_bytes(s.state_bytes_per_request)} ({_blocks(state_blocks)})")
        if attention:
            fit.add("KV + state per request",
                    f"{human_bytes(s.kv_bytes_per_request)} ({_blocks(s.blocks_per_request)})")
    else:
        fit.add(f"KV cache per request (blocks of {exact(s.block_size)})",
                f"{human_bytes(s.kv_bytes_per_request)} ({exact(s.blocks_per_request)} blocks)")
    fit.add("KV blocks in the pool", exact(s.num_blocks))
    fit.add("Maximum concurrency (requests)",
            f"{exact(plan.max_concurrency)} (vLLM logs {plan.vllm_max_concurrency:.2f}x)")
    context = plan.report.model.spec.context
    fit.add("Longest request alone (tokens)", exact(plan.max_context) + (
        " (the model's context)" if plan.max_context == context else ""))
    fit.caption = ("As vLLM sizes its pool: blocks = pool // (block bytes x layers per group), "
                   "concurrency = blocks / blocks per request (docs/serving.md).")
    if state_blocks and attention:
        fit.caption += (f" A state page ({exact(s.state_page_bytes)} B per layer, in "
                        f"{plan.report.dtype or 'bf16'}) is padded to the attention block of "
                        f"{exact(s.block_size)} tokens ({exact(s.page_bytes)} B), as vLLM pads "
                        "it.")
    views = [memory, fit]
    if est is None:
        return views
    shape = (f"{exact(plan.request.prompt)} in, {exact(plan.request.output)} out, "
             f"{exact(est.concurrency)} at once")
    times = TableView(title=f"Estimates (roofline, mfu {est.mfu:g}, mbu {est.mbu:g}): {shape}",
                      headers=("Estimate", "Value"), numeric=(False, True))
    times.add("Time to first token (prefill)", _seconds(est.prefill_s))
    if est.prefill_allreduce_s:
        times.add("  of which all-reduce", _seconds(est.prefill_allreduce_s), style="sub")
    times.add("Decode step", _seconds(est.decode_step_s))
    times.add("Tokens/s per request", f"{est.tokens_per_s_per_request:,.1f}")
    times.add("Tokens/s in total", f"{est.tokens_per_s_total:,.0f}")
    times.add("  with the prefills counted",
              f"{est.tokens_per_s_end_to_end(plan.request.output):,.0f}", style="sub")
    if plan.report.model.spec.experts:
        times.add("Routed experts read per step", f"{est.experts_touched:.1%}")
    times.add("Cost per request", _usd(costs["usd_per_request"]))
    times.add("Cost per million output tokens", _usd(costs["usd_per_million_output_tokens"]))
    times.add("Cost per million input tokens", _usd(costs["usd_per_million_input_tokens"]))
    if est.tokens_per_word is not None:
        measured = (f", measured: {exact(est.text_tokens)} tokens / {exact(est.text_words)} "
                    "words" if est.text_tokens is not None and est.text_words else "")
        times.add(f"Cost per million output words ({est.tokens_per_word:.3g} tokens a word"
                  f"{measured})", _usd(costs["usd_per_million_output_words"]))
    times.caption = ("Estimates: a roofline is an upper bound on speed (and so a lower bound "
                     "on cost); docs/serving.md states every formula.")
    views.append(times)
    return views


def serve_check_view(plan: ServePlan, est: Estimates | None, costs: dict[str, float | None],
                     results: list[ServeCheck]) -> TableView:
    """The serving limits of ``check --gpu``: each figure, its limit and the verdict."""
    failed = sum(not r.ok for r in results)
    layout = plan.layout
    view = TableView(
        title=f"{plan.report.model.name} on {layout.gpus} x {plan.hardware.name} "
              f"(tp {layout.tp}, pp {layout.pp}): "
              f"{'all limits hold' if not failed else f'{failed} over budget'}",
        headers=("Figure", "Value", "Limit", "Verdict"),
        numeric=(False, True, True, False))

    def cell(value: float | int | bool | None) -> str:
        if value is None:
            return "- (does not fit)"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, int):
            return exact(value)
        return f"{value:,.4g}"

    for r in results:
        limit = cell(r.limit)
        if r.bound == "min":
            limit = f">= {limit}"
        elif r.bound == "max":
            limit = f"<= {limit}"
        view.add(r.label, cell(r.value), limit, "ok" if r.ok else "OVER")
    view.caption = (f"At max-model-len {exact(plan.request.max_model_len)}; time and speed "
                    "are roofline estimates (docs/serving.md).")
    return view


# ---- sweep ------------------------------------------------------------------------------------

def sweep_view(axes: list[Axis], points: list[Point], gpu: Accelerator | None,
               served: list[tuple[ServePlan, Estimates | None, dict[str, float | None]]]
               | None = None) -> TableView:
    """A row per point: its place on each axis, then the figures that change from point to
    point, and always the memory the chart draws (weights, KV cache, their sum and the KV
    cache's share of it; with a GPU, the sum's share of its memory). With ``served`` (a plan
    per point), the memory of one GPU, the requests its pool holds and whether the batch fits."""
    if served is not None:
        return _sweep_served_view(axes, points, served)
    from specsheet.views.charts import axis_label, axis_noun, value_text

    first = points[0]

    def changes(get: Callable[[Point], object]) -> bool:
        return any(get(p) != get(first) for p in points)

    columns: list[tuple[str, Callable[[Point], str], bool]] = []  # header, cell, optional
    def place(name: str) -> Callable[[Point], str]:
        return lambda p: value_text(p.at[name])

    for axis in axes:
        columns.append((axis_label(axis), place(axis.name), False))
    if "tokens" not in first.at and changes(lambda p: p.report.kv.tokens):
        columns.append(("Tokens T", lambda p: exact(p.report.kv.tokens), False))
    if changes(lambda p: p.report.params.total):
        columns.append(("Parameters", lambda p: human_count(p.report.params.total), False))
    columns += [
        ("Weights", lambda p: human_bytes(p.report.weights_bytes), False),
        ("KV cache", lambda p: human_bytes(p.kv_bytes), False),
        ("Weights + KV", lambda p: human_bytes(p.memory_bytes), False),
        ("KV share", lambda p: percent(p.kv_bytes, p.memory_bytes), False),
    ]
    if gpu is not None:
        columns.append((f"Of {gpu.name}", lambda p: percent(p.memory_bytes, gpu.memory_bytes),
                        False))
    if changes(lambda p: p.report.flops.total):
        columns.append(("FLOPs/token", lambda p: human_flops(p.report.flops.total), False))
    columns.append(("Weights + KV (B)", lambda p: exact(p.memory_bytes), True))
    names = " and ".join(axis_noun(a) for a in axes)
    view = TableView(
        title=f"{first.report.model.name}: {exact(len(points))} points over {names}",
        headers=tuple(c[0] for c in columns),
        numeric=tuple(i >= len(axes) or all(isinstance(v, int) for v in axes[i].values)
                      for i in range(len(columns))),
        optional=tuple(c[2] for c in columns),
    )
    for point in points:
        view.add(*(cell(point) for _, cell, _ in columns))
    batch = "each point's batch" if "batch" in first.at else f"batch {first.batch}"
    view.caption = (f"KV cache: {batch} × one request of T tokens ({first.report.kv.dtype}). "
                    "Sizes in SI units (1 GB = 10^9 bytes); --json has every figure of count "
                    "at each point.")
    return view


def _sweep_served_view(axes: list[Axis], points: list[Point],
                       served: list[tuple[ServePlan, Estimates | None,
                                          dict[str, float | None]]]) -> TableView:
    """sweep_view on GPUs: per GPU of the stage that admits the fewest requests, the weights,
    the KV cache of one request and of the batch (whole blocks), the chart's stack against
    the budget, the requests of T tokens the pool holds, and whether the batch fits."""
    from specsheet.views.charts import axis_label, axis_noun, value_text

    first, plan0 = points[0], served[0][0]
    rows = list(zip(points, (plan for plan, _, _ in served), strict=True))

    def changes(get: Callable[[Point], object]) -> bool:
        return any(get(p) != get(first) for p in points)

    def place(name: str) -> Callable[[Point, ServePlan], str]:
        return lambda p, plan: value_text(p.at[name])

    def kv(p: Point, plan: ServePlan) -> int:
        return p.batch * plan.binding.kv_bytes_per_request

    def stack(p: Point, plan: ServePlan) -> int:
        s = plan.binding
        return s.weights_bytes + s.activation_bytes + s.overhead_bytes + kv(p, plan)

    batched = any(p.batch != 1 for p in points)
    columns: list[tuple[str, Callable[[Point, ServePlan], str], bool]] = [
        (axis_label(axis), place(axis.name), False) for axis in axes]
    if "tokens" not in first.at and changes(lambda p: p.report.kv.tokens):
        columns.append(("Tokens T", lambda p, plan: exact(p.report.kv.tokens), False))
    if changes(lambda p: p.report.params.total):
        columns.append(("Parameters", lambda p, plan: human_count(p.report.params.total),
                        False))
    columns += [
        ("Weights/GPU", lambda p, plan: human_bytes(plan.binding.weights_bytes), False),
        ("KV/request", lambda p, plan: human_bytes(plan.binding.kv_bytes_per_request), False),
    ]
    hybrid = any(plan.binding.state_bytes_per_request for _, plan in rows)
    if hybrid:
        columns.append(("State/request", lambda p, plan: human_bytes(
            plan.binding.state_bytes_per_request), True))
    if batched:
        columns.append(("KV of batch", lambda p, plan: human_bytes(kv(p, plan)), False))
    columns += [
        ("Of budget", lambda p, plan: percent(stack(p, plan), plan.binding.budget_bytes), False),
        ("Max requests", lambda p, plan: exact(plan.max_concurrency), False),
        ("Batch fits" if batched else "Fits",
         lambda p, plan: "yes" if plan.fits and p.batch <= plan.max_concurrency else "no",
         False),
        ("Weights + KV/GPU (B)",
         lambda p, plan: exact(plan.binding.weights_bytes + kv(p, plan)), True),
    ]
    names = " and ".join(axis_noun(a) for a in axes)
    layout, hw = plan0.layout, plan0.hardware
    where = f"{layout.gpus} x {hw.name}" + (f", tp {layout.tp}" if layout.tp > 1 else "") + (
        f", pp {layout.pp}" if layout.pp > 1 else "") + (
        f", ep {layout.ep}" if layout.ep > 1 else "")
    view = TableView(
        title=f"{first.report.model.name}: {exact(len(points))} points over {names}, on {where}",
        headers=tuple(c[0] for c in columns),
        numeric=tuple(i >= len(axes) or all(isinstance(v, int) for v in axes[i].values)
                      for i in range(len(columns))),
        optional=tuple(c[2] for c in columns),
    )
    for point, plan in rows:
        view.add(*(cell(point, plan) for _, cell, _ in columns))
    batch = "each point's batch" if "batch" in first.at else f"batch {first.batch}"
    stage = " of the pipeline stage that holds the fewest requests" if layout.pp > 1 else ""
    budget = (f"the memory ({human_bytes(plan0.binding.budget_bytes)}), with a KV pool given"
              if plan0.kv_memory_given else
              f"{float(plan0.utilization):g} x memory = {human_bytes(plan0.binding.budget_bytes)}")
    sizes = sorted({plan.binding.block_size for _, plan in rows})
    blocks = exact(sizes[0]) if len(sizes) == 1 else f"{exact(sizes[0])} to {exact(sizes[-1])}"
    state = (f", with each request's state (one page per state layer, in "
             f"{first.report.dtype or 'bf16'}, padded to a block as vLLM pads it; KV/request "
             "includes it)" if hybrid else "")
    view.caption = (
        f"Per GPU{stage}; KV cache in blocks of {blocks} tokens ({first.report.kv.dtype})"
        f"{state}, {batch} "
        f"× one request of T tokens. Of budget: weights, the batch's KV cache, the activation "
        f"peak and overhead (estimates) against {budget}. Max requests: requests of T tokens "
        "the KV pool holds (vLLM's maximum concurrency). Sizes in SI units (1 GB = 10^9 "
        "bytes); --json has serve's document at each point (--max-model-len T, --concurrency "
        "the batch).")
    return view
