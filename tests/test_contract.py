"""The scripting contract where users are: real processes, pipes that close early, full disks,
closed streams, stdouts that cannot take Unicode, and failures nobody foresaw."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from commands import SPECSHEET, clean_env, shell, specsheet

TABLE_COMMANDS = [
    ["count", "llama3-8b"],
    ["compare", "gpt2-small", "llama3-8b", "llama3-70b", "mixtral-8x7b"],
    ["check", "llama3-8b", "--max-weights", "16GB"],
    ["presets"],
    ["presets", "--long"],
    ["hardware"],
    ["hardware", "--long"],
    ["serve", "llama3-70b", "--gpu", "h100-sxm", "--gpus", "8"],
    ["serve", "llama2-7b", "--gpu", "h100-sxm", "--vllm-log",
     str(Path(__file__).parent / "data" / "vllm_logs" / "llama2-7b-v0.log")],
    # speculative decoding: the draft's row in the memory table, its row in the fit table
    ["serve", "llama3.1-8b", "--gpu", "h100-sxm", "--tokens", "8k", "--draft", "llama3.2-1b",
     "--speculative-tokens", "4"],
    ["serve", "deepseek-v3", "--gpu", "h200", "--gpus", "8", "--speculative-method", "mtp",
     "--speculative-tokens", "2"],
    # the verdict vLLM's log agrees with (vllm issue 23278), and the rotary cache row
    ["serve", "gpt-oss-120b", "--gpu", "h100-sxm", "--moe-kernel", "marlin"],
    # a hybrid's state pages under prefix caching, and the CPU tier of KV offload
    ["serve", "granite-4.0-h-tiny", "--gpu", "h100-sxm", "--enable-prefix-caching",
     "--mamba-cache-mode", "align", "--kv-offload", "64GiB"],
    ["train", "llama3-8b", "--seq-len", "8k", "--gpus", "8"],
    ["sweep", "llama3.1-8b", "--tokens", "1k:128k:x2", "--gpu", "h100-sxm"],
    ["plan", "llama3-70b", "--gpu", "all", "--max-model-len", "8k", "--requests-per-s", "10",
     "--prompt", "1k", "--output", "256", "--max-ttft", "1", "--price", "2.5"],
    ["plan", "llama3-8b", "--train", "--tokens-total", "100B", "--days", "10", "--gpu",
     "h100-sxm,rtx-pro-6000-blackwell", "--nodes", "4", "--price", "2.5"],
    ["fit", "qwen3-30b-a3b", "--gpu", "rtx-4090,rtx-3090", "--ctx", "32k", "--n-cpu-moe", "4",
     "-ctk", "q8_0", "-ctv", "q8_0"],
    ["train", "llama3-8b", "--gpus", "1"],  # with the table of what would fit
    ["train", "mixtral-8x7b", "--gpus", "16", "--pp", "2", "--ep", "8", "--cp", "2",
     "--zero", "1", "--seq-len", "4k"],  # bubble, all-to-all and ring rows
    ["train", "deepseek-v3", "--gpus", "2048", "--pp", "16", "--ep", "64", "--zero", "1",
     "--micro-batch", "2"],  # its recipe (DualPipe, FP8 cache, bf16 states), what would fit
    # the explorer's first screen as text: the bar, the comparison, the serving view
    ["explore", "llama3-70b", "--print", "--compare", "gpt2-small", "--gpu", "h100-sxm"],
]
FORMATS = [[], ["--json"], ["--format", "csv"], ["--format", "markdown"]]


# ---- pipes -------------------------------------------------------------------------------------

# every command on the table path, and count in every format
PIPED = [(command, []) for command in TABLE_COMMANDS] + [(TABLE_COMMANDS[0], fmt)
                                                         for fmt in FORMATS[1:]]


@pytest.mark.parametrize(("command", "fmt"), PIPED,
                         ids=[f"{c[0]}-{' '.join(f) or 'table'}" for c, f in PIPED])
def test_a_reader_that_stops_after_one_line_is_not_an_error(command: list[str],
                                                            fmt: list[str]) -> None:
    """`specsheet ... | head -1` under pipefail: exit 0 (check over budget keeps its 1)."""
    args = " ".join([*command, *fmt])
    result = shell(f"specsheet {args} | head -1; echo \"codes ${{PIPESTATUS[*]}}\"")
    expected = "1 0" if command[0] == "check" else "0 0"
    assert result.stdout.decode().splitlines()[-1] == f"codes {expected}", result.stderr
    assert result.stderr == b""


def test_a_reader_that_stops_before_a_large_output_ends() -> None:
    """More than a pipe holds (64 KiB), so the write itself meets the closed pipe."""
    from specsheet.sources.presets import preset_index

    names = " ".join(preset_index())
    for fmt in ("--json", "--format csv", ""):
        result = shell(f"specsheet compare {names} {fmt} | head -1")
        assert result.returncode == 0, (fmt, result.stderr)
        assert result.stderr == b""


def test_a_reader_that_stops_at_once_is_not_an_error() -> None:
    result = shell("specsheet compare gpt2-small llama3-8b | true")
    assert result.returncode == 0 and result.stderr == b""


@pytest.mark.parametrize("args", ["--help", "--version", "count --help", "schema",
                                  "inspect --help"])
def test_help_and_version_to_a_reader_that_went_away(args: str) -> None:
    """Help and version are written by click and the group's options, not by a command."""
    result = shell(f"specsheet {args} | true")
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""


