"""One model source on every command (issue 24): every command that takes a model, given the
same model in every way there is to give one, answers with the same total; and one request
length, --tokens, on every command.

The model is Llama 3.1 8B: its preset, a preset YAML file, its published config.json (kept in
tests/data, from https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json), a
folder holding it, hf:ORG/NAME and ORG/NAME against the fake Hub of test_hub.py, and the five
numbers with the spec options. Its total, 8,030,261,248, is the published checkpoint's
(REFERENCE.md: Llama 3 8B, the same shapes; 3.1 changes only the rotary scaling and the
context)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.cli.model_source import GROUP_PARAMETERS
from tests.test_hub import DATA, LLAMA, FakeHub, fake_hub  # noqa: F401 - the fixture

runner = CliRunner()
TOTAL = 8_030_261_248
WEIGHTS = 2 * TOTAL  # bf16, one GPU
FIVE = ["--layers", "32", "--d-model", "4096", "--heads", "32", "--vocab", "128256",
        "--context", "131072", "--kv-heads", "8", "--d-ff", "14336", "--mlp", "gated",
        "--norm", "rmsnorm", "--no-attn-bias", "--no-mlp-bias", "--positions", "rotary",
        "--untied"]


def _yaml_total(text: str) -> int:
    match = re.search(r"specsheet counts ([\d,]+) parameters", text)
    assert match, text
    return int(match.group(1).replace(",", ""))


def _printed_total(text: str) -> int:
    match = re.search(r"^total ([\d,]+) parameters$", text, re.M)
    assert match, text
    return int(match.group(1).replace(",", ""))


# command -> (its arguments after the model, the total its output states)
COMMANDS: dict[str, tuple[list[str], Callable[[str], int]]] = {
    "count": (["--json"], lambda out: json.loads(out)["params"]["total"]),
    "compare": (["--json"], lambda out: json.loads(out)["models"][0]["params"]["total"]),
    "check": (["--max-params", "9B", "--json"],
              lambda out: json.loads(out)["model"]["params"]["total"]),
    "serve": (["--gpu", "h100-sxm", "--json"],
              lambda out: json.loads(out)["memory_per_gpu"]["weights_bytes"] // 2),
    "plan": (["--gpu", "h100-sxm", "--gpus", "1", "--json"],
             lambda out: json.loads(out)["model"]["params"]),
    "train": (["--json"], lambda out: json.loads(out)["params"]["total"]),
    "sweep": (["--tokens", "1k,2k", "--json"],
              lambda out: json.loads(out)["points"][0]["report"]["params"]["total"]),
    "convert": ([], _yaml_total),
    # the explorer's first screen, written as text (--print): its bar's total
    "explore": (["--print"], lambda out: _printed_total(out)),
}
SOURCES = ("preset", "yaml", "config.json", "folder", "gguf", "safetensors", "index", "hf:",
           "ORG/NAME", "five numbers")


def _source(kind: str, tmp_path: Path) -> list[str]:
    config = DATA / "llama-3.1-8b.json"
    if kind == "preset":
        return ["llama3.1-8b"]
    if kind == "yaml":
        path = tmp_path / "llama.yaml"
        result = runner.invoke(app, ["convert", str(config), "-o", str(path)])
        assert result.exit_code == 0, result.stderr
        return [str(path)]
    if kind == "config.json":
        return [str(config)]
    if kind == "folder":
        folder = tmp_path / "Llama-3.1-8B"
        folder.mkdir()
        shutil.copy(config, folder / "config.json")
        return [str(folder)]
    if kind == "gguf":  # the header gguf.GGUFWriter writes, llama.cpp's metadata; sparse data
        from checkpoints import write_gguf

        from specsheet.api.count import load
        from specsheet.quant.layouts import gguf_types

        spec = load("llama3.1-8b").spec
        return [str(write_gguf(tmp_path / "Llama-3.1-8B-F16.gguf", "llama", spec,
                               gguf_types(spec, "f16"), data=False))]
    if kind == "safetensors":  # a header of transformers' shapes, beside the config.json
        import os

        from checkpoints import hf_tensors, safetensors_header, spec_of

        folder = tmp_path / "Llama-3.1-8B"
        folder.mkdir()
        shutil.copy(config, folder / "config.json")
        head, data = safetensors_header(hf_tensors("llama", spec_of(json.loads(
            config.read_text()))))
        weights = folder / "model.safetensors"
        weights.write_bytes(head)
        os.truncate(weights, len(head) + data)
        return [str(weights)]
    if kind == "index":  # two shards of transformers' shapes and their index, beside it
        import os

        from checkpoints import hf_tensors, safetensors_header, spec_of

        folder = tmp_path / "Llama-3.1-8B"
        folder.mkdir()
        shutil.copy(config, folder / "config.json")
        tensors = hf_tensors("llama", spec_of(json.loads(config.read_text())))
        names = list(tensors)
        weight_map = {}
        for i, part in enumerate((names[:len(names) // 2], names[len(names) // 2:])):
            shard = f"model-0000{i + 1}-of-00002.safetensors"
            head, data = safetensors_header({n: tensors[n] for n in part})
            (folder / shard).write_bytes(head)
            os.truncate(folder / shard, len(head) + data)
            weight_map.update(dict.fromkeys(part, shard))
        index = folder / "model.safetensors.index.json"
        index.write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
        return [str(index)]
    if kind == "hf:":
        return [f"hf:{LLAMA}"]
    if kind == "ORG/NAME":
        return [LLAMA]
    assert kind == "five numbers"
    return FIVE


@pytest.mark.parametrize("kind", SOURCES)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_takes_every_source(command: str, kind: str, tmp_path: Path,
                                          fake_hub: FakeHub) -> None:  # noqa: F811
    arguments, total = COMMANDS[command]
    source = _source(kind, tmp_path)
    result = runner.invoke(app, [command, *source, *arguments])
    assert result.exit_code == 0, (command, kind, result.stderr)
    if command == "serve" and kind == "gguf":  # the file's own types: F16, its norms F32
        inspected = runner.invoke(app, ["inspect", *source, "--json"])
        weights = json.loads(result.stdout)["memory_per_gpu"]["weights_bytes"]
        assert weights == json.loads(inspected.stdout)["bytes"]["data"]
        assert weights == WEIGHTS + 2 * (2 * 32 + 1) * 4096  # 65 RMSNorms of 4,096 in F32
        return
    assert total(result.stdout) == TOTAL


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_set_and_the_spec_options_reach_every_command(command: str) -> None:
    """One layer fewer, by --set or by --layers: 218,112,000 parameters fewer (one Llama 3 8B
    block: attention 4 x 4096^2 less 3/4 of K and V, 41,943,040; MLP 3 x 4096 x 14,336,
    176,160,768; two RMSNorms, 8,192)."""
    arguments, total = COMMANDS[command]
    block = 41_943_040 + 176_160_768 + 8_192
    for given in (["--set", "layers=31"], ["--layers", "31"]):
        result = runner.invoke(app, [command, "llama3.1-8b", *given, *arguments])
        assert result.exit_code == 0, (command, given, result.stderr)
        assert total(result.stdout) == TOTAL - block


def test_every_model_command_has_the_whole_group() -> None:
    """The group is one decorator: each command's --help lists every option of it."""
    from specsheet.cli.app import build_command

    for name in (*COMMANDS, "explore", "fit"):
        options = {p.name for p in build_command(name).params}
        assert set(GROUP_PARAMETERS) <= options, (name, set(GROUP_PARAMETERS) - options)


