"""specsheet fit: llama.cpp's placement of a GGUF on GPUs and the host, checked against the
buffers real llama.cpp and Ollama runs printed (tests/data/local_logs.yaml), an independent
derivation of the reference case, and a brute-force search for the automatic settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import specsheet
import specsheet.api.fit
from specsheet.api.fit import FitRequest, fit
from specsheet.cli.app import app
from specsheet.plan.local import (
    ComputeShape,
    Device,
    LocalSetup,
    LocalTensor,
    cuda_alloc,
    group_tensors,
    layer_devices,
    longest_ctx,
    place,
)
from specsheet.views.fit import COMPUTE_BAND
from tests.test_fit_logs import log_request

runner = CliRunner()
MIB = 1 << 20
LOGS = yaml.safe_load((Path(__file__).parent / "data" / "local_logs.yaml").read_text("utf-8"))
PLACED = [log for log in LOGS if "synthetic" not in log and "hybrid" not in log]
SYNTHETIC = [log for log in LOGS if "synthetic" in log]
HYBRID = [log for log in LOGS if "hybrid" in log]
PAGE = 16384  # Apple Silicon's page: Metal maps a file range in whole pages


def printed(n: int) -> str:
    """Bytes as llama.cpp prints a buffer: %8.2f of n / 1024 / 1024."""
    return f"{n / 1024.0 / 1024.0:.2f}"


# ---- the reference case: Llama 3 8B Q4_K_M, every layer on one 24 GB GPU, ctx 8192 ---------

def q4k(n: int) -> int:  # 144 bytes per 256 values
    return n // 256 * 144


def q6k(n: int) -> int:  # 210 bytes per 256 values
    return n // 256 * 210


def test_reference_case_derived_by_hand() -> None:
    """Q4_K_M gives Q6_K to output.weight and to attn_v and ffn_down of the layers with
    i < n/8, i >= 7n/8 or (i - n/8) % 3 == 2 (llama-quant.cpp use_more_bits): 16 of 32."""
    d, kv, ff, vocab = 4096, 1024, 14336, 128256
    layer = 2 * q4k(d * d) + 2 * q4k(d * kv) + 3 * q4k(d * ff) + 2 * d * 4
    more = sum(1 for i in range(32) if i < 4 or i >= 28 or (i - 4) % 3 == 2)
    extra = (q6k(d * kv) - q4k(d * kv)) + (q6k(d * ff) - q4k(d * ff))
    gpu = 32 * layer + more * extra + q6k(vocab * d) + d * 4
    host = q4k(vocab * d)
    cache = 8192 * 32 * (kv + kv) * 2
    result = runner.invoke(app, ["fit", "llama3-8b", "--gpu", "rtx-4090", "--ctx", "8192",
                                 "--json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    (device,) = doc["devices"]
    assert device["model_bytes"] == gpu == 4_617_396_224
    assert doc["host"]["model_bytes"] == host == 295_501_824
    assert device["kv_bytes"] == cache == 1_073_741_824
    # the lines llama.cpp prints for that file (tests/data/local_logs.yaml L14, L15)
    assert (printed(gpu), printed(host), printed(cache)) == ("4403.49", "281.81", "1024.00")
    assert doc["layers"] == {"total": 33, "blocks": 32, "on_gpu": 33, "by_device": [
        {"name": "CUDA0", "blocks": 32, "output": True},
        {"name": "CPU", "blocks": 0, "output": False}]}
    assert doc["fits"] is True and doc["fit"]["verdict"] == "fits"
    assert doc["command"][:7] == ["llama-server", "-m", "llama3-8b-q4_k_m.gguf", "-ngl", "33",
                                  "--ctx-size", "8192"]


def test_reference_table_prints_llamacpp_figures() -> None:
    result = runner.invoke(app, ["fit", "llama3-8b", "--gpu", "rtx-4090", "--ctx", "8192"])
    assert result.exit_code == 0, result.stderr
    assert "4,403.49" in result.stdout and "281.81" in result.stdout
    assert "1,024.00" in result.stdout and "33/33 layers" in result.stdout


def test_output_rule_decides_which_layer_ngl_32_leaves() -> None:
    """-ngl 32: before PR #18148 the output layer stays on the host; after it, block 0 does
    (block 0 is a Q6_K-extra layer: 4403.49 - 132.50 MiB)."""
    new = fit("llama3-8b", FitRequest(gpu=("rtx-4090",), ctx=8192, n_gpu_layers=32))
    old = fit("llama3-8b", FitRequest(gpu=("rtx-4090",), ctx=8192, n_gpu_layers=32,
                                      output_rule="blocks-first"))
    assert printed(new.placement.devices[0].model_bytes) == "4270.99"
    assert printed(old.placement.devices[0].model_bytes) == "3992.50"
    assert new.placement.devices[0].output and not old.placement.devices[0].output
    assert new.placement.host.layers == 1 and old.placement.host.output


def test_more_gpu_layers_than_the_model_has_is_all_of_them() -> None:
    """llama.cpp offloads min(n_gpu_layers, n_layer + 1) layers (llama_model::load_tensors), so
    the usual -ngl 999 is all 33 of Llama 3 8B: the same placement, and the command line says
    what llama.cpp does."""
    request = FitRequest(gpu=("rtx-4090",), ctx=8192, n_gpu_layers=33)
    every = fit("llama3-8b", request)
    many = fit("llama3-8b", request._replace(n_gpu_layers=999))
    assert many.placement == every.placement and many.placement.on_gpu == 33
    assert many.command == every.command and "33" in many.command
    assert "GPU layers 999: all 33 (llama.cpp takes a larger count as all of them)" in many.notes
    result = runner.invoke(app, ["fit", "llama3-8b", "--gpu", "rtx-4090", "-ngl", "999"])
    assert result.exit_code == 0 and "-ngl 33 " in result.stdout


# ---- the logs ------------------------------------------------------------------------------

def _buffers(log: dict[str, Any]) -> dict[str, Any]:
    model = specsheet.load(log["model"], **log.get("set", {}))
    placement = fit(model, log_request(log)).placement
    return {b.name: b for b in (*placement.devices, placement.host)}


def test_the_logs_cover_the_cases_the_issue_names() -> None:
    ids = {log["id"] for log in LOGS}
    assert len(LOGS) >= 10 and len(ids) == len(LOGS)
    assert any(log["ngl"] < 48 for log in PLACED)  # partial offload (L3)
    assert any(len(set(log["gpus"])) == 2 for log in PLACED)  # two uneven GPUs (L23)
    assert any(log.get("cache_type_v", "f16").startswith("q") for log in LOGS)  # L17, L19
    assert any(log.get("n_cpu_moe") for log in PLACED)  # experts on the host (L23)
    assert SYNTHETIC  # sliding window (Gemma)
    assert any("apple" in log["gpus"][0] for log in PLACED)  # Metal (L16, L9)
    assert any(specsheet.load(log["model"]).spec.latent_attention for log in PLACED)  # L25
    assert HYBRID  # recurrent state (L26)
    assert all(log["source"] for log in LOGS)


@pytest.mark.parametrize("log", PLACED, ids=[log["id"] for log in PLACED])
def test_model_and_kv_buffers_equal_the_printed_rounding(log: dict[str, Any]) -> None:
    buffers = _buffers(log)
    for kind in ("model", "kv"):
        for name, mib in log["printed"].get(kind, {}).items():
            got = getattr(buffers[name], f"{kind}_bytes")
            if log.get("metal_pages") and kind == "model" and name == "Metal":
                # a mapped file range, rounded to whole pages by the Metal backend
                assert abs(got - mib * MIB) <= 2 * PAGE + 0.005 * MIB, (name, got / MIB)
            else:
                assert f"{got / MIB:.2f}" == f"{mib:.2f}", (kind, name, got / MIB)


@pytest.mark.parametrize("log", [g for g in PLACED if "compute" in g["printed"]],
                         ids=[g["id"] for g in PLACED if "compute" in g["printed"]])
def test_compute_buffers_within_the_estimate_band(log: dict[str, Any]) -> None:
    buffers = _buffers(log)
    low, high = COMPUTE_BAND
    for name, mib in log["printed"]["compute"].items():
        estimate = buffers[name].compute_bytes_estimate
        assert low <= mib * MIB / estimate <= high, (name, mib, estimate / MIB)


@pytest.mark.parametrize("log", SYNTHETIC, ids=[log["id"] for log in SYNTHETIC])
def test_sliding_window_caches(log: dict[str, Any]) -> None:
    from tests.test_fit_logs import sliding_placements

    p = sliding_placements(log)
    assert p[True].n_swa_cells == log["printed"]["swa_cells"] and p[False].n_swa_cells == 0

    def cache(keep: bool) -> int:
        return p[keep].devices[0].kv_bytes

    assert printed(cache(False)) == f"{log['printed']['kv_global']:.2f}"
    assert printed(cache(True)) == f"{log['printed']['kv_swa']:.2f}"


@pytest.mark.parametrize("log", HYBRID, ids=[log["id"] for log in HYBRID])
def test_recurrent_state_of_a_hybrid(log: dict[str, Any]) -> None:
    """The RS buffer: per gated-DeltaNet layer, f32 R of (d_conv - 1) x (d_inner + 2 x groups x
    d_state) and S of d_state x d_inner, one cell per sequence (llama-hparams.cpp n_embd_r,
    n_embd_s; llama-memory-recurrent.cpp); the attention layers hold none of it."""
    from tests.test_fit_logs import hybrid_placement

    p, kv = hybrid_placement(log)
    for name, mib in log["printed"]["rs"].items():
        assert printed(p.devices[0].kv_bytes) == f"{mib:.2f}", name
    # independently: Qwen3.5 9B's 24 DeltaNet layers, d_inner 32 x 128, 16 groups of 128
    r = sum(k.r_width for k in kv) * 4
    s = sum(k.s_width for k in kv) * 4
    assert r == 24 * 3 * (4096 + 2 * 16 * 128) * 4 and s == 24 * 128 * 4096 * 4
    assert (printed(r), printed(s)) == (f"{log['printed']['r']:.2f}", f"{log['printed']['s']:.2f}")


def test_mla_cache_of_the_current_conversion_derived_from_the_code() -> None:
    """A DeepSeek GGUF converted since PR #12801 (attn_k_b, attn_v_b; convert_hf_to_gguf.py
    writes key_length = kv_lora_rank + qk_rope_head_dim, value_length = kv_lora_rank, one KV
    head) caches 576 + 512 values a token and layer; the older conversion (attn_kv_b, as
    specsheet's own tensor list) every head, 16 x 192 + 16 x 128 (L25)."""
    from specsheet.api.fit import cache_layers

    spec = specsheet.load("deepseek-v2-lite").spec
    new, _ = cache_layers(spec, mla=True)
    old, _ = cache_layers(spec)
    assert {(k.k_width, k.v_width) for k in new} == {(512 + 64, 512)}
    assert {(k.k_width, k.v_width) for k in old} == {(16 * 192, 16 * 128)}
    from specsheet.plan.local import Device

    setup = LocalSetup(ctx=4096, n_gpu_layers=28, flash_attn="on")
    p = place([], 27, new, 0, ComputeShape(2048, 16, 102400),
              [Device("CUDA0", "CUDA", 24 << 30)], setup)
    assert p.devices[0].kv_bytes == 4096 * 27 * (576 + 512) * 2  # 229.50 MiB
    assert printed(p.devices[0].kv_bytes) == "229.50"


# ---- the rules one at a time ---------------------------------------------------------------

def test_layer_split_is_upper_bound_on_cumulative_fractions() -> None:
    """Two equal GPUs, -ngl 33 of Llama 3 8B: (il - 0) / 33 < 0.5 for il 0..16, so GPU 0 gets
    17 blocks and GPU 1 15 blocks and the output layer (llama-model.cpp load_tensors)."""
    where = layer_devices(32, 33, [1.0, 1.0])
    assert where.count(0) == 17 and where.count(1) == 16 and where[32] == 1


def test_cuda_pads_a_partial_row_and_to_128_bytes() -> None:
    # Q4_0 rows of 576 values: 576 % 512 = 64, so one extra row of 448 values (252 B)
    assert cuda_alloc("Q4_0", 576, 10 * 324) == -(-(10 * 324 + 448 // 32 * 18) // 128) * 128
    assert cuda_alloc("Q4_K", 4096, 4096 * 2304) == 4096 * 2304  # whole rows, already 128s
    assert cuda_alloc("F32", 100, 400) == 512  # not quantized: padding only


def test_parallel_splits_the_context_into_padded_streams() -> None:
    one = fit("llama3.1-8b", FitRequest(gpu=("rtx-4090",), ctx=10000, parallel=3,
                                        n_gpu_layers=33))
    # n_ctx 10000 -> 10240; per stream 10240 / 3 = 3413 -> 3584; n_ctx = 3 x 3584
    assert one.placement.n_ctx == 10752 and one.placement.n_ctx_seq == 3584
    assert one.placement.devices[0].kv_bytes == 3 * 3584 * 32 * 2048 * 2


def test_experts_of_the_first_layers_go_to_the_host() -> None:
    base = fit("qwen3-30b-a3b", FitRequest(gpu=("rtx-5090",), ctx=4096, n_gpu_layers=49))
    moved = fit("qwen3-30b-a3b", FitRequest(gpu=("rtx-5090",), ctx=4096, n_gpu_layers=49,
                                            n_cpu_moe=10))
    shift = base.placement.devices[0].model_bytes - moved.placement.devices[0].model_bytes
    host = moved.placement.host.model_bytes - base.placement.host.model_bytes
    # the same 30 tensors (3 expert tensors x 10 layers), padded to 128 B on the GPU only
    assert host > 3 * 10**9 and 0 <= shift - host < 30 * 128
    assert moved.command[-4:-2] == ("--n-cpu-moe", "10")


def test_a_tied_head_is_copied_to_the_output_device() -> None:
    """A tied embedding serves as the output layer: a second copy on its GPU."""
    full = fit("llama3.2-1b", FitRequest(gpu=("rtx-4090",), ctx=4096, n_gpu_layers=17))
    host = fit("llama3.2-1b", FitRequest(gpu=("rtx-4090",), ctx=4096, n_gpu_layers=16,
                                         output_rule="blocks-first"))
    embedding = full.placement.host.model_bytes
    assert full.placement.devices[0].model_bytes - host.placement.devices[0].model_bytes > \
        embedding


# ---- auto: brute force ---------------------------------------------------------------------

AUTO = [("llama3-8b", ("rtx-3090",), 8192), ("qwen3-30b-a3b", ("rtx-4090",), 8192),
        ("llama3.1-70b", ("rtx-4090", "rtx-3090"), 4096),
        ("mistral-7b", ("apple-m3-max",), 32768)]


@pytest.mark.parametrize(("model", "gpus", "ctx"), AUTO, ids=[a[0] for a in AUTO])
def test_auto_layers_is_the_most_that_fit(model: str, gpus: tuple[str, ...], ctx: int) -> None:
    got = fit(model, FitRequest(gpu=gpus, ctx=ctx, n_gpu_layers="auto"))
    n = got.placement.n_layer
    fitting = [k for k in range(n + 2)
               if fit(model, FitRequest(gpu=gpus, ctx=ctx, n_gpu_layers=k))
               .placement.fits_estimate]
    assert got.placement.on_gpu == max(fitting, default=0)


@pytest.mark.parametrize(("model", "gpus"), [("llama3.1-8b", ("rtx-3090",)),
                                             ("qwen3-8b", ("rtx-4090", "rtx-3090"))])
def test_auto_ctx_is_the_longest_that_fits(model: str, gpus: tuple[str, ...]) -> None:
    got = fit(model, FitRequest(gpu=gpus, ctx="auto", n_gpu_layers="auto"))
    spec = specsheet.load(model).spec
    every = spec.layers + 1
    step = 256
    longest = 0
    for c in range(step, spec.context + 1, step * 16):  # coarse sweep, then the fine one
        if fit(model, FitRequest(gpu=gpus, ctx=c, n_gpu_layers=every)).placement.fits_estimate:
            longest = c
    for c in range(longest, min(longest + step * 16, spec.context + 1), step):
        if fit(model, FitRequest(gpu=gpus, ctx=c, n_gpu_layers=every)).placement.fits_estimate:
            longest = c
    assert got.placement.n_ctx == longest and got.placement.on_gpu == every
    assert got.max_ctx == longest


def test_max_ctx_at_a_partial_placement() -> None:
    got = fit("llama3.1-8b", FitRequest(gpu=("rtx-3090",), ctx=4096, n_gpu_layers=20))
    assert got.max_ctx is not None
    at = fit("llama3.1-8b", FitRequest(gpu=("rtx-3090",), ctx=got.max_ctx, n_gpu_layers=20))
    assert at.placement.fits_estimate
    if got.max_ctx < 131072:
        over = fit("llama3.1-8b", FitRequest(gpu=("rtx-3090",), ctx=got.max_ctx + 256,
                                             n_gpu_layers=20))
        assert not over.placement.fits_estimate


@pytest.mark.parametrize("limit", [100, 256, 511, 512, 8192, 8200, 131072])
def test_longest_ctx_is_the_brute_force_answer(limit: int) -> None:
    """Against every threshold of a monotone "fits": the longest multiple of 256 within the
    limit that fits, None below 256; when the limit fits, that one placement is all it asks
    for (fit's usual case)."""
    top = max(limit // 256, 1) * 256
    for threshold in sorted({0, 255, 256, 257, 511, 512, 1000, 4096, top - 1, top, top + 1,
                             limit, 10**6}):
        asked: list[int] = []

        def fits(c: int, threshold: int = threshold, asked: list[int] = asked) -> bool:
            asked.append(c)
            return c <= threshold

        want = max((c for c in range(256, top + 1, 256) if c <= threshold), default=None)
        assert longest_ctx(fits, limit) == want, (limit, threshold)
        if threshold >= top:
            assert asked == [top]
        assert len(asked) == len(set(asked))  # no context is placed twice


# ---- the api and the CLI agree -------------------------------------------------------------

def test_to_dict_is_the_cli_document() -> None:
    result = runner.invoke(app, ["fit", "qwen3-30b-a3b", "--gpu", "rtx-4090,rtx-3090",
                                 "--ctx", "16k", "--n-cpu-moe", "8", "-ctk", "q8_0", "-ctv",
                                 "q8_0", "--json"])
    assert result.exit_code == 0, result.stderr
    api = fit("qwen3-30b-a3b", FitRequest(gpu=("rtx-4090", "rtx-3090"), ctx=16384,
                                          n_cpu_moe=8, cache_type_k="q8_0",
                                          cache_type_v="q8_0"))
    assert json.loads(json.dumps(api.to_dict())) == json.loads(result.stdout)


def test_ollama_defaults_by_vram() -> None:
    small = fit("llama3.1-8b", FitRequest(gpu=("l4",), engine="ollama"))
    big = fit("llama3.1-8b", FitRequest(gpu=("rtx-4090",), engine="ollama"))
    assert small.placement.n_ctx == 4096 and big.placement.n_ctx == 32768
    assert big.command[0] == "ollama" and ("num_ctx", "32768") in big.env


# ---- check --engine ------------------------------------------------------------------------

def test_check_with_an_engine_exits_1_when_a_limit_is_not_met() -> None:
    ok = runner.invoke(app, ["check", "llama3.1-8b", "--engine", "llama.cpp", "--gpu",
                             "rtx-4090", "--min-ctx", "64k", "--min-gpu-layers", "33"])
    assert ok.exit_code == 0, ok.stderr
    assert "every limit holds" in ok.stdout
    over = runner.invoke(app, ["check", "llama3.1-8b", "--engine", "llama.cpp", "--gpu",
                               "rtx-3090", "--quant", "gguf-f16", "--min-ctx", "128k",
                               "--min-gpu-layers", "33", "--json"])
    assert over.exit_code == 1, over.stderr
    doc = json.loads(over.stdout)
    assert doc["ok"] is False
    by = {c["figure"]: c for c in doc["checks"]}
    # 128k of f16 KV is 16 GiB, F16 weights 16 GB: not all on a 24 GB card
    assert by["layers.on_gpu"]["value"] < 33 and not by["layers.on_gpu"]["ok"]
    assert by["max_ctx"]["option"] == "--min-ctx"
    api = specsheet.api.fit.check_fit("llama3.1-8b", FitRequest(gpu=("rtx-3090",),
                                                                quant="gguf-f16"),
                                      min_ctx=131072, min_gpu_layers=33)
    assert json.loads(json.dumps(api.to_dict())) == doc


@pytest.mark.parametrize(("argv", "message"), [
    (["--min-ctx", "8k"], "options --min-ctx and --min-gpu-layers need --engine"),
    (["--engine", "llama.cpp", "--min-ctx", "8k", "--max-weights", "1GB"],
     "with --engine, check takes --gpu, --quant, --min-ctx and --min-gpu-layers"),
    (["--engine", "llama.cpp", "--gpu", "rtx-4090"], "option --min-ctx: a local check needs"),
    (["--engine", "llama.cpp", "--min-gpu-layers", "0"],
     "option --min-gpu-layers: expected a number above 0"),
])
def test_check_with_an_engine_bad_input(argv: list[str], message: str) -> None:
    result = runner.invoke(app, ["check", "llama3-8b", *argv])
    assert result.exit_code == 2 and result.stdout == ""
    assert message in result.stderr


def test_groups_made_under_other_patterns_are_made_again() -> None:
    """A search places tensors grouped once (group_tensors); groups made for other -ot
    patterns are not used: the tensor the pattern moves is on the host, byte for byte."""
    tensors = [LocalTensor("token_embd.weight", "q4_K", 4096, 1 << 20, 0),
               LocalTensor("blk.0.attn_q.weight", "q4_K", 4096, 3 << 20, 1 << 20),
               LocalTensor("blk.0.ffn_up_exps.weight", "q4_K", 4096, 8 << 20, 4 << 20),
               LocalTensor("output.weight", "q6_K", 4096, 2 << 20, 12 << 20)]
    setup = LocalSetup(ctx=4096, n_gpu_layers=2, overrides=((r"exps", "CPU"),))
    args = (1, [], 0, ComputeShape(4096, 32, 32000), [Device("CUDA0", "CUDA", 24 << 30)],
            setup)
    stale = place(group_tensors(tensors), *args)
    given = place(tensors, *args)
    assert stale == given == place(group_tensors(tensors, ["exps"]), *args)
    # the host maps the embedding and the experts: the file's range from 0 to 12 MiB
    assert given.host.model_bytes == 12 << 20 and given.host.expert_bytes == 8 << 20
    assert given.devices[0].model_bytes == (cuda_alloc("q4_K", 4096, 3 << 20)
                                            + cuda_alloc("q6_K", 4096, 2 << 20))


def test_override_tensor_patterns_match_in_order() -> None:
    """-ot 'blk\\.[0-9]\\.ffn_.*_exps=CPU' is --n-cpu-moe 10 (layers 0..9); a pattern wins
    over --n-cpu-moe (llama.cpp applies the overrides in order, -ot first here)."""
    ten = fit("qwen3-30b-a3b", FitRequest(gpu=("rtx-4090",), ctx=8192, n_gpu_layers=49,
                                          override_tensor=(r"blk\.[0-9]\.ffn_.*_exps=CPU",)))
    first = fit("qwen3-30b-a3b", FitRequest(gpu=("rtx-4090",), ctx=8192, n_gpu_layers=49,
                                            n_cpu_moe=20))
    base = fit("qwen3-30b-a3b", FitRequest(gpu=("rtx-4090",), ctx=8192, n_gpu_layers=49,
                                           n_cpu_moe=10))
    moved = base.placement.devices[0].model_bytes - first.placement.devices[0].model_bytes
    assert base.placement.devices[0].model_bytes == ten.placement.devices[0].model_bytes
    assert base.placement.host.model_bytes == ten.placement.host.model_bytes
    assert moved > 0
    kept = fit("qwen3-30b-a3b", FitRequest(gpu=("rtx-4090",), ctx=8192, n_gpu_layers=49,
                                           n_cpu_moe=20,
                                           override_tensor=(r"ffn_.*_exps=CUDA0",)))
    assert kept.placement.host.model_bytes < first.placement.host.model_bytes
    assert ten.command[-4:-2] == ("-ot", r"blk\.[0-9]\.ffn_.*_exps=CPU")


def test_wired_limit_sets_the_metal_working_set() -> None:
    default = fit("llama3-8b", FitRequest(gpu=("apple-m3-max",), ctx=8192))
    wired = fit("llama3-8b", FitRequest(gpu=("apple-m3-max",), ctx=8192, wired_limit_mb=26000))
    assert default.placement.devices[0].memory_bytes == 128 * 2**30 * 3 // 4
    assert wired.placement.devices[0].memory_bytes == 26000 * 2**20


def test_ollama_num_ctx_is_per_sequence() -> None:
    """Ollama runs llama-server -c num_ctx x parallel -np parallel (llm/llama_server.go)."""
    got = fit("llama3.1-8b", FitRequest(gpu=("rtx-4090",), ctx=8192, parallel=4,
                                        engine="ollama"))
    assert got.placement.n_ctx == 32768 and got.placement.n_ctx_seq == 8192
    assert dict(got.env)["num_ctx"] == "8192"
    assert dict(got.env)["OLLAMA_NUM_PARALLEL"] == "4"


# Qwen3-8B (trained on 40,960 tokens) asked for 49,152, as two public logs of real runs show
# it: llama-server allocates the cells and caps each slot (the server's slot setup), Ollama
# lowers num_ctx before it starts llama-server (llm/server.go, NewLlamaServer)
LLAMA_SERVER_LOG = (
    "W llama_context: n_ctx_seq (49152) > n_ctx_train (40960) -- possible training context "
    "overflow\n"
    "W srv    load_model: the slot context (49152) exceeds the training context of the model "
    "(40960) - capping")
OLLAMA_LOG = (
    'level=WARN source=server.go:114 msg="requested context size too large for model" '
    "num_ctx=49152 n_ctx_train=40960\n"
    "llama_context: n_ctx = 40960")


def test_a_context_past_the_trained_one_is_capped_as_llama_server_caps_it() -> None:
    asked = fit("qwen3-8b", FitRequest(gpu=("rtx-4090",), ctx=49152))
    trained = fit("qwen3-8b", FitRequest(gpu=("rtx-4090",), ctx=40960))
    # every cell asked for is allocated: 36 layers x 8 KV heads x 128 x K and V x 2 bytes
    per_token = 36 * 8 * 128 * 2 * 2
    assert asked.placement.devices[0].kv_bytes == 49152 * per_token
    capped = [n for n in asked.notes if "capping" in n]
    assert len(capped) == 1 and LLAMA_SERVER_LOG.splitlines()[1].split("load_model: ")[1] \
        in capped[0]
    assert f"--ctx-size 40960 gives a slot as much with {8192 * per_token / MIB:,.2f} MiB less" \
        in capped[0]
    assert not any("capping" in n for n in trained.notes)
    # llama.cpp pads the context to 256 cells: 40,961 is 41,216, past the trained context
    odd = fit("qwen3-8b", FitRequest(gpu=("rtx-4090",), ctx=40961))
    assert any('the slot context (41216) exceeds' in n for n in odd.notes)
    # four separate streams: each slot's share is what is capped
    four = fit("qwen3-8b", FitRequest(gpu=("rtx-4090",), ctx=4 * 49152, parallel=4))
    assert any("slot context (49152)" in n and "--ctx-size 163840 " in n for n in four.notes)
    shared = fit("qwen3-8b", FitRequest(gpu=("rtx-4090",), ctx=49152, parallel=4))
    assert not any("capping" in n for n in shared.notes)  # 12,288 a sequence
    # a trained context short of a multiple of 256 is capped at its padded cells: the log's
    # line, and no other --ctx-size to give (it would be padded alike)
    short = specsheet.load("qwen3-8b", context=1000)
    padded = fit(short, FitRequest(gpu=("rtx-4090",), ctx=1000)).notes
    assert [n for n in padded if "capping" in n] == [
        "each slot is capped at the trained context, 1,000 tokens: llama-server logs \"the "
        "slot context (1024) exceeds the training context of the model (1000) - capping\""]


def test_ollama_runs_the_trained_context_when_num_ctx_is_past_it() -> None:
    asked = fit("qwen3-8b", FitRequest(gpu=("rtx-4090",), ctx=49152, engine="ollama"))
    trained = fit("qwen3-8b", FitRequest(gpu=("rtx-4090",), ctx=40960, engine="ollama"))
    warning, context = OLLAMA_LOG.splitlines()
    assert asked.placement.n_ctx == int(context.rsplit("= ", 1)[1])
    assert asked.placement == trained.placement and asked.env == trained.env
    said = [n for n in asked.notes if "num_ctx 49,152" in n]
    assert len(said) == 1 and warning.split("msg=", 1)[1] in said[0]
    assert not any("capping" in n for n in asked.notes)  # the slot is the trained context


def test_mlx_places_a_context_past_the_trained_one_and_says_so() -> None:
    asked = fit("llama3-8b", FitRequest(engine="mlx", gpu=("apple-m3-max",), ctx=16384))
    assert asked.placement.devices[0].kv_bytes == 16384 * 32 * 2 * 1024 * 2
    assert sum("past the model's trained context (8,192)" in n for n in asked.notes) == 1
    trained = fit("llama3-8b", FitRequest(engine="mlx", gpu=("apple-m3-max",), ctx=8192))
    assert not any("trained context" in n for n in trained.notes)


# ---- MLX -----------------------------------------------------------------------------------

def test_mlx_4bit_bytes_derived_by_hand() -> None:
    """Affine 4-bit, group 64, bf16 scales and biases: 0.5 + 4/64 = 0.5625 bytes a weight of
    every Linear and Embedding (the untied head too); the 65 norms of 4,096 stay bf16."""
    got = fit("llama3-8b", FitRequest(engine="mlx", gpu=("apple-m3-max",), ctx=8192))
    norms = 65 * 4096
    assert got.placement.devices[0].model_bytes == (8_030_261_248 - norms) * 9 // 16 + 2 * norms
    assert got.placement.devices[0].model_bytes == 4_517_404_672
    # bf16 K and V of 8 heads x 128, 32 layers, in steps of 256 tokens
    assert got.placement.devices[0].kv_bytes == 8192 * 32 * 2 * 1024 * 2
    odd = fit("llama3-8b", FitRequest(engine="mlx", gpu=("apple-m3-max",), ctx=8000))
    assert odd.placement.devices[0].kv_bytes == 8192 * 32 * 2 * 1024 * 2
    eight = fit("llama3-8b", FitRequest(engine="mlx", gpu=("apple-m3-max",), ctx=8192,
                                        quant="mlx-8bit"))
    assert eight.placement.devices[0].model_bytes == (8_030_261_248 - norms) * 17 // 16 \
        + 2 * norms
    assert got.command == ("mlx_lm.generate", "--model", "llama3-8b", "--max-kv-size", "8192")


def test_mlx_quantized_kv_cache_derived_by_hand() -> None:
    """QuantizedKVCache: per head and token, head_dim x bits / 8 bytes of uint32 words and a
    bf16 scale and bias per group of 64, in 256-token steps (mlx_lm/models/cache.py)."""
    eight = fit("llama3-8b", FitRequest(engine="mlx", gpu=("apple-m3-max",), ctx=8192,
                                        kv_bits=8))
    assert eight.placement.devices[0].kv_bytes == 8192 * 32 * 8 * 2 * (128 + 2 * 2 * 2)
    assert printed(eight.placement.devices[0].kv_bytes) == "544.00"
    four = fit("llama3-8b", FitRequest(engine="mlx", gpu=("apple-m3-max",), ctx=8000,
                                       kv_bits=4, kv_group_size=32))
    assert four.placement.devices[0].kv_bytes == 8192 * 32 * 8 * 2 * (64 + 4 * 2 * 2)
    assert four.command[-6:] == ("--kv-bits", "4", "--kv-group-size", "32",
                                 "--quantized-kv-start", "0")
    assert four.cache_type_k == "affine 4-bit, group 32"
    doc = four.to_dict()
    assert doc["devices"][0]["kv_bytes"] == four.placement.devices[0].kv_bytes
    longer = fit("llama3.1-70b", FitRequest(engine="mlx", gpu=("apple-m3-max",), ctx="auto",
                                            kv_bits=4))
    plain = fit("llama3.1-70b", FitRequest(engine="mlx", gpu=("apple-m3-max",), ctx="auto"))
    assert longer.placement.n_ctx >= plain.placement.n_ctx


def test_mlx_tied_embedding_is_stored_once() -> None:
    got = fit("llama3.2-1b", FitRequest(engine="mlx", gpu=("apple-m3-max",), ctx=4096))
    spec = specsheet.load("llama3.2-1b").spec
    norms = (2 * spec.layers + 1) * spec.d_model
    params = specsheet.report(specsheet.load("llama3.2-1b")).params.total  # the head once
    assert got.placement.devices[0].model_bytes == (params - norms) * 9 // 16 + 2 * norms


def test_mlx_ctx_auto_is_the_longest_that_fits() -> None:
    got = fit("llama3.1-70b", FitRequest(engine="mlx", gpu=("apple-m3-max",), ctx="auto"))
    longest = got.placement.n_ctx
    assert got.placement.fits
    over = fit("llama3.1-70b", FitRequest(engine="mlx", gpu=("apple-m3-max",),
                                          ctx=longest + 256))
    assert longest == 131072 or not over.placement.fits


def test_a_16_gb_mac_has_the_logged_working_set() -> None:
    """recommendedMaxWorkingSetSize on a 16 GB M1 Pro / M2 Pro: 11453.25 MB (current ggml
    prints / 1e6; L16) = 10922.67 MiB (L9's allocation line: '( 7605.41 / 10922.67)')."""
    got = fit("llama3-8b", FitRequest(gpu=("apple-m2-pro-16gb",), ctx=8192, quant="gguf-q8_0"))
    memory = got.placement.devices[0].memory_bytes
    assert f"{memory / 1e6:.2f}" == "11453.25" and printed(memory) == "10922.67"
    assert got.placement.fits  # 7605.34 + 1024 MiB of KV within 10922.67


def test_decode_estimate_reads_each_device_at_its_bandwidth() -> None:
    got = fit("llama3-8b", FitRequest(gpu=("rtx-4090",), ctx=8192))
    gpu = got.placement.devices[0]
    # the host holds only the token embedding, of which a token reads one row
    assert got.decode_step_s == (gpu.model_bytes + gpu.kv_bytes) / 1_008_000_000_000
    doc = got.to_dict()["estimates"]
    assert doc["decode_tokens_per_s"] == 1 / got.decode_step_s
    host = fit("qwen3-30b-a3b", FitRequest(gpu=("rtx-4090",), ctx=8192, n_cpu_moe=48))
    assert host.decode_step_s is None  # experts on the host, its bandwidth not given
    given = fit("qwen3-30b-a3b", FitRequest(gpu=("rtx-4090",), ctx=8192, n_cpu_moe=48,
                                            host_bandwidth=90 * 10**9))
    h = given.placement.host
    read = h.model_bytes - h.embedding_bytes - h.expert_bytes * (1 - 8 / 128) + h.kv_bytes
    d = given.placement.devices[0]
    assert given.decode_step_s == pytest.approx(
        (d.model_bytes + d.kv_bytes) / 1_008_000_000_000 + read / (90 * 10**9))


def test_gemma3_windowed_layers_keep_window_plus_ubatch_cells() -> None:
    """Gemma 3 27B: 52 of 62 layers windowed (1,024 tokens), 16 KV heads of 128: at 32k the
    10 global layers keep 32,768 cells, the others PAD(1024 + 512, 256) = 1,536."""
    got = fit("gemma3-27b", FitRequest(gpu=("rtx-5090",), ctx=32768))
    per_cell = 16 * 128 * 2 * 2  # K and V, f16
    assert got.placement.n_swa_cells == 1536
    assert got.placement.devices[0].kv_bytes == (10 * 32768 + 52 * 1536) * per_cell
    two = fit("gemma2-9b", FitRequest(gpu=("rtx-5090",), ctx=32768, n_ubatch=1024))
    assert two.placement.n_swa_cells == 4096 + 1024  # window 4,096 + ub 1,024, already 256s


def test_split_mode_none_places_on_the_main_gpu_alone() -> None:
    """llama.cpp's split mode none keeps the main GPU (0) and drops the others
    (llama_model_load_from_file_impl): two RTX 4090s place as one does, and the note says so.
    Run through the CLI, whose decode estimate once zipped two bandwidths with one device."""
    from commands import specsheet as run

    done = run("fit", "llama3.1-70b", "--gpu", "rtx-4090,rtx-4090", "--split-mode", "none",
               "--json")
    assert done.returncode == 0 and done.stderr == ""
    doc = json.loads(done.stdout)
    one = fit("llama3.1-70b", FitRequest(gpu=("rtx-4090",))).to_dict()
    assert doc["devices"] == one["devices"] and len(doc["devices"]) == 1
    assert doc["host"] == one["host"] and doc["layers"] == one["layers"]
    assert ("split mode none: everything on the GPUs goes on CUDA0 (the main GPU, 0); the "
            "other GPU holds nothing") in doc["notes"]
    assert "--split-mode none" in " ".join(doc["command"])
