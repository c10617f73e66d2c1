"""``specsheet plan --train``: every candidate equals the ``specsheet train`` run its command
reproduces, and the fewest GPUs that finish in N days is a brute-force search's answer written
with ``specsheet.train`` alone."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import specsheet
from specsheet.cli.app import app
from tests.test_plan_equality import run

runner = CliRunner()


CASES = [
    ("llama3-8b", ["--tokens-total", "100B", "--days", "10", "--gpu", "h100-sxm,l40s",
                   "--nodes", "4", "--price", "2"]),
    ("llama3-70b", ["--tokens-total", "1T", "--days", "60", "--gpu", "h100-sxm,b200",
                    "--gpus", "64..256", "--nodes", "32", "--objective", "gpus"]),
    ("mixtral-8x7b", ["--tokens-total", "200B", "--gpu", "a100-80gb-sxm", "--gpus", "8..32",
                      "--tokens", "4k", "--price", "1.5", "--budget", "40"]),
]


@pytest.mark.parametrize(("model", "options"), CASES, ids=[m for m, _ in CASES])
def test_every_training_candidate_is_its_train_run(model: str, options: list[str]) -> None:
    code, doc = run("plan", model, "--train", *options)
    assert doc["mode"] == "train" and doc["candidates"]
    assert code == (0 if doc["best"] == 0 else 1)
    for c in doc["candidates"]:
        _, trained = run(*c["command"][1:])
        layout = c["layout"]
        par = trained["parallelism"]
        assert (par["gpus"], par["tp"], par["pp"], par["dp"], par["zero"]) == \
            (c["gpus"], layout["tp"], layout["pp"], layout["dp"], layout["zero"])
        assert trained["fits"] is True  # no candidate whose step does not fit
        assert trained["time"]["days"] == c["days"]
        assert trained["time"]["gpu_hours"] == c["gpu_hours"]
        assert trained["time"]["usd"] == c["usd"]
        assert trained["memory_per_gpu"]["total_bytes"] == c["bytes_per_gpu"]
        assert trained["memory_per_gpu"]["capacity_bytes"] == c["capacity_bytes"]
        days, budget = doc["constraints"]["days"], doc["constraints"]["budget"]
        missed = [name for name, bad in (
            ("days", days is not None and c["days"] > days),
            ("budget", budget is not None and (c["usd_per_hour"] is None
                                               or c["usd_per_hour"] > budget))) if bad]
        assert c["misses"] == missed


def test_fewest_gpus_in_n_days_is_the_brute_force_answer() -> None:
    """Every count of the search's space (1, 2, 4, 8, then whole nodes of 8) and every
    layout of it (tp and pp of 1, 2, 4 or 8, ZeRO 1 or 3 with data parallelism, each
    recompute policy), trained with specsheet.train: the fewest GPUs whose step fits and
    whose run takes at most 10 days."""
    model = specsheet.load("llama3-8b")
    answer = None
    for n in (1, 2, 4, 8, 16, 24, 32):
        for tp in (1, 2, 4, 8):
            for pp in (1, 2, 4, 8):
                if n % (tp * pp):
                    continue
                for zero in (1, 3) if n // (tp * pp) > 1 else (0,):
                    for recompute in ("none", "selective", "full"):
                        trained = specsheet.train(model, tokens_total="100B", gpu="h100-sxm",
                                                  gpus=n, tp=tp, pp=pp, zero=zero,
                                                  recompute=recompute)
                        assert trained.plan.time is not None
                        if trained.plan.fits and trained.plan.time.days <= 10:
                            answer = answer or n
        if answer:
            break
    assert answer == 24  # 16 H100s take 10.6 days
    _, doc = run("plan", "llama3-8b", "--train", "--tokens-total", "100B", "--days", "10",
                 "--gpu", "h100-sxm", "--nodes", "4", "--solve", "min-gpus")
    assert doc["solve"]["answer"] == answer
    assert doc["candidates"][doc["solve"]["candidate"]]["gpus"] == answer


def test_too_few_gpus_for_the_days_exit_1_with_the_reason() -> None:
    result = runner.invoke(app, ["plan", "llama3-8b", "--train", "--tokens-total", "100B",
                                 "--days", "3", "--gpu", "h100-sxm", "--nodes", "4"])
    assert result.exit_code == 1
    assert result.stderr == ("specsheet: no candidate: every GPU count searched takes more "
                             "than 3 days, even with every GPU busy and no recomputation\n")


def test_training_documents_validate_against_the_published_schema() -> None:
    import jsonschema

    schema = json.loads(runner.invoke(app, ["schema"]).stdout)
    only = jsonschema.Draft202012Validator({k: v for k, v in schema.items() if k != "oneOf"}
                                           | {"$ref": "#/$defs/plan_train"})
    whole = jsonschema.Draft202012Validator(schema)
    for model, options in CASES[:1]:
        _, doc = run("plan", model, "--train", *options, "--solve", "min-gpus")
        only.validate(doc)
        whole.validate(doc)
