"""Every candidate of ``specsheet plan`` equals the ``specsheet serve`` run its command
reproduces: the JSON of each command, run through the CLI, against the candidate's figures,
over several models (dense, mixture of experts with expert parallelism, sliding windows, a
hybrid of state layers) and constraint sets. The constraints a candidate misses are worked out
again here from serve's figures."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from typer.testing import CliRunner

import specsheet
from specsheet.api.plan import PlanRequest
from specsheet.cli.app import app

runner = CliRunner()


def run(*argv: str) -> tuple[int, Any]:
    result = runner.invoke(app, [*argv, "--json"])
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, json.loads(result.stdout)


CASES = [
    # model, plan options
    ("llama3-8b", ["--gpu", "h100-sxm,l4,a10g", "--gpus", "1..4", "--price", "2.5",
                   "--tokens", "8k"]),
    ("llama3-8b", ["--gpu", "h100-sxm,rtx-4090", "--gpus", "1..4", "--concurrency", "48",
                   "--max-ttft", "0.1", "--kv-dtype", "bf16,fp8", "--price",
                   "h100-sxm=2.5,rtx-4090=0.4"]),
    ("mixtral-8x7b", ["--gpu", "a100-80gb-sxm,h200", "--gpus", "2..4", "--requests-per-s",
                      "3", "--prompt", "2k", "--output", "512", "--tokens", "16k",
                      "--max-tpot", "0.05"]),
    ("gemma2-9b", ["--gpu", "l40s,mi300x", "--gpus", "1..2", "--quant", "any",
                   "--objective", "latency", "--price", "1.2"]),
    ("qwen3-30b-a3b", ["--gpu", "h100-sxm", "--gpus", "2", "--quant", "fp8,w4a16",
                       "--objective", "throughput", "--concurrency", "100"]),
    ("granite-4.0-h-tiny", ["--gpu", "l4,h100-sxm", "--gpus", "1..2", "--tokens", "32k",
                            "--min-tokens-per-s", "500", "--price", "1", "--budget", "3"]),
    # speculative decoding passes to every candidate's serve line
    ("llama3.1-8b", ["--gpu", "h100-sxm,l4", "--gpus", "1..2", "--tokens", "8k", "--draft",
                     "llama3.2-1b", "--speculative-tokens", "4"]),
]


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)


def check_candidate(c: dict[str, Any], limits: dict[str, Any]) -> None:
    code, served = run(*c["command"][1:])
    assert code == 0
    dp = c["layout"]["dp"]
    est = served["estimates"]
    assert served["fits"] is True  # no candidate whose memory does not fit
    assert served["parallel"]["tp"] == c["layout"]["tp"]
    assert served["parallel"]["pp"] == c["layout"]["pp"]
    assert served["parallel"]["ep"] == c["layout"]["ep"]
    assert served["parallel"]["gpus"] * dp == c["gpus"]
    assert served["model"]["format"] == c["format"]
    assert served["model"]["kv_dtype"] == c["kv_dtype"]
    assert served["engine"]["name"] == c["engine"] == "vllm"
    assert c["max_concurrency"] == dp * served["max_concurrency"]
    assert c["concurrency"] == dp * est["concurrency"]
    assert c["ttft_s"] == est["prefill_s"]
    assert c["tpot_s"] == est["decode_step_s"]
    assert close(c["tokens_per_s"], dp * est["tokens_per_s_total"])
    assert close(c["requests_per_s"],
                 dp * est["tokens_per_s_end_to_end"] / est["output_tokens"])
    assert close(c["latency_s"], est["prefill_s"] + est["output_tokens"] * est["decode_step_s"])
    assert c["usd_per_million_output_tokens"] == est["usd_per_million_output_tokens"]
    price = est["usd_per_gpu_hour"]
    assert close(c["usd_per_hour"], None if price is None else price * c["gpus"])
    # what limits it: the KV pool, or the slower term of serve's decode step
    hw = served["hardware"]
    bytes_s = est["decode_bytes_per_step"] / (hw["bandwidth_bytes_per_s"] * est["mbu"])
    flops_s = est["decode_flops_per_step"] / (c["layout"]["tp"] * est["peak_flops_per_s"]
                                              * est["mfu"])
    if c["limited_by"] != "memory":
        assert c["limited_by"] == ("compute" if flops_s > bytes_s else "bandwidth")
    # the misses, again from serve's figures; the pool's capacity is serve's default
    # concurrency (as many requests of prompt + output as it holds, at most max_num_seqs)
    _, default = run(*[a for i, a in enumerate(c["command"][1:])
                       if a != "--concurrency" and c["command"][i] != "--concurrency"])
    capacity = default["estimates"]["concurrency"]
    missed = []
    if est["concurrency"] > capacity:
        missed.append("concurrency")
    if limits["requests_per_s"] is not None and c["requests_per_s"] < limits["requests_per_s"]:
        missed.append("requests_per_s")
    if limits["max_ttft"] is not None and est["prefill_s"] > limits["max_ttft"]:
        missed.append("max_ttft")
    if limits["max_tpot"] is not None and est["decode_step_s"] > limits["max_tpot"]:
        missed.append("max_tpot")
    if (limits["min_tokens_per_s"] is not None
            and c["tokens_per_s"] < limits["min_tokens_per_s"]):
        missed.append("min_tokens_per_s")
    if limits["budget"] is not None and (c["usd_per_hour"] is None
                                         or c["usd_per_hour"] > limits["budget"]):
        missed.append("budget")
    assert c["misses"] == missed
    assert c["meets"] is (not missed)


@pytest.mark.parametrize(("model", "options"), CASES, ids=[m for m, _ in CASES])
def test_every_candidate_is_its_serve_run(model: str, options: list[str]) -> None:
    code, doc = run("plan", model, *options)
    assert doc["candidates"], "the case should have candidates"
    assert code == (0 if doc["best"] == 0 else 1)
    limits = {**doc["constraints"], "requests_per_s": doc["request"]["requests_per_s"]}
    for c in doc["candidates"]:
        check_candidate(c, limits)


def test_the_api_document_is_the_cli_document() -> None:
    model = specsheet.load("llama3-8b")
    planned = specsheet.search(model, gpu="h100-sxm,l4", gpus="1..2", price="2",
                             concurrency=32)
    _, doc = run("plan", "llama3-8b", "--gpu", "h100-sxm,l4", "--gpus", "1..2", "--price", "2",
                 "--concurrency", "32")
    assert json.loads(json.dumps(planned.to_dict())) == doc
    again = specsheet.search(model, PlanRequest(gpu="h100-sxm,l4", gpus="1..2", price="2",
                                              concurrency=32))
    assert again.to_dict() == planned.to_dict()


def test_memory_plans_are_reused_across_replicas() -> None:
    """One memory plan per replica layout: dp replicas of it are not planned again."""
    doc = specsheet.search(specsheet.load("llama3-8b"), gpu="h100-sxm", gpus="1..4",
                         concurrency=8).to_dict()
    replicas = {(c["layout"]["tp"], c["layout"]["pp"]) for c in doc["candidates"]}
    assert doc["searched"] == len(replicas)
    assert len(doc["candidates"]) > len(replicas)  # dp replicas of the same plans


def test_the_csv_holds_every_field_of_every_candidate() -> None:
    """Each candidate's fields are columns (its command and misses as JSON lists, its layout as
    tp, pp, ep, dp): a CSV reader loses nothing the JSON has."""
    import csv
    import io

    argv = ["plan", "llama3-8b", "--gpu", "h100-sxm,l4", "--max-ttft", "0.05"]
    _, document = run(*argv)
    result = runner.invoke(app, [*argv, "--format", "csv"])
    table = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(table) == len(document["candidates"])
    for row, candidate in zip(table, document["candidates"], strict=True):
        assert json.loads(row["command"]) == candidate["command"]
        assert json.loads(row["misses"]) == candidate["misses"]
        assert {k: int(row[k]) for k in candidate["layout"]} == candidate["layout"]
        assert set(row) == (set(candidate) - {"layout"}) | set(candidate["layout"])
