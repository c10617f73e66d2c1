"""The plan's errors carry the argument they are about; the CLI names it as the option, once.

``str(e)`` is ``field: message`` for a library user; ``specsheet.cli.errors`` turns the field
into the option without reading the message. Budgets and serving checks are keyed by figure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import specsheet
from specsheet.cli.errors import FIELD_OPTIONS, as_option_error
from specsheet.errors import SpecError
from specsheet.plan.budgets import BUDGETS, BUDGETS_BY_NAME, run_checks
from specsheet.plan.parallel import (
    TensorParallelError,
    check_parallel,
    check_training_parallel,
    tp_problem,
)
from specsheet.plan.serving import parse_utilization
from specsheet.plan.training import plan_training
from specsheet.sources.hardware import load_accelerator

LLAMA = specsheet.load("llama3-8b").spec  # 32 heads, 8 KV heads, 32 layers, context 8,192
H100 = load_accelerator("h100-sxm")
ONE = check_training_parallel(LLAMA, None, None, 1, 1, False, 0)

CALLS: list[tuple[str, Callable[[], Any]]] = [
    ("gpus", lambda: check_parallel(LLAMA, 0, None, None)),
    ("gpus", lambda: check_parallel(LLAMA, 3, 2, None)),
    ("tp", lambda: check_parallel(LLAMA, None, 3, None)),
    ("pp", lambda: check_parallel(LLAMA, None, None, 40)),
    ("ep", lambda: check_parallel(LLAMA, None, 1, None, ep=True)),
    ("memory_utilization", lambda: parse_utilization("1.5")),
    ("zero", lambda: check_training_parallel(LLAMA, None, None, 1, 1, False, 4)),
    ("sp", lambda: check_training_parallel(LLAMA, None, None, 1, 1, True, 0)),
    ("dp", lambda: check_training_parallel(LLAMA, None, 0, 1, 1, False, 0)),
    ("gpus", lambda: check_training_parallel(LLAMA, 10, None, 4, 1, False, 0)),
    ("seq_len", lambda: plan_training(LLAMA, H100, ONE, seq_len=9000)),
    ("micro_batch", lambda: plan_training(LLAMA, H100, ONE, micro_batch=0)),
    ("tokens_total", lambda: plan_training(LLAMA, H100, ONE, tokens_total=0)),
    ("mfu", lambda: plan_training(LLAMA, H100, ONE, mfu=2.0)),
    ("price", lambda: plan_training(LLAMA, H100, ONE, price=-1.0)),
    ("precision", lambda: plan_training(LLAMA, H100, ONE, precision="fp8")),
    ("optimizer", lambda: plan_training(LLAMA, H100, ONE, optimizer="lion")),
    ("recompute", lambda: plan_training(LLAMA, H100, ONE, recompute="some")),
    ("lora_rank", lambda: plan_training(LLAMA, H100, ONE, lora_rank=-1)),
    ("lora_targets", lambda: plan_training(LLAMA, H100, ONE, lora_rank=4, lora_targets=("x",))),
    ("qlora", lambda: plan_training(LLAMA, H100, ONE, qlora=True)),
    ("base_format", lambda: plan_training(LLAMA, H100, ONE, base_format="bnb-nf4")),
]


@pytest.mark.parametrize(("field", "call"), CALLS, ids=[f"{f}-{i}" for i, (f, _) in
                                                         enumerate(CALLS)])
def test_a_plan_error_names_its_field(field: str, call: Callable[[], Any]) -> None:
    with pytest.raises(SpecError) as caught:
        call()
    e = caught.value
    assert e.field == field
    assert str(e) == f"{field}: {e.message}"
    assert not e.message.startswith(f"{field}:")
    assert field in FIELD_OPTIONS
    assert str(as_option_error(e)) == f"option {FIELD_OPTIONS[field]}: {e.message}"


def test_the_cli_names_a_field_as_this_command_spells_it() -> None:
    e = SpecError("ZeRO stage 3 contradicts stage 1", field="zero", value=1)
    assert str(as_option_error(e, {"zero": "option --fsdp"})) == \
        "option --fsdp: ZeRO stage 3 contradicts stage 1"
    e.context = " (llama3-8b)"  # what the api adds: the model the error happened in
    assert str(as_option_error(e)) == \
        "option --zero: ZeRO stage 3 contradicts stage 1 (llama3-8b)"
    unknown = SpecError("not a spec field", field="kv_head", source="preset x")
    assert str(as_option_error(unknown)) == "preset x: kv_head: not a spec field"


def test_expert_parallelism_is_named_by_the_reader() -> None:
    """tp 2 does not divide an expert width of 14,337; ep would split the experts whole."""
    spec = specsheet.load("mixtral-8x7b", expert_d_ff=14337).spec
    problem = tp_problem(spec, 2)
    assert problem is not None and problem.experts
    assert tp_problem(spec, 2, ep=True) is None
    with pytest.raises(TensorParallelError) as caught:
        check_parallel(spec, None, 2, None)
    message = ("2 does not divide the expert width 14337 ({} splits experts instead); tp values "
               "that work: 1")
    assert str(caught.value) == "tp: " + message.format("ep=True")
    assert str(as_option_error(caught.value)) == "option --tp: " + message.format("--ep")


def test_budgets_are_keyed_by_figure() -> None:
    report = specsheet.report(specsheet.load("gpt2-small"))
    assert [b.name for b in BUDGETS] == list(BUDGETS_BY_NAME)
    checked = run_checks(report, {"params.total": 124_439_808, "flops.forward_per_token": 1})
    assert [(r.budget.name, r.ok) for r in checked] == [("params.total", True),
                                                        ("flops.forward_per_token", False)]
