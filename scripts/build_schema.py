"""Write specsheet/views/schema.json, the JSON Schema (draft 2020-12) of every document.

The spec fields come from specsheet.model.spec.FIELD_DOCS, so the schema cannot drift from
them; tests/test_schema.py checks the committed file is what this script writes and validates
every preset's documents against it.

    python scripts/build_schema.py           # write the schema
    python scripts/build_schema.py --check   # exit 1 if it is stale
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "specsheet" / "views" / "schema.json"


def obj(properties: dict[str, Any], description: str = "") -> dict[str, Any]:
    """An object with exactly these keys."""
    schema: dict[str, Any] = {"type": "object", "properties": properties,
                              "required": list(properties), "additionalProperties": False}
    if description:
        schema["description"] = description
    return schema


def ints(*names: str, minimum: int = 0) -> dict[str, Any]:
    return obj({name: {"type": "integer", "minimum": minimum} for name in names})


def numbers(*names: str) -> dict[str, Any]:
    return obj({name: {"type": "number"} for name in names})


def optional(schema: dict[str, Any], *names: str) -> dict[str, Any]:
    """``schema`` with ``names`` no longer required."""
    schema["required"] = [name for name in schema["required"] if name not in names]
    return schema


serve_ref = {"$ref": "#/$defs/serve_entry"}


def serve_schema() -> dict[str, Any]:
    """The figures of serving one model (``serve --json`` adds schema_version)."""
    count = {"type": "integer", "minimum": 0}
    seconds = {"type": "number", "minimum": 0}
    usd = {"type": ["number", "null"], "minimum": 0}
    estimates = obj({
        "concurrency": {"type": "integer", "minimum": 1},
        "prompt_tokens": {"type": "integer", "minimum": 1},
        "output_tokens": {"type": "integer", "minimum": 1},
        "compute_dtype": {"type": "string"},
        "peak_flops_per_s": {"type": "integer", "minimum": 1},
        "mfu": {"type": "number"}, "mbu": {"type": "number"},
        "prefill_s": {**seconds, "description": "time to first token (estimate)"},
        "prefill_compute_s": seconds, "prefill_allreduce_s": seconds,
        "decode_context": {"type": "integer", "minimum": 1,
                           "description": "tokens of each request at the average decode step"},
        "decode_step_s": seconds,
        "decode_bytes_per_step": {"type": "number", "minimum": 0,
                                  "description": "weights touched and KV read, all stages"},
        "decode_flops_per_step": count,
        "experts_touched": {"type": "number", "minimum": 0, "maximum": 1},
        "tokens_per_s_per_request": {"type": "number", "minimum": 0},
        "tokens_per_s_total": {"type": "number", "minimum": 0},
        "tokens_per_s_end_to_end": {"type": "number", "minimum": 0,
                                    "description": "output tokens/s with the prefills counted"},
        "usd_per_gpu_hour": usd,
        "tokens_per_word": {"type": ["number", "null"]},
        "text_tokens": {"type": ["integer", "null"], "minimum": 0,
                        "description": "with --text: its tokens under the model's tokenizer"},
        "text_words": {"type": ["integer", "null"], "minimum": 1,
                       "description": "with --text: its words (runs of non-white-space)"},
        "usd_per_request": usd,
        "usd_per_million_output_tokens": usd,
        "usd_per_million_input_tokens": usd,
        "usd_per_million_output_words": usd,
        "assumptions": {"type": "array", "items": {"type": "string"}},
    }, "Roofline estimates (upper bounds on speed) for the request shape; null when no "
       "request fits.")
    return obj({
        "model": obj({"name": {"type": "string"}, "origin": {"type": "string"},
                      "format": {"type": "string"}, "dtype": {"type": ["string", "null"]},
                      "kv_dtype": {"type": "string"}}),
        "hardware": obj({"name": {"type": "string"}, "label": {"type": "string"},
                         "memory_bytes": count, "bandwidth_bytes_per_s": count,
                         "peak_flops_per_s": {"type": "object",
                                              "additionalProperties": count},
                         "interconnect_bytes_per_s": count}),
        "parallel": ints("gpus", "tp", "pp", "ep", minimum=1),
        "request": obj({"max_model_len": {"type": "integer", "minimum": 1},
                        "max_num_batched_tokens": {"type": "integer", "minimum": 1},
                        "max_num_seqs": {"type": "integer", "minimum": 1},
                        "memory_utilization": {"type": ["number", "null"]}}),
        "memory_per_gpu": obj({
            "stage": count, "layers": count, "capacity_bytes": count, "budget_bytes": count,
            "weights_bytes": count,
            "activation_bytes": {**count, "description": "an estimate"},
            "overhead_bytes": {**count, "description": "an estimate"},
            "kv_pool_bytes": count, "kv_pool_given": {"type": "boolean"},
            "kv_bytes_per_token": count,
            "kv_bytes_per_request": {**count, "description": "a request of max_model_len in "
                                     "whole blocks, its state included"},
            "state_bytes_per_request": {**count, "description": "the part of "
                                        "kv_bytes_per_request holding a hybrid model's state "
                                        "(Mamba, gated DeltaNet), in padded pages; 0 without"},
        }, "One GPU of the pipeline stage that admits the fewest requests (exact)."),
        "kv_blocks": obj({
            "block_size": {"type": "integer", "minimum": 1,
                           "description": "tokens per attention block: 16, raised for a "
                                          "hybrid until one page holds a state"},
            "page_bytes": count,
            "state_page_bytes": {**count, "description": "one state layer's page for one "
                                 "request before padding to page_bytes; 0 without state"},
            "groups": {"type": "array", "items": obj({
                "window": count, "layers": count, "state": {"type": "boolean"}})},
            "layers_per_group": count, "num_blocks": count, "blocks_per_request": count,
            "vllm_max_concurrency": {"type": "number", "minimum": 0},
        }, "vLLM's KV-cache blocks on that GPU."),
        "stages": {"type": "array", "items": ints("stage", "layers", "weights_bytes",
                                                  "activation_bytes", "kv_pool_bytes",
                                                  "num_blocks", "max_concurrency")},
        "fits": {"type": "boolean"},
        "max_concurrency": count,
        "max_context": count,
        "estimates": {"oneOf": [{"type": "null"}, estimates]},
    }, "Serving one model on GPUs (docs/serving.md).")


def spec_schema() -> dict[str, Any]:
    from specsheet.model.spec import FIELD_DOCS, INPUT_ONLY_FIELDS

    types: dict[str, dict[str, Any]] = {
        "int": {"type": "integer", "minimum": 1},
        "count": {"type": "integer", "minimum": 0},
        "bool": {"type": "boolean"},
        "layers": {"type": "array", "items": {"type": "integer", "minimum": 0}},
    }
    properties = {}
    for doc in FIELD_DOCS:
        if doc.name in INPUT_ONLY_FIELDS:
            continue
        if doc.type == "kinds":
            schema: dict[str, Any] = {"type": "array", "items": {"enum": list(doc.choices)}}
        else:
            schema = dict(types.get(doc.type) or {"enum": list(doc.choices)})
        schema["description"] = doc.help
        properties[doc.name] = schema
    return obj(properties, "Every spec field, after defaults are derived (docs/models.md).")


def sweep_schema(version: dict[str, Any]) -> dict[str, Any]:
    """specsheet sweep --json: the axes, and at each point count's document (serve's with
    --gpu)."""
    value = {"type": ["integer", "string", "null"]}
    axis = obj({"name": {"type": "string", "description": "tokens, batch, dtype, quant, "
                         "kv_dtype or a spec field"},
                "option": {"type": "string", "description": "the option that gave it"},
                "values": {"type": "array", "items": value, "minItems": 2,
                           "description": "in order; quant null: a plain dtype"}})
    gpu = obj({"name": {"type": "string"}, "label": {"type": "string"},
               "memory_bytes": {"type": "integer", "minimum": 1}},
              "the accelerator of --gpu, whose budget per GPU the chart draws a line at")
    point = obj({"at": {"type": "object", "additionalProperties": value,
                        "description": "the point's value on each axis, by axis name"},
                 "report": {"oneOf": [{"$ref": "#/$defs/count"}, {"$ref": "#/$defs/serve"}],
                            "description": "count's document at the point; with --gpu, "
                                           "serve's (--max-model-len: the point's tokens, "
                                           "--concurrency: its batch)"}})
    return obj({
        "schema_version": version,
        "axes": {"type": "array", "items": axis, "minItems": 1, "maxItems": 2},
        "batch": {"type": ["integer", "null"], "minimum": 1,
                  "description": "requests at once (each with its KV cache); null when "
                                 "batch is an axis"},
        "gpu": {"oneOf": [gpu, {"type": "null"}]},
        "points": {"type": "array", "items": point, "minItems": 2,
                   "description": "the first axis varies fastest"},
    }, "specsheet sweep MODEL --json")


def build() -> dict[str, Any]:
    from specsheet.model.flops import ForwardFlops
    from specsheet.model.params import COMPONENTS, MoEParams
    from specsheet.views.documents import SCHEMA_VERSION

    count = obj({
        "schema_version": {"const": SCHEMA_VERSION},
        "name": {"type": "string"},
        "description": {"type": "string"},
        "origin": {"type": "string", "description": "where the model was loaded from"},
        "reference": {"type": "string", "description": "a URL for the architecture"},
        "published_total": {"type": ["integer", "null"],
                            "description": "the publisher's parameter count, if known"},
        "counted": {"enum": ["whole model", "language model only"],
                    "description": "language model only: a vision or audio tower in the "
                                   "config is not counted"},
        "spec": {"$ref": "#/$defs/spec"},
        "params": obj({
            "total": {"type": "integer", "minimum": 1},
            "non_embedding": {"type": "integer", "minimum": 0},
            "active": {"type": "integer", "minimum": 1},
            "components": ints(*COMPONENTS),
            "moe": ints(*MoEParams._fields),
            "shares": numbers(*COMPONENTS),
            "per_block": ints("attention", "mlp", "norms", "total"),
            "block_shares": numbers("attention", "mlp"),
        }, "Parameters (counts)."),
        "memory": obj({
            "format": {"type": "string",
                       "description": "the quantization format, or the dtype without one"},
            "dtype": {"type": ["string", "null"],
                      "description": "the weights' dtype; with a format, the type given for "
                                     "its unquantized tensors, or null for the format's own"},
            "weights_bytes": {"type": "integer", "minimum": 1,
                              "description": "every stored tensor, all metadata included"},
            "bits_per_weight": {"type": "number", "description": "weights_bytes x 8 / total"},
            "overhead_bytes": {"type": "integer", "minimum": 0,
                               "description": "scales, zero points, indices, global scales"},
            "by_component": ints(*COMPONENTS),
            "tensor_types": {"type": "object",
                             "additionalProperties": {"type": "integer", "minimum": 0},
                             "description": "bytes by stored element type (BF16, Q4_K, I32)"},
            "lower_bound": {"type": "boolean",
                            "description": "int4 without scales: a lower bound"},
        }, "Weight memory in bytes."),
        "kv_cache": obj({
            "tokens": {"type": "integer", "minimum": 1},
            "dtype": {"type": "string"},
            "elements_per_token": {"type": "integer", "minimum": 0},
            "bytes_per_token": {"type": "integer", "minimum": 0},
            "bytes_per_request": {"type": "integer", "minimum": 1},
            "state_bytes": {"type": "integer", "minimum": 0,
                            "description": "the fixed state of state-space and linear-attention "
                                           "layers (0 for pure attention)"},
            "layers_by_kind": {"type": "object", "additionalProperties": {"type": "integer",
                                                                          "minimum": 1}},
            "sliding_window": {"type": "integer", "minimum": 0},
            "sliding_layers": {"type": "integer", "minimum": 0},
        }, "The memory of one request, in bytes: the attention layers' keys and values at T "
           "and the state of the other layers."),
        "flops": obj({
            "tokens": {"type": "integer", "minimum": 1},
            "forward_per_token": {"type": "integer", "minimum": 1},
            "components": ints(*ForwardFlops._fields[1:]),
            "approx_2n_per_token": {"type": "integer", "minimum": 0},
            "approx_2n_error_percent": {"type": "number"},
        }, "Forward FLOPs per token at T = tokens (exact), and the 2N estimate."),
    }, "specsheet count --json")
    check_entry = obj({
        "figure": {"type": "string"}, "option": {"type": "string"},
        "value": {"type": "integer"}, "limit": {"type": "integer"},
        "margin": {"type": "integer"}, "ok": {"type": "boolean"},
    })
    version = {"const": SCHEMA_VERSION}
    inspect_components = (*COMPONENTS, "other")
    int_or_null = {"type": ["integer", "null"]}
    inspect = obj({
        "schema_version": version,
        "format": {"enum": ["safetensors", "gguf"]},
        "files": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "tensors": {"type": "integer", "minimum": 0, "description": "tensors in the files"},
        "params": obj({"total": {"type": "integer", "minimum": 0},
                       "components": ints(*inspect_components)},
                      "Parameters of the unquantized model the tensors store, by component "
                      "(other: what count does not include)."),
        "bytes": obj({
            "data": {"type": "integer", "minimum": 0},
            "by_dtype": {"type": "object", "additionalProperties": {"type": "integer"}},
            "by_component": ints(*inspect_components),
            "predicted": {**int_or_null, "description": "specsheet's bytes of the tensors "
                          "count knows, in the matched format (null without a config)"},
            "predicted_matches": {"type": ["boolean", "null"]},
        }, "The tensors' data in bytes."),
        "quant": {"type": ["string", "null"], "description": "the --quant format matched"},
        "quant_layouts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "group_size": int_or_null,
        "other_tensors": {"type": "array", "items": {"type": "string"}},
        "check": {"oneOf": [{"type": "null"}, obj({
            "config": {"type": "string"},
            "matches": {"type": "boolean"},
            "components": obj({name: obj({"file": {"type": "integer"},
                                          "computed": {"type": "integer"},
                                          "match": {"type": "boolean"}})
                               for name in inspect_components}),
            "differences": {"type": "array", "items": obj({
                "component": {"enum": list(inspect_components)}, "layer": int_or_null,
                "file": {"type": "integer"}, "computed": {"type": "integer"},
                "tensors": {"type": "array", "items": {"type": "string"}}})},
        })]},
        "note": {"type": "string"},
    }, "specsheet inspect PATH --json")
    checks = {"type": "array", "items": {"$ref": "#/$defs/check_entry"},
              "description": "the size limits (empty when only serving limits are given)"}
    serve = serve_schema()
    scalar = {"type": ["number", "boolean", "null"]}
    serve_checked = obj({**serve["properties"], "checks": {"type": "array", "items": obj({
        "figure": {"type": "string"}, "option": {"type": "string"}, "value": scalar,
        "limit": scalar, "ok": {"type": "boolean"}})}},
        "The serve entry with the serving limits of check --gpu (fits always checked).")
    checked_ref = {"$ref": "#/$defs/serve_checked"}
    from specsheet.hardware.catalog import OPTIONAL, PEAK_DTYPES, REQUIRED

    positive = {"type": "integer", "minimum": 1}
    accelerator = obj({
        "name": {"type": "string"},
        "label": {"type": "string"},
        "vendor": {"type": "string"},
        "memory_bytes": {**positive, "description": REQUIRED["memory_bytes"]},
        "bandwidth_bytes_per_s": {**positive, "description": REQUIRED["bandwidth_bytes_per_s"]},
        "peak_flops_per_s": {
            "type": "object", "minProperties": 1, "additionalProperties": False,
            "properties": dict.fromkeys(PEAK_DTYPES, positive),
            "description": "dense peak FLOP/s by element type (never the 2:4-sparse figure)"},
        "interconnect": {"type": "string"},
        "interconnect_bytes_per_s": {"type": "integer", "minimum": 0,
                                     "description": OPTIONAL["interconnect_bytes_per_s"]},
        "sources": {"type": "object", "additionalProperties": {"type": "string"},
                    "description": OPTIONAL["sources"]},
        "notes": {"type": "string"},
    }, "one accelerator (docs/hardware.md)")
    train = train_schema(version)
    from specsheet.views.fit import schemas as fit_schemas

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:specsheet:documents:v1",
        "title": "specsheet JSON documents",
        "description": "The documents that specsheet writes with --json (schema_version 1). "
                       "Integers are exact; shares are fractions of 1; bytes are bytes.",
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in ("count", "compare", "check",
                                                           "check_many", "presets",
                                                           "inspect", "hardware",
                                                           "hardware_one", "serve",
                                                           "sweep", "train", "fit",
                                                           "check_fit")],
        "$defs": {
            "spec": spec_schema(),
            "count": count,
            "compare": optional(obj({
                "schema_version": version,
                "models": {"type": "array", "items": {"$ref": "#/$defs/count"}, "minItems": 2},
                "serve": {"type": "array", "items": serve_ref,
                          "description": "with --gpu: each model served, in the same order"}},
                "specsheet compare --json"), "serve"),
            "check_entry": check_entry,
            "check": optional(obj({"schema_version": version, "ok": {"type": "boolean"},
                                   "checks": checks, "model": {"$ref": "#/$defs/count"},
                                   "serve": checked_ref},
                                  "specsheet check MODEL --json (one model)"), "serve"),
            "check_many": obj({"schema_version": version, "ok": {"type": "boolean"},
                               "models": {"type": "array", "minItems": 2, "items": optional(obj({
                                   "ok": {"type": "boolean"}, "checks": checks,
                                   "model": {"$ref": "#/$defs/count"},
                                   "serve": checked_ref}), "serve")}},
                              "specsheet check A B ... --json (several models)"),
            "serve_entry": serve,
            "serve_checked": serve_checked,
            "serve": obj({"schema_version": version, **serve["properties"]},
                         "specsheet serve MODEL --gpu NAME --json"),
            "presets": obj({"schema_version": version, "presets": {"type": "array", "items": obj({
                "name": {"type": "string"}, "description": {"type": "string"},
                "reference": {"type": "string"},
                "published_total": {"type": ["integer", "null"]},
                "total": {"type": "integer", "minimum": 1},
                "spec": {"$ref": "#/$defs/spec"}})}}, "specsheet presets --json"),
            "inspect": inspect,
            "train": train,
            "accelerator": accelerator,
            "hardware": obj({"schema_version": version, "accelerators": {
                "type": "array", "items": {"$ref": "#/$defs/accelerator"}}},
                "specsheet hardware --json"),
            "hardware_one": obj({"schema_version": version,
                                 "accelerator": {"$ref": "#/$defs/accelerator"}},
                                "specsheet hardware NAME --json"),
            "sweep": sweep_schema(version),
            **fit_schemas(),
        },
    }


def train_schema(version: dict[str, Any]) -> dict[str, Any]:
    """The document of ``specsheet train``."""
    from specsheet.model.flops import ATTENTION, RECOMPUTE
    from specsheet.plan.training import LORA_TARGETS, OPTIMIZERS, PRECISIONS

    count = {"type": "integer", "minimum": 0}
    positive = {"type": "integer", "minimum": 1}
    flops: dict[str, Any] = {
        "seq_len": positive,
        "attention": {"enum": list(ATTENTION)},
        "recompute": {"enum": list(RECOMPUTE)},
        **dict.fromkeys(("forward_per_token", "backward_per_token", "ssm_backward_per_token",
                         "recomputed_per_token",
                         "attention_core_per_token", "per_token_model", "per_token_hardware",
                         "total_model", "total_hardware"), count),
    }
    for name in ("approx_6n", "approx_palm", "approx_megatron"):
        flops[f"{name}_per_token"] = count
        flops[f"{name}_total"] = count
        flops[f"{name}_error_percent"] = {"type": "number"}
    return obj({
        "schema_version": version,
        "name": {"type": "string"},
        "origin": {"type": "string"},
        "spec": {"$ref": "#/$defs/spec"},
        "params": obj({"total": positive, "active": positive, "non_embedding": count,
                       "trainable": positive}, "Parameters; trainable: all, or LoRA's."),
        "flops": obj(flops, "Training FLOPs per token at seq_len and in total (model: forward "
                            "+ backward; hardware: + recomputation), and three estimates."),
        "tokens_total": positive,
        "tokens_default": {"type": "boolean",
                           "description": "tokens_total is the Chinchilla-optimal 20 x N"},
        "hardware": obj({"gpu": {"type": "string"}, "label": {"type": "string"},
                         "gpus": positive, "dtype": {"type": "string"},
                         "peak_flops_per_s": positive,
                         "mfu": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}}),
        "time": obj({"seconds": {"type": "number"}, "gpu_hours": {"type": "number"},
                     "days": {"type": "number"}, "usd": {"type": ["number", "null"]}},
                    "Wall-clock and GPU time at the MFU; usd with --price."),
        "parallelism": obj({"gpus": positive, "dp": positive, "tp": positive, "pp": positive,
                            "sp": {"type": "boolean"},
                            "zero": {"type": "integer", "minimum": 0, "maximum": 3}}),
        "precision": {"enum": list(PRECISIONS)},
        "optimizer": {"enum": list(OPTIMIZERS)},
        "lora": {"oneOf": [{"type": "null"}, obj({
            "rank": positive,
            "targets": {"type": "array", "items": {"enum": list(LORA_TARGETS)}},
            "qlora": {"type": "boolean"}, "base_format": {"type": "string"}})]},
        "memory_per_gpu": obj({
            **dict.fromkeys(("weights_bytes", "frozen_bytes", "gradients_bytes", "optimizer_bytes",
                             "activations_bytes", "activations_per_sequence_bytes",
                             "activations_per_layer_bytes", "total_bytes", "capacity_bytes"),
                            count),
            "activations_form": {"type": "string"},
            "micro_batch": positive,
        }, "One GPU's memory for a training step, in bytes."),
        "fits": {"type": "boolean"},
        "max_micro_batch": count,
        "assumptions": {"type": "array", "items": {"type": "string"}},
    }, "specsheet train --json")


def main() -> int:
    text = json.dumps(build(), indent=1) + "\n"
    if "--check" in sys.argv[1:]:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is stale: run python scripts/build_schema.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
