"""The two ways of naming a checkpoint's tensors give one answer: name pattern by name pattern
(``names._by_pattern``: the names' digits written ``#`` and the tensors counted by pattern,
layer, type and shape) and module by module (``names._by_module``: each tensor looked at).
Checkpoints as transformers saves them (tests/data/shapes), quantized as AutoGPTQ, AutoAWQ and
DeepSeek-V3 store them, and copies tampered where grouping by pattern could go wrong."""

from __future__ import annotations

import json
from math import prod
from pathlib import Path

import pytest
from checkpoints import (
    DATA,
    Shapes,
    awq,
    fp8_block,
    gptq,
    hf_tensors,
    spec_of,
    transformers_checkpoint,
    write_checkpoint,
    write_safetensors,
)
from hypothesis import given
from hypothesis import strategies as st

from specsheet.quant.stored import Named, NamedTensors, TensorInfo
from specsheet.sources.weights.names import _by_module, _by_pattern, name_tensors
from specsheet.sources.weights.safetensors import read_safetensors

# the families whose names differ by whole numbers alone; the others have a digit inside a
# part (GPT-2's ln_1, Mixtral's w1, Pythia's dense_h_to_4h) and go module by module
BY_PATTERN = ["llama-3.2-1b", "qwen2.5-0.5b", "qwen3-0.6b", "gemma-2-2b", "mistral-7b-v0.1",
              "qwen3-30b-a3b", "qwen1.5-moe-a2.7b", "deepseek-v2-lite", "olmo-2-7b",
              "starcoder2-3b", "phi-3-mini-4k"]
BY_MODULE = ["mixtral-8x7b", "gpt2", "pythia-160m"]


def read(shapes: Shapes, tmp_path: Path) -> list[TensorInfo]:
    """The tensors of ``shapes`` as the safetensors reader reads them from a file."""
    return read_safetensors(write_safetensors(tmp_path / "model.safetensors", shapes)).tensors


def assert_one_answer(tensors: list[TensorInfo], layers: int | None) -> None:
    """name_tensors' answer is _by_module's, tensor by tensor."""
    answer, module = name_tensors(tensors, layers), _by_module(tensors, layers)
    assert answer.named.named() == module.named.named()
    assert list(answer.layouts.items()) == list(module.layouts.items())
    assert list(answer.group_sizes.items()) == list(module.group_sizes.items())
    assert len(answer.named) == len(tensors)


@pytest.mark.parametrize("name", BY_PATTERN + BY_MODULE)
def test_a_family_is_named_alike_both_ways(name: str, tmp_path: Path) -> None:
    config, shapes = transformers_checkpoint(name, dtype="BF16")
    tensors = read(shapes, tmp_path)
    layers = spec_of(config).layers
    assert (_by_pattern(tensors, layers) is not None) == (name in BY_PATTERN)
    assert_one_answer(tensors, layers)
    assert_one_answer(tensors, 1)  # the layers past the first go to other
    assert_one_answer(tensors, None)


QUANTIZED = {"gptq-int4 g32": lambda s: gptq(s, 32), "gptq-int8 g64": lambda s: gptq(s, 64, 8),
             "awq-int4 g64": lambda s: awq(s, 64), "fp8-block": fp8_block}


@pytest.mark.parametrize("layout", QUANTIZED)
def test_a_quantized_checkpoint_is_named_alike_both_ways(layout: str, tmp_path: Path) -> None:
    config, shapes = transformers_checkpoint("qwen3-30b-a3b", dtype="F16")
    tensors = read(QUANTIZED[layout](shapes), tmp_path)
    answer = _by_pattern(tensors, spec_of(config).layers)
    assert answer is not None
    assert list(answer.layouts) == [layout.split()[0]]
    assert_one_answer(tensors, spec_of(config).layers)


def deepseek_v3() -> tuple[int, Shapes]:
    """DeepSeek-V3's published tensors (its config.json in tests/data), in FP8 with a
    weight_scale_inv per Linear: 90,369 tensors in 61 layers."""
    config = json.loads((DATA / "deepseek-v3.json").read_text())
    return config["num_hidden_layers"], fp8_block(hf_tensors("deepseek_v2", spec_of(config)))


