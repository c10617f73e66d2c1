"""``specsheet plan`` where users meet it: the issue's question answered with a ranked table,
the exit codes (0 a candidate meets every constraint, 1 none does, with the closest on stderr),
the objective and its fallback, the Pareto front, a rate's concurrency, and the formats' order,
each checked against figures worked out here from serve's and count's documents."""

from __future__ import annotations

import json
import math
from typing import Any

from commands import specsheet as real
from typer.testing import CliRunner

from specsheet.cli.app import app

runner = CliRunner()
ISSUE = ["plan", "llama3-70b", "--gpu", "all", "--max-model-len", "8k", "--requests-per-s",
         "10", "--prompt", "1k", "--output", "256", "--max-ttft", "1"]


def run(*argv: str) -> tuple[int, Any]:
    result = runner.invoke(app, [*argv, "--json"])
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, json.loads(result.stdout)


def test_the_issue_question_prints_a_ranked_table_that_names_each_limit() -> None:
    result = real(*ISSUE, "--price", "2.5", COLUMNS="80", NO_COLOR="1")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].startswith("llama3-70b: ") and "best first by cost" in lines[0]
    rows = [line for line in lines if line[:3].strip().isdigit()]
    assert len(rows) == 10
    assert all(line.split()[-2] in ("memory", "compute", "bandwidth") for line in rows)
    assert max(len(line) for line in lines) <= 80
    assert "reproduce #0" in result.stdout and "why #1 lost" in result.stdout
    code, doc = run(*ISSUE, "--price", "2.5")
    assert code == 0 and doc["best"] == 0
    # ranked by cost per million output tokens among those that meet every constraint
    costs = [c["usd_per_million_output_tokens"] for c in doc["candidates"] if c["meets"]]
    assert costs == sorted(costs)
    assert all(c["ttft_s"] <= 1 and c["requests_per_s"] >= 10
               for c in doc["candidates"] if c["meets"])
    # no candidate whose memory does not fit: the ten shown, each run by serve
    for c in doc["candidates"][:10]:
        _, served = run(*c["command"][1:])
        assert served["fits"] is True and served["fit"]["verdict"] == "fits"
    assert doc["skipped"]["memory"] > 0  # the search met layouts that do not fit, and left them


def test_a_rate_takes_the_fewest_requests_at_once_that_reach_it() -> None:
    """The concurrency a rate chooses reaches it, one request fewer per replica does not
    (serve's end-to-end tokens/s over the output tokens)."""
    _, doc = run("plan", "llama3-8b", "--gpu", "l4,h100-sxm", "--gpus", "1..2",
                 "--requests-per-s", "4")
    checked = 0
    for c in doc["candidates"]:
        if not c["meets"] or c["concurrency"] // c["layout"]["dp"] < 2:
            continue
        argv = c["command"][1:]
        each = int(argv[argv.index("--concurrency") + 1])
        fewer = [*argv]
        fewer[fewer.index("--concurrency") + 1] = str(each - 1)
        _, served = run(*fewer)
        est = served["estimates"]
        rate = c["layout"]["dp"] * est["tokens_per_s_end_to_end"] / est["output_tokens"]
        assert rate < 4 <= c["requests_per_s"]
        checked += 1
    assert checked >= 3


def test_no_candidate_meets_exit_1_with_the_closest_on_stderr() -> None:
    result = real("plan", "llama3-8b", "--gpu", "l4", "--gpus", "1", "--max-ttft", "0.01",
                  "--json")
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["best"] is None
    assert doc["closest"]["candidate"] == 0
    (miss,) = doc["closest"]["misses"]
    assert miss["constraint"] == "max_ttft" and miss["limit"] == 0.01
    assert miss["value"] == doc["candidates"][0]["ttft_s"] > 0.01
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("specsheet: no candidate meets every constraint; the "
                                    "closest, 1 x l4 (tp 1, pp 1, dp 1, bf16), misses "
                                    "--max-ttft 0.01 (it has 0.26")


def test_nothing_fits_exit_1_with_the_reason() -> None:
    result = real("plan", "llama3-70b", "--gpu", "l4", "--gpus", "1..2")
    assert result.returncode == 1
    assert "no layout searched holds the weights" in result.stdout
    assert result.stderr == ("specsheet: no candidate: no layout searched holds the weights "
                             "and one request of max_model_len (8,192 tokens)\n")


