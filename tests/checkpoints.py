"""Checkpoints for the inspect tests, written by the real writers (safetensors, gguf.GGUFWriter)
or by hand.

Their tensors are transformers' own: tests/data/shapes/NAME.json holds the names, dtypes and
shapes ``save_pretrained`` writes for a config of tests/data made small (scripts/make_shapes.py
builds each model on the meta device), so the tests check specsheet's reader and its
arithmetic against transformers, not against specsheet's own ``model_tensors``. GGUF files get
the names llama.cpp's converter gives those tensors (gguf-py's tensor name map). The hand-kept
``hf_tensors`` below (specsheet's tensors under each family's names) is left for what needs a
full-size model: bench/inspect.py's DeepSeek-V3 index and the rendering tests.
"""

from __future__ import annotations

import json
import re
import struct
from math import prod
from pathlib import Path
from typing import Any

import numpy as np
from small import SMALL, small_config, wide_config  # noqa: F401  (re-exported for the tests)

from specsheet.model.spec import ModelSpec
from specsheet.quant.layouts import Tensor, model_tensors

DATA = Path(__file__).resolve().parent / "data"
SHAPES = DATA / "shapes"
Shapes = dict[str, tuple[str, tuple[int, ...]]]  # name -> (dtype, shape)


# ---- transformers' tensors (tests/data/shapes) ----------------------------------------------

def stored_shapes(name: str, wide: bool = False) -> dict[str, Any]:
    """tests/data/shapes/NAME.json (NAME.wide.json: rows of 256), as scripts/make_shapes.py
    wrote it: the config, the versions, the tensors."""
    data: dict[str, Any] = json.loads(
        (SHAPES / f"{name}{'.wide' if wide else ''}.json").read_text())
    return data


def transformers_checkpoint(name: str, wide: bool = False, dtype: str | None = None
                            ) -> tuple[dict[str, Any], Shapes]:
    """The small config of NAME and the tensors transformers saves for it (in ``dtype``, or
    as saved: BF16)."""
    data = stored_shapes(name, wide)
    shapes = {k: (dtype or t, tuple(shape)) for k, (t, shape) in data["tensors"].items()}
    return data["config"], shapes


_EXPERT = re.compile(r"\.experts\.(\d+)\.")
# GPT-2's Conv1D weights are [in, out]; llama.cpp's converter transposes them to [out, in]
_CONV1D = (".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight",
           ".mlp.c_proj.weight")


def gguf_shapes(arch: str, shapes: Shapes, layers: int) -> dict[str, tuple[int, ...]]:
    """The tensors llama.cpp's converter writes for a checkpoint of GGUF architecture
    ``arch``: each name mapped by gguf-py's tensor name map, the routed experts of a layer
    stacked into one [E, N, K] tensor, GPT-2's Conv1D weights transposed."""
    import gguf

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[arch.upper()], layers)
    out: dict[str, tuple[int, ...]] = {}
    experts: dict[str, list[tuple[int, tuple[int, ...]]]] = {}
    for name, (_, shape) in shapes.items():
        match = _EXPERT.search(name)
        stacked = _EXPERT.sub(".experts.", name) if match else name
        mapped = names.get_name(stacked, try_suffixes=(".weight", ".bias"))
        assert mapped is not None, f"gguf-py has no name for {name} in {arch}"
        if match:
            experts.setdefault(mapped, []).append((int(match.group(1)), shape))
            out.setdefault(mapped, ())
        else:
            out[mapped] = tuple(reversed(shape)) if name.endswith(_CONV1D) else shape
    for mapped, parts in experts.items():
        (shape,) = {s for _, s in parts}
        assert sorted(e for e, _ in parts) == list(range(len(parts)))
        out[mapped] = (len(parts), *shape)
    return out

def spec_of(config: dict[str, Any]) -> ModelSpec:
    from specsheet.sources.resolve import model_from_hf_config

    return model_from_hf_config(config, "test", "test").spec