def test_deepseek_v3_is_named_by_its_patterns(tmp_path: Path) -> None:
    layers, shapes = deepseek_v3()
    tensors = read(shapes, tmp_path)
    answer = _by_pattern(tensors, layers)
    assert answer is not None
    assert len(answer.named) == 90_369
    # every Linear of the blocks in fp8-block: attention's 5 in each of 61 layers, 3 dense
    # MLPs of 3, and 58 MoE layers of 256 experts and a shared expert (3 Linears each)
    assert answer.layouts == {"fp8-block": 61 * 5 + 3 * 3 + 58 * (256 + 1) * 3}
    assert len(answer.named.groups) < len(tensors) // 30
    assert_one_answer(tensors, layers)


def test_modules_of_one_pattern_that_store_different_tensors(tmp_path: Path) -> None:
    """An expert without its scale and another without its weight: as many weights as scales
    in the layer, but two modules that are not fp8-block."""
    layers, shapes = deepseek_v3()
    del shapes["model.layers.5.mlp.experts.17.down_proj.weight_scale_inv"]
    del shapes["model.layers.5.mlp.experts.18.down_proj.weight"]
    tensors = read(shapes, tmp_path)
    assert _by_pattern(tensors, layers) is None
    answer = name_tensors(tensors, layers)
    assert answer.layouts == {"fp8-block": 61 * 5 + 3 * 3 + 58 * (256 + 1) * 3 - 2, "fp8": 1}
    assert_one_answer(tensors, layers)


def test_a_module_of_a_pattern_shaped_otherwise(tmp_path: Path) -> None:
    layers, shapes = deepseek_v3()
    name = "model.layers.7.mlp.experts.200.up_proj.weight_scale_inv"
    shapes[name] = ("F32", (1, 1))  # per tensor, not per block: still fp8-block (the name)
    shapes["model.layers.7.mlp.experts.201.up_proj.weight"] = ("BF16", (2048, 7168))
    tensors = read(shapes, tmp_path)
    assert _by_pattern(tensors, layers) is None
    assert name_tensors(tensors, layers).layouts == {
        "fp8-block": 61 * 5 + 3 * 3 + 58 * (256 + 1) * 3 - 1}
    assert_one_answer(tensors, layers)


@pytest.mark.parametrize("names", [
    ["model.layers.0.mlp.weight", "model.layers.0.mlp\n.weight"],  # a line break
    ["model.layers.0.mlp.weight", "lonely"],  # no dot
    ["model.layers.0.mlp.weight", "model.layers.0.mlp.weight.absmax"],  # bitsandbytes
    ["model.layers.0.mlp.weight", "model.layers.0.mlp.experts_blocks"],  # gpt-oss
    ["model.layers.0.mlp.weight", "model.layers.0.mlp.fc1.weight"],  # a digit in a part
    ["model.layers.0.mlp.weight", "model.layers.0.mlp.0"],  # a digit in what it stores
    ["model.layers.0.mlp.weight", "model.layers.1.mlp.weight"],  # whole numbers: by pattern
    ["model.layers.\u0663.mlp.weight", "model.layers.3.mlp.weight"],  # Arabic-Indic three
])
def test_names_outside_the_patterns(names: list[str], tmp_path: Path) -> None:
    tensors = read(dict.fromkeys(names, ("BF16", (4, 4))), tmp_path)
    by_pattern = "model.layers.1.mlp.weight" in names or "\u0663" in names[0]
    assert (_by_pattern(tensors, 2) is not None) == by_pattern
    assert_one_answer(tensors, 2)
    assert_one_answer(tensors, None)


def test_the_api_lists_each_tensor_named(tmp_path: Path) -> None:
    """``Inspection.named``: a list of every tensor in the file's order with its component,
    whose parameters add up to count's components (transformers' tensors of Qwen3-30B-A3B
    made small, in fp8-block)."""
    import specsheet

    config, shapes = transformers_checkpoint("qwen3-30b-a3b", dtype="BF16")
    folder = write_checkpoint(tmp_path / "qwen3", config, fp8_block(shapes))
    inspection = specsheet.inspect(str(folder))
    named = inspection.named
    assert isinstance(named, list) and all(isinstance(n, Named) for n in named)
    assert [n.tensor.name for n in named] == list(fp8_block(shapes))
    params: dict[str, int] = {}
    for n in named:
        params[n.component] = params.get(n.component, 0) + n.params
    components = specsheet.report(specsheet.load(str(folder))).params.components()
    assert params == {c: v for c, v in components.items() if v}
    assert {n.layout for n in named if n.tensor.name.endswith("proj.weight")} == {"fp8-block"}
    assert named == inspection.named  # made anew, the same values
    # two inspections of one checkpoint are equal, its tensors grouped by pattern or not
    again = specsheet.inspect(str(folder))
    assert again == inspection and again.tensors is not inspection.tensors
    assert inspection.tensors == NamedTensors.of(named)
    assert inspection.tensors != NamedTensors.of(named[1:] + named[:1])


