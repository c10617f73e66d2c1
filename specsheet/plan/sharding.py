"""The tensor cut: the weights one GPU holds under a parallel layout, tensor by tensor.

Every tensor of ``quant.tensors.model_tensors`` cut to one GPU's share the way vLLM's parallel
layers cut it (``shard``), on the layers of one pipeline stage (``stage_tensors``; each kind of
block once with how many it stands for: ``stage_tensors_alike``), stored in a dtype or a
quantization format (``held_bytes``, ``stored_bytes``). Serving lays its weights out with it; a
training plan takes its busiest GPU's parameters from it (docs/serving.md, docs/training.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from specsheet.model.memory import bytes_for
from specsheet.model.spec import ModelSpec
from specsheet.plan.allocator import tail_bytes
from specsheet.plan.kv_blocks import layer_kind
from specsheet.plan.parallel import Parallel, pad_vocab, pp_partition
from specsheet.quant.tensors import TOWER_ROLES, Tensor, model_tensors, model_tensors_alike

_COLUMN = ("attn_q", "attn_q_b", "attn_kv_b", "ffn_gate", "ffn_up", "ffn_gate_shexp",
           "ffn_up_shexp")
_ROW = ("attn_output", "ffn_down", "ffn_down_shexp")


def _part(name: str) -> tuple[str, str]:
    """blk.3.attn_q.weight -> (attn_q, weight); blk.3.shortconv.in_proj.weight ->
    (shortconv.in_proj, weight)."""
    parts = [*name.split("."), "", ""]  # blk.3.ssm_a has no kind
    if parts[0] == "blk" and parts[2] == "shortconv":
        return f"shortconv.{parts[3]}", parts[4]
    return (parts[2], parts[3]) if parts[0] == "blk" else (parts[0], parts[1])


def shard(spec: ModelSpec, t: Tensor, layout: Parallel) -> Tensor:
    """``t`` cut to one GPU's share (the first GPU of its stage: the largest share).

    As vLLM's layers cut them: column-parallel (QKVParallelLinear, MergedColumnParallelLinear,
    ColumnParallelLinear) split the output rows and their bias, the KV heads max(1, kv / tp)
    per GPU; row-parallel (RowParallelLinear) split the input columns and keep the whole bias;
    VocabParallelEmbedding and ParallelLMHead hold pad64(V) / tp rows; FusedMoE splits every
    expert's width by tp, or with expert parallelism holds ceil(E / ep) whole experts; the
    attention sinks split by head; norms, routers, MLA's q_a and kv_a projections (replicated
    linear layers) and position tables are whole on every GPU. LFM2's ShortConv
    (``model_executor/layers/mamba/short_conv.py``): in_proj (MergedColumnParallelLinear of three
    d) and the convolution (ColumnParallelLinear over d) split their rows, out_proj
    (RowParallelLinear) its input columns."""
    tp = layout.tp
    shape = t.shape
    if t.role == "tower_column":  # the vision tower's QKV and fc1 / gate / up layers
        return t._replace(shape=(shape[0] // tp, *shape[1:]))
    if t.role == "tower_row":  # its out / o / fc2 / down layers: the bias whole
        return t._replace(shape=(shape[0], shape[1] // tp)) if len(shape) == 2 else t
    module, kind = _part(t.name)
    if module in ("token_embd", "output") and t.role in ("embedding", "head", "bias"):
        return t._replace(shape=(pad_vocab(spec.vocab) // tp, *shape[1:]))
    if module.endswith("_exps"):
        if layout.ep > 1:
            return t._replace(shape=(-(-shape[0] // layout.ep), *shape[1:]))
        if module == "ffn_down_exps":  # [E, d, f] weight, [E, d] bias
            return t._replace(shape=(*shape[:-1], shape[-1] // tp)) if kind == "weight" else t
        return t._replace(shape=(shape[0], shape[1] // tp, *shape[2:]))  # gate/up [E, f, ...]
    if module in ("attn_k", "attn_v"):
        per_gpu = max(1, spec.kv_heads // tp)
        return t._replace(shape=(shape[0] // spec.kv_heads * per_gpu, *shape[1:]))
    if module == "attn_sinks":
        return t._replace(shape=(shape[0] // tp,))
    if module.startswith("ssm_"):
        return _shard_state_mixer(spec, t, module, kind, tp)
    if module == "shortconv.out_proj":  # RowParallelLinear; in_proj and conv: column-parallel
        return t._replace(shape=(shape[0], shape[1] // tp)) if kind == "weight" else t
    if module.startswith("shortconv."):
        return t._replace(shape=(shape[0] // tp, *shape[1:]))
    if module in _COLUMN:
        return t._replace(shape=(shape[0] // tp, *shape[1:]))
    if module in _ROW and kind == "weight":
        return t._replace(shape=(shape[0], shape[1] // tp))
    return t


def _shard_state_mixer(spec: ModelSpec, t: Tensor, module: str, kind: str,
                       tp: int) -> Tensor:
    """A state-space or DeltaNet mixer's tensor cut as vLLM's MambaMixer, MambaMixer2 and
    Qwen3-Next's GatedDeltaNet cut it: the input projections, the convolution, the time step,
    A and D split by channel or head (column-parallel); x_proj (Mamba) and the output
    projection split by input column (row-parallel, the bias whole); Mamba-2's gated norm
    split, Jamba's dt/B/C norms and DeltaNet's per-head norm whole. With tp not dividing the
    Mamba-2 groups each GPU holds a copy of the groups its heads read: the B and C rows of
    the input projection and the convolution count tp groups (extra_groups_for_head_shards)."""
    shape = t.shape
    mixer = layer_kind(spec, t.layer) if t.layer is not None else ""
    if module in ("ssm_dt_norm", "ssm_b_norm", "ssm_c_norm"):
        return t
    if module == "ssm_norm":
        return t if mixer == "linear_attention" else t._replace(shape=(shape[0] // tp,))
    if module == "ssm_out" or (module == "ssm_x" and kind == "weight"):
        return t._replace(shape=(shape[0], shape[1] // tp)) if kind == "weight" else t
    rows = shape[0]
    if mixer in ("mamba2", "hybrid") and module in ("ssm_in", "ssm_conv1d") and \
            spec.ssm_groups % tp:
        rows += 2 * (tp - spec.ssm_groups) * spec.ssm_state
    return t._replace(shape=(rows // tp, *shape[1:]))


def stage_tensors(spec: ModelSpec, layout: Parallel, stage: int) -> tuple[Tensor, ...]:
    """The tensors one GPU of pipeline stage ``stage`` holds, cut to its share: the layers of
    the stage; the embeddings on the first stage; the final norm and the head on the last (with
    a tied head and pp > 1 the last stage holds its own copy of the embedding, as vLLM's
    ParallelLMHead does when the embedding is on another stage)."""
    return tuple(t for t, _ in _held(spec, layout, stage, ((t, 1) for t in model_tensors(spec))))


def stage_tensors_alike(spec: ModelSpec, layout: Parallel, stage: int
                        ) -> tuple[tuple[Tensor, int], ...]:
    """``stage_tensors(spec, layout, stage)`` with each block's tensors listed once for the
    stage's blocks built alike, each with how many tensors it stands for
    (``model_tensors_alike`` over the stage's layers): all that a sum over the stage's tensors
    needs (their bytes in a dtype, the allocator's tails), without a tensor per layer."""
    layers = pp_partition(spec.layers, layout.pp)[stage]
    return tuple(_held(spec, layout, stage, model_tensors_alike(spec, layers)))


def _held(spec: ModelSpec, layout: Parallel, stage: int, listed: Iterable[tuple[Tensor, int]]
          ) -> Iterator[tuple[Tensor, int]]:
    """Of ``listed`` (tensors, each with how many it stands for), those one GPU of stage
    ``stage`` holds, cut to its share (``stage_tensors``)."""
    layers = pp_partition(spec.layers, layout.pp)[stage]
    first, last = stage == 0, stage == layout.pp - 1
    # a block's tensor is cut once for the blocks that hold the same one: its name in the
    # block, shape, role and the block's mixer are all that ``shard`` reads of it
    cuts: dict[tuple[str, tuple[int, ...], str, str], tuple[int, ...]] = {}
    for t, n in listed:
        if t.role in TOWER_ROLES:  # every stage builds the vision tower (vllm_builds)
            keep = vllm_builds(spec, t.name)
        elif t.layer is not None:
            if t.layer in layers:
                same = (t.name.split(".", 2)[2], t.shape, t.role, layer_kind(spec, t.layer))
                shape = cuts.get(same)
                if shape is None:
                    shape = cuts[same] = shard(spec, t, layout).shape
                yield (t if shape == t.shape else
                       Tensor(t.name, shape, t.component, t.role, t.layer)), n
            continue
        elif t.name.startswith(("token_embd", "position_embd", "project_in")):
            keep = first
            if last and not first and t.name == "token_embd.weight" and spec.tied_embeddings:
                yield shard(spec, t, layout), n  # the last stage's copy, as its head
        else:  # output norm, output head, project_out
            keep = last
        if keep:
            yield shard(spec, t, layout), n


# compiled on first use (re caches it): only LLaVA and Mistral 3 towers are matched
_TOWER_LAYER = r"^v\.(?:encoder|transformer)\.layers\.(\d+)\."


def vllm_builds(spec: ModelSpec, name: str) -> bool:
    """Whether vLLM builds the vision-tower tensor ``name`` (``v.`` + transformers' name).

    The wrapper's __init__ builds the tower on every pipeline stage (no stage check: gemma3_mm.py,
    llava.py, mistral3.py); LLaVA and Mistral 3 build it only up to ``vision_feature_layer``
    and without the post-norm (llava.py's init_vision_tower_for_llava with
    require_post_norm=False): LLaVA-1.5's -2 leaves out CLIP's last layer."""
    tower = spec.vision
    if tower is None:
        return False
    if tower.projector not in ("llava", "mistral3"):
        return True
    if name.startswith("v.post_layernorm."):
        return False
    layer = re.match(_TOWER_LAYER, name)
    if layer is None:
        return True
    f = tower.feature_layer
    built = tower.layers + f + 1 if f < 0 else f
    return int(layer.group(1)) < built


def held_bytes(held: Iterable[tuple[Tensor, int]], dtype: str | None) -> int:
    """Bytes of the tensors ``held`` stands for (``stage_tensors_alike``: each with how many
    it stands for) in ``dtype`` (bf16 by default), rounded up once."""
    return bytes_for(sum(t.elements * n for t, n in held), dtype or "bf16")


def stage_weights(spec: ModelSpec, layout: Parallel, stage: int, dtype: str | None,
                  score_bias: bool) -> tuple[int, int, int]:
    """Bytes one GPU of stage ``stage`` holds of weights stored in ``dtype`` (bf16 by default):
    all its weights, its routed experts', and the caching allocator's unsplit tails of them
    (allocator.py); with ``score_bias``, the routers' score biases, stored and loaded whole on
    every GPU, among them. Sums over ``stage_tensors_alike``: each kind of block counted once."""
    held = stage_tensors_alike(spec, layout, stage)
    if score_bias:
        from specsheet.quant.tensors import score_bias_tensors

        layers = pp_partition(spec.layers, layout.pp)[stage]
        held += tuple((t, 1) for t in score_bias_tensors(spec, layers))
    weights = held_bytes(held, dtype)
    experts = held_bytes(tuple(p for p in held if "_exps." in p[0].name), dtype) \
        if spec.experts else 0
    return weights, experts, tail_bytes(held, dtype or "bf16")


def stored_bytes(spec: ModelSpec, tensors: tuple[Tensor, ...], dtype: str | None,
                 quant: str | None, group_size: int | None, keep: tuple[str, ...] = (),
                 match: str = "exact", file_types: tuple[tuple[str, str], ...] = ()) -> int:
    """Bytes of ``tensors`` in ``dtype`` (rounded up once) or as ``quant`` stores them (a GGUF
    file's own ``file_types``, by tensor name, where given)."""
    if not tensors:
        return 0
    if quant is None:
        return held_bytes(((t, 1) for t in tensors), dtype)
    from specsheet.quant.layouts import quantized_bytes

    return quantized_bytes(spec, quant, group_size, dtype, tensors, keep, match,
                           file_types=dict(file_types) if file_types else None,
                           listed=False).weights_bytes


class Cut:
    """Where a plan takes a stage's tensors and their bytes from: computed each time they are
    asked (a serving plan of 10,000 layers lists a million tensors; nothing is kept). A plan
    search, which asks the same of every GPU it searches, passes its own
    (``plan.search.KeptCut``: the search's one cache)."""

    def stage_tensors(self, spec: ModelSpec, layout: Parallel, stage: int
                      ) -> tuple[Tensor, ...]:
        return stage_tensors(spec, layout, stage)

    def stage_weights(self, spec: ModelSpec, layout: Parallel, stage: int, dtype: str | None,
                      score_bias: bool) -> tuple[int, int, int]:
        return stage_weights(spec, layout, stage, dtype, score_bias)

    def stored_bytes(self, spec: ModelSpec, tensors: tuple[Tensor, ...], dtype: str | None,
                     quant: str | None, group_size: int | None, keep: tuple[str, ...] = (),
                     match: str = "exact", file_types: tuple[tuple[str, str], ...] = ()) -> int:
        return stored_bytes(spec, tensors, dtype, quant, group_size, keep, match, file_types)


COMPUTED = Cut()  # the cut of a plan made on its own