@pytest.mark.parametrize("kind", SOURCES)
def test_fit_takes_every_source(kind: str, tmp_path: Path,
                                fake_hub: FakeHub) -> None:  # noqa: F811
    """fit places the same 32 blocks and output layer from every kind of source (a .gguf
    with its own tensors, the others in the default Q4_K_M), and one block fewer with
    --set layers=31 (a .gguf then read by its metadata)."""
    (tmp_path / "again").mkdir()
    result = runner.invoke(app, ["fit", *_source(kind, tmp_path), "--json"])
    assert result.exit_code == 0, (kind, result.stderr)
    document = json.loads(result.stdout)
    assert document["layers"]["total"] == 33
    assert document["quant"] == ("file" if kind == "gguf" else "gguf-q4_k_m")
    fewer = runner.invoke(app, ["fit", *_source(kind, tmp_path / "again"), "--set",
                                "layers=31", "--json"]) if kind != "five numbers" else \
        runner.invoke(app, ["fit", *FIVE, "--layers", "31", "--json"])
    assert fewer.exit_code == 0, (kind, fewer.stderr)
    assert json.loads(fewer.stdout)["layers"]["total"] == 32


def _at(command: str, out: str) -> Any:
    document = json.loads(out)
    return {
        "count": lambda: document["flops"]["tokens"],
        "compare": lambda: {m["flops"]["tokens"] for m in document["models"]}
        | {s["request"]["max_model_len"] for s in document["serve"]},
        "check": lambda: {document["model"]["flops"]["tokens"],
                          document["serve"]["request"]["max_model_len"]},
        "serve": lambda: document["request"]["max_model_len"],
        "train": lambda: document["flops"]["seq_len"],
        "sweep": lambda: {p["report"]["flops"]["tokens"] for p in document["points"]},
    }[command]()


TOKENS_RUNS = {
    "count": ["count", "llama3-8b"],
    "compare": ["compare", "llama3-8b", "qwen3-8b", "--gpu", "h100-sxm"],
    "check": ["check", "llama3-8b", "--gpu", "h100-sxm", "--min-concurrency", "10"],
    "serve": ["serve", "llama3-8b", "--gpu", "h100-sxm"],
    "train": ["train", "llama3-8b"],
    "sweep": ["sweep", "llama3-8b", "--batch", "1,2"],
}