def test_cost_without_a_price_ranks_by_fewest_gpus_and_says_so() -> None:
    _, doc = run("plan", "llama3-70b", "--gpu", "h100-sxm,a100-80gb-sxm")
    assert doc["objective"] == {"asked": "cost", "used": "gpus", "note": "cost needs a price "
                                "per GPU-hour (none given): fewest GPUs instead"}
    gpus = [c["gpus"] for c in doc["candidates"]]
    assert gpus == sorted(gpus) and gpus[0] == 2  # 141 GB of bf16 weights: two 80 GB GPUs
    assert all(c["usd_per_hour"] is None for c in doc["candidates"])
    # without a rate or a concurrency, no data-parallel replicas (they only repeat a layout)
    assert {c["layout"]["dp"] for c in doc["candidates"]} == {1}


def test_the_pareto_front_of_cost_against_latency() -> None:
    _, doc = run("plan", "llama3-8b", "--gpu", "h100-sxm,l40s,l4", "--gpus", "1..4",
                 "--price", "h100-sxm=2.5,l40s=1,l4=0.5", "--concurrency", "32")
    points = {i: (c["usd_per_million_output_tokens"], c["latency_s"])
              for i, c in enumerate(doc["candidates"]) if c["meets"]}

    def beaten(i: int) -> bool:
        x, y = points[i]
        return any(a <= x and b <= y and (a < x or b < y) for a, b in points.values())

    assert doc["pareto"] == [i for i in points if not beaten(i)]
    assert len(doc["pareto"]) >= 2
    assert doc["pareto"][0] == doc["best"] == 0  # the cheapest is on the front


def test_every_objective_ranks_by_its_figure() -> None:
    common = ["plan", "llama3-8b", "--gpu", "h100-sxm,l40s", "--gpus", "1..2", "--price", "2"]
    figures = {"latency": lambda c: c["latency_s"], "throughput": lambda c: -c["tokens_per_s"],
               "gpus": lambda c: c["gpus"],
               "cost": lambda c: c["usd_per_million_output_tokens"]}
    for objective, key in figures.items():
        _, doc = run(*common, "--objective", objective)
        values = [key(c) for c in doc["candidates"]]
        assert all(a <= b or math.isclose(a, b, rel_tol=1e-9)
                   for a, b in zip(values, values[1:], strict=False)), objective


def test_a_budget_and_a_minimum_throughput() -> None:
    _, doc = run("plan", "llama3-8b", "--gpu", "h100-sxm", "--gpus", "1..4", "--price", "3",
                 "--budget", "7", "--min-tokens-per-s", "3000")
    for c in doc["candidates"]:
        assert ("budget" in c["misses"]) is (c["gpus"] * 3 > 7)
        assert ("min_tokens_per_s" in c["misses"]) is (c["tokens_per_s"] < 3000)
    assert doc["candidates"][doc["best"]]["gpus"] <= 2


def test_any_format_skips_a_format_that_cannot_store_the_model_and_says_why() -> None:
    # gpt-oss's hidden size 2,880 is not a multiple of AWQ's group of 128 (count refuses
    # --quant awq-int4): any searches the other formats and names the one it skipped
    counted = runner.invoke(app, ["count", "gpt-oss-120b", "--quant", "awq-int4", "--json"])
    assert counted.exit_code == 2 and counted.stdout == ""
    why = counted.stderr.strip().removeprefix("specsheet: error: ")
    code, doc = run("plan", "gpt-oss-120b", "--gpu", "h100-sxm", "--gpus", "1..2", "--quant",
                    "any")
    assert code == 0 and doc["skipped"]["formats"] == [{"format": "awq-int4", "reason": why}]
    assert "awq-int4" not in {f["format"] for f in doc["formats"]}
    assert {f["format"] for f in doc["formats"]} == {"mxfp4", "fp8", "w8a8", "w4a16", "nvfp4"}
    table = real("plan", "gpt-oss-120b", "--gpu", "h100-sxm", "--gpus", "1..2", "--quant",
                 "any", COLUMNS="200", NO_COLOR="1")
    assert table.returncode == 0
    assert [line.split(None, 2)[2] for line in table.stdout.splitlines()
            if line.strip().startswith("format skipped")] == [why]
    named = runner.invoke(app, ["plan", "gpt-oss-120b", "--gpu", "h100-sxm", "--quant",
                                "awq-int4", "--json"])  # asked by name: bad input
    assert named.exit_code == 2 and named.stdout == "" and why in named.stderr
    _, plain = run("plan", "llama3-8b", "--gpu", "h100-sxm", "--gpus", "1", "--quant", "any")
    assert plain["skipped"]["formats"] == []


