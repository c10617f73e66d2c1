"""The vision tower and projector of a multimodal checkpoint, as transformers builds them.

A ``VisionTower`` describes the image encoder (its kind, layers, width, heads, MLP, patches and
native resolution) and the projector that maps its features into the language model's width.
``tower_tensors`` lists every parameter tensor of both, by transformers' own names below the
tower's module, and the counts are their elements: ``tower_params`` sums them by component
(``vision``, ``projector``). Encoders (``ENCODERS``):

- siglip: SigLIP (Gemma 3, and LLaVA models built on it): a biased patch convolution,
  a learned position table of (image / patch)^2 rows, LayerNorm blocks with biased q, k, v,
  out and a plain GELU MLP, a post LayerNorm, and with ``head`` SigLIP's attention-pooling head.
- clip: CLIP's vision model (LLaVA): as SigLIP with an unbiased patch convolution, a class
  embedding and one more position row, and a LayerNorm before the blocks.
- pixtral: Pixtral (Mistral 3): an unbiased patch convolution, RMSNorms, unbiased attention and a
  gated MLP, 2-D rotary positions (no table).
- qwen2_5_vl: Qwen2.5-VL's windowed ViT: a 3-D patch convolution (temporal x patch x patch, no
  bias), RMSNorms, a fused biased qkv, a gated biased MLP; windowed attention except in
  ``full_attention_layers``.
- qwen3_vl: Qwen3-VL's ViT: a biased 3-D patch convolution, a learned position table,
  LayerNorms, a fused biased qkv, a plain biased MLP.
- llama4: Llama 4's encoder: an unbiased linear patch embedding, a class embedding and
  (image / patch)^2 + 1 position rows, LayerNorms before and after, biased attention and MLP,
  and the pixel-shuffle MLP (vision_adapter) that ends it.

Projectors: gemma3 (a d_v x d matrix after an RMSNorm), llava (two biased or unbiased
Linears), mistral3 (an RMSNorm, the patch merger and two Linears), qwen2_5_vl (the merger: an
RMSNorm and a two-Linear MLP over merge^2 patches), qwen3_vl (the merger, LayerNorm first, and
one deepstack merger per ``deepstack_layers`` entry), llama4 (one unbiased Linear).
"""

from __future__ import annotations

from collections.abc import Iterator
from math import prod
from typing import Literal, get_args

from specsheet.compiled import NamedTuple, dataclass

EncoderKind = Literal["siglip", "clip", "pixtral", "qwen2_5_vl", "qwen3_vl", "llama4"]
ProjectorKind = Literal["gemma3", "llava", "mistral3", "qwen2_5_vl", "qwen3_vl", "llama4"]
ENCODERS: tuple[str, ...] = get_args(EncoderKind)
PROJECTORS: tuple[str, ...] = get_args(ProjectorKind)
TOWER_COMPONENTS = ("vision", "projector")


