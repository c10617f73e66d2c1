"""``compare``: the models' documents side by side, and the table of a column per model."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from specsheet.figures import Report
from specsheet.views import SCHEMA_VERSION
from specsheet.views.count import count_document

if TYPE_CHECKING:
    from specsheet.plan.roofline import Estimates
    from specsheet.plan.serving import ServePlan
    from specsheet.views.table import RowStyle, TableView


def compare_document(reports: list[Report],
                     served: list[tuple[ServePlan, Estimates | None,
                                        dict[str, float | None]]] | None = None
                     ) -> dict[str, Any]:
    """The document of ``compare``: the models' documents in the order given; on a GPU,
    ``serve``: each model's serve entry in the same order."""
    document: dict[str, Any] = {"schema_version": SCHEMA_VERSION,
                                "models": [count_document(r) for r in reports]}
    if served is not None:
        from specsheet.views.serve import serve_entry

        document["serve"] = [serve_entry(*entry) for entry in served]
    return document



def schemas() -> dict[str, Any]:
    """The schema of ``compare_document``."""
    from specsheet.views.schema import VERSION, obj, optional, ref

    return {"compare": optional(obj({
        "schema_version": VERSION,
        "models": {"type": "array", "items": ref("count"), "minItems": 2},
        "serve": {"type": "array", "items": ref("serve_entry"),
                  "description": "on a GPU: each model served, in the same order"}}), "serve")}


def compare_view(reports: list[Report],
                 served: list[tuple[ServePlan, Estimates | None, dict[str, float | None]]]
                 | None, options: Mapping[str, str]) -> TableView:
    """A column per model, a row per figure; later models show their ratio to the first.
    ``options``: how the reader sets an input, by its name (``price``)."""
    from specsheet.units import (
        exact,
        human_bytes,
        human_count,
        human_flops,
        percent,
        ratio,
        signed_percent,
    )
    from specsheet.views.count import FLOP_LABELS
    from specsheet.views.table import TableView

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
    lengths = {r.flops.tokens for r in reports}
    if len(reports) > 1 and len(lengths) == 1:
        (length,) = lengths
        shortest = (", the shortest context among them"
                    if length == min(r.model.spec.context for r in reports) else "")
        view.caption += f" Every model at T = {length:,} tokens{shortest}."
    if served:
        _serve_rows(view, served, options["price"])
    return view


def _serve_rows(view: TableView,
                served: list[tuple[ServePlan, Estimates | None, dict[str, float | None]]],
                price: str) -> None:
    """The serve rows of ``compare`` on a GPU: memory per GPU and the fit (exact), then the
    estimates (``price``: the option that sets the price, for a cost without one)."""
    from specsheet.units import exact, human_bytes
    from specsheet.views.table import seconds_text, usd_text

    plan0 = served[0][0]
    layout = plan0.layout
    view.add(f"Served on {layout.gpus} x {plan0.hardware.name}",
             *(f"tp {p.layout.tp} · pp {p.layout.pp}" for p, _, _ in served))
    view.add("  weights per GPU", *(human_bytes(p.binding.weights_bytes) for p, _, _ in served),
             style="sub")
    view.add("  KV pool per GPU", *(human_bytes(p.binding.kv_pool_bytes) for p, _, _ in served),
             style="sub")
    view.add("  KV per request (at T tokens)",
             *(f"{human_bytes(p.binding.kv_bytes_per_request)} at "
               f"{p.request.max_model_len:,}" for p, _, _ in served), style="sub")
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

    estimate("time to first token", lambda e, c: seconds_text(e.prefill_s))
    estimate("tokens/s per request", lambda e, c: f"{e.tokens_per_s_per_request:,.1f}")
    estimate("tokens/s in total", lambda e, c: f"{e.tokens_per_s_total:,.0f}")
    if any(c.get("usd_per_million_output_tokens") is not None for _, _, c in served):
        estimate("$ per million output tokens",
                 lambda e, c: usd_text(c["usd_per_million_output_tokens"], price))
    if any(c.get("usd_per_million_output_words") is not None for _, _, c in served):
        estimate("$ per million output words",
                 lambda e, c: usd_text(c["usd_per_million_output_words"], price))


def _flop_part(name: str) -> Callable[[Report], int]:
    return lambda r: r.flops.parts()[name]

