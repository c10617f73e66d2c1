"""PyTorch's CUDA caching allocator: what a weight tensor adds to ``torch.cuda.memory_allocated``.

vLLM's "Model loading took X GiB" (and V0's "Loading model weights took") is the difference of
``torch.cuda.memory_allocated`` over the load (``DeviceMemoryProfiler``), and the allocator
counts a tensor by the block it hands out, not by the bytes asked for. From
``c10/cuda/CUDACachingAllocator.cpp`` at commit ``001074d2`` (pytorch/pytorch):

- ``round_size``: every request is rounded up to a multiple of 512 bytes (kMinBlockSize);
- ``get_pool``: a request of 1 MiB or less (kSmallSize) is served from the small pool, packed in
  2 MiB buffers (kSmallBuffer) and always split at 512 bytes: it counts its rounded size;
- ``get_allocation_size``: a larger request that no cached block serves gets a new segment of
  20 MiB (kLargeBuffer) below 10 MiB (kMinLargeAlloc), else its size rounded up to 2 MiB
  (kRoundLarge);
- ``should_split``: a large-pool block is split only when the remainder is over 1 MiB
  (``remaining > kSmallSize``); otherwise the request takes the whole block;
- ``alloc_found_block``: ``allocated_bytes`` grows by ``block->size``, the block handed out.

So a tensor of 10 MiB or more whose size is within 1 MiB under a 2 MiB boundary counts up to
that boundary: a 35 MiB qkv_proj takes its 36 MiB segment whole. vLLM allocates one tensor per
parameter of its fused layers (QKVParallelLinear's qkv_proj, MergedColumnParallelLinear's
gate_up_proj, FusedMoE's w13 and w2), on each GPU its shard, so the rule is applied to those
(``allocations``). Counted as if each tensor got a new segment: one served instead from a
cached remainder (the rest of a 20 MiB buffer, say) may keep or lose its tail differently.
"""

from __future__ import annotations

from collections.abc import Iterable

from specsheet.model.memory import bytes_for
from specsheet.quant.tensors import Tensor

MIN_BLOCK_SIZE = 512  # kMinBlockSize
SMALL_SIZE = 1 << 20  # kSmallSize: the largest small-pool request
SMALL_BUFFER = 2 << 20  # kSmallBuffer
LARGE_BUFFER = 20 << 20  # kLargeBuffer
MIN_LARGE_ALLOC = 10 << 20  # kMinLargeAlloc
ROUND_LARGE = 2 << 20  # kRoundLarge

# GGUF's separate projections that vLLM holds as one fused parameter, by module
_FUSED = {"attn_q": "attn_qkv", "attn_k": "attn_qkv", "attn_v": "attn_qkv",
          "ffn_gate": "ffn_gate_up", "ffn_up": "ffn_gate_up",
          "ffn_gate_exps": "ffn_w13_exps", "ffn_up_exps": "ffn_w13_exps",
          "ffn_gate_shexp": "ffn_gate_up_shexp", "ffn_up_shexp": "ffn_gate_up_shexp"}


def round_size(size: int) -> int:
    """``round_size``: up to a multiple of 512 bytes (512 at least)."""
    return max(MIN_BLOCK_SIZE, -(-size // MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE)


def allocation_size(size: int) -> int:
    """``get_allocation_size``: the segment cudaMalloc'd for a request no cached block serves."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return -(-size // ROUND_LARGE) * ROUND_LARGE


def allocated_bytes(size: int) -> int:
    """The block a request of ``size`` bytes holds, served by a new segment: its rounded size,
    or in the large pool the whole segment when the remainder is 1 MiB or less."""
    rounded = round_size(size)
    if rounded <= SMALL_SIZE:
        return rounded
    block = allocation_size(rounded)
    return rounded if block - rounded > SMALL_SIZE else block


def allocations(held: Iterable[tuple[Tensor, int]], dtype: str) -> list[tuple[int, int]]:
    """The bytes of each tensor vLLM allocates for the tensors ``held`` stands for (one GPU's
    shards, each with how many tensors of its blocks it stands for:
    ``sharding.stage_tensors_alike``) in ``dtype``, each with how many such allocations there
    are: q, k and v as one qkv_proj (weight and bias apart), gate and up as one gate_up_proj,
    the routed experts' gate and up as one w13, the shared expert's likewise; the rest one
    each."""
    fused: dict[tuple[int | None, str, str], tuple[int, int]] = {}
    for t, n in held:
        parts = t.name.split(".")
        fused_as = _FUSED.get(parts[2]) if t.layer is not None and len(parts) == 4 else None
        key = (t.layer, fused_as, parts[3]) if fused_as else (t.layer, t.name, "")
        elements = fused.get(key, (0, n))[0]
        fused[key] = (elements + t.elements, n)
    return [(bytes_for(elements, dtype), n) for elements, n in fused.values()]


def tail_bytes(held: Iterable[tuple[Tensor, int]], dtype: str) -> int:
    """What the allocator counts beyond the tensors' own bytes: the 512-byte rounding and the
    segment tails of 1 MiB or less it does not split off."""
    return sum((allocated_bytes(size) - size) * n for size, n in allocations(held, dtype))