@dataclass(frozen=True)
class VisionTower:
    """A multimodal checkpoint's image encoder and projector (every size in elements).

    The encoder: ``layers`` blocks of ``width`` with ``heads`` heads and an MLP of
    ``mlp_width`` (gated: gate, up, down; plain: fc1, fc2); images cut into ``patch`` x
    ``patch`` pixel patches (x ``temporal_patch`` frames for the Qwen ViTs) of ``channels``
    channels, at the native resolution ``image_size`` (the side of a square image; 0 where the
    encoder takes any size: Qwen's ViTs). ``merge``: patches merged into one token per side
    (Qwen's spatial_merge_size, Pixtral's spatial_merge_size, 1/Llama
    4's pixel_shuffle_ratio; 1: none). ``out_width``: the language model's d_model, what the
    projector produces.
    """

    encoder: EncoderKind
    projector: ProjectorKind
    layers: int
    width: int
    heads: int
    mlp_width: int
    patch: int
    image_size: int
    out_width: int
    channels: int = 3
    temporal_patch: int = 1
    merge: int = 1
    head_dim: int = 0  # one head's size (0: width / heads)
    head: bool = False  # SigLIP's attention-pooling head (vision_use_head)
    position_rows: int = 0  # rows of a learned position table (Qwen3-VL's num_position_embeddings)
    full_attention_layers: tuple[int, ...] = ()  # Qwen2.5-VL: blocks without a window
    window: int = 0  # Qwen2.5-VL: the window's side in pixels (window_size)
    deepstack_layers: tuple[int, ...] = ()  # Qwen3-VL: blocks whose features get a merger
    projector_bias: bool = True  # the projector's Linears carry biases (LLaVA, Mistral 3)
    projector_width: int = 0  # Llama 4: vision_output_dim; the adapter's projector dims below
    adapter_in: int = 0  # Llama 4's vision_adapter: projector_input_dim
    adapter_out: int = 0  # Llama 4's vision_adapter: projector_output_dim
    tokens_per_image: int = 0  # Gemma 3: mm_tokens_per_image (0: the family computes it)
    # LLaVA, Mistral 3: the encoder layer whose features the projector takes
    # (vision_feature_layer; -1 the last, -2 the one before): transformers builds every layer,
    # vLLM only those up to it
    feature_layer: int = -1

    @property
    def patches_per_side(self) -> int:
        """Patches along one side of a native-resolution image (0 for any-resolution ViTs)."""
        return self.image_size // self.patch

    @property
    def patches(self) -> int:
        """Patches of one native-resolution square image."""
        return self.patches_per_side ** 2


class TowerTensor(NamedTuple):
    """One parameter tensor of a tower, by transformers' name below the tower's module.

    ``cut``: how vLLM's tensor-parallel layers split it (column: output rows; row: input
    columns, the bias whole; "": whole on every GPU), docs/serving.md."""

    name: str
    shape: tuple[int, ...]
    component: str  # vision or projector
    layer: int | None = None
    cut: str = ""

    @property
    def elements(self) -> int:
        return prod(self.shape)


def _linear(name: str, n: int, k: int, bias: bool, component: str, layer: int | None = None,
            cut: str = "") -> Iterator[TowerTensor]:
    yield TowerTensor(f"{name}.weight", (n, k), component, layer, cut)
    if bias:
        yield TowerTensor(f"{name}.bias", (n,), component, layer, "" if cut == "row" else cut)


def _norm(name: str, width: int, bias: bool, component: str = "vision",
          layer: int | None = None) -> Iterator[TowerTensor]:
    yield TowerTensor(f"{name}.weight", (width,), component, layer)
    if bias:
        yield TowerTensor(f"{name}.bias", (width,), component, layer)


