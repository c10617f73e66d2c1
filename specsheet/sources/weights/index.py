"""A sharded checkpoint's ``model.safetensors.index.json``: its weight_map of tensor names to
shard files, and its agreement with what the shards hold. A folder's index (files.py) and a
Hub repository's (remote.py) are checked alike, with the same messages; each reader finds the
shards it names in its own place.

As vLLM loads such a checkpoint, the index says which files to read and the files say what
they hold (vllm/model_executor/model_loader/weight_utils.py: ``filter_duplicate_safetensors_files``
keeps the files the weight_map names, ``safetensors_weights_iterator`` yields every tensor of
each): a tensor of a shard that the index does not name is read and counted like the others.
A name the index maps to a shard that does not hold it, or a tensor in two shards, is
refused."""

from __future__ import annotations

from itertools import islice

from specsheet.errors import SpecError, quoted
from specsheet.quant.stored import TensorRow, row_name
from specsheet.sources.weights.tensor import check_tensor_count, check_unique


def weight_map_of(data: object, origin: str) -> tuple[dict[str, str], list[str]]:
    """The weight_map of the index ``data`` (its parsed JSON), and its shards in the order of
    their first tensor; SpecError unless it maps at least one and at most MAX_TENSORS tensor
    names to shard names."""
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    expected = f"{origin}: expected a mapping with a weight_map of tensor names to shard files"
    if not isinstance(weight_map, dict):
        raise SpecError(expected)
    try:  # each shard once, in the order of its first tensor
        shards = dict.fromkeys(weight_map.values())
    except TypeError:  # a list or a mapping for a shard
        raise SpecError(expected) from None
    if not {str}.issuperset(map(type, shards)):  # JSON's text is a str, never a subclass
        raise SpecError(expected)
    check_tensor_count(len(weight_map), origin)
    if not shards:
        raise SpecError(f"{origin}: the weight_map names no tensors")
    return weight_map, list(shards)


def check_shards(weight_map: dict[str, str], shards: list[str], counts: list[int],
                 tensors: list[TensorRow], origin: str) -> None:
    """SpecError unless every name of ``weight_map`` is a tensor of the shard it names, and no
    tensor is in two shards: ``tensors`` are the shards', ``counts[i]`` of them read from
    ``shards[i]``, in turn. A tensor the index does not name is no fault."""
    # every name of the index in the shard it names, and as many tensors as names: then the
    # tensors are the index's names, one each (N names in N places), each where the index
    # says and none in two shards. Looked up in the index's order, each in its shard's set,
    # a lookup lands near the one before; each tensor's name looked up in the index jumped
    # across all of it (as many instructions, a third more time for DeepSeek-V3's)
    in_order = map(row_name, tensors)
    held = {shard: set(islice(in_order, count)) for shard, count in zip(shards, counts,
                                                                          strict=True)}
    if len(tensors) == len(weight_map) and all(map(
            set.__contains__, map(held.__getitem__, weight_map.values()), weight_map)):
        return
    held_in: list[str] = []  # the shard of each tensor
    for shard, count in zip(shards, counts, strict=True):
        held_in += [shard] * count
    where = dict(zip(map(row_name, tensors), held_in, strict=True))
    if len(where) != len(tensors):  # a name in two shards (each once: no set of the names)
        check_unique(tensors)
    for name, shard in weight_map.items():  # the first fault in the index's order
        found = where.get(name)
        if found != shard:
            but = "which does not hold it" if found is None else f"but {found} holds it"
            raise SpecError(f"{origin}: maps tensor {quoted(name)} to {shard}, {but}")
