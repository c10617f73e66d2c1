"""A checkpoint's own quantization: config.json's ``quantization_config`` (or the older
``compression_config``) read as a specsheet format (docs/quantization.md, "As shipped").

The keys are read as vLLM reads them (``vllm/model_executor/layers/quantization/``):

- ``mxfp4`` (mxfp4.py ``Mxfp4Config.from_config``): the routed experts in MXFP4; the
  ``modules_to_not_convert`` list is kept as written;
- ``fp8`` (fp8.py ``Fp8Config.from_config``): ``weight_block_size`` [128, 128] -> fp8-block,
  else per-tensor fp8; ``ignored_layers`` stay in bf16;
- ``fbgemm_fp8`` (fbgemm_fp8.py): per-channel fp8, ``modules_to_not_convert`` in bf16;
- ``compressed-tensors`` (compressed_tensors.py): the first config group's ``weights``
  (``num_bits``, ``type``, ``strategy``, ``group_size``, ``block_structure``); ``ignore`` entries
  are module names or ``re:`` regular expressions;
- ``gptq`` / ``gptq_marlin`` (gptq.py): ``bits`` 4 or 8, ``group_size`` (-1: per row);
  ``modules_to_not_convert`` kept;
- ``awq`` / ``awq_marlin`` (awq.py): ``bits`` / ``w_bit`` 4, ``group_size`` / ``q_group_size``;
  ``modules_to_not_convert`` matched as substrings (``is_layer_skipped_awq``);
- ``bitsandbytes``: ``load_in_4bit`` (nf4, ``bnb_4bit_use_double_quant``) or ``load_in_8bit``;
  ``llm_int8_skip_modules`` matched as substrings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from specsheet.errors import SpecError, quoted
from specsheet.model.spec import ModelSpec, Shipped
from specsheet.sources import QUANTIZATION_KEYS

METHODS = ("mxfp4", "fp8", "fbgemm_fp8", "compressed-tensors", "gptq", "gptq_marlin", "awq",
           "awq_marlin", "bitsandbytes")
FIELD, COMPRESSION_FIELD = QUANTIZATION_KEYS


def _fail(message: str, origin: str, value: object = None) -> SpecError:
    return SpecError(message, field=FIELD, value=value, source=origin)


def _names(config: Mapping[str, Any], key: str, origin: str) -> tuple[str, ...]:
    value = config.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(f"{key} must be a list of module names, got {quoted(value)}", origin, value)
    from specsheet.quant.modules import check_patterns

    bad = check_patterns(value)
    if bad is not None:
        raise _fail(f"{key}: {quoted(bad)} is not a regular expression", origin, bad)
    return tuple(value)


def _int(config: Mapping[str, Any], keys: tuple[str, ...], default: int, origin: str) -> int:
    for key in keys:
        if key in config and config[key] is not None:
            value = config[key]
            if isinstance(value, bool) or not isinstance(value, int):
                raise _fail(f"{key} must be an integer, got {quoted(value)}", origin, value)
            return value
    return default


def _compressed(config: Mapping[str, Any], origin: str) -> Shipped:
    groups = config.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise _fail("compressed-tensors needs config_groups, a mapping of schemes", origin)
    scheme = next(iter(groups.values()))
    weights = scheme.get("weights") if isinstance(scheme, dict) else None
    if not isinstance(weights, dict):
        raise _fail("a compressed-tensors config group needs its weights scheme", origin)
    bits = weights.get("num_bits")
    kind = weights.get("type", "int")
    strategy = weights.get("strategy", "tensor")
    group = weights.get("group_size")
    keep = _names(config, "ignore", origin)
    name: str | None = None
    if kind == "float" and bits == 8:
        name = {"tensor": "fp8", "channel": "fp8-channel", "block": "fp8-block"}.get(strategy)
    elif kind == "float" and bits == 4:
        name = "nvfp4" if group == 16 else "mxfp4" if group == 32 else None
        group = None
    elif kind == "int" and bits == 4:
        name = "w4a16"
    elif kind == "int" and bits == 8 and strategy == "channel":
        name = "w8a8"
    if name is None:
        raise _fail(f"compressed-tensors weights of {bits} bits ({kind}, {strategy}) have no "
                    "layout in specsheet", origin, bits)
    if name != "w4a16":
        group = None
    elif group is not None and (isinstance(group, bool) or not isinstance(group, int)):
        raise _fail(f"group_size must be an integer, got {quoted(group)}", origin, group)
    return Shipped(name, "compressed-tensors", group, keep)


def read_quantization(data: Mapping[str, Any], origin: str) -> Shipped | None:
    """The format a config.json (or a preset) says its checkpoint ships in, else None."""
    config = data.get(FIELD)
    key = FIELD
    if config is None and COMPRESSION_FIELD in data:
        config, key = data[COMPRESSION_FIELD], COMPRESSION_FIELD
    if config is None:
        return None
    if not isinstance(config, dict):
        raise SpecError(f"expected a mapping, got {quoted(config)}", field=key, value=config,
                        source=origin)
    method = config.get("quant_method")
    if method is None and key == COMPRESSION_FIELD:
        method = "compressed-tensors"
    if not isinstance(method, str):
        raise _fail(f"quant_method must be text, got {quoted(method)}", origin, method)
    if method not in METHODS:
        raise _fail(f"unknown quant_method {quoted(method)}; specsheet reads "
                    f"{', '.join(METHODS)}", origin, method)
    if method == "mxfp4":
        return Shipped("mxfp4", method, None, _names(config, "modules_to_not_convert", origin))
    if method == "fp8":
        block = config.get("weight_block_size")
        keep = _names(config, "ignored_layers", origin)
        if block is None:
            return Shipped("fp8", method, None, keep)
        if block != [128, 128]:
            raise _fail(f"weight_block_size {quoted(block)}: specsheet stores 128 x 128 "
                        "blocks only",
                        origin, block)
        return Shipped("fp8-block", method, None, keep)
    if method == "fbgemm_fp8":
        return Shipped("fp8-channel", method, None,
                       _names(config, "modules_to_not_convert", origin))
    if method == "compressed-tensors":
        return _compressed(config, origin)
    if method in ("gptq", "gptq_marlin"):
        bits = _int(config, ("bits",), 4, origin)
        if bits not in (4, 8):
            raise _fail(f"GPTQ bits {bits}: specsheet stores 4 and 8", origin, bits)
        return Shipped(f"gptq-int{bits}", method, _int(config, ("group_size",), 128, origin),
                       _names(config, "modules_to_not_convert", origin))
    if method in ("awq", "awq_marlin"):
        bits = _int(config, ("bits", "w_bit"), 4, origin)
        if bits != 4:
            raise _fail(f"AWQ bits {bits}: vLLM supports 4 only", origin, bits)
        return Shipped("awq-int4", method,
                       _int(config, ("group_size", "q_group_size"), 128, origin),
                       _names(config, "modules_to_not_convert", origin), "substring")
    # bitsandbytes
    keep = _names(config, "llm_int8_skip_modules", origin)
    if config.get("load_in_4bit"):
        nested = bool(config.get("bnb_4bit_use_double_quant"))
        return Shipped("bnb-nf4-dq" if nested else "bnb-nf4", method, None, keep, "substring")
    if config.get("load_in_8bit"):
        return Shipped("bnb-int8", method, None, keep, "substring")
    raise _fail("bitsandbytes needs load_in_4bit or load_in_8bit", origin)


# model types whose router stores e_score_correction_bias (transformers registers it as a
# buffer; vLLM's deepseek_v2.py and glm4_moe.py load it as an F32 nn.Parameter of E)
_SCORE_BIAS_TYPES = ("deepseek_v3", "kimi_k2", "glm4_moe")


def _score_bias(data: Mapping[str, Any]) -> bool:
    """Whether the checkpoint stores a router score-correction bias: DeepSeek-V3's routing
    (topk_method noaux_tc, DeepseekV3Config's default) and GLM-4.5's."""
    method = data.get("topk_method")
    if method is not None:
        return bool(method == "noaux_tc")
    return bool(data.get("model_type") in _SCORE_BIAS_TYPES)


def shipped_of(data: Mapping[str, Any], spec: ModelSpec, origin: str) -> Shipped | None:
    """``read_quantization`` of ``data``, its module list checked against ``spec``'s tensors:
    a list that names none of them is an error (a list meant for another model)."""
    shipped = read_quantization(data, origin)
    if shipped is not None and spec.experts and _score_bias(data):
        shipped = shipped._replace(router_score_bias=True)
    if shipped is None or not shipped.keep:
        return shipped
    from specsheet.quant.modules import unmatched
    from specsheet.quant.tensors import layer_tensors, model_tensors

    # the first block's tensors first: a list that names one of them names a module of the
    # model, and the model's every tensor is listed only when none does
    if unmatched(layer_tensors(spec, 0), shipped.keep, shipped.match) and \
            unmatched(model_tensors(spec), shipped.keep, shipped.match):
        raise _fail(f"the modules left unquantized ({', '.join(shipped.keep[:3])}"
                    f"{', ...' if len(shipped.keep) > 3 else ''}) name no module of this "
                    "model", origin, shipped.keep[0])
    return shipped
