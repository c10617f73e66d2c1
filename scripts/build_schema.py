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
    checks = {"type": "array", "items": {"$ref": "#/$defs/check_entry"}, "minItems": 1}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:specsheet:documents:v1",
        "title": "specsheet JSON documents",
        "description": "The documents that specsheet writes with --json (schema_version 1). "
                       "Integers are exact; shares are fractions of 1; bytes are bytes.",
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in ("count", "compare", "check",
                                                           "check_many", "presets",
                                                           "inspect")],
        "$defs": {
            "spec": spec_schema(),
            "count": count,
            "compare": obj({"schema_version": version,
                            "models": {"type": "array", "items": {"$ref": "#/$defs/count"},
                                       "minItems": 2}}, "specsheet compare --json"),
            "check_entry": check_entry,
            "check": obj({"schema_version": version, "ok": {"type": "boolean"},
                          "checks": checks, "model": {"$ref": "#/$defs/count"}},
                         "specsheet check MODEL --json (one model)"),
            "check_many": obj({"schema_version": version, "ok": {"type": "boolean"},
                               "models": {"type": "array", "minItems": 2, "items": obj({
                                   "ok": {"type": "boolean"}, "checks": checks,
                                   "model": {"$ref": "#/$defs/count"}})}},
                              "specsheet check A B ... --json (several models)"),
            "presets": obj({"schema_version": version, "presets": {"type": "array", "items": obj({
                "name": {"type": "string"}, "description": {"type": "string"},
                "reference": {"type": "string"},
                "published_total": {"type": ["integer", "null"]},
                "total": {"type": "integer", "minimum": 1},
                "spec": {"$ref": "#/$defs/spec"}})}}, "specsheet presets --json"),
            "inspect": inspect,
        },
    }


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