# ---- failed writes -----------------------------------------------------------------------------

@pytest.mark.parametrize("args", ["--help", "--version", "count --help", "schema"])
def test_help_and_version_to_a_full_disk(args: str) -> None:
    result = shell(f"specsheet {args} > /dev/full")
    assert result.returncode == 74
    assert result.stderr == b"specsheet: error: cannot write the output: No space left on device\n"



@pytest.mark.parametrize("fmt", [[], ["--json"]], ids=["table", "json"])
def test_a_full_disk_is_its_own_exit_code(fmt: list[str]) -> None:
    if not Path("/dev/full").exists():
        pytest.fail("this test needs /dev/full (Linux)")
    result = shell(f"specsheet count llama3-8b {' '.join(fmt)} > /dev/full")
    assert result.returncode == 74
    assert result.stderr.decode().startswith("specsheet: error: cannot write the output: ")
    assert result.stderr.count(b"\n") == 1


def test_a_closed_stdout_is_its_own_exit_code() -> None:
    result = shell("specsheet count llama3-8b --json >&-")
    assert result.returncode == 74
    assert b"cannot write the output" in result.stderr and b"Traceback" not in result.stderr


def test_a_closed_stdout_does_not_matter_to_a_command_that_writes_a_file(tmp_path: Path) -> None:
    result = shell("specsheet convert llama3-8b -o out.yaml >&-", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.yaml").read_text().startswith("# llama3-8b")


@pytest.mark.parametrize(("args", "code"), [
    (["count", "llama3-8b", "--json"], 0),
    (["check", "llama3-8b", "--max-weights", "16GB"], 1),
    (["count", "gpt2-smal"], 2),
])
def test_a_closed_stderr_changes_nothing(args: list[str], code: int) -> None:
    result = shell(f"specsheet {' '.join(args)} 2>&-")
    assert result.returncode == code
    if code == 2:
        assert result.stdout == b"", "an error must never move to stdout"
    else:
        assert result.stdout.strip()


# ---- encodings ---------------------------------------------------------------------------------

CP1252 = {"PYTHONIOENCODING": "cp1252"}
ENCODINGS: list[tuple[dict[str, str | None], list[str]]] = [
    (CP1252, []), (CP1252, ["--format", "markdown"]), (CP1252, ["--format", "csv"]),
    ({"PYTHONIOENCODING": "ascii"}, []),
    ({"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
      "PYTHONIOENCODING": None}, []),
]


@pytest.mark.parametrize(("env", "fmt"), ENCODINGS,
                         ids=["cp1252", "cp1252-markdown", "cp1252-csv", "ascii", "C-locale"])
def test_a_stdout_without_unicode_gets_ascii(env: dict[str, str | None],
                                             fmt: list[str]) -> None:
    result = subprocess.run([*SPECSHEET, "count", "gpt2-small", *fmt], capture_output=True,
                            env=clean_env(COLUMNS="120", **env), timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode("ascii")  # nothing but ASCII
    assert ("124439808" if "csv" in fmt else "124,439,808") in text
    if fmt != ["--format", "csv"]:
        assert "4d^2 + 4d" in text and "V x d" in text
    if not fmt:
        assert "#####" in text  # the share bars


@pytest.mark.parametrize("command", TABLE_COMMANDS[3:], ids=lambda c: c[0])
def test_every_table_fits_80_columns_of_cp1252(command: list[str]) -> None:
    """The commands with charts and bars, at 80 columns on a Windows code page: ASCII only,
    and no line wider than the terminal."""
    result = subprocess.run([*SPECSHEET, *command], capture_output=True, timeout=60,
                            env=clean_env(COLUMNS="80", PYTHONIOENCODING="cp1252"), check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode("ascii").splitlines()
    assert max(len(line) for line in lines) <= 80
    assert len(lines) > 10


def test_an_error_with_a_non_ascii_name_on_an_ascii_stderr() -> None:
    result = specsheet("count", "gpt2-smäll", PYTHONIOENCODING="ascii")
    assert result.returncode == 2
    assert result.stderr.startswith("specsheet: error: unknown preset 'gpt2-sm")
    assert result.stderr.count("\n") == 1


# ---- failures nobody foresaw -------------------------------------------------------------------

BUG = ("import sys, specsheet.figures as r\n"
       "def broken(*a, **k):\n    raise KeyError('a bug')\n"
       "r.build_report = broken\n"
       "import specsheet.cli.options as o\no.build_report = broken\n"
       "from specsheet.cli.app import main\nsys.argv = ['specsheet', 'count', 'gpt2-small']\n"
       "main()\n")


def test_an_internal_error_asks_for_a_report_without_a_traceback() -> None:
    result = subprocess.run([sys.executable, "-c", BUG], capture_output=True, text=True,
                            env=clean_env(), timeout=60, check=False)
    assert result.returncode == 70
    assert result.stdout == ""
    assert result.stderr.startswith("specsheet: internal error: KeyError: 'a bug'; please report")
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1


def test_specsheet_debug_shows_the_traceback() -> None:
    result = subprocess.run([sys.executable, "-c", BUG], capture_output=True, text=True,
                            env=clean_env(SPECSHEET_DEBUG="1"), timeout=60, check=False)
    assert result.returncode == 70
    assert "Traceback" in result.stderr and "KeyError: 'a bug'" in result.stderr


# ---- the review's examples ----------------------------------------------------------------------

@pytest.mark.parametrize(("text_config", "message"), [
    (None, None),
    ("llama", "key 'text_config': expected a mapping"),
    ([1, 2], "key 'text_config': expected a mapping"),
])
def test_text_config_that_is_not_a_mapping(tmp_path: Path, text_config: object,
                                           message: str | None) -> None:
    config = json.loads((Path(__file__).parent / "data" / "llama-3.2-1b.json").read_text())
    config["text_config"] = text_config
    (tmp_path / "config.json").write_text(json.dumps(config))
    result = specsheet("count", str(tmp_path / "config.json"), "--json")
    if message is None:  # null is absent, as in transformers
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["params"]["total"] == 1_235_814_400
    else:
        assert result.returncode == 2 and result.stdout == ""
        assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["count", "gpt2-small", "--set", "layers=²"], "field 'layers': expected a positive integer"),
    (["count", "gpt2-small", "--set", "layers=1" + "0" * 5000], "field 'layers': expected"),
    (["count", "llama3-8b", "--kv-heads", "64"],
     "option --kv-heads: 64 does not divide heads 32"),
    (["compare", "gpt2-small", "llama3-8b", "--tokens", "2000"],
     "lower --tokens to the smallest context of the models compared"),
    (["count", "gpt2-small\r"], "unknown preset 'gpt2-small\\r' (did you mean 'gpt2-small'?"),
    (["check", "llama3-8b", "--max-weights", "16 gigs"], "option --max-weights"),
])
def test_messages_blame_the_right_source(args: list[str], message: str) -> None:
    result = specsheet(*args)
    assert result.returncode == 2 and result.stdout == ""
    assert message in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1
    assert "--context" not in result.stderr or args[0] != "compare"


