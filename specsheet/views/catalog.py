"""The catalogs: ``presets`` and ``hardware`` (the list and one accelerator), their documents and
their tables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specsheet.views import SCHEMA_VERSION

if TYPE_CHECKING:
    from specsheet.hardware.catalog import Accelerator
    from specsheet.model.params import ParamBreakdown
    from specsheet.model.spec import Model
    from specsheet.views.table import TableView


# A preset as ``presets`` lists it: its model and parameters, all that the document and the
# tables show (no request, so no report's KV cache, FLOPs or weights)
Listed = tuple["Model", "ParamBreakdown"]


def preset_entry(listed: Listed) -> dict[str, Any]:
    """One preset in the document of ``presets``."""
    model, params = listed
    return {"name": model.name, "description": model.description,
            "reference": model.reference, "published_total": model.published_total,
            "total": params.total, "spec": model.spec.as_dict()}


def presets_document(presets: list[Listed]) -> dict[str, Any]:
    """The document of ``presets``: every built-in preset with its spec and total."""
    return {"schema_version": SCHEMA_VERSION, "presets": [preset_entry(p) for p in presets]}


def accelerator_entry(accelerator: Accelerator) -> dict[str, Any]:
    """One accelerator as every document shows it: each figure an exact integer in base units
    (bytes, bytes per second, dense FLOP per second by element type, widest first), its
    sources by field, and the notes."""
    from specsheet.hardware.catalog import PEAK_DTYPES

    peaks = accelerator.peak_flops_per_s
    return {
        "name": accelerator.name,
        "label": accelerator.label,
        "vendor": accelerator.vendor,
        "memory_bytes": accelerator.memory_bytes,
        "bandwidth_bytes_per_s": accelerator.bandwidth_bytes_per_s,
        "peak_flops_per_s": {dtype: peaks[dtype] for dtype in PEAK_DTYPES if dtype in peaks},
        "interconnect": accelerator.interconnect,
        "interconnect_bytes_per_s": accelerator.interconnect_bytes_per_s,
        "sources": dict(accelerator.sources),
        "notes": accelerator.notes,
    }


def hardware_document(accelerators: list[Accelerator]) -> dict[str, Any]:
    """The document of ``hardware``: every built-in accelerator."""
    return {"schema_version": SCHEMA_VERSION,
            "accelerators": [accelerator_entry(a) for a in accelerators]}


def accelerator_document(accelerator: Accelerator) -> dict[str, Any]:
    """The document of ``hardware NAME``: one accelerator, built-in or from a file."""
    return {"schema_version": SCHEMA_VERSION, "accelerator": accelerator_entry(accelerator)}



def schemas() -> dict[str, Any]:
    """The schemas of ``presets_document``, ``accelerator_entry`` (``accelerator``),
    ``hardware_document`` and ``accelerator_document`` (``hardware_one``)."""
    from specsheet.hardware.catalog import OPTIONAL, PEAK_DTYPES, REQUIRED
    from specsheet.views.schema import VERSION, obj, ref

    positive = {"type": "integer", "minimum": 1}
    return {
        "presets": obj({"schema_version": VERSION, "presets": {"type": "array", "items": obj({
            "name": {"type": "string"}, "description": {"type": "string"},
            "reference": {"type": "string"},
            "published_total": {"type": ["integer", "null"]},
            "total": {"type": "integer", "minimum": 1},
            "spec": ref("spec")})}}),
        "accelerator": obj({
            "name": {"type": "string"},
            "label": {"type": "string"},
            "vendor": {"type": "string"},
            "memory_bytes": {**positive, "description": REQUIRED["memory_bytes"]},
            "bandwidth_bytes_per_s": {**positive,
                                      "description": REQUIRED["bandwidth_bytes_per_s"]},
            "peak_flops_per_s": {
                "type": "object", "minProperties": 1, "additionalProperties": False,
                "properties": dict.fromkeys(PEAK_DTYPES, positive),
                "description": "dense peak FLOP/s by element type (never the 2:4-sparse "
                               "figure)"},
            "interconnect": {"type": "string"},
            "interconnect_bytes_per_s": {"type": "integer", "minimum": 0,
                                         "description": OPTIONAL["interconnect_bytes_per_s"]},
            "sources": {"type": "object", "additionalProperties": {"type": "string"},
                        "description": OPTIONAL["sources"]},
            "notes": {"type": "string"},
        }, "one accelerator (docs/hardware.md)"),
        "hardware": obj({"schema_version": VERSION, "accelerators": {
            "type": "array", "items": ref("accelerator")}}),
        "hardware_one": obj({"schema_version": VERSION, "accelerator": ref("accelerator")}),
    }


def presets_list(presets: list[Listed], longer: str) -> TableView:
    """The presets compactly, one line a model that fits 80 columns: name, total, context and
    family (the preset name's first part); ``presets_view`` is the full table, which the
    command ``longer`` (as the caller spells it) shows."""
    from specsheet.units import exact, human_count
    from specsheet.views.table import TableView

    view = TableView(
        title="Presets",
        headers=("Name", "Total", "Context", "Family"),
        numeric=(False, True, True, False),
        caption=f"Total: parameters, tied matrices once; context in tokens. '{longer}' shows "
                "every preset's shape and description.",
    )
    for model, params in presets:
        view.add(model.name, human_count(params.total), exact(model.spec.context),
                 model.name.split("-")[0])
    return view


def presets_view(presets: list[Listed]) -> TableView:
    from specsheet.units import exact
    from specsheet.views.table import TableView

    view = TableView(
        title="Presets",
        headers=("Name", "L", "d", "heads", "KV heads", "vocab", "context", "total", "Description"),
        numeric=(False, True, True, True, True, True, True, True, False),
    )
    for model, params in presets:
        s = model.spec
        view.add(model.name, str(s.layers), str(s.d_model), str(s.heads), str(s.kv_heads),
                 exact(s.vocab), exact(s.context), exact(params.total), model.description)
    return view


def _per_s(n: int, unit: str) -> str:
    from specsheet.units import human_si

    return human_si(n, f"{unit}/s") if n else "-"


def hardware_list(accelerators: list[Accelerator], longer: str) -> TableView:
    """The catalog compactly, one line an accelerator that fits 80 columns: name, memory,
    bandwidth and the dense bf16 peak; ``hardware_view`` is the full table, which the command
    ``longer`` (as the caller spells it) shows."""
    from specsheet.units import human_si
    from specsheet.views.table import TableView

    view = TableView(
        title="Hardware",
        headers=("Name", "Memory", "Bandwidth", "bf16"),
        numeric=(False, True, True, True),
        caption="Dense bf16 peak FLOP/s; memory as the device reports it where known. "
                f"'{longer}' adds fp8, fp4 and the interconnect; 'specsheet hardware NAME' "
                "shows every figure and its source.",
    )
    for a in accelerators:
        view.add(a.name, human_si(a.memory_bytes, "B"), _per_s(a.bandwidth_bytes_per_s, "B"),
                 _per_s(a.peak_flops_per_s.get("bf16", 0), "FLOP"))
    return view


def hardware_view(accelerators: list[Accelerator]) -> TableView:
    """The catalog: one row per accelerator, its headline figures readable."""
    from specsheet.units import human_si
    from specsheet.views.table import TableView

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
    from specsheet.units import exact, human_si
    from specsheet.views.table import TableView

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

