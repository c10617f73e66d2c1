"""Issue 24's "Why", example by example, as a user meets it: a real ``specsheet`` process, its
exit code, its stderr and its stdout. The examples tested elsewhere in real processes are named
here too, so that this file is the list:

- the five numbers and --set on every command: here;
- one request length (serve --tokens, check --gpu --tokens 8k): here;
- compare at one length: here and tests/test_outputs.py::test_the_issues_examples_in_real_processes
  (the KV ratio 1.125x, not 5.62x);
- check --gpu --json's failures at the top: that test of test_outputs.py (``failed``);
- CSV columns: granite's mamba2 column in that test, GGUF tensor types in a quant sweep here;
- non-finite JSON: --mfu 5e-324 with --json in that test, as a table here;
- unbounded memory: tests/test_bounded.py and
  tests/test_outputs.py::test_work_per_layer_is_bounded_before_it_starts;
- internal errors: a name too long in that test of test_outputs.py, the overflow here;
- 80 columns: presets in that test, hardware, check's dropped columns and token counts here;
- offline first: tests/test_model_source.py::
  test_a_hub_name_a_preset_was_built_from_answers_offline.
"""

from __future__ import annotations

import csv
import io
import json
import re

from commands import specsheet

FIVE = ["--layers", "12", "--d-model", "768", "--heads", "12", "--vocab", "50257",
        "--context", "1024"]  # GPT-2 small's shape; the defaults are GPT-2's
GPT2 = 124_439_808  # REFERENCE.md
LLAMA_BLOCK = 41_943_040 + 176_160_768 + 8_192  # one Llama 3 8B block (test_model_source.py)
# one Qwen3 8B block: q and o 4096 x 4096, k and v 4096 x 1024, q/k norms 2 x 128; the MLP
# 3 x 4096 x 12,288; two RMSNorms 2 x 4096
QWEN_BLOCK = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 2 * 128 + 3 * 4096 * 12_288 + 2 * 4096


def _ok(*args: str, **env: str | None) -> str:
    result = specsheet(*args, **env)
    assert result.returncode == 0, (args, result.stderr)
    assert result.stderr == "", result.stderr
    return result.stdout


def _one_line(result: object) -> str:
    assert result.returncode == 2, result.stderr  # type: ignore[attr-defined]
    assert result.stdout == ""  # type: ignore[attr-defined]
    (line,) = result.stderr.splitlines()  # type: ignore[attr-defined]
    assert line.startswith("specsheet: error: ")
    return str(line)


def test_the_five_numbers_that_serve_and_train_promised() -> None:
    """serve, train, compare and convert take the five numbers (they said "No such option"):
    GPT-2 small's 124,439,808 parameters; on one GPU in bf16, with vLLM's vocabulary padded
    to a multiple of 64 (50,257 -> 50,304: 47 rows of 768 more)."""
    served = json.loads(_ok("serve", *FIVE, "--gpu", "h100-sxm", "--json"))
    assert served["memory_per_gpu"]["weights_bytes"] == 2 * (GPT2 + 47 * 768)
    assert json.loads(_ok("train", *FIVE, "--json"))["params"]["total"] == GPT2
    assert json.loads(_ok("compare", *FIVE, "--json"))["models"][0]["params"]["total"] == GPT2
    assert "# specsheet counts 124,439,808 parameters" in _ok("convert", *FIVE)


def test_compare_takes_set() -> None:
    """compare had no --set: layers=31 is one Llama 3 8B block fewer and five Qwen3 8B blocks
    fewer (36 -> 31)."""
    document = json.loads(_ok("compare", "llama3-8b", "qwen3-8b", "--set", "layers=31",
                              "--json"))
    assert [m["params"]["total"] for m in document["models"]] == [
        8_030_261_248 - LLAMA_BLOCK, 8_190_735_360 - 5 * QWEN_BLOCK]


def test_serve_takes_tokens() -> None:
    """serve --tokens suggested --tokenizer; it is the request length, as everywhere."""
    document = json.loads(_ok("serve", "llama3-8b", "--gpu", "h100-sxm", "--tokens", "8k",
                              "--json"))
    assert document["request"]["max_model_len"] == 8192


