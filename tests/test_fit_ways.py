"""A local placement that does not fit says what would make it fit (api.fit_ways), and each
way it names is checked here against brute force: the placement with that setting fits, and
with every setting short of it (one GPU layer more, a GiB of host memory less, the format of
the next bits up, 256 tokens more context, one GPU fewer) it does not."""

from __future__ import annotations

import json

import pytest
from commands import specsheet as run

from specsheet.api.fit import FitRequest, fit
from specsheet.api.fit_ways import MOST_DEVICES, NONE, QUANT_LADDERS, fit_ways

GIB = 1 << 30
# Llama 3 70B in Q4_K_M (40.5 GiB of tensors) on one RTX 4090 and a host of 16 GiB
SHORT_HOST = FitRequest(gpu=("rtx-4090",), host_memory=16 * GIB)
# Llama 3.1 70B with all 81 layers on two RTX 4090s at 32k
ALL_LAYERS = FitRequest(gpu=("rtx-4090", "rtx-4090"), ctx=32768, n_gpu_layers="all")


def _fits(model: str, request: FitRequest) -> bool:
    return fit(model, request).placement.fits_estimate


def test_a_short_host_is_told_its_memory_and_a_smaller_format() -> None:
    placed = fit("llama3-70b", SHORT_HOST)
    assert not placed.placement.fits and placed.quant == "gguf-q4_k_m"
    ways = fit_ways("llama3-70b", SHORT_HOST, placed)
    assert ways.host_memory == 19 * GIB  # the least whole GiB: 18 does not hold the host's share
    assert _fits("llama3-70b", SHORT_HOST._replace(host_memory=19 * GIB))
    assert not _fits("llama3-70b", SHORT_HOST._replace(host_memory=18 * GIB))
    assert ways.quant == "gguf-q3_k_m"  # the next rung down; Q4_K_M is the one that does not
    assert _fits("llama3-70b", SHORT_HOST._replace(quant="gguf-q3_k_m"))
    assert ways.n_gpu_layers is None  # -ngl auto already
    assert ways.ctx is None  # no context fits: the host is short at any
    assert ways.gpu == ("rtx-4090", "rtx-4090")  # a second 4090 takes the host's layers
    assert _fits("llama3-70b", SHORT_HOST._replace(gpu=("rtx-4090",) * 2))


def test_all_layers_is_told_the_most_that_fit_and_a_q8_cache() -> None:
    placed = fit("llama3.1-70b", ALL_LAYERS)
    assert not placed.placement.fits_estimate and placed.placement.on_gpu == 81
    ways = fit_ways("llama3.1-70b", ALL_LAYERS, placed)
    assert ways.n_gpu_layers == 77
    assert _fits("llama3.1-70b", ALL_LAYERS._replace(n_gpu_layers=77))
    assert not any(_fits("llama3.1-70b", ALL_LAYERS._replace(n_gpu_layers=n))
                   for n in range(78, 82))
    assert ways.cache_type == "q8_0"  # half the f16 cache's 10 GiB at 32k
    assert _fits("llama3.1-70b", ALL_LAYERS._replace(cache_type_k="q8_0", cache_type_v="q8_0"))
    assert ways.quant == "gguf-q3_k_m" and ways.host_memory is None  # no host memory given
    # 80 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 320 KiB a token: 10 GiB at 32k;
    # the longest that fits is a multiple of 256, and 256 more does not
    assert ways.ctx == 27648
    assert _fits("llama3.1-70b", ALL_LAYERS._replace(ctx=27648))
    assert not _fits("llama3.1-70b", ALL_LAYERS._replace(ctx=27648 + 256))
    assert ways.gpu == ("rtx-4090",) * 3  # two are the request's, which does not fit
    assert _fits("llama3.1-70b", ALL_LAYERS._replace(gpu=("rtx-4090",) * 3))


