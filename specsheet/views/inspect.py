"""``inspect``: a checkpoint's tensors by component and the check against its config: its document
and its tables."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from specsheet.views import SCHEMA_VERSION

if TYPE_CHECKING:
    from specsheet.plan.inspection import Inspection
    from specsheet.views.table import TableView


def inspect_document(inspection: Inspection) -> dict[str, Any]:
    """The document of ``inspect``: a checkpoint's tensors by component, their bytes, the
    quantization format they match, and the check against the config found beside them."""
    check = inspection.check
    checked: dict[str, Any] | None = None
    if check is not None:
        checked = {
            "config": check.config,
            "matches": check.matches,
            "components": {name: {"file": file, "computed": computed,
                                  "match": file == computed}
                           for name, (file, computed) in check.components.items()},
            "differences": [{"component": d.component, "layer": d.layer, "file": d.file,
                             "computed": d.computed, "tensors": d.tensors}
                            for d in check.differences],
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "format": inspection.format,
        "files": inspection.files,
        "tensors": len(inspection.tensors),
        "params": {"total": sum(inspection.params.values()),
                   "components": inspection.params},
        "bytes": {
            "data": inspection.data_bytes,
            "by_dtype": inspection.bytes_by_dtype,
            "by_component": inspection.bytes_by_component,
            "predicted": inspection.predicted_bytes,
            "predicted_matches": None if inspection.predicted_bytes is None
            else inspection.predicted_bytes == inspection.known_bytes,
        },
        "quant": inspection.quant,
        "quant_layouts": inspection.layouts,
        "group_size": inspection.group_size,
        "other_tensors": inspection.tensors.names_in("other"),
        "check": checked,
        "note": inspection.note,
    }



COMPONENT_LABELS = {
    "token_embedding": "Token embedding", "position_embedding": "Position embedding",
    "embedding_projections": "Embedding projections", "attention": "Attention",
    "ssm": "State-space layers", "mlp": "MLP", "norms": "Norms", "output_head": "Output head",
    "vision": "Vision tower", "projector": "Projector", "other": "Other (not in count)",
}


def schemas() -> dict[str, Any]:
    """The schema of ``inspect_document``."""
    from specsheet.model.params import COMPONENTS
    from specsheet.model.vision import TOWER_COMPONENTS
    from specsheet.views.schema import VERSION, ints, obj, optional

    # vision and projector: present when the config has a vision tower
    inspect_components = (*COMPONENTS, *TOWER_COMPONENTS, "other")
    int_or_null = {"type": ["integer", "null"]}
    return {"inspect": obj({
        "schema_version": VERSION,
        "format": {"enum": ["safetensors", "gguf"]},
        "files": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "tensors": {"type": "integer", "minimum": 0, "description": "tensors in the files"},
        "params": obj({"total": {"type": "integer", "minimum": 0},
                       "components": optional(ints(*inspect_components),
                                              *TOWER_COMPONENTS)},
                      "Parameters of the unquantized model the tensors store, by component "
                      "(other: what count does not include)."),
        "bytes": obj({
            "data": {"type": "integer", "minimum": 0},
            "by_dtype": {"type": "object", "additionalProperties": {"type": "integer"}},
            "by_component": optional(ints(*inspect_components), *TOWER_COMPONENTS),
            "predicted": {**int_or_null, "description": "specsheet's bytes of the tensors "
                          "count knows, in the matched format (null without a config)"},
            "predicted_matches": {"type": ["boolean", "null"]},
        }, "The tensors' data in bytes."),
        "quant": {"type": ["string", "null"], "description": "the quantization format matched"},
        "quant_layouts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "group_size": int_or_null,
        "other_tensors": {"type": "array", "items": {"type": "string"}},
        "check": {"oneOf": [{"type": "null"}, obj({
            "config": {"type": "string"},
            "matches": {"type": "boolean"},
            "components": optional(obj({name: obj({"file": {"type": "integer"},
                                                   "computed": {"type": "integer"},
                                                   "match": {"type": "boolean"}})
                                        for name in inspect_components}),
                                   *TOWER_COMPONENTS),
            "differences": {"type": "array", "items": obj({
                "component": {"enum": list(inspect_components)}, "layer": int_or_null,
                "file": {"type": "integer"}, "computed": {"type": "integer"},
                "tensors": {"type": "array", "items": {"type": "string"}}})},
        })]},
        "note": {"type": "string"},
    })}


def inspect_views(inspection: Inspection, options: Mapping[str, str]) -> list[TableView]:
    """The tensors by component, the file's bytes and format, and the check's differences
    (``options``: how the reader sets an input, by its name: ``quant``)."""
    from specsheet.units import exact
    from specsheet.views.table import TableView

    check = inspection.check
    total = sum(inspection.params.values())
    name = inspection.files[0] if len(inspection.files) == 1 else \
        f"{inspection.files[0]} and {len(inspection.files) - 1} more files"
    headers: tuple[str, ...] = ("Component", "Tensors", "Element types", "Parameters", "Bytes")
    numeric: tuple[bool, ...] = (False, True, False, True, True)
    if check is not None:
        headers += ("From the config", "Match")
        numeric += (True, False)
    view = TableView(title=f"{name}: {exact(len(inspection.tensors))} tensors, "
                           f"{exact(total)} parameters", headers=headers, numeric=numeric)
    for component, label in COMPONENT_LABELS.items():
        if component not in inspection.params:  # vision and projector: a multimodal config's
            continue
        types: dict[str, int] = {}  # in the order of each type's first tensor
        for group in inspection.tensors.groups.values():
            if group.component == component:
                types[group.dtype] = types.get(group.dtype, 0) + group.tensors
        params = inspection.params[component]
        if not types and (check is None or not check.components[component][1]):
            continue
        cells = [label, exact(sum(types.values())),
                 ", ".join(f"{t} × {c}" for t, c in types.items()),
                 exact(params), exact(inspection.bytes_by_component[component])]
        if check is not None:
            file, computed = check.components[component]
            cells += [exact(computed), "ok" if file == computed else "DIFFERS"]
        view.add(*cells)
    cells = ["Total", exact(len(inspection.tensors)), "", exact(total),
             exact(inspection.data_bytes)]
    if check is not None:
        computed_total = sum(c for _, c in check.components.values())
        cells += [exact(computed_total), "ok" if check.matches else "DIFFERS"]
    view.add(*cells, style="total")
    view.caption = ("Parameters as the unquantized model has them (a GPTQ qweight of [K/8, N] "
                    "int32 is K × N); scales, zero points and indices count as bytes only.")
    return [view, _inspect_summary(inspection, options["quant"]), *_differences_view(inspection)]


def _inspect_summary(inspection: Inspection, quant: str) -> TableView:
    from specsheet.units import exact, human_bytes
    from specsheet.views.table import TableView

    view = TableView(title="The file", headers=("Figure", "Value", "Exact"),
                     numeric=(False, True, True), optional=(False, True, False))
    view.add(f"Format ({len(inspection.files)} file{'s' if len(inspection.files) > 1 else ''})",
             inspection.format, "")
    view.add("Data bytes", human_bytes(inspection.data_bytes), f"{exact(inspection.data_bytes)} B")
    for dtype, nbytes in inspection.bytes_by_dtype.items():
        view.add(f"  {dtype}", human_bytes(nbytes), f"{exact(nbytes)} B", style="sub")
    layouts = ", ".join(f"{name} ({exact(n)} modules)" for name, n in inspection.layouts.items())
    view.add(f"Quantization ({quant})", inspection.quant or "none", layouts)
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
    from specsheet.units import exact
    from specsheet.views.table import TableView

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