# ---- Hugging Face names, family by family, of specsheet's tensors (full-size models) ---------

_LLAMA = {
    "token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head",
    "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
    "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj", "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj", "ffn_gate_inp": "mlp.gate",
    "ffn_gate_exps": "mlp.experts.{e}.gate_proj", "ffn_up_exps": "mlp.experts.{e}.up_proj",
    "ffn_down_exps": "mlp.experts.{e}.down_proj", "ffn_gate_shexp": "mlp.shared_expert.gate_proj",
    "ffn_up_shexp": "mlp.shared_expert.up_proj", "ffn_down_shexp": "mlp.shared_expert.down_proj",
    "ffn_gate_inp_shexp": "mlp.shared_expert_gate", "attn_q_a": "self_attn.q_a_proj",
    "attn_q_a_norm": "self_attn.q_a_layernorm", "attn_q_b": "self_attn.q_b_proj",
    "attn_kv_a_mqa": "self_attn.kv_a_proj_with_mqa", "attn_kv_a_norm": "self_attn.kv_a_layernorm",
    "attn_kv_b": "self_attn.kv_b_proj",
}
FAMILY_NAMES: dict[str, dict[str, str]] = {
    "llama": _LLAMA, "qwen2": _LLAMA, "qwen3": _LLAMA, "qwen3_moe": _LLAMA,
    "qwen2_moe": _LLAMA, "mistral": _LLAMA, "olmo2": _LLAMA, "starcoder2": _LLAMA,
    "gemma": _LLAMA,
    "gemma2": {**_LLAMA, "ffn_norm": "pre_feedforward_layernorm",
               "post_attention_norm": "post_attention_layernorm",
               "post_ffw_norm": "post_feedforward_layernorm"},
    "mixtral": {**_LLAMA, "ffn_gate_inp": "block_sparse_moe.gate",
                "ffn_gate_exps": "block_sparse_moe.experts.{e}.w1",
                "ffn_up_exps": "block_sparse_moe.experts.{e}.w3",
                "ffn_down_exps": "block_sparse_moe.experts.{e}.w2"},
    "deepseek_v2": {**_LLAMA, "ffn_gate_shexp": "mlp.shared_experts.gate_proj",
                    "ffn_up_shexp": "mlp.shared_experts.up_proj",
                    "ffn_down_shexp": "mlp.shared_experts.down_proj"},
}


def hf_name(model_type: str, gguf: str, expert: int | None = None) -> str:
    """A GGUF tensor name (blk.3.attn_q.weight) as the family's checkpoint names it."""
    names = FAMILY_NAMES[model_type]
    parts = gguf.split(".")
    if parts[0] == "blk":
        base, rest = names[parts[2]], parts[3:]
        prefix = f"model.layers.{parts[1]}."
    else:
        base, rest = names[parts[0]], parts[1:]
        prefix = ""
    return prefix + base.format(e=expert) + "." + ".".join(rest)


def _per_expert(t: Tensor) -> list[tuple[int | None, tuple[int, ...]]]:
    if len(t.shape) == 3:
        return [(e, t.shape[1:]) for e in range(t.shape[0])]
    return [(None, t.shape)]


def hf_tensors(model_type: str, spec: ModelSpec, dtype: str = "BF16") -> Shapes:
    """Every tensor of a llama-like family's checkpoint, in ``dtype``."""
    if model_type == "gpt2":
        return gpt2_tensors(spec, dtype)
    if model_type == "gpt_neox":
        return neox_tensors(spec, dtype)
    if model_type == "phi3":
        return phi3_tensors(spec, dtype)
    shapes: Shapes = {}
    for t in model_tensors(spec):
        for e, shape in _per_expert(t):
            shapes[hf_name(model_type, t.name, e)] = (dtype, shape)
    return shapes