def test_explore_prints_its_first_screen_at_tokens() -> None:
    """explore --print serves the design at --tokens as the explorer's serving view does:
    Llama 3.1 8B at 8,192 tokens, 1,073,741,824 KV bytes a request (REFERENCE.md), 54 at once
    on an h100-sxm (as check says, test_the_issues_examples_in_real_processes)."""
    result = runner.invoke(app, ["explore", "llama3.1-8b", "--print", "--gpu", "h100-sxm",
                                 "--tokens", "8k"])
    assert result.exit_code == 0, result.stderr
    assert "requests of T = 8,192" in result.stdout
    assert "KV/request    1.07 GB" in result.stdout
    assert re.search(r"^  at once +54$", result.stdout, re.M), result.stdout
    both = runner.invoke(app, ["explore", "--print", "--web"])
    assert both.exit_code == 2 and "give one of them" in both.stderr


@pytest.mark.parametrize("spelling", ["--tokens", "-t"])
@pytest.mark.parametrize("command", sorted(TOKENS_RUNS))
def test_every_command_plans_at_tokens(command: str, spelling: str) -> None:
    result = runner.invoke(app, [*TOKENS_RUNS[command], spelling, "8k", "--json"])
    assert result.exit_code == 0, result.stderr
    at = _at(command, result.stdout)
    assert at in (8192, {8192}), at


@pytest.mark.parametrize(("command", "alias"), [("serve", "--max-model-len"),
                                                ("check", "--max-model-len"),
                                                ("compare", "--max-model-len"),
                                                ("train", "--seq-len"), ("train", "-s")])
def test_the_engines_names_are_aliases_of_tokens(command: str, alias: str) -> None:
    result = runner.invoke(app, [*TOKENS_RUNS[command], alias, "8k", "--json"])
    assert result.exit_code == 0, result.stderr
    assert _at(command, result.stdout) in (8192, {8192})


def test_the_issues_examples_in_real_processes() -> None:
    """The five numbers that serve and train promised, and check --gpu at --tokens."""
    from tests.commands import specsheet

    five = ["--layers", "12", "--d-model", "768", "--heads", "12", "--vocab", "50257",
            "--context", "1024"]
    for command in (["serve", *five, "--gpu", "h100-sxm"], ["train", *five],
                    ["compare", *five], ["convert", *five]):
        result = specsheet(*command, *([] if command[0] == "convert" else ["--json"]))
        assert result.returncode == 0, (command, result.stderr)
        assert result.stderr == ""
    # Llama 3.1 8B at 8,192 tokens: 1,073,741,824 KV bytes a request (REFERENCE.md), 54 of
    # them in the h100-sxm's pool; at its 131,072-token context only 3 (exit 1 before)
    result = specsheet("check", "llama3.1-8b", "--gpu", "h100-sxm", "--tokens", "8k",
                       "--min-concurrency", "10", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["ok"] is True
    assert document["serve"]["request"]["max_model_len"] == 8192
    assert document["serve"]["max_concurrency"] == 54
    over = specsheet("check", "llama3.1-8b", "--gpu", "h100-sxm", "--min-concurrency", "10")
    assert over.returncode == 1


def test_a_hub_name_a_preset_was_built_from_answers_offline(tmp_path: Path) -> None:
    """meta-llama/Llama-3.1-8B is the source of the llama3.1-8b preset: with HF_HUB_OFFLINE
    set and an empty cache, or with a Hub that does not answer, the preset answers, and one
    note on stderr says so."""
    from tests.commands import specsheet

    offline = specsheet("count", LLAMA, "--json", HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path))
    assert offline.returncode == 0, offline.stderr
    assert json.loads(offline.stdout)["params"]["total"] == TOTAL
    assert offline.stderr == (f"specsheet: note: {LLAMA}: HF_HUB_OFFLINE is set; answered from "
                              "the shipped preset llama3.1-8b, built from its config.json at "
                              "main\n")
    down = specsheet("serve", f"hf:{LLAMA}", "--gpu", "h100-sxm", "--json", HF_HUB_OFFLINE=None,
                     HF_HOME=str(tmp_path), HF_ENDPOINT="http://127.0.0.1:9", HF_TOKEN=None)
    assert down.returncode == 0, down.stderr
    assert "the Hub cannot be reached; answered from the shipped preset llama3.1-8b" \
        in down.stderr
    # a revision other than main is not what the preset was built from
    pinned = specsheet("count", f"{LLAMA}@v1", HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path))
    assert pinned.returncode == 2
    assert "HF_HUB_OFFLINE is set" in pinned.stderr