# names as checkpoints spell them: a block's prefix and number, modules with an expert's
# number or a digit in a part, what a quantized Linear stores beside its weight
_PREFIXES = ["model.layers.", "blk.", "transformer.h.", "model.decoder.layers.", "model."]
_MODULES = ["self_attn.q_proj", "self_attn.o_proj", "mlp.experts.{e}.down_proj",
            "mlp.experts.{e}.gate_proj", "mlp.gate", "input_layernorm", "mlp.fc1", "ln_1",
            "attn.c_attn", "vision_tower.blocks.{e}.proj", "embed_tokens", "lm_head", "norm"]
_STORES = ["weight", "bias", "weight_scale_inv", "weight_scale", "qweight", "qzeros", "scales",
           "g_idx", "input_scale"]
_KINDS = [("BF16", (8, 4)), ("BF16", (8,)), ("F8_E4M3", (8, 4)), ("F32", (1, 1)),
          ("I32", (1, 8)), ("F16", (1, 8)), ("I8", (8, 4)), ("F32", ())]


@st.composite
def checkpoints(draw: st.DrawFn) -> list[TensorInfo]:
    names = draw(st.lists(st.builds(
        lambda prefix, layer, module, expert, stores: (
            f"{prefix}{layer}.{module.format(e=expert)}.{stores}"),
        st.sampled_from(_PREFIXES), st.sampled_from(["0", "1", "2", "10", "11", "03", "\u0663"]),
        st.sampled_from(_MODULES), st.sampled_from(["0", "1", "7", "12", "\u0667"]),
        st.sampled_from(_STORES)), min_size=1, max_size=40, unique=True))
    tensors = []
    for name in names:
        dtype, shape = draw(st.sampled_from(_KINDS))
        nbytes = prod(shape) * {"BF16": 2, "F16": 2, "F32": 4, "I32": 4}.get(dtype, 1)
        tensors.append(TensorInfo(name, dtype, shape, nbytes, "model.safetensors", 0))
    return tensors


@given(checkpoints(), st.sampled_from([None, 0, 1, 2, 11, 12]))
def test_any_names_are_named_alike_both_ways(tensors: list[TensorInfo],
                                             layers: int | None) -> None:
    assert_one_answer(tensors, layers)


@pytest.mark.parametrize("layer", ["3", "\u0663"])  # an ASCII three, an Arabic-Indic three
def test_an_experts_weight_and_another_experts_scale(layer: str, tmp_path: Path) -> None:
    """One expert's weight and another's scale: one tensor of each kind in the pattern and
    layer, but two modules, neither of them fp8-block."""
    tensors = read({f"model.layers.{layer}.mlp.experts.7.down_proj.weight": ("F8_E4M3", (8, 4)),
                    f"model.layers.{layer}.mlp.experts.1.down_proj.weight_scale_inv": (
                        "F32", (1, 1))}, tmp_path)
    assert _by_pattern(tensors, 4) is None
    assert name_tensors(tensors, 4).layouts == {"fp8": 1}
    assert_one_answer(tensors, 4)


@pytest.mark.parametrize("empty", ["qzeros", "scales"])
def test_a_quantized_module_with_a_scalar_beside_its_qweight(empty: str) -> None:
    """A qzeros or scales of shape () (found by the test above: an IndexError, a traceback
    from `specsheet inspect`) has no columns to read the bits or N from: GPTQ's default 4
    bits, AWQ's N of 8 a packed column, both ways alike."""
    def tensor(name: str, shape: tuple[int, ...], dtype: str = "I32") -> TensorInfo:
        return TensorInfo(f"model.layers.0.self_attn.q_proj.{name}", dtype, shape,
                          4 * prod(shape), "model.safetensors", 0)

    tensors = [tensor("qweight", (8, 4)), tensor("qzeros", (1, 1)), tensor("scales", (1, 4), "F16")]
    tensors = [tensor(t.name.rsplit(".", 1)[1], ()) if t.name.endswith(empty) else t
               for t in tensors]
    assert_one_answer(tensors, None)
    layouts = name_tensors(tensors, None).layouts
    assert list(layouts) == ["gptq-int4" if empty == "qzeros" else "awq-int4"]