def test_the_format_is_the_most_bits_that_fit() -> None:
    """From Q8_0, every rung is tried down the ladder; the answer is the first that fits."""
    request = FitRequest(gpu=("rtx-4090",), quant="gguf-q8_0", n_gpu_layers="all")
    placed = fit("qwen3-30b-a3b", request)
    ways = fit_ways("qwen3-30b-a3b", request, placed)
    ladder = QUANT_LADDERS["gguf"]
    assert ways.quant == "gguf-q4_k_m"
    rungs = ladder[ladder.index("gguf-q8_0") + 1:ladder.index("gguf-q4_k_m")]
    assert rungs == ("gguf-q6_k", "gguf-q5_k_m")
    assert not any(_fits("qwen3-30b-a3b", request._replace(quant=q)) for q in rungs)
    assert ways.gpu == ("rtx-4090", "rtx-4090") and ways.ctx is None  # no context at all


def test_more_gpus_are_tried_up_to_eight_and_only_where_they_can_help() -> None:
    """Llama 3.1 405B in Q4_K_M (226.4 GiB of tensors) with every layer on RTX 4090s: eight
    have 191.9 GiB, so no count is said; a tensor split names each GPU's share, split mode
    none puts the model on one GPU, and MLX is one machine: no count is tried."""
    request = FitRequest(gpu=("rtx-4090",), n_gpu_layers="all")
    assert MOST_DEVICES == 8
    assert fit_ways("llama3.1-405b", request, fit("llama3.1-405b", request)).gpu is None
    assert not _fits("llama3.1-405b", request._replace(gpu=("rtx-4090",) * MOST_DEVICES))
    # three would hold it: with these settings the way is withheld, not missing
    assert _fits("llama3.1-70b", ALL_LAYERS._replace(gpu=("rtx-4090",) * 3))
    for given in (ALL_LAYERS._replace(tensor_split=(1.0, 1.0)),
                  ALL_LAYERS._replace(split_mode="none")):
        placed = fit("llama3.1-70b", given)
        assert not placed.placement.fits_estimate
        assert fit_ways("llama3.1-70b", given, placed).gpu is None


@pytest.mark.parametrize(("model", "request_"), [
    ("llama3-8b", FitRequest(gpu=("rtx-4090",), ctx=8192)),  # it fits
    ("llama3-70b", FitRequest()),  # nothing checked: no GPU, no host memory
    ("llama3-70b", FitRequest(gpu=("apple-m2-pro-16gb",), engine="mlx")),  # no way found
])
def test_no_way_is_said_when_it_fits_or_none_is_found(model: str,
                                                      request_: FitRequest) -> None:
    assert fit_ways(model, request_, fit(model, request_)) == NONE


def test_the_table_says_it_and_the_json_is_unchanged() -> None:
    argv = ("fit", "llama3-70b", "--gpu", "rtx-4090", "--host-memory", "16GiB")
    table = run(*argv, COLUMNS="200")
    assert table.returncode == 0
    assert ("It fits with --quant gguf-q3_k_m, --host-memory 19GiB, or --gpu "
            "rtx-4090,rtx-4090.") in table.stdout
    for way in (("--quant", "gguf-q3_k_m"), ("--host-memory", "19GiB"),  # each, run as said
                ("--gpu", "rtx-4090,rtx-4090")):
        doc = json.loads(run(*argv, *way, "--json").stdout)
        assert doc["fits"] is True and doc["fit"]["verdict"] == "fits"
    doc = json.loads(run(*argv, "--json").stdout)
    assert doc == fit("llama3-70b", SHORT_HOST).to_dict() and doc["fits"] is False
    three = run("fit", "llama3.1-70b", "--gpu", "rtx-4090,rtx-4090", "--ctx", "32768", "-ngl",
                "all", COLUMNS="200")
    assert ("It fits with --ctx 27648 or less, --n-gpu-layers 77, --cache-type-k q8_0 "
            "--cache-type-v q8_0, --quant gguf-q3_k_m, or --gpu rtx-4090,rtx-4090,rtx-4090."
            ) in three.stdout
    fits = run("fit", "llama3-8b", "--gpu", "rtx-4090", COLUMNS="200")
    assert "It fits with" not in fits.stdout