def gpt2_tensors(spec: ModelSpec, dtype: str) -> Shapes:
    """GPT-2's Conv1D weights are [in, out]; q, k and v are one c_attn."""
    d, f, v = spec.d_model, spec.d_ff, spec.vocab
    s: Shapes = {"wte.weight": (dtype, (v, d)), "wpe.weight": (dtype, (spec.context, d)),
                 "ln_f.weight": (dtype, (d,)), "ln_f.bias": (dtype, (d,))}
    for i in range(spec.layers):
        p = f"h.{i}."
        for name, shape in (("ln_1.weight", (d,)), ("ln_1.bias", (d,)),
                            ("attn.c_attn.weight", (d, 3 * d)), ("attn.c_attn.bias", (3 * d,)),
                            ("attn.c_proj.weight", (d, d)), ("attn.c_proj.bias", (d,)),
                            ("ln_2.weight", (d,)), ("ln_2.bias", (d,)),
                            ("mlp.c_fc.weight", (d, f)), ("mlp.c_fc.bias", (f,)),
                            ("mlp.c_proj.weight", (f, d)), ("mlp.c_proj.bias", (d,))):
            s[p + name] = (dtype, shape)
    return s


def neox_tensors(spec: ModelSpec, dtype: str) -> Shapes:
    d, f, v = spec.d_model, spec.d_ff, spec.vocab
    s: Shapes = {"gpt_neox.embed_in.weight": (dtype, (v, d)),
                 "gpt_neox.final_layer_norm.weight": (dtype, (d,)),
                 "gpt_neox.final_layer_norm.bias": (dtype, (d,)),
                 "embed_out.weight": (dtype, (v, d))}
    for i in range(spec.layers):
        p = f"gpt_neox.layers.{i}."
        for name, shape in (("input_layernorm.weight", (d,)), ("input_layernorm.bias", (d,)),
                            ("post_attention_layernorm.weight", (d,)),
                            ("post_attention_layernorm.bias", (d,)),
                            ("attention.query_key_value.weight", (3 * d, d)),
                            ("attention.query_key_value.bias", (3 * d,)),
                            ("attention.dense.weight", (d, d)), ("attention.dense.bias", (d,)),
                            ("mlp.dense_h_to_4h.weight", (f, d)), ("mlp.dense_h_to_4h.bias", (f,)),
                            ("mlp.dense_4h_to_h.weight", (d, f)), ("mlp.dense_4h_to_h.bias", (d,))):
            s[p + name] = (dtype, shape)
    return s


def phi3_tensors(spec: ModelSpec, dtype: str) -> Shapes:
    """Phi-3 fuses q, k, v (qkv_proj) and gate, up (gate_up_proj)."""
    d, f, v, hd = spec.d_model, spec.d_ff, spec.vocab, spec.head_dim
    qkv = (spec.heads + 2 * spec.kv_heads) * hd
    s: Shapes = {"model.embed_tokens.weight": (dtype, (v, d)), "model.norm.weight": (dtype, (d,)),
                 "lm_head.weight": (dtype, (v, d))}
    for i in range(spec.layers):
        p = f"model.layers.{i}."
        for name, shape in (("input_layernorm.weight", (d,)),
                            ("post_attention_layernorm.weight", (d,)),
                            ("self_attn.qkv_proj.weight", (qkv, d)),
                            ("self_attn.o_proj.weight", (d, spec.heads * hd)),
                            ("mlp.gate_up_proj.weight", (2 * f, d)),
                            ("mlp.down_proj.weight", (d, f))):
            s[p + name] = (dtype, shape)
    return s


# ---- quantized layouts, by hand ------------------------------------------------------------

