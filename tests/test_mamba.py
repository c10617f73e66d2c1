"""Standalone Mamba-1 models (model_types mamba and falcon_mamba), derived by hand.

tests/test_golden.py checks every figure of mamba-130m, mamba-2.8b and falcon-mamba-7b against
transformers 5.24 (MambaForCausalLM, FalconMambaForCausalLM on the meta device); these tests
write the same figures out from the layer's shapes, so that a golden and its derivation agree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.errors import SpecError
from specsheet.figures import build_report
from specsheet.model.memory import kv_cache
from specsheet.model.params import count_params
from specsheet.sources.hf_config.families import fields_from_hf_config
from specsheet.sources.resolve import load_file, load_preset

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
runner = CliRunner()


def golden(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((TESTS / "golden" / f"{name}.json").read_text())
    return result


def mixer(d: int, inner: int, state: int, rank: int, kernel: int, bias: bool = False,
          conv_bias: bool = True) -> int:
    """One MambaMixer as transformers builds it: in_proj d -> 2 d_in, conv1d (depthwise,
    d_in x kernel, with its bias), x_proj d_in -> R + 2N (no bias), dt_proj R -> d_in (with
    its bias), A_log d_in x N, D d_in, out_proj d_in -> d."""
    return (d * 2 * inner + (2 * inner if bias else 0)
            + inner * kernel + (inner if conv_bias else 0)
            + inner * (rank + 2 * state)
            + rank * inner + inner
            + inner * state + inner
            + inner * d + (d if bias else 0))


def test_mamba_130m_by_component() -> None:
    """d 768, d_in 1,536, N 16, R 48, kernel 4, 24 layers, V 50,280, the head tied."""
    params = count_params(load_file(DATA / "mamba-130m.json").spec)
    per_layer = mixer(768, 1536, 16, 48, 4)
    assert per_layer == 3_770_880
    assert params.ssm == 24 * per_layer == 90_501_120
    assert params.norms == 24 * 768 + 768  # one RMSNorm a block, and norm_f
    assert params.token_embedding == 50280 * 768
    assert params.output_head == 0
    assert params.attention == params.mlp == 0
    assert params.total == 129_135_360 == golden("mamba-130m")["total"]


def test_falcon_mamba_7b_by_component() -> None:
    """Falcon Mamba 7B: d_in is its intermediate_size (8,192), not its expand (16) x 4,096,
    as transformers reads it; the RMSNorms on dt, B and C hold no parameters
    (FalconMambaWeightlessRMSNorm keeps a buffer of ones); the head is untied."""
    params = count_params(load_file(DATA / "falcon-mamba-7b.json").spec)
    assert params.ssm == 64 * mixer(4096, 8192, 16, 256, 4)
    assert params.norms == 64 * 4096 + 4096
    assert params.token_embedding == params.output_head == 65024 * 4096
    assert params.total == 7_272_665_088 == golden("falcon-mamba-7b")["total"]


def test_falcon_mamba_counts_as_mamba() -> None:
    """The weightless norms change neither a count nor a FLOP: the same file read as mamba
    gives every figure of falcon_mamba."""
    data = json.loads((DATA / "falcon-mamba-7b.json").read_text())
    falcon, _, _ = fields_from_hf_config(data, "falcon")
    mamba, _, _ = fields_from_hf_config({**data, "model_type": "mamba"}, "mamba")
    assert falcon == mamba


def test_time_step_rank_auto_and_expand() -> None:
    """time_step_rank "auto" is ceil(hidden_size / 16); without intermediate_size, d_in is
    expand x hidden_size (MambaConfig.__post_init__)."""
    fields, _, _ = fields_from_hf_config(
        {"model_type": "mamba", "hidden_size": 1000, "expand": 3, "time_step_rank": "auto"}, "c")
    assert fields["ssm_dt_rank"] == 63
    assert fields["ssm_inner"] == 3000
    assert fields["tied_embeddings"] is True  # MambaConfig's default


def test_a_time_step_rank_that_is_not_a_count_is_refused() -> None:
    with pytest.raises(SpecError, match="time_step_rank"):
        fields_from_hf_config({"model_type": "mamba", "time_step_rank": "half"}, "c")


def test_the_state_as_transformers_cache_holds_it() -> None:
    """Per layer, transformers' cache (LinearAttentionLayer) holds a convolution state of
    1 x d_in x kernel in the model's dtype and the scan's state 1 x d_in x N in float32 (the
    discretised A is float32, so is the state the scan returns). Mamba 2.8B: 64 layers of
    d_in 5,120, N 16, kernel 4. No keys or values at all."""
    spec = load_file(DATA / "mamba-2.8b.json").spec
    conv, recurrent = 5120 * 4, 5120 * 16
    bf16 = kv_cache(spec, 8, "bf16")
    assert (bf16.conv_state_elements, bf16.recurrent_state_elements) == (64 * conv,
                                                                        64 * recurrent)
    assert bf16.state_bytes == 64 * (2 * conv + 4 * recurrent) == 23_592_960
    assert bf16.bytes_per_token == 0
    assert kv_cache(spec, 100_000, "bf16").bytes_per_request == bf16.state_bytes
    # the checkpoint's own dtype, float32: 26,214,400 bytes, what transformers' cache held
    # when built from the config's torch_dtype (a first run of scripts/make_goldens.py)
    assert kv_cache(spec, 8, "fp32").state_bytes == 64 * 4 * (conv + recurrent) == 26_214_400
    g = golden("mamba-2.8b")["state"]
    assert (g["conv_elements"], g["recurrent_elements"], g["bytes"]) == (
        64 * conv, 64 * recurrent, 23_592_960)


def test_forward_flops_of_mamba_130m_at_8_tokens() -> None:
    """Matrix multiplications of one 8-token forward, divided by 8: per layer the projections
    (in, x, dt, out), the depthwise convolution as FlopCounterMode counts aten.convolution
    (2 x d_in x kernel x (8 + 3) output positions, its padding's included) and the scan, one
    step per token, whose only product is C·h (2 x d_in x N); then the tied head."""
    tokens, d, inner, n, rank = 8, 768, 1536, 16, 48
    projections = 2 * tokens * (d * 2 * inner + inner * (rank + 2 * n) + rank * inner
                                + inner * d)
    conv = 2 * inner * 4 * (tokens + 3)
    scan = 2 * inner * n * tokens
    head = 2 * 50280 * d * tokens
    per_token = (24 * (projections + conv + scan) + head) // tokens
    report = build_report(load_file(DATA / "mamba-130m.json"), tokens=tokens)
    assert report.flops.total == per_token == golden("mamba-130m")["flops_per_token"]["8"]
    assert report.flops.attention_context == report.flops.mlp == 0


@pytest.mark.parametrize("name", ["mamba-130m", "mamba-2.8b", "falcon-mamba-7b"])
def test_presets_are_the_configs(name: str) -> None:
    preset = load_preset(name)
    assert preset.spec == load_file(DATA / f"{name}.json").spec
    assert count_params(preset.spec).total == golden(name)["total"]


def test_serve_gives_each_layer_its_vllm_state_page() -> None:
    """vLLM's MambaStateShapeCalculator.mamba1_state_shape: per layer (kernel - 1) x d_in / tp
    convolution values and d_in / tp x N scan values, in the model's dtype; no KV per token."""
    result = runner.invoke(app, ["serve", "mamba-2.8b", "--gpu", "h100-sxm", "--json"])
    assert result.exit_code == 0, result.stderr
    memory = json.loads(result.stdout)["memory_per_gpu"]
    assert memory["kv_bytes_per_token"] == 0
    assert memory["state_bytes_per_request"] == 64 * (3 * 5120 + 5120 * 16) * 2 == 12_451_840
    result = runner.invoke(app, ["serve", "mamba-2.8b", "--gpu", "h100-sxm", "--tp", "2",
                                 "--json"])
    assert result.exit_code == 0, result.stderr
    memory = json.loads(result.stdout)["memory_per_gpu"]
    assert memory["state_bytes_per_request"] == 64 * (3 * 2560 + 2560 * 16) * 2


def test_count_on_the_command_line() -> None:
    result = runner.invoke(app, ["count", str(DATA / "falcon-mamba-7b.json"), "--json"])
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["params"]["total"] == 7_272_665_088
    assert document["kv_cache"]["layers_by_kind"] == {"mamba": 64}