def test_any_format_orders_the_formats_by_bits_per_weight() -> None:
    _, doc = run("plan", "llama3-8b", "--gpu", "h100-sxm", "--gpus", "1", "--quant", "any",
                 "--kv-dtype", "bf16,fp8")
    names = [f["format"] for f in doc["formats"]]
    assert names[0] == "bf16" and set(names) == {"bf16", "fp8", "w8a8", "w4a16", "awq-int4",
                                                 "nvfp4"}
    for f in doc["formats"]:  # weights bytes x 8 / parameters, from count's document
        argv = [] if f["format"] == "bf16" else ["--quant", f["format"]]
        counted = json.loads(runner.invoke(app, ["count", "llama3-8b", *argv,
                                                 "--json"]).stdout)
        assert f["bits_per_weight"] == (counted["memory"]["weights_bytes"] * 8
                                        / counted["params"]["total"])
    bits = [f["bits_per_weight"] for f in doc["formats"]]
    assert bits == sorted(bits, reverse=True)
    assert {(c["format"], c["kv_dtype"]) for c in doc["candidates"]} == {
        (f, kv) for f in names for kv in ("bf16", "fp8")}


def test_a_model_of_experts_gets_expert_parallel_layouts_and_refusals_are_counted() -> None:
    _, doc = run("plan", "mixtral-8x7b", "--gpu", "h100-sxm", "--gpus", "1..8")
    eps = {(c["layout"]["tp"], c["layout"]["ep"]) for c in doc["candidates"]}
    assert (4, 4) in eps and (4, 1) in eps  # tp 4 with and without expert parallelism
    # tp 3, 5, 6 and 7 do not divide the 32 heads: refused, and counted
    assert doc["skipped"]["refused"] > 0
    assert not any(c["layout"]["tp"] in (3, 5, 6, 7) for c in doc["candidates"])


def test_the_documents_validate_against_the_published_schema() -> None:
    import jsonschema

    schema = json.loads(runner.invoke(app, ["schema"]).stdout)
    plan_only = {**schema, "oneOf": None, "anyOf": None, "$ref": "#/$defs/plan"}
    plan_only = {k: v for k, v in plan_only.items() if v is not None}
    whole = jsonschema.Draft202012Validator(schema)
    only = jsonschema.Draft202012Validator(plan_only)
    for argv in (ISSUE, [*ISSUE, "--price", "2"],
                 ["plan", "llama3-8b", "--gpu", "l4", "--gpus", "1", "--max-ttft", "0.01"],
                 ["plan", "llama3-70b", "--gpu", "l4", "--gpus", "1..2"],
                 ["plan", "llama3.1-8b", "--gpu", "l4", "--gpus", "1..2", "--concurrency", "4",
                  "--solve", "max-context"],
                 ["plan", "llama3-8b", "--gpu", "l4", "--quant", "any", "--solve", "best-quant"]):
        _, doc = run(*argv)
        whole.validate(doc)
        only.validate(doc)


def test_a_time_limit_in_milliseconds_is_the_same_limit_in_seconds() -> None:
    """The tables print TTFT and TPOT in ms; a limit may be given so (``--max-tpot 50ms``) and
    plans as the seconds do, to the byte."""
    base = ["plan", "llama3-8b", "--gpu", "l4,h100-sxm", "--gpus", "1..2", "--json"]
    in_ms = real(*base, "--max-ttft", "100ms", "--max-tpot", "50 ms")
    in_s = real(*base, "--max-ttft", "0.1", "--max-tpot", "0.05")
    assert in_ms.returncode == in_s.returncode == 0, in_ms.stderr
    assert in_ms.stdout == in_s.stdout
    constraints = json.loads(in_ms.stdout)["constraints"]
    assert (constraints["max_ttft"], constraints["max_tpot"]) == (0.1, 0.05)