def _block(t: VisionTower, i: int) -> Iterator[TowerTensor]:
    """Encoder block ``i``: its norms, attention and MLP, by each encoder's names."""
    w, f = t.width, t.mlp_width
    inner = t.heads * (t.head_dim or w // t.heads)
    if t.encoder in ("siglip", "clip"):
        p = f"encoder.layers.{i}"
        yield from _norm(f"{p}.layer_norm1", w, True, layer=i)
        for name in ("q_proj", "k_proj", "v_proj"):
            yield from _linear(f"{p}.self_attn.{name}", inner, w, True, "vision", i, "column")
        yield from _linear(f"{p}.self_attn.out_proj", w, inner, True, "vision", i, "row")
        yield from _norm(f"{p}.layer_norm2", w, True, layer=i)
        yield from _linear(f"{p}.mlp.fc1", f, w, True, "vision", i, "column")
        yield from _linear(f"{p}.mlp.fc2", w, f, True, "vision", i, "row")
    elif t.encoder == "pixtral":
        p = f"transformer.layers.{i}"
        yield from _norm(f"{p}.attention_norm", w, False, layer=i)
        for name in ("q_proj", "k_proj", "v_proj"):
            yield from _linear(f"{p}.attention.{name}", inner, w, False, "vision", i, "column")
        yield from _linear(f"{p}.attention.o_proj", w, inner, False, "vision", i, "row")
        yield from _norm(f"{p}.ffn_norm", w, False, layer=i)
        for name in ("gate_proj", "up_proj"):
            yield from _linear(f"{p}.feed_forward.{name}", f, w, False, "vision", i, "column")
        yield from _linear(f"{p}.feed_forward.down_proj", w, f, False, "vision", i, "row")
    elif t.encoder in ("qwen2_5_vl", "qwen3_vl"):
        p = f"blocks.{i}"
        layernorm = t.encoder == "qwen3_vl"
        yield from _norm(f"{p}.norm1", w, layernorm, layer=i)
        yield from _norm(f"{p}.norm2", w, layernorm, layer=i)
        yield from _linear(f"{p}.attn.qkv", 3 * inner, w, True, "vision", i, "column")
        yield from _linear(f"{p}.attn.proj", w, inner, True, "vision", i, "row")
        if layernorm:
            yield from _linear(f"{p}.mlp.linear_fc1", f, w, True, "vision", i, "column")
            yield from _linear(f"{p}.mlp.linear_fc2", w, f, True, "vision", i, "row")
        else:
            for name in ("gate_proj", "up_proj"):
                yield from _linear(f"{p}.mlp.{name}", f, w, True, "vision", i, "column")
            yield from _linear(f"{p}.mlp.down_proj", w, f, True, "vision", i, "row")
    else:  # llama4
        p = f"model.layers.{i}"
        for name in ("q_proj", "k_proj", "v_proj"):
            yield from _linear(f"{p}.self_attn.{name}", inner, w, True, "vision", i, "column")
        yield from _linear(f"{p}.self_attn.o_proj", w, inner, True, "vision", i, "row")
        yield from _linear(f"{p}.mlp.fc1", f, w, True, "vision", i, "column")
        yield from _linear(f"{p}.mlp.fc2", w, f, True, "vision", i, "row")
        yield from _norm(f"{p}.input_layernorm", w, True, layer=i)
        yield from _norm(f"{p}.post_attention_layernorm", w, True, layer=i)


def _outside(t: VisionTower) -> Iterator[TowerTensor]:
    """The encoder's tensors outside its blocks: patch embedding, positions, outer norms."""
    w, c, p = t.width, t.channels, t.patch
    if t.encoder in ("siglip", "clip"):
        clip = t.encoder == "clip"
        if clip:
            yield TowerTensor("embeddings.class_embedding", (w,), "vision")
        yield TowerTensor("embeddings.patch_embedding.weight", (w, c, p, p), "vision")
        if not clip:
            yield TowerTensor("embeddings.patch_embedding.bias", (w,), "vision")
        yield TowerTensor("embeddings.position_embedding.weight", (t.patches + clip, w),
                          "vision")
        if clip:
            yield from _norm("pre_layrnorm", w, True)
        yield from _norm("post_layernorm", w, True)
        if t.head:  # SigLIP's multihead attention-pooling head
            f = t.mlp_width
            yield TowerTensor("head.probe", (1, 1, w), "vision")
            yield TowerTensor("head.attention.in_proj_weight", (3 * w, w), "vision")
            yield TowerTensor("head.attention.in_proj_bias", (3 * w,), "vision")
            yield from _linear("head.attention.out_proj", w, w, True, "vision")
            yield from _norm("head.layernorm", w, True)
            yield from _linear("head.mlp.fc1", f, w, True, "vision")
            yield from _linear("head.mlp.fc2", w, f, True, "vision")
    elif t.encoder == "pixtral":
        yield TowerTensor("patch_conv.weight", (w, c, p, p), "vision")
        yield from _norm("ln_pre", w, False)
    elif t.encoder in ("qwen2_5_vl", "qwen3_vl"):
        yield TowerTensor("patch_embed.proj.weight", (w, c, t.temporal_patch, p, p), "vision")
        if t.encoder == "qwen3_vl":
            yield TowerTensor("patch_embed.proj.bias", (w,), "vision")
            yield TowerTensor("pos_embed.weight", (t.position_rows, w), "vision")
    else:  # llama4
        yield TowerTensor("class_embedding", (w,), "vision")
        yield TowerTensor("positional_embedding_vlm", (t.patches + 1, w), "vision")
        yield TowerTensor("patch_embedding.linear.weight", (w, c * p * p), "vision",
                          cut="column")
        yield from _norm("layernorm_pre", w, True)
        yield from _norm("layernorm_post", w, True)


def _projector(t: VisionTower) -> Iterator[TowerTensor]:
    w, d, m2 = t.width, t.out_width, t.merge ** 2
    kind, bias = t.projector, t.projector_bias
    if kind == "gemma3":
        yield TowerTensor("multi_modal_projector.mm_input_projection_weight", (w, d),
                          "projector")
        yield TowerTensor("multi_modal_projector.mm_soft_emb_norm.weight", (w,), "projector")
    elif kind == "llava":
        yield from _linear("multi_modal_projector.linear_1", d, w, bias, "projector",
                           cut="column")
        yield from _linear("multi_modal_projector.linear_2", d, d, bias, "projector", cut="row")
    elif kind == "mistral3":
        yield from _norm("multi_modal_projector.norm", w, False, "projector")
        yield TowerTensor("multi_modal_projector.patch_merger.merging_layer.weight",
                          (w, w * m2), "projector")
        yield from _linear("multi_modal_projector.linear_1", d, w, bias, "projector",
                           cut="column")
        yield from _linear("multi_modal_projector.linear_2", d, d, bias, "projector", cut="row")
    elif kind == "qwen2_5_vl":
        yield from _norm("merger.ln_q", w, False, "projector")
        yield from _linear("merger.mlp.0", w * m2, w * m2, True, "projector", cut="column")
        yield from _linear("merger.mlp.2", d, w * m2, True, "projector", cut="row")
    elif kind == "qwen3_vl":
        for p, width in (("merger", w), *((f"deepstack_merger_list.{j}", w * m2)
                                          for j in range(len(t.deepstack_layers)))):
            yield from _norm(f"{p}.norm", width, True, "projector")
            yield from _linear(f"{p}.linear_fc1", w * m2, w * m2, True, "projector",
                               cut="column")
            yield from _linear(f"{p}.linear_fc2", d, w * m2, True, "projector", cut="row")
    else:  # llama4
        yield from _linear("multi_modal_projector.linear_1", d, t.projector_width, False,
                           "projector", cut="column")


def tower_tensors(t: VisionTower) -> tuple[TowerTensor, ...]:
    """Every parameter tensor of the encoder and the projector, as transformers builds them:
    the encoder's outer tensors, its blocks in order, Llama 4's pixel-shuffle adapter, then
    the projector."""
    tensors = [*_outside(t)]
    for i in range(t.layers):
        tensors += _block(t, i)
    if t.encoder == "llama4":  # the pixel-shuffle MLP, inside transformers' vision model
        tensors += _linear("vision_adapter.mlp.fc1", t.adapter_in, t.mlp_width, False,
                           "vision", cut="column")
        tensors += _linear("vision_adapter.mlp.fc2", t.adapter_out, t.adapter_out, False,
                           "vision", cut="row")
    tensors += _projector(t)
    return tuple(tensors)


def tower_params(t: VisionTower) -> dict[str, int]:
    """The tower's parameters by component: vision (the encoder) and projector."""
    counts = dict.fromkeys(TOWER_COMPONENTS, 0)
    for tensor in tower_tensors(t):
        counts[tensor.component] += tensor.elements
    return counts
