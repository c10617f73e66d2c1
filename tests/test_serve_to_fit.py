"""A serving plan that does not fit says what would make it fit (api.serve.to_fit), and each
way it names is checked here against brute force: the plan at that value fits, and at every
value short of it (each smaller GPU count vLLM can lay out, one token more) it does not."""

from __future__ import annotations

import json

import pytest
from commands import specsheet as run

import specsheet as s
from specsheet.api.count import report
from specsheet.api.serve import ServeRequest, check_request, plan_serve, to_fit
from specsheet.errors import SpecError


def _fits(model: str, request: ServeRequest) -> bool | None:
    """Whether ``model`` fits under ``request``; None where the layout is refused."""
    try:
        check_request(request)
        return plan_serve(report(s.load(model)), request).fits
    except SpecError:
        return None


@pytest.mark.parametrize(("model", "gpu", "gpus", "fewest"), [
    ("llama3-70b", "rtx-4090", 1, 8),  # 7 x 24 GB would hold it, but tp 7 divides no head count
    ("llama3-70b", "l40s", 1, 4),
    ("qwen3-30b-a3b", "l4", 1, 4),  # an MoE: 61 GB of bf16 weights on 24 GB cards
    ("deepseek-v3", "h100-sxm", 8, 16),
])
def test_the_fewest_gpus_is_the_first_count_that_fits(model: str, gpu: str, gpus: int,
                                                      fewest: int) -> None:
    request = ServeRequest(gpu=gpu, gpus=gpus)
    served = plan_serve(report(s.load(model)), request)
    assert not served.fits
    assert to_fit(report(s.load(model)), request, served).gpus == fewest
    assert _fits(model, request._replace(gpus=fewest)) is True
    assert not any(_fits(model, request._replace(gpus=n)) for n in range(gpus + 1, fewest))


def test_the_longest_max_model_len_is_the_threshold() -> None:
    """llama3.1-70b on 2 x h100-sxm holds its weights but not one request of 128k: the pool
    holds 23,040 tokens (vLLM: "max seq len (131072) is larger than the maximum number of
    tokens that can be stored in KV cache")."""
    request = ServeRequest(gpu="h100-sxm", gpus=2, max_model_len=131072)
    model = report(s.load("llama3.1-70b"))
    served = plan_serve(model, request)
    ways = to_fit(model, request, served)
    assert ways.max_model_len == served.plan.max_context == 23040
    assert plan_serve(model, request._replace(max_model_len=23040)).fits
    assert not plan_serve(model, request._replace(max_model_len=23041)).fits
    assert ways.gpus == 4  # tp 3 divides no head count; 4 GPUs hold the 128k request


def test_a_plan_that_fits_or_a_given_layout_gets_no_search() -> None:
    model = report(s.load("llama3-70b"))
    fits = ServeRequest(gpu="h100-sxm", gpus=8)
    assert to_fit(model, fits, plan_serve(model, fits)) == (None, None)
    given = ServeRequest(gpu="rtx-4090", tp=2)  # tp given: the count is the user's
    served = plan_serve(model, given)
    assert not served.fits and to_fit(model, given, served).gpus is None


def test_the_table_says_it_and_the_json_is_unchanged() -> None:
    table = run("serve", "llama3.1-70b", "--gpu", "h100-sxm", "--gpus", "2", "--tokens", "128k",
                COLUMNS="200")
    assert table.returncode == 0
    assert "It fits with --tokens 23040 or less, or --gpus 4." in table.stdout
    for line in ("--tokens", "23040"), ("--gpus", "4"):  # each way, run as said, fits
        doc = json.loads(run("serve", "llama3.1-70b", "--gpu", "h100-sxm", "--gpus", "2",
                             "--tokens", "128k", *line, "--json").stdout)
        assert doc["fits"] is True
    doc = json.loads(run("serve", "llama3.1-70b", "--gpu", "h100-sxm", "--gpus", "2",
                         "--tokens", "128k", "--json").stdout)
    assert doc["fits"] is False and "to_fit" not in json.dumps(doc)
    fits = run("serve", "llama3-70b", "--gpu", "h100-sxm", "--gpus", "8", COLUMNS="200")
    assert "It fits with" not in fits.stdout