def test_check_gpu_honours_tokens() -> None:
    """check --gpu ... --tokens 8k --min-concurrency 10 computed at 131k and said OVER (exit 1):
    at 8,192 tokens Llama 3.1 8B's 1,073,741,824 KV bytes a request fit 54 at once."""
    out = _ok("check", "llama3.1-8b", "--gpu", "h100-sxm", "--tokens", "8k",
              "--min-concurrency", "10")
    assert re.search(r"Requests of max-model-len at once +54 +>= 10 ok", out), out
    document = json.loads(_ok("check", "llama3.1-8b", "--gpu", "h100-sxm", "--tokens", "8k",
                              "--min-concurrency", "10", "--json"))
    assert (document["ok"], document["serve"]["max_concurrency"]) == (True, 54)


def test_compare_serves_every_model_at_one_length() -> None:
    """With --tokens 8k the serving rows used each model's context; now every row is at 8,192,
    and the table says so."""
    document = json.loads(_ok("compare", "llama3-8b", "qwen3-8b", "--gpu", "h100-sxm",
                              "--tokens", "8k", "--json"))
    assert [s["request"]["max_model_len"] for s in document["serve"]] == [8192, 8192]
    assert [m["flops"]["tokens"] for m in document["models"]] == [8192, 8192]


def test_a_quant_sweeps_csv_keeps_the_gguf_tensor_types() -> None:
    """The GGUF tensor types only the second point has are columns of the CSV, and they add up
    to that point's weight bytes."""
    rows = list(csv.DictReader(io.StringIO(_ok("sweep", "llama3-8b", "--quant",
                                               "none,gguf-q4_k_m", "--format", "csv"))))
    assert len(rows) == 2
    types = {k: v for k, v in rows[1].items() if k.startswith("memory.tensor_types.") and v}
    assert set(types) == {"memory.tensor_types.Q4_K", "memory.tensor_types.Q6_K",
                          "memory.tensor_types.F32"}
    assert all(rows[0][k] == "" for k in types)
    assert sum(int(v) for v in types.values()) == int(rows[1]["memory.weights_bytes"])


def test_a_tiny_mfu_as_a_table_is_one_line() -> None:
    """train --mfu 5e-324 as a table was an internal error; as JSON it wrote Infinity."""
    line = _one_line(specsheet("train", "llama3-8b", "--mfu", "5e-324"))
    assert line == ("specsheet: error: time.seconds comes out infinite with --mfu 5e-324: give "
                    "values nearer real ones (an efficiency far from 0, a price far below "
                    "10^308)")


def test_an_overflow_on_an_absurd_shape_is_one_line() -> None:
    line = _one_line(specsheet("train", "llama3-8b", "--set", "d_model=1" + "0" * 98))
    assert "a figure is beyond what a floating-point number holds" in line


def test_hardware_at_80_columns_is_a_line_a_gpu() -> None:
    out = _ok("hardware", COLUMNS="80")
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any(line.split()[:1] == ["h100-sxm"] for line in lines), out
    assert len(lines) < 45  # a line a GPU: no stacked blocks


def test_check_at_80_columns_explains_only_the_columns_it_shows() -> None:
    """At 80 columns check drops Value, Limit and Margin; its footnote no longer explains
    Margin."""
    result = specsheet("check", "llama3-8b", "--max-weights", "16GB", COLUMNS="80")
    assert (result.returncode, result.stderr) == (1, "")
    assert "16,060,522,496" in result.stdout and "OVER" in result.stdout
    assert "Margin" not in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    wide = specsheet("check", "llama3-8b", "--max-weights", "16GB", COLUMNS="160")
    assert "Margin = limit - value" in wide.stdout


def test_compare_prints_tokens_as_tokens() -> None:
    """compare showed 8,192 tokens as "8.19K"."""
    out = _ok("compare", "llama3-8b", "qwen3-8b", COLUMNS="80")
    (row,) = [line for line in out.splitlines() if line.lstrip().startswith("Tokens T")]
    assert row.split()[-2:] == ["8,192", "8,192"], row
    assert "8.19K" not in out
