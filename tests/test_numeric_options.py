"""Every numeric option of every command, given any number (issue 24): the answer is a strict
JSON document (no NaN, no Infinity), a check's exit 1, or one clear line with exit 2; never an
internal error, and never more than 1 GB of memory."""

from __future__ import annotations

import json
import resource
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from specsheet.cli.app import app

runner = CliRunner()

# each command's run, and its numeric options (the spec options with every command that
# takes a model: the shared group)
SPEC = ["--layers", "--d-model", "--heads", "--vocab", "--context", "--kv-heads", "--head-dim",
        "--d-ff"]
RUNS: dict[str, tuple[list[str], list[str]]] = {
    "count": (["count", "llama3-8b"], ["--tokens", "--group-size", *SPEC]),
    "compare": (["compare", "llama3-8b", "gpt2-small", "--gpu", "h100-sxm"],
                ["--tokens", "--gpus", "--tp", "--pp", "--prompt", "--output",
                 "--memory-utilization", "--price", "--mfu", "--mbu", "--tokens-per-word",
                 *SPEC]),
    "check": (["check", "llama3-8b", "--gpu", "h100-sxm", "--max-params", "1T"],
              ["--tokens", "--min-concurrency", "--max-ttft", "--min-tokens-per-s", "--gpus",
               "--prompt", "--output", "--concurrency", "--mfu", "--mbu", *SPEC]),
    "serve": (["serve", "llama3-8b", "--gpu", "h100-sxm"],
              ["--tokens", "--gpus", "--tp", "--pp", "--prompt", "--output", "--concurrency",
               "--memory-utilization", "--kv-memory", "--max-num-batched-tokens",
               "--max-num-seqs", "--price", "--mfu", "--mbu", "--tokens-per-word", *SPEC]),
    "train": (["train", "llama3-8b"],
              ["--tokens", "--tokens-total", "--micro-batch", "--gpus", "--mfu", "--price",
               "--dp", "--tp", "--pp", "--lora-rank", "--zero", *SPEC]),
    "sweep": (["sweep", "llama3-8b", "--batch", "1,2"], ["--tokens", "--group-size", *SPEC]),
}
NUMBERS = st.one_of(
    st.integers(min_value=-2, max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["5e-324", "1e308", "1e-300", "0", "-0.0", "1e400", "nan", "inf", "-inf",
                     "1k", "8k", "1e9", "123456789012345678901234567890"]),
)
GB = 2**30


def _strict(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@given(command=st.sampled_from(sorted(RUNS)), data=st.data())
def test_any_number_in_any_numeric_option(command: str, data: st.DataObject) -> None:
    base, options = RUNS[command]
    chosen = data.draw(st.lists(st.sampled_from(options), min_size=1, max_size=2, unique=True))
    args = [*base]
    for option in chosen:
        args += [option, data.draw(NUMBERS)]
    result = runner.invoke(app, [*args, "--json"])
    assert "internal error" not in result.stderr, (args, result.stderr)
    assert result.exit_code in (0, 1, 2), (args, result.stderr)
    if result.exit_code == 2:
        assert result.stdout == ""
        assert len(result.stderr.splitlines()) == 1, (args, result.stderr)
    else:
        _strict(result.stdout)
    # ru_maxrss is in KiB on Linux: the whole test process, every example so far
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 < GB