@pytest.mark.parametrize("text", ["layers: 1" + "0" * 5000, '{"layers": 1' + "0" * 5000 + "}"])
def test_integers_past_the_string_limit_in_a_file(tmp_path: Path, text: str) -> None:
    suffix = ".json" if text.startswith("{") else ".yaml"
    path = tmp_path / f"big{suffix}"
    path.write_text(text + ("\n" if suffix == ".yaml" else ""))
    result = specsheet("count", str(path))
    assert result.returncode == 2 and result.stdout == ""
    assert str(path) in result.stderr and "Traceback" not in result.stderr


def test_yaml_octal_is_refused_with_a_hint(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text("layers: 012\nd_model: 16\nheads: 4\nvocab: 32\n"
                                     "context: 64\n")
    result = specsheet("count", "m.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert "line 1: 012 is an octal number in YAML 1.1 (10); write 12" in result.stderr


def test_a_folder_named_like_a_preset_does_not_shadow_it(tmp_path: Path) -> None:
    (tmp_path / "gpt2-small").mkdir()
    result = specsheet("count", "gpt2-small", "--json", cwd=tmp_path)
    assert result.returncode == 0
    assert json.loads(result.stdout)["params"]["total"] == 124_439_808
    assert "write ./gpt2-small to read it" in result.stderr
    as_path = specsheet("count", "./gpt2-small", cwd=tmp_path)
    assert as_path.returncode == 2 and "without a config.json" in as_path.stderr


def test_the_list_of_presets_names_no_path(tmp_path: Path) -> None:
    """``presets`` lists the built-in presets: a folder named like one, where it runs, is no
    note (the list reads no name the user typed, so no path is shadowed)."""
    (tmp_path / "gpt2-small").mkdir()
    result = specsheet("presets", cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == ""
    assert "gpt2-small" in result.stdout


def test_check_takes_several_models() -> None:
    result = specsheet("check", "gpt2-small", "llama3-8b", "tiny", "--max-params", "1B", "--json")
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert [m["ok"] for m in doc["models"]] == [True, False, True]
    assert [m["model"]["name"] for m in doc["models"]] == ["gpt2-small", "llama3-8b", "tiny"]
    ok = specsheet("check", "gpt2-small", "tiny", "--max-params", "1B")
    assert ok.returncode == 0 and ok.stdout.count("all within budget") == 2


# ---- files the command writes -------------------------------------------------------------------

def test_convert_writes_a_whole_file_or_none(tmp_path: Path) -> None:
    target = tmp_path / "m.yaml"
    target.write_text("old\n")
    assert specsheet("convert", "gpt2-small", "-o", str(target)).returncode == 0
    assert target.read_text().startswith("# gpt2-small")
    assert list(tmp_path.iterdir()) == [target]  # no temporary file left behind
    missing = specsheet("convert", "gpt2-small", "-o", str(tmp_path / "no" / "m.yaml"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    folder = specsheet("convert", "gpt2-small", "-o", str(tmp_path))
    assert folder.returncode == 2 and "it is a folder" in folder.stderr


def test_convert_to_a_device_writes_to_it_and_never_replaces_it() -> None:
    full = Path("/dev/full")
    if not full.exists():
        pytest.fail("this test needs /dev/full (Linux)")
    result = specsheet("convert", "gpt2-small", "-o", str(full))
    assert result.returncode == 2 and "No space left on device" in result.stderr
    assert full.is_char_device()


def test_a_cache_ref_that_is_not_utf8(tmp_path: Path) -> None:
    folder = tmp_path / "hub" / "models--org--name"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_bytes(b"\xff\xfe\x00garbage")
    (folder / "snapshots").mkdir()
    result = specsheet("count", "org/name", "--json", HF_HOME=str(tmp_path),
                       HF_HUB_OFFLINE="1")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("specsheet: error: org/name: not in the local Hugging Face")
    assert "Traceback" not in result.stderr


# ---- the rest of the review's examples, as processes ---------------------------------------------

def test_compare_of_four_models_at_80_columns_keeps_its_labels() -> None:
    result = specsheet("compare", "gpt2-small", "llama3-8b", "llama3-70b", "mixtral-8x7b",
                       COLUMNS="80")
    assert result.returncode == 0
    for label in ("Parameters", "Weights (bf16)", "KV cache per request", "Forward FLOPs"):
        assert label in result.stdout
    assert "…" not in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80


@pytest.mark.parametrize("columns", ["0", "-1", "wide"])
def test_a_columns_that_is_not_a_width_means_80(columns: str) -> None:
    odd = specsheet("count", "gpt2-small", COLUMNS=columns)
    assert odd.returncode == 0 and odd.stdout
    assert odd.stdout == specsheet("count", "gpt2-small", COLUMNS="80").stdout


def test_attn_bias_wins_over_a_preset_that_spells_out_its_biases() -> None:
    base = json.loads(specsheet("count", "gemma2-9b", "--json").stdout)
    biased = json.loads(specsheet("count", "gemma2-9b", "--attn-bias", "--json").stdout)
    assert base["spec"]["qkv_bias"] is False and biased["spec"]["qkv_bias"] is True
    # q 16 x 256, k and v 8 x 256 each, o 3,584: per layer, 42 layers
    assert biased["params"]["total"] - base["params"]["total"] == 42 * (
        16 * 256 + 2 * 8 * 256 + 3584)


@pytest.mark.parametrize("limit", ["16Gi", "17,179,869,184", "17_179_869_184 B", "17.2 GB"])
def test_limits_take_what_specsheet_prints(limit: str) -> None:
    result = specsheet("check", "llama3-8b", "--max-weights", limit)
    assert result.returncode == 0, result.stderr


def test_the_cache_hint_names_the_current_cli(tmp_path: Path) -> None:
    result = specsheet("count", "org/name", HF_HOME=str(tmp_path), HF_HUB_OFFLINE="1")
    assert result.returncode == 2
    assert "hf download org/name config.json" in result.stderr
    assert "huggingface-cli" not in result.stderr
