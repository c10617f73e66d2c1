"""``specsheet fit``: the JSON document, its schema, and the tables (per device memory, the
placement, the verdict and the command line). Sizes in tables are MiB with two decimals, as
llama.cpp prints its "model buffer size" lines; in JSON, bytes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from specsheet.plan.local import DECODE_FORMULA

if TYPE_CHECKING:
    from specsheet.plan.budgets import LocalCheck
    from specsheet.plan.local import Buffer, LocalFit, Placement
    from specsheet.views.table import TableView

SCHEMA_VERSION = 1
MIB = 1 << 20
COMPUTE_FORMULA = (
    "GPU: max((n_vocab + n_embd) x ub x 4 on the output device, cells x ub x n_head x 4 "
    "without flash attention + 6 x n_embd x ub x 4); host: (n_embd + cells) x ub x 4 "
    "+ n_vocab x 4 x parallel")
# the estimate band checked against logs (tests/data/local_logs.yaml): printed / estimate
COMPUTE_BAND = (0.9, 1.25)


def verdict(placement: Placement) -> str:
    """fits; fits only without the compute estimate (the verdict rests on an estimate); does
    not fit (the exact part alone)."""
    if not placement.devices and not placement.host.memory_bytes:
        return "nothing to check (no GPU, no host memory given)"
    if not placement.fits:
        return "does not fit"
    if not placement.fits_estimate:
        return "weights and KV fit; with the compute estimate, does not"
    return "fits"


def _buffer(b: Buffer, host: bool = False) -> dict[str, Any]:
    known = b.memory_bytes > 0 or not host
    return {"name": b.name, "memory_bytes": b.memory_bytes if known else None,
            "model_bytes": b.model_bytes, "kv_bytes": b.kv_bytes,
            "compute_bytes_estimate": b.compute_bytes_estimate,
            "free_bytes": b.free_bytes if known else None,
            "layers": b.layers, "output": b.output}


def fit_document(fit: LocalFit) -> dict[str, Any]:
    """The document of ``fit``."""
    p = fit.placement
    engine = {"name": fit.engine, "version": fit.engine_version}
    compute = sum(d.compute_bytes_estimate for d in p.devices) + p.host.compute_bytes_estimate
    return {
        "schema_version": SCHEMA_VERSION,
        "name": fit.model.name,
        "origin": fit.model.origin,
        "quant": fit.quant,
        "file": fit.file,
        "engine": engine,
        "devices": [_buffer(d) for d in p.devices],
        "host": _buffer(p.host, host=True),
        "layers": {"total": p.n_layer + 1, "blocks": p.n_layer, "on_gpu": p.on_gpu,
                   "by_device": [{"name": d.name, "blocks": d.layers, "output": d.output}
                                 for d in (*p.devices, p.host)]},
        "ctx": p.n_ctx,
        "ctx_per_sequence": p.n_ctx_seq,
        "swa_cells": p.n_swa_cells,
        "parallel": fit.parallel,
        "cache_type_k": fit.cache_type_k,
        "cache_type_v": fit.cache_type_v,
        "flash_attn": p.flash_attn,
        "max_ctx": fit.max_ctx,
        "fits": p.fits,
        "fit": {"verdict": verdict(p), "margin_bytes": p.margin_bytes,
                "estimated_bytes": compute,
                "estimate": COMPUTE_FORMULA if fit.engine != "mlx" else "not estimated (MLX)"},
        "estimates": {
            "decode_step_s": fit.decode_step_s,
            "decode_tokens_per_s": None if not fit.decode_step_s else 1 / fit.decode_step_s,
            "formula": DECODE_FORMULA},
        "command": list(fit.command),
        "settings": dict(fit.env),
        "notes": list(fit.notes),
        **_mmproj(p),
    }


def _mmproj(p: Placement) -> dict[str, Any]:
    """A multimodal model's mmproj file, on the device llama.cpp loads it to (absent for a
    text model)."""
    holder = next((b for b in (*p.devices, p.host) if b.mmproj_bytes), None)
    if holder is None:
        return {}
    return {"mmproj": {"bytes": holder.mmproj_bytes, "device": holder.name}}


CHECK_FIGURES = ("max_ctx", "layers.on_gpu")


def fit_check_document(fit: LocalFit, checks: list[LocalCheck], options: dict[str, str]
                       ) -> dict[str, Any]:
    """The document of ``check`` with an engine: the verdict, each limit (``options`` names the
    option that set it, by figure), and the placement."""
    placed = fit_document(fit)
    del placed["schema_version"]
    return {"schema_version": SCHEMA_VERSION, "ok": all(c.ok for c in checks),
            "checks": [{"figure": c.figure, "option": options[c.figure], "value": c.value,
                        "limit": c.limit, "ok": c.ok} for c in checks],
            "fit": placed}


def fit_check_view(fit: LocalFit, checks: list[LocalCheck]) -> TableView:
    """Each local limit with its value and the verdict."""
    from specsheet.views.table import TableView  # the table path only

    failed = sum(1 for c in checks if not c.ok)
    view = TableView(
        title=f"{fit.model.name} on {fit.engine}: "
              f"{'every limit holds' if not failed else f'{failed} limit(s) not met'}",
        headers=("Limit", "Value", "Least", "Verdict"), numeric=(False, True, True, False))
    names = {"max_ctx": "longest context (tokens)", "layers.on_gpu": "layers on the GPUs"}
    for c in checks:
        view.add(names[c.figure], "none" if c.value is None else f"{c.value:,}",
                 f"{c.limit:,}", "ok" if c.ok else "NOT MET")
    return view


def _mib(n: int) -> str:
    return f"{n / MIB:,.2f}"


# what fit_ways found (api.fit_ways.FitWays): GPU layers, KV cache type, format, host bytes,
# context, GPUs
Ways = tuple[int | None, str | None, str | None, int | None, int | None, tuple[str, ...] | None]


def fit_views(fit: LocalFit, ways: Ways = (None, None, None, None, None, None),
              options: Mapping[str, str] | None = None) -> list[TableView]:
    """Memory per device, the placement, and the verdict with the command line; under a
    verdict that is not "fits", the ``ways`` that make it one (``options`` names the
    option of each setting)."""
    from specsheet.views.table import TableView, fits_with  # the table path only

    p = fit.placement
    memory = TableView(
        title=f"{fit.model.name} ({fit.quant}) on {fit.engine}: memory per device, MiB",
        headers=("Device", "Model", "KV", "Compute*", "Total", "Memory", "Free"),
        numeric=(False, True, True, True, True, True, True),
        caption="* compute buffers are an estimate: " + COMPUTE_FORMULA + "." if fit.engine != "mlx"
        else "* MLX: compute memory is not estimated; the host holds nothing apart (unified "
             "memory).")
    for d in (*p.devices, p.host):
        known = d.memory_bytes > 0
        memory.add(d.name, _mib(d.model_bytes), _mib(d.kv_bytes),
                   _mib(d.compute_bytes_estimate), _mib(d.total_bytes),
                   _mib(d.memory_bytes) if known else "not given",
                   _mib(d.free_bytes) if known else "")
    placement = TableView(title=f"Placement: {p.on_gpu}/{p.n_layer + 1} layers on the GPUs",
                          headers=("Device", "Blocks", "Output layer"),
                          numeric=(False, True, False))
    for d in (*p.devices, p.host):
        placement.add(d.name, f"{d.layers:,}", "yes" if d.output else "")
    if fit.engine != "mlx":
        placement.add("token embedding", "", "host (llama.cpp keeps it there)", style="sub")
    result = TableView(title=f"Verdict: {verdict(p)}", headers=("Figure", "Value"),
                       numeric=(False, False))
    cells = f" ({p.n_ctx_seq:,} per sequence)" if fit.parallel > 1 else ""
    result.add("context", f"{p.n_ctx:,} tokens{cells}")
    if p.n_swa_cells:
        result.add("sliding-window cache", f"{p.n_swa_cells:,} cells")
    result.add("longest context at this placement",
               "none" if fit.max_ctx is None else f"{fit.max_ctx:,} tokens")
    if p.margin_bytes is not None:
        result.add("least memory left (estimate counted)", f"{_mib(p.margin_bytes)} MiB")
    result.add("decode (estimate, a full context)",
               "host bandwidth not given" if fit.decode_step_s is None else
               f"{1 / fit.decode_step_s:,.1f} tokens/s")
    result.add("run it", " ".join(fit.command))
    for key, value in fit.env:  # Ollama: Modelfile parameters, then environment variables
        if key.startswith("OLLAMA_"):
            result.add("  environment", f"{key}={value}", style="sub")
        else:
            result.add("  Modelfile", f"PARAMETER {key} {value}", style="sub")
    for note in fit.notes:
        result.add("note", note, style="sub")
    said = _ways(ways, options or {})
    if said:
        result.caption = fits_with(said)
    return [memory, placement, result]


def _ways(ways: Ways, options: Mapping[str, str]) -> list[str]:
    """Each way as the options that ask for it: '--quant gguf-q3_k_m'; the least change
    first (the context, the GPU layers, the cache, the format), then more memory: the host's,
    then GPUs."""
    layers, cache, quant, host, ctx, gpu = ways
    said = [f"{options['ctx']} {ctx} or less"] if ctx is not None else []
    said += [f"{options['n_gpu_layers']} {layers}"] if layers is not None else []
    if cache is not None:
        said.append(f"{options['cache_type_k']} {cache} {options['cache_type_v']} {cache}")
    said += [f"{options['quant']} {quant}"] if quant is not None else []
    said += [f"{options['host_memory']} {host >> 30}GiB"] if host is not None else []
    said += [f"{options['gpu']} {','.join(gpu)}"] if gpu is not None else []
    return said


def schemas() -> dict[str, Any]:
    """The JSON Schema of the fit document (scripts/build_schema.py adds it to schema.json)."""
    count = {"type": "integer", "minimum": 0}
    maybe = {"type": ["integer", "null"]}
    buffer: dict[str, Any] = {"type": "object", "additionalProperties": False,
                              "properties": {"name": {"type": "string"}, "memory_bytes": maybe,
                             "model_bytes": count, "kv_bytes": count,
                             "compute_bytes_estimate": count, "free_bytes": maybe,
                             "layers": count, "output": {"type": "boolean"}}}
    buffer["required"] = list(buffer["properties"])
    properties: dict[str, Any] = {
        "schema_version": {"const": SCHEMA_VERSION}, "name": {"type": "string"},
        "origin": {"type": "string"}, "quant": {"type": "string"},
        "file": {"type": ["string", "null"]},
        "engine": {"type": "object", "required": ["name", "version"],
                   "properties": {"name": {"type": "string"}, "version": {"type": "string"}},
                   "additionalProperties": False},
        "devices": {"type": "array", "items": buffer}, "host": buffer,
        "layers": {"type": "object", "required": ["total", "blocks", "on_gpu", "by_device"],
                   "additionalProperties": False,
                   "properties": {"total": count, "blocks": count, "on_gpu": count,
                                  "by_device": {"type": "array", "items": {
                                      "type": "object", "required": ["name", "blocks", "output"],
                                      "additionalProperties": False,
                                      "properties": {"name": {"type": "string"},
                                                     "blocks": count,
                                                     "output": {"type": "boolean"}}}}}},
        "ctx": count, "ctx_per_sequence": count, "swa_cells": count, "parallel": count,
        "cache_type_k": {"type": "string"}, "cache_type_v": {"type": "string"},
        "flash_attn": {"type": "boolean"}, "max_ctx": maybe, "fits": {"type": "boolean"},
        "fit": {"type": "object", "additionalProperties": False,
                "required": ["verdict", "margin_bytes", "estimated_bytes", "estimate"],
                "properties": {"verdict": {"type": "string"},
                               "margin_bytes": {"type": ["integer", "null"]},
                               "estimated_bytes": count, "estimate": {"type": "string"}}},
        "estimates": {"type": "object", "additionalProperties": False,
                      "required": ["decode_step_s", "decode_tokens_per_s", "formula"],
                      "properties": {"decode_step_s": {"type": ["number", "null"]},
                                     "decode_tokens_per_s": {"type": ["number", "null"]},
                                     "formula": {"type": "string"}}},
        "command": {"type": "array", "items": {"type": "string"}},
        "settings": {"type": "object", "additionalProperties": {"type": "string"}},
        "notes": {"type": "array", "items": {"type": "string"}},
        "mmproj": {"type": "object", "additionalProperties": False,
                   "required": ["bytes", "device"],
                   "description": "a multimodal model's mmproj file (its vision tower and "
                                  "projector, F16 with F32 vectors) and the buffer it is "
                                  "loaded to; absent for a text model",
                   "properties": {"bytes": count, "device": {"type": "string"}}},
    }
    fit = {"type": "object", "description": "the document of specsheet fit",
           "properties": properties,
           "required": [k for k in properties if k != "mmproj"],
           "additionalProperties": False}
    placed = {**fit, "properties": {k: v for k, v in properties.items()
                                    if k != "schema_version"},
              "required": [k for k in properties if k not in ("schema_version", "mmproj")],
              "description": "the placement checked"}
    check = {"type": "object", "additionalProperties": False,
             "required": ["figure", "option", "value", "limit", "ok"],
             "properties": {"figure": {"enum": list(CHECK_FIGURES)},
                            "option": {"type": "string"},
                            "value": maybe, "limit": count, "ok": {"type": "boolean"}}}
    check_fit = {"type": "object", "description": "the document of specsheet check with an engine",
                 "additionalProperties": False,
                 "required": ["schema_version", "ok", "checks", "fit"],
                 "properties": {"schema_version": {"const": SCHEMA_VERSION},
                                "ok": {"type": "boolean"},
                                "checks": {"type": "array", "items": check},
                                "fit": placed}}
    return {"fit": fit, "check_fit": check_fit}
