"""The stored tensors of a quantized checkpoint: which tensors each toolchain quantizes, and how.

``model_tensors(spec)`` lists every parameter tensor of a model by its GGUF name with its
PyTorch shape ([N outputs, K inputs] for a matrix, [E, N, K] for the routed experts of a layer,
[n] for a vector); their elements add up to ``count_params(spec).total``.
``quantized_bytes(spec, format)`` stores each of them as the format's toolchain does and counts
every stored tensor, metadata included, in exact bytes.

Which tensors are quantized:

- GGUF (llama.cpp ``src/llama-quant.cpp``, ``llama_tensor_get_type``): 2-D and 3-D tensors whose
  name ends in ``weight``, except norms, MoE routers (``ffn_gate_inp``) and position embeddings;
  the type of each comes from the file type's mixture, layer by layer, with llama.cpp's fallbacks
  when a row is not whole blocks. Everything else is F32, as ``convert_hf_to_gguf.py`` writes it.
- MXFP4 in an MoE model: the routed experts only, as OpenAI's gpt-oss checkpoints store them
  (attention, routers and embeddings in BF16); in a dense model, as below.
- GPTQ, AWQ, compressed-tensors (w4a16, w8a8, fp8*, mxfp4, nvfp4): the Linear layers of the
  transformer blocks (attention, MLP, experts, shared experts); embeddings, the output head,
  routers and the shared-expert gate stay in the format's unquantized type.
- bitsandbytes (transformers' ``replace_with_bnb_linear``): every ``nn.Linear`` except the output
  head (``get_keys_to_not_convert``), so routers and embedding projections are quantized too.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import prod

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.model.params import COMPONENTS, count_params
from specsheet.model.spec import ModelSpec
from specsheet.quant.formats import (
    DYNAMIC_MAP_VALUES,
    FP8_BLOCK,
    GGML_TYPES,
    MXFP4_BLOCK,
    NF4_BLOCK,
    NF4_CODE_VALUES,
    NF4_NESTED_BLOCK,
    NVFP4_BLOCK,
    TENSOR_TYPES,
    UNQUANTIZED_DTYPES,
    QuantFormat,
    check_format,
)
from specsheet.quant.tensors import ROLES as ROLES  # re-exported: the tensors once lived here
from specsheet.quant.tensors import Tensor as Tensor
from specsheet.quant.tensors import model_tensors as model_tensors
from specsheet.quant.tensors import model_tensors_alike, score_bias_tensors


class StoredTensor(NamedTuple):
    """One tensor as a file stores it. Experts are listed once, with a leading E dimension,
    where a safetensors checkpoint stores E tensors of the same shape."""

    name: str  # blk.0.attn_q.qweight
    dtype: str  # GGML type (Q4_K) or safetensors dtype (I32)
    shape: tuple[int, ...]
    nbytes: int
    component: str  # a params.COMPONENTS key
    overhead: int  # bytes of it that are scales, zero points, indices, code books, state


class QuantizedWeights(NamedTuple):
    """Every stored tensor of a model in one format, in exact bytes."""

    format: str
    params: int  # count_params(spec).total
    weights_bytes: int  # every stored tensor, all metadata included
    overhead_bytes: int  # scales, zero points, indices, global scales, quantization state
    by_component: dict[str, int]  # bytes by params.COMPONENTS key (same keys, same order)
    tensor_types: dict[str, int]  # bytes by stored element type, largest first
    tensors: tuple[StoredTensor, ...]

    @property
    def bits_per_weight(self) -> float:
        """weights_bytes x 8 / params (for display only)."""
        return self.weights_bytes * 8 / self.params


# ---- GGUF: llama.cpp's choice of type, tensor by tensor -------------------------------------

# llama_ftype_get_default_type: the file type's base type
_GGUF_DEFAULT = {"f16": "F16", "q8_0": "Q8_0", "q6_k": "Q6_K", "q5_k_m": "Q5_K",
                 "q4_k_m": "Q4_K", "q4_0": "Q4_0", "q3_k_m": "Q3_K", "q2_k": "Q2_K",
                 "iq4_xs": "IQ4_XS"}
# tensor_type_fallback: a row that is not whole blocks of the chosen type
_GGUF_FALLBACK = {"IQ4_XS": "IQ4_NL", "Q2_K": "Q4_0", "Q3_K": "Q4_0", "Q4_K": "Q5_0",
                  "Q5_K": "Q5_1", "Q6_K": "Q8_0"}


def _category(name: str) -> str:
    """tensor_get_category: the first of these that the name matches."""
    if name == "output.weight":
        return "OUTPUT"
    if name == "token_embd.weight":
        return "TOKEN_EMBD"
    for part, category in (("attn_qkv.weight", "ATTENTION_QKV"), ("attn_kv_b.weight", "KV_B"),
                           ("attn_v.weight", "ATTENTION_V"), ("attn_k.weight", "ATTENTION_K"),
                           ("attn_q.weight", "ATTENTION_Q"),
                           ("attn_output.weight", "ATTENTION_OUTPUT"), ("ffn_up", "FFN_UP"),
                           ("ffn_gate", "FFN_GATE"), ("ffn_down", "FFN_DOWN")):
        if part in name:
            return category
    return "OTHER"


def _is_attn_v(category: str) -> bool:
    return category in ("ATTENTION_V", "ATTENTION_QKV", "KV_B")


def _use_more_bits(i_layer: int, n_layers: int) -> bool:
    """llama.cpp's use_more_bits: the first and last eighth of the layers, and every third
    layer between them (C's % truncates toward zero; a negative left side is already caught
    by the first test)."""
    return (i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8
            or (i_layer - n_layers // 8) % 3 == 2)


def _gguf_quantizable(t: Tensor) -> bool:
    """tensor_allows_quantization, for the tensors specsheet lists: 2-D and 3-D weights, not
    norms, routers or position tables. The shared-expert gate is kept F32 as the converter
    writes it (see docs/quantization.md)."""
    return (len(t.shape) >= 2 and t.name.endswith("weight") and "_norm.weight" not in t.name
            and "ffn_gate_inp" not in t.name and t.name != "position_embd.weight")


class _GGUFState:
    """quantize_state_impl: the counters llama_tensor_get_type_impl walks with."""

    def __init__(self, spec: ModelSpec, n_attention_wv: int, tied: bool) -> None:
        self.n_attention_wv = n_attention_wv
        self.i_attention_wv = 0
        self.tied = tied
        self.n_expert = spec.experts
        self.n_gqa = spec.heads // spec.kv_heads
        self.n_layer = spec.layers
        # llama_quant_model_from_metadata: LLM_TYPE_70B is 80 layers with grouped-query heads
        self.is_70b = spec.layers == 80 and spec.kv_heads != spec.heads


def _gguf_mixture(qs: _GGUFState, ftype: str, new_type: str, t: Tensor, category: str) -> str:
    """llama_tensor_get_type_impl for the file types specsheet offers (no imatrix, not Falcon)."""
    if category == "OUTPUT" or (qs.tied and category == "TOKEN_EMBD"):
        if t.in_features % GGML_TYPES[new_type].block_size:
            return "Q8_0"
        return new_type if new_type == "Q8_0" else "Q6_K"
    if category == "TOKEN_EMBD":
        return new_type
    layer = t.layer if t.layer is not None else 0
    if _is_attn_v(category):
        if ftype == "q2_k":
            new_type = "Q4_K" if qs.n_gqa >= 4 else "Q3_K"
        elif ftype == "q3_k_m":
            new_type = "Q5_K" if qs.i_attention_wv < 2 else "Q4_K"
        elif ftype == "iq4_xs" and qs.n_gqa >= 4:
            new_type = "Q5_K"
        elif ftype in ("q4_k_m", "q5_k_m") and _use_more_bits(qs.i_attention_wv,
                                                              qs.n_attention_wv):
            new_type = "Q6_K"
        if qs.is_70b and new_type in ("Q3_K", "Q4_K"):
            new_type = "Q5_K"
        if qs.n_expert == 8:
            new_type = "Q8_0"
        qs.i_attention_wv += 1
    elif category == "ATTENTION_K":
        if qs.n_expert == 8:
            new_type = "Q8_0"
    elif category == "FFN_DOWN":
        # with experts llama.cpp reads the layer from the name; without, it counts ffn_down
        # tensors, one a layer: both are the tensor's layer
        n = qs.n_layer
        if ftype == "q2_k":
            new_type = "Q3_K"
        elif ftype == "q3_k_m":
            new_type = "Q5_K" if layer < n // 16 else "Q4_K"
        elif ftype in ("q4_k_m", "q5_k_m"):
            if _use_more_bits(layer, n):
                new_type = "Q6_K"
        elif ftype == "iq4_xs" and layer < n // 8:
            new_type = "Q5_K"
    elif category == "ATTENTION_OUTPUT":
        if qs.n_expert == 8:
            if ftype in ("q2_k", "q3_k_m", "q4_k_m", "iq4_xs"):
                new_type = "Q5_K"
        elif ftype == "q2_k":
            new_type = "Q3_K"
        elif ftype == "q3_k_m":
            new_type = "Q4_K"
    return new_type


def _gguf_fallback(t: Tensor, new_type: str) -> str:
    """tensor_type_fallback: a row (ne[0]) that is not whole blocks of the chosen type."""
    ncols = t.in_features
    if ncols % GGML_TYPES[new_type].block_size == 0:
        return new_type
    if new_type not in _GGUF_FALLBACK:
        raise SpecError(f"{t.name}: rows of {ncols} values are not whole blocks of "
                        f"{GGML_TYPES[new_type].block_size} and llama.cpp defines no fallback "
                        f"for {new_type}")
    fallback = _GGUF_FALLBACK[new_type]
    return fallback if ncols % GGML_TYPES[fallback].block_size == 0 else "F16"


def gguf_types(spec: ModelSpec, ftype: str,
               tensors: tuple[Tensor, ...] | None = None) -> dict[str, str]:
    """The GGML type of every tensor of ``spec`` in a GGUF file of ``ftype`` (q4_k_m, ...),
    as llama-quantize chooses it from an F16 file without an importance matrix.

    Tensors are visited in llama.cpp's order (by layer, then name), which its attn_v counter
    depends on. Tensors it does not quantize keep the converter's type: F32 for vectors,
    norms, routers and position tables. ``tensors``: ``model_tensors(spec)``, when the caller
    has them already (every tensor of the model, never a slice).
    """
    tensors = model_tensors(spec) if tensors is None else tensors
    order = sorted(tensors, key=lambda t: (-1 if t.layer is None else t.layer, t.name))
    # a tensor's category and whether it is quantized, decided once for its name within the
    # block (blk.N. holds no part _category looks for) and its number of dimensions
    decided: dict[tuple[str, int], tuple[str, bool]] = {}
    kinds = []
    for t in order:
        key = (t.name.split(".", 2)[2] if t.layer is not None else t.name, len(t.shape))
        kind = decided.get(key)
        if kind is None:
            kind = decided[key] = (_category(t.name), _gguf_quantizable(t))
        kinds.append(kind)
    qs = _GGUFState(spec, sum(_is_attn_v(category) for category, _ in kinds),
                    not any(t.name == "output.weight" for t in tensors))
    default = _GGUF_DEFAULT[ftype]
    types: dict[str, str] = {}
    fallbacks: dict[tuple[str, int], str] = {}  # (chosen type, row length) -> stored type
    for t, (category, quantized) in zip(order, kinds, strict=True):
        if not quantized:
            types[t.name] = "F32"
        elif default == "F16":
            types[t.name] = "F16"
        else:
            chosen = _gguf_mixture(qs, ftype, default, t, category)
            stored = fallbacks.get((chosen, t.in_features))
            if stored is None:
                stored = fallbacks[chosen, t.in_features] = _gguf_fallback(t, chosen)
            types[t.name] = stored
    return types


def mmproj_type(spec: ModelSpec, t: Tensor) -> str:
    """The GGML type of a vision-tower tensor in the mmproj file convert_hf_to_gguf.py --mmproj
    writes at its default --outtype f16 (llama.cpp a458664): vectors in F32
    (ModelBase.prepare_tensors, n_dims <= 1), the rest F16; Gemma 3's embeddings (patch and
    position) in F32 (Gemma3VisionModel.tensor_force_quant). Other families' own forced
    types are not read (docs/local.md)."""
    if len(t.shape) == 1:
        return "F32"
    if spec.vision is not None and spec.vision.projector == "gemma3" and \
            t.name.startswith("v.embeddings."):
        return "F32"
    return "F16"


def _gguf_stored(spec: ModelSpec, ftype: str, unquantized: str | None,
                 tensors: tuple[Tensor, ...] | None = None,
                 file_types: Mapping[str, str] | None = None) -> list[StoredTensor]:
    from specsheet.quant.tensors import TOWER_ROLES

    every = model_tensors(spec) if tensors is None or file_types is None else tensors
    types: Mapping[str, str]
    if file_types is None:
        # the vision tower is llama.cpp's separate mmproj file, not in the model file's ftype
        types = gguf_types(spec, ftype, tuple(t for t in every if t.role not in TOWER_ROLES))
    else:
        types = file_types
    stored = []
    # (type, shape) -> bytes and overhead: every block repeats the first one's shapes
    sizes: dict[tuple[str, tuple[int, ...]], tuple[int, int]] = {}
    for t in every if tensors is None else tensors:
        dtype = mmproj_type(spec, t) if t.role in TOWER_ROLES else types.get(t.name)
        if dtype is None:
            raise SpecError(f"the file holds no tensor {t.name} of the model its metadata "
                            "describes")
        if dtype == "F32" and unquantized is not None:
            dtype = unquantized
        size = sizes.get((dtype, t.shape))
        if size is None:
            kind = GGML_TYPES[dtype]
            rows = t.elements // t.in_features
            # ggml_row_size(type, ne[0]) x rows; the blocks' scales and minimums the overhead
            size = sizes[dtype, t.shape] = (rows * kind.nbytes(t.in_features),
                                            rows * kind.overhead(t.in_features))
        stored.append(StoredTensor(t.name, dtype, t.shape, size[0], t.component, size[1]))
    return stored


# ---- safetensors checkpoints: one quantized Linear at a time -------------------------------

def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _st(name: str, dtype: str, shape: tuple[int, ...], t: Tensor, overhead: bool,
        copies: int = 1) -> StoredTensor:
    """A safetensors tensor of ``shape``, ``copies`` times (one per expert)."""
    full = (copies, *shape) if copies > 1 else shape
    nbytes = TENSOR_TYPES[dtype].nbytes(prod(full))
    return StoredTensor(name, dtype, full, nbytes, t.component, nbytes if overhead else 0)


def _require(t: Tensor, fmt: str, what: str, value: int, multiple: int) -> None:
    if value % multiple:
        raise SpecError(f"{fmt}: {t.name} has {what} {value}, not a multiple of {multiple}; "
                        "the format cannot store it")


def _gptq(t: Tensor, base: str, fmt: QuantFormat, g: int) -> list[StoredTensor]:
    """AutoGPTQ QuantLinear: qweight I32 [K/32·b, N], qzeros I32 [ceil(K/g), N/32·b],
    scales F16 [ceil(K/g), N], g_idx I32 [K]."""
    n, k, e, b = t.out_features, t.in_features, t.matrices, fmt.bits
    g = k if g == -1 else g
    _require(t, fmt.name, "in_features", k, 32)
    _require(t, fmt.name, "out_features", n, 32)
    groups = _ceil(k, g)
    return [_st(f"{base}.qweight", "I32", (k // 32 * b, n), t, False, e),
            _st(f"{base}.qzeros", "I32", (groups, n // 32 * b), t, True, e),
            _st(f"{base}.scales", "F16", (groups, n), t, True, e),
            _st(f"{base}.g_idx", "I32", (k,), t, True, e)]


def _awq(t: Tensor, base: str, fmt: QuantFormat, g: int) -> list[StoredTensor]:
    """AutoAWQ WQLinear_GEMM: qweight I32 [K, N/8], qzeros I32 [K/g, N/8], scales F16 [K/g, N]."""
    n, k, e = t.out_features, t.in_features, t.matrices
    g = k if g == -1 else g
    pack = 32 // fmt.bits
    _require(t, fmt.name, "in_features", k, g)
    _require(t, fmt.name, "out_features", n, pack)
    return [_st(f"{base}.qweight", "I32", (k, n // pack), t, False, e),
            _st(f"{base}.qzeros", "I32", (k // g, n // pack), t, True, e),
            _st(f"{base}.scales", "F16", (k // g, n), t, True, e)]


_TORCH_DTYPE_NAMES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}
# a float32 offset printed by Python (json.dumps of offset.item()): 17 significant digits, as
# for a mean of absmax in [0.01, 0.1); real files differ by a byte or two per Linear
_NESTED_OFFSET = "0.0" + "1" * 17


def nf4_quant_state_bytes(n: int, k: int, dtype: str, nested: bool) -> int:
    """Length of ``quant_state.bitsandbytes__nf4``: json.dumps of the non-tensor quant state
    (QuantState.as_dict(packed=True)), UTF-8."""
    text = (f'{{"quant_type": "nf4", "blocksize": {NF4_BLOCK}, '
            f'"dtype": "{_TORCH_DTYPE_NAMES[dtype]}", "shape": [{n}, {k}]')
    if nested:
        text += (f', "nested_blocksize": {NF4_NESTED_BLOCK}, "nested_dtype": "float32", '
                 f'"nested_offset": {_NESTED_OFFSET}')
    return len((text + "}").encode())


def _bnb_nf4(t: Tensor, base: str, nested: bool, dtype: str) -> list[StoredTensor]:
    """Linear4bit: weight U8 [ceil(N·K/2), 1], absmax F32 [ceil(N·K/64)] (U8 with double
    quantization, plus nested_absmax F32 per 256 blocks and a 256-value nested code book),
    quant_map F32 [16], and the quant state as JSON bytes."""
    n, k, e = t.out_features, t.in_features, t.matrices
    values = n * k
    blocks = _ceil(values, NF4_BLOCK)
    stored = [_st(f"{base}.weight", "U8", (_ceil(values, 2), 1), t, False, e),
              _st(f"{base}.weight.absmax", "U8" if nested else "F32", (blocks,), t, True, e),
              _st(f"{base}.weight.quant_map", "F32", (NF4_CODE_VALUES,), t, True, e)]
    if nested:
        stored += [_st(f"{base}.weight.nested_absmax", "F32",
                       (_ceil(blocks, NF4_NESTED_BLOCK),), t, True, e),
                   _st(f"{base}.weight.nested_quant_map", "F32", (DYNAMIC_MAP_VALUES,), t, True,
                       e)]
    stored.append(_st(f"{base}.weight.quant_state.bitsandbytes__nf4", "U8",
                      (nf4_quant_state_bytes(n, k, dtype, nested),), t, True, e))
    return stored


def _quantized_linear(t: Tensor, fmt: QuantFormat, g: int, half: str) -> list[StoredTensor]:
    """The stored tensors of one quantized Linear weight (its bias is stored separately)."""
    base = t.name.removesuffix(".weight")
    n, k, e = t.out_features, t.in_features, t.matrices
    name = fmt.name
    if fmt.family == "gptq":
        return _gptq(t, base, fmt, g)
    if fmt.family == "awq":
        return _awq(t, base, fmt, g)
    if name in ("bnb-nf4", "bnb-nf4-dq"):
        return _bnb_nf4(t, base, name == "bnb-nf4-dq", half)
    if name == "bnb-int8":  # Linear8bitLt._save_to_state_dict
        return [_st(f"{base}.weight", "I8", (n, k), t, False, e),
                _st(f"{base}.SCB", "F32", (n,), t, True, e),
                _st(f"{base}.weight_format", "U8", (), t, True, e)]
    if fmt.family == "fp8":
        scale = {"fp8": (1,), "fp8-channel": (n, 1),
                 "fp8-block": (_ceil(n, FP8_BLOCK), _ceil(k, FP8_BLOCK))}[name]
        stored = [_st(f"{base}.weight", "F8_E4M3", (n, k), t, False, e),
                  _st(f"{base}.weight_scale", "F32", scale, t, True, e)]
        if name == "fp8":  # static per-tensor activation scale
            stored.append(_st(f"{base}.input_scale", "F32", (1,), t, True, e))
        return stored
    if name == "w4a16":  # pack-quantized, symmetric: no zero point
        g = k if g == -1 else g
        return [_st(f"{base}.weight_packed", "I32", (n, _ceil(k, 8)), t, False, e),
                _st(f"{base}.weight_scale", half, (n, _ceil(k, g)), t, True, e),
                _st(f"{base}.weight_shape", "I64", (2,), t, True, e)]
    if name == "w8a8":  # int-quantized, channel-wise, symmetric, dynamic per-token inputs
        return [_st(f"{base}.weight", "I8", (n, k), t, False, e),
                _st(f"{base}.weight_scale", half, (n, 1), t, True, e)]
    if name == "mxfp4":
        _require(t, name, "in_features", k, MXFP4_BLOCK)
        return [_st(f"{base}.weight_packed", "U8", (n, k // 2), t, False, e),
                _st(f"{base}.weight_scale", "U8", (n, k // MXFP4_BLOCK), t, True, e)]
    # nvfp4
    _require(t, name, "in_features", k, NVFP4_BLOCK)
    return [_st(f"{base}.weight_packed", "U8", (n, k // 2), t, False, e),
            _st(f"{base}.weight_scale", "F8_E4M3", (n, k // NVFP4_BLOCK), t, True, e),
            _st(f"{base}.weight_global_scale", "F32", (1,), t, True, e),
            _st(f"{base}.input_global_scale", "F32", (1,), t, True, e)]


def _quantizes(fmt: QuantFormat, t: Tensor, moe: bool) -> bool:
    """Whether the toolchain of ``fmt`` quantizes ``t`` (see the module docstring)."""
    if fmt.family == "bnb":
        return t.role in ("linear", "router", "shared_gate", "projection")
    if fmt.family == "mxfp4" and moe:  # as gpt-oss ships it: the routed experts only
        return t.role == "linear" and len(t.shape) == 3
    return t.role == "linear"


def _safetensors_stored(spec: ModelSpec, fmt: QuantFormat, g: int, unquantized: str,
                        tensors: tuple[Tensor, ...] | None = None, keep: tuple[str, ...] = (),
                        match: str = "exact") -> list[StoredTensor]:
    from specsheet.quant.modules import keeper

    kept = keeper(keep, match)
    stored = []
    for t in model_tensors(spec) if tensors is None else tensors:
        if t.role == "buffer":  # score_bias_tensors: F32 whatever the format
            stored.append(_st(t.name, "F32", t.shape, t, False))
        elif _quantizes(fmt, t, spec.experts > 0) and not (keep and kept(t)):
            stored += _quantized_linear(t, fmt, g, unquantized)
        else:
            stored.append(_st(t.name, unquantized, t.shape, t, False))
    return stored


def _alike(spec: ModelSpec, tensors: tuple[Tensor, ...] | None, keep: tuple[str, ...],
           score_bias: bool) -> list[tuple[Tensor, int]]:
    """The tensors ``quantized_bytes`` stores, each with how many it stands for: the blocks
    built alike once (``model_tensors_alike``) when no ``keep`` entry, which names modules,
    can tell them apart (``layer_blind``); else (and given ``tensors``) each for itself."""
    from specsheet.quant.modules import layer_blind

    if tensors is None and layer_blind(keep):
        pairs = model_tensors_alike(spec)
        return pairs + [(t, 1) for t in score_bias_tensors(spec)] if score_bias else pairs
    if tensors is None:
        tensors = model_tensors(spec) + (score_bias_tensors(spec) if score_bias else ())
    return [(t, 1) for t in tensors]


def _safetensors_alike(spec: ModelSpec, fmt: QuantFormat, g: int, unquantized: str,
                       pairs: list[tuple[Tensor, int]], keep: tuple[str, ...] = (),
                       match: str = "exact") -> tuple[list[StoredTensor], list[int]]:
    """What ``_safetensors_stored`` lists, each tensor's stored tensors once for all the
    tensors stored alike, and how many tensors each of them stands for (``pairs``: each
    tensor with how many it stands for itself, ``_alike``). A tensor's stored sizes read its
    shape, component and role and whether it is quantized, never its name (the name only
    names them, and which entry of ``keep`` covers it), so the tensors alike in those are
    stored alike: a block's tensors are stored once, not once a block. The first tensor of
    each kind is stored first, so a tensor the format cannot store is the one
    ``_safetensors_stored`` refuses."""
    from specsheet.quant.modules import keeper

    kept = keeper(keep, match)
    moe = spec.experts > 0
    first: dict[tuple[tuple[int, ...], str, str, bool], list[int]] = {}  # -> its stored' index
    stored: list[StoredTensor] = []
    times: list[int] = []
    for t, n in pairs:
        quantized = (t.role != "buffer" and _quantizes(fmt, t, moe)
                     and not (keep and kept(t)))
        alike = (t.shape, t.component, t.role, quantized)
        at = first.get(alike)
        if at is not None:
            for i in at:
                times[i] += n
            continue
        if t.role == "buffer":  # score_bias_tensors: F32 whatever the format
            one = [_st(t.name, "F32", t.shape, t, False)]
        elif quantized:
            one = _quantized_linear(t, fmt, g, unquantized)
        else:
            one = [_st(t.name, unquantized, t.shape, t, False)]
        first[alike] = list(range(len(stored), len(stored) + len(one)))
        stored += one
        times += [n] * len(one)
    return stored, times


# ---- the public entry ------------------------------------------------------------------------

def _group(fmt: QuantFormat, group_size: int | None) -> int:
    """The group size to use; -1 means one group per row (the whole K)."""
    if fmt.group_size is None:
        if group_size is not None:
            raise SpecError(f"{fmt.name} has a fixed block; a group size applies to gptq-int4, "
                            "gptq-int8, awq-int4 and w4a16 only", field="group size",
                            value=group_size)
        return 0
    g = fmt.group_size if group_size is None else group_size
    if isinstance(g, bool) or not isinstance(g, int) or (g <= 0 and g != -1):
        raise SpecError(f"expected a positive integer or -1 (one group per row), got {quoted(g)}",
                        field="group size", value=g)
    return g


def quantized_bytes(spec: ModelSpec, format_name: str, group_size: int | None = None,
                    dtype_unquantized: str | None = None,
                    tensors: tuple[Tensor, ...] | None = None, keep: tuple[str, ...] = (),
                    match: str = "exact", score_bias: bool = False,
                    file_types: Mapping[str, str] | None = None, listed: bool = True
                    ) -> QuantizedWeights:
    """Every tensor ``spec`` stores in ``format_name``, in exact bytes.

    ``tensors`` (default: ``model_tensors(spec)``) stores some of the model's tensors instead,
    named as model_tensors names them; a shape may be a slice of the model's (one GPU's share
    under tensor parallelism: plan/serving.py), and each is stored as the toolchain stores a
    tensor of that shape.

    ``group_size``: values that share a scale, for gptq-*, awq-int4 and w4a16 (default 128;
    -1: one group per row, K). ``dtype_unquantized`` (fp32, fp16, bf16) overrides the type of
    the tensors the format leaves unquantized (its default: F16 for GPTQ and AWQ, F32 for
    GGUF's vectors, BF16 for the others). ``keep``: the modules a checkpoint's config leaves
    unquantized (quant/modules.py matches them by ``match``), stored in that unquantized type.
    ``score_bias``: the checkpoint stores the router's score-correction bias too
    (``score_bias_tensors``, F32; with ``tensors`` given, list them there).
    ``file_types``: a GGUF file's own GGML type of every tensor (by model_tensors' name), as
    the file holds them, instead of llama-quantize's rule for ``format_name`` (a gguf-* one).
    ``listed`` False: the same totals without the list of stored tensors (``tensors`` empty),
    all a report keeps; a safetensors format then stores each kind of tensor once
    (``_safetensors_alike``).
    """
    if spec.layer_types and set(spec.layer_types) != {"attention"}:
        raise SpecError(f"{format_name}: the tensors of state-space and linear-attention layers "
                        "(Mamba, gated DeltaNet) have no quantized layout in specsheet yet; "
                        "give a plain dtype")
    fmt = check_format(format_name)
    g = _group(fmt, group_size)
    override = None
    if dtype_unquantized is not None:
        if dtype_unquantized not in UNQUANTIZED_DTYPES:
            raise SpecError(f"{quoted(dtype_unquantized)} cannot hold the tensors {fmt.name} "
                            f"leaves unquantized; expected one of {', '.join(UNQUANTIZED_DTYPES)}",
                            field="dtype", value=dtype_unquantized)
        override = UNQUANTIZED_DTYPES[dtype_unquantized]
    if not listed and fmt.family != "gguf":
        pairs = _alike(spec, tensors, keep, score_bias)
        stored, times = _safetensors_alike(spec, fmt, g, override or fmt.unquantized, pairs,
                                           keep, match)
        return summarize(fmt.name, count_params(spec).total, stored, times)
    if score_bias and tensors is None:
        tensors = model_tensors(spec) + score_bias_tensors(spec)
    if fmt.family == "gguf":
        stored = _gguf_stored(spec, fmt.name.removeprefix("gguf-"), override, tensors,
                              file_types)
    else:
        stored = _safetensors_stored(spec, fmt, g, override or fmt.unquantized, tensors, keep,
                                     match)
    return summarize(fmt.name, count_params(spec).total, stored)


def summarize(format_name: str, params: int, stored: list[StoredTensor],
              times: list[int] | None = None) -> QuantizedWeights:
    """Totals of ``stored``: all bytes, overhead, by component and by element type. With
    ``times``, ``stored[i]`` stands for ``times[i]`` tensors alike and the result lists none
    (``tensors`` empty)."""
    by_component = dict.fromkeys(COMPONENTS, 0)
    types: dict[str, int] = {}
    if any(s.component in ("vision", "projector") for s in stored):
        from specsheet.model.vision import TOWER_COMPONENTS  # a multimodal checkpoint's alone

        by_component.update(dict.fromkeys(TOWER_COMPONENTS, 0))
    if times is None:
        for s in stored:
            by_component[s.component] += s.nbytes
            types[s.dtype] = types.get(s.dtype, 0) + s.nbytes
        weights = sum(s.nbytes for s in stored)
        overhead = sum(s.overhead for s in stored)
    else:
        weights = overhead = 0
        for s, n in zip(stored, times, strict=True):
            by_component[s.component] += s.nbytes * n
            types[s.dtype] = types.get(s.dtype, 0) + s.nbytes * n
            weights += s.nbytes * n
            overhead += s.overhead * n
    return QuantizedWeights(
        format=format_name,
        params=params,
        weights_bytes=weights,
        overhead_bytes=overhead,
        by_component=by_component,
        tensor_types=dict(sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))),
        tensors=tuple(stored) if times is None else (),
    )