def gptq(shapes: Shapes, group: int, bits: int = 4) -> Shapes:
    """Every Linear of the blocks as AutoGPTQ stores it: qweight I32 [K·b/32, N], qzeros I32
    [K/g, N·b/32], scales F16 [K/g, N], g_idx I32 [K]; everything else F16."""
    out: Shapes = {}
    for name, (_, shape) in shapes.items():
        if _is_block_linear(name, shape):
            n, k = shape
            base = name.removesuffix(".weight")
            out[f"{base}.qweight"] = ("I32", (k * bits // 32, n))
            out[f"{base}.qzeros"] = ("I32", (k // group, n * bits // 32))
            out[f"{base}.scales"] = ("F16", (k // group, n))
            out[f"{base}.g_idx"] = ("I32", (k,))
        else:
            out[name] = ("F16", shape)
    return out


def awq(shapes: Shapes, group: int) -> Shapes:
    """AutoAWQ's GEMM layout: qweight I32 [K, N/8], qzeros I32 [K/g, N/8], scales F16 [K/g, N]."""
    out: Shapes = {}
    for name, (_, shape) in shapes.items():
        if _is_block_linear(name, shape):
            n, k = shape
            base = name.removesuffix(".weight")
            out[f"{base}.qweight"] = ("I32", (k, n // 8))
            out[f"{base}.qzeros"] = ("I32", (k // group, n // 8))
            out[f"{base}.scales"] = ("F16", (k // group, n))
        else:
            out[name] = ("F16", shape)
    return out


def fp8_block(shapes: Shapes) -> Shapes:
    """DeepSeek-V3's FP8: weight F8_E4M3 and weight_scale_inv F32 per 128 x 128 tile."""
    out: Shapes = {}
    for name, (dtype, shape) in shapes.items():
        if _is_block_linear(name, shape):
            n, k = shape
            out[name] = ("F8_E4M3", shape)
            out[name.removesuffix("weight") + "weight_scale_inv"] = (
                "F32", (-(-n // 128), -(-k // 128)))
        else:
            out[name] = (dtype, shape)
    return out


def _is_block_linear(name: str, shape: tuple[int, ...]) -> bool:
    """A Linear weight inside a block, not a router or a shared-expert gate."""
    return (".layers." in name and name.endswith(".weight") and len(shape) == 2
            and "norm" not in name and not name.endswith(("mlp.gate.weight",
                                                          "shared_expert_gate.weight",
                                                          "block_sparse_moe.gate.weight")))


# ---- writers ---------------------------------------------------------------------------------

BITS = {"F64": 64, "F32": 32, "F16": 16, "BF16": 16, "I64": 64, "I32": 32, "I16": 16,
        "I8": 8, "U8": 8, "F8_E4M3": 8, "BOOL": 8}


def safetensors_header(shapes: Shapes, metadata: dict[str, str] | None = None) -> tuple[bytes,
                                                                                        int]:
    """The 8-byte length and JSON header of a file holding ``shapes``, and its data bytes."""
    header: dict[str, Any] = {"__metadata__": metadata or {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in shapes.items():
        nbytes = prod(shape) * BITS[dtype] // 8
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()  # compact, as the library writes
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw, offset


def write_safetensors(path: Path, shapes: Shapes) -> Path:
    """A safetensors file written by hand: the header, then zeros."""
    head, data = safetensors_header(shapes)
    with path.open("wb") as f:
        f.write(head)
        f.truncate(len(head) + data)
    return path


def save_with_safetensors(path: Path, shapes: Shapes) -> Path:
    """The same written by the safetensors package (numpy arrays; F16, F32 and integers)."""
    from safetensors.numpy import save_file

    kinds = {"F32": np.float32, "F16": np.float16, "I32": np.int32, "I64": np.int64,
             "I8": np.int8, "U8": np.uint8}
    save_file({name: np.zeros(shape, kinds[dtype]) for name, (dtype, shape) in shapes.items()},
              str(path))
    return path


def write_checkpoint(folder: Path, config: dict[str, Any], shapes: Shapes,
                     shards: int = 1) -> Path:
    """config.json and the tensors in ``shards`` files (with an index when more than one)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    if shards == 1:
        write_safetensors(folder / "model.safetensors", shapes)
        return folder
    names = list(shapes)
    weight_map = {}
    total = 0
    for i in range(shards):
        part = names[i::shards]
        file = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        write_safetensors(folder / file, {n: shapes[n] for n in part})
        total += sum(prod(shapes[n][1]) * BITS[shapes[n][0]] // 8 for n in part)
        weight_map.update(dict.fromkeys(part, file))
    # as transformers' save_pretrained writes it (modeling_utils.py): indented, keys sorted
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(
        json.dumps(index, indent=2, sort_keys=True) + "\n")
    return folder


def write_gguf(path: Path, arch: str, spec: ModelSpec, types: dict[str, str],
               vocab_tokens: int | None = None, extra: dict[str, Any] | None = None,
               data: bool = True, merges: int = 0,
               tensors: dict[str, tuple[int, ...]] | None = None) -> Path:
    """A GGUF file of ``tensors`` (GGUF name -> shape; default: ``spec``'s own), each of the
    GGML type ``types`` gives, with the metadata llama.cpp's converter writes, by
    gguf.GGUFWriter. Without ``data``, the header alone (of ``spec``'s tensors), then the file
    extended (sparse) to the size the data would take."""
    import gguf

    w = gguf.GGUFWriter(str(path), arch)
    w.add_block_count(spec.layers)
    w.add_context_length(spec.context)
    w.add_embedding_length(spec.d_model)
    w.add_feed_forward_length(spec.d_ff)
    w.add_head_count(spec.heads)
    w.add_head_count_kv(spec.kv_heads)
    w.add_key_length(spec.head_dim)
    w.add_value_length(spec.v_head_dim)
    if vocab_tokens is None:
        w.add_vocab_size(spec.vocab)
    else:
        w.add_token_list([f"tok{i}" for i in range(vocab_tokens)])
        w.add_token_scores([float(-i) for i in range(vocab_tokens)])
        w.add_token_types([1] * vocab_tokens)
    if merges:
        w.add_token_merges([f"t{i} k{i}" for i in range(merges)])
    if spec.experts:
        w.add_expert_count(spec.experts)
        w.add_expert_used_count(spec.experts_per_token)
        w.add_expert_feed_forward_length(spec.expert_d_ff)
    for key, value in (extra or {}).items():
        w.add_uint32(f"{arch}.{key}", value)
    w.add_file_type(1)
    if not data:
        return _gguf_header_only(w, path, spec, types)
    if tensors is None:
        tensors = {t.name: t.shape for t in model_tensors(spec)}
    for name, shape in tensors.items():
        kind = gguf.GGMLQuantizationType[types[name]]
        if kind == gguf.GGMLQuantizationType.F32:
            w.add_tensor(name, np.zeros(shape, np.float32))
        elif kind == gguf.GGMLQuantizationType.F16:
            w.add_tensor(name, np.zeros(shape, np.float16))
        else:
            block, size = gguf.GGML_QUANT_SIZES[kind]
            row = shape[-1] // block * size
            w.add_tensor(name, np.zeros((*shape[:-1], row), np.uint8), raw_dtype=kind)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _gguf_header_only(w: Any, path: Path, spec: ModelSpec, types: dict[str, str]) -> Path:
    import os

    import gguf

    end = 0
    for t in model_tensors(spec):
        kind = gguf.GGMLQuantizationType[types[t.name]]
        block, size = gguf.GGML_QUANT_SIZES[kind]
        nbytes = prod(t.shape) // block * size
        # a dtype other than uint8: the shape is in values, not bytes
        w.add_tensor_info(t.name, t.shape, np.dtype(np.float32), nbytes, raw_dtype=kind)
        end += w.ggml_pad(nbytes, w.data_alignment)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    header = w.ggml_pad(path.stat().st_size, w.data_alignment)  # the data starts aligned
    os.truncate(path, header + end)
    return path
