"""Bounded work (issue 24): absurd layers, experts and tensors, in real processes that may map
no more than 1 GB (RLIMIT_AS). Every command answers, or refuses with one line that names its
cap, exit 2 and nothing on stdout, before it builds anything per declared layer or tensor.

The caps (docs/cli.md "Bounded work"):
- layers: 10,000 for a question that walks them one by one (``plan.MAX_WALKED_LAYERS``, the same
  number as ``quant.tensors.MAX_LISTED_LAYERS``): serving, training, a placement, a quantized
  layout, an inspection; count in a plain dtype answers any number;
- the automatic GPU-layer search of fit and check --engine: 512 layers
  (``plan.MAX_SEARCHED_LAYERS``; it tries every count, a placement each);
- tensors: 300,000 in a checkpoint, all its files together
  (``sources.weights.tensor.MAX_TENSORS``), checked against a header's count before the
  tensors are read; GGUF metadata: 100,000 entries;
- experts: no cap; no command builds anything per expert (GGUF and specsheet's layouts stack a
  layer's experts in one tensor), so each answers.
"""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
from commands import SPECSHEET, clean_env

GB = 2**30
MIXTRAL = 46_702_792_704  # mixtral-8x7b's published total (its preset)
# one expert of Mixtral: gate, up and down, 3 x 4096 x 14,336; its row of the router, 4096
EXPERT = 3 * 4096 * 14_336 + 4096


def _under_1gb(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """specsheet in a real process that may not map more than 1 GB."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (GB, GB))

    return subprocess.run([*SPECSHEET, *args], capture_output=True, text=True, env=clean_env(),
                          timeout=120, check=False, preexec_fn=limit, cwd=cwd)


def _refused(result: subprocess.CompletedProcess[str], *words: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("specsheet: error: ")
    for word in words:
        assert word in line, line
    return line


# ---- experts: answered ------------------------------------------------------------------------

EXPERTS = 10_000_000


TOTAL = MIXTRAL + (EXPERTS - 8) * 32 * EXPERT


def _unstated(document: dict[str, Any]) -> set[int]:
    """A document that states no total (a plan per GPU under expert parallelism, a
    placement): its answer is the check."""
    return set()


def _weights(document: dict[str, Any]) -> set[int]:
    return {document["memory_per_gpu"]["weights_bytes"] // 2}  # bf16 on one GPU


@pytest.mark.parametrize(("args", "totals"), [
    (["count", "mixtral-8x7b", "--json"], None),
    (["count", "mixtral-8x7b", "--quant", "gguf-q4_k_m", "--json"], None),
    (["compare", "mixtral-8x7b", "--quant", "mxfp4", "--json"], None),
    (["serve", "mixtral-8x7b", "--gpu", "h100-sxm", "--json"], _weights),
    (["serve", "mixtral-8x7b", "--gpu", "h100-sxm", "--gpus", "8", "--ep", "--json"], _unstated),
    (["check", "mixtral-8x7b", "--gpu", "h100-sxm", "--max-params", "1T", "--json"], None),
    (["train", "mixtral-8x7b", "--gpus", "16", "--ep", "8", "--json"], None),
    (["sweep", "mixtral-8x7b", "--quant", "none,gguf-q4_k_m", "--json"], None),
    (["sweep", "mixtral-8x7b", "--quant", "none,gguf-q4_k_m", "--gpu", "h100-sxm", "--json"],
     _unstated),
    (["fit", "mixtral-8x7b", "--gpu", "rtx-4090", "--json"], _unstated),
], ids=lambda a: " ".join(a[:1] + a[2:4]) if isinstance(a, list) else "")
def test_ten_million_experts_are_answered(args: list[str], totals: Any) -> None:
    """Every command given 10^7 experts answers in 1 GB; each figure that states the total is
    Mixtral's and 10^7 - 8 experts more in each of its 32 layers."""
    result = _under_1gb(*args, "--set", f"experts={EXPERTS}")
    assert result.returncode in (0, 1), result.stderr[-2000:]  # check: over budget is 1
    document = json.loads(result.stdout)
    found = (totals or _totals)(document)
    assert found <= {TOTAL} and (found or totals is _unstated), found
    if args[0] == "fit":  # all 32 blocks and the output layer placed, none of them fits
        assert document["layers"]["total"] == 33


def test_ten_million_experts_in_the_explorer() -> None:
    result = _under_1gb("explore", "mixtral-8x7b", "--print", "--gpu", "h100-sxm", "--set",
                        f"experts={EXPERTS}")
    assert result.returncode == 0, result.stderr
    assert f"total {TOTAL:,} parameters" in result.stdout


def _totals(document: Any) -> set[int]:
    """Every params.total a document holds."""
    if isinstance(document, dict):
        here = {document["params"]["total"]} if isinstance(document.get("params"), dict) \
            and "total" in document["params"] else set()
        return here.union(*(_totals(v) for v in document.values()))
    if isinstance(document, list):
        return set().union(*(_totals(v) for v in document))
    return set()


def test_a_trillion_experts_are_counted() -> None:
    result = _under_1gb("count", "mixtral-8x7b", "--set", "experts=1000000000000", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["params"]["total"] == \
        MIXTRAL + (10**12 - 8) * 32 * EXPERT


# ---- layers: refused by the walkers, before they walk ----------------------------------------

@pytest.mark.parametrize(("args", "walker"), [
    (["fit", "llama3-8b", "--gpu", "rtx-4090"], "a placement walks the layers"),
    (["fit", "llama3-8b", "--gpu", "apple-m4-max", "--engine", "mlx"],
     "a placement walks the layers"),
    (["check", "llama3-8b", "--engine", "llama.cpp", "--gpu", "rtx-4090", "--min-ctx", "8k"],
     "a placement walks the layers"),
    (["train", "llama3-8b"], "a training plan walks the layers"),
    (["serve", "llama3-8b", "--gpu", "h100-sxm"], "a serving plan walks the layers"),
    (["count", "llama3-8b", "--quant", "gguf-q4_k_m"], "its tensors are listed layer by layer"),
    (["count", "llama3-8b", "--quant", "gptq-int4"], "its tensors are listed layer by layer"),
    (["compare", "llama3-8b", "gpt2-small", "--quant", "fp8"],
     "its tensors are listed layer by layer"),
    (["sweep", "llama3-8b", "--quant", "none,mxfp4"], "its tensors are listed layer by layer"),
], ids=lambda a: " ".join(a[:1] + a[2:3]) if isinstance(a, list) else "")
def test_a_hundred_million_layers_are_refused_by_every_walker(args: list[str],
                                                              walker: str) -> None:
    line = _refused(_under_1gb(*args, "--set", "layers=100000000"), "100,000,000", walker,
                    "at most 10,000")
    assert line.startswith("specsheet: error: layers: ") or "--layers" in line, line


def test_count_in_a_plain_dtype_answers_a_billion_layers() -> None:
    counted = _under_1gb("count", "llama3-8b", "--set", "layers=1000000000", "--json")
    assert counted.returncode == 0, counted.stderr
    # 10^9 blocks of 218,112,000 and the two embedding matrices and the final norm
    assert json.loads(counted.stdout)["params"]["total"] == \
        10**9 * 218_112_000 + 2 * 525_336_576 + 4096


def test_the_automatic_gpu_layer_search_has_its_own_cap() -> None:
    """fit's -ngl auto tries every count of GPU layers, a placement each: refused past 512
    layers, with the way out (give the count); given one, 600 layers are placed."""
    _refused(_under_1gb("fit", "llama3-8b", "--gpu", "rtx-4090", "--set", "layers=600"),
             "option --n-gpu-layers", "600 layers", "takes at most 512 layers: give the count")
    given = _under_1gb("fit", "llama3-8b", "--gpu", "rtx-4090", "--set", "layers=600",
                       "-ngl", "10", "--json")
    assert given.returncode == 0, given.stderr
    assert json.loads(given.stdout)["layers"]["total"] == 601  # 600 blocks and the output


# ---- tensors: refused before they are read ---------------------------------------------------

def _gguf_header(path: Path, tensors: int, metadata: int = 0, size: int = 0) -> Path:
    """A GGUF v3 header that declares ``tensors`` tensors and ``metadata`` entries and holds
    none, the file extended (sparse) to ``size`` bytes: big enough, at 30 GB, for the count
    check against the bytes left to pass."""
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, tensors, metadata))
    if size:
        os.truncate(path, size)
    return path


@pytest.mark.parametrize("command", [["count"], ["inspect"], ["fit", "--gpu", "rtx-4090"],
                                     ["serve", "--gpu", "h100-sxm"]], ids=lambda c: c[0])
def test_a_gguf_declaring_a_billion_tensors(command: list[str], tmp_path: Path) -> None:
    path = _gguf_header(tmp_path / "huge.gguf", 10**9, size=30 * 10**9)
    _refused(_under_1gb(command[0], str(path), *command[1:]),
             "declares 1,000,000,000 tensors", "at most 300,000 tensors")


def test_a_gguf_declaring_a_billion_metadata_entries(tmp_path: Path) -> None:
    path = _gguf_header(tmp_path / "huge.gguf", 1, 10**9, size=30 * 10**9)
    _refused(_under_1gb("inspect", str(path)), "declares 1,000,000,000 metadata entries",
             "at most 100,000")


def _safetensors(path: Path, n: int, start: int = 0) -> Path:
    """A .safetensors file of ``n`` one-byte tensors t{start}, t{start + 1}, ..."""
    entries = ",".join(f'"t{i}":{{"dtype":"U8","shape":[1],"data_offsets":[{i - start},'
                       f'{i - start + 1}]}}' for i in range(start, start + n))
    head = ("{" + entries + ',"__metadata__":{"format":"pt"}}').encode()
    path.write_bytes(struct.pack("<Q", len(head)) + head + bytes(n))
    return path


def test_a_safetensors_header_past_the_cap(tmp_path: Path) -> None:
    path = _safetensors(tmp_path / "model.safetensors", 300_001)
    _refused(_under_1gb("inspect", str(path)), "declares 300,001 tensors",
             "at most 300,000 tensors")


def test_shards_past_the_cap_together(tmp_path: Path) -> None:
    """Two shards of 200,000 tensors each: the second is refused for the first's."""
    _safetensors(tmp_path / "model-00001-of-00002.safetensors", 200_000)
    _safetensors(tmp_path / "model-00002-of-00002.safetensors", 200_000, 200_000)
    _refused(_under_1gb("inspect", str(tmp_path)), "model-00002-of-00002.safetensors",
             "declares 200,000 tensors (with 200,000 in the files before it)",
             "at most 300,000")


def test_an_index_past_the_cap(tmp_path: Path) -> None:
    _safetensors(tmp_path / "model-00001-of-00001.safetensors", 1)
    weight_map = {f"t{i}": "model-00001-of-00001.safetensors" for i in range(300_001)}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map":
                                                                        weight_map}))
    _refused(_under_1gb("inspect", str(tmp_path / "model.safetensors.index.json")),
             "declares 300,001 tensors", "at most 300,000")


def test_a_checkpoint_at_the_cap_is_read_in_1gb(tmp_path: Path) -> None:
    """300,000 tensors, the cap: read, named and summed in a process held to 1 GB."""
    _safetensors(tmp_path / "model.safetensors", 300_000)
    result = _under_1gb("inspect", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["tensors"] == 300_000


def test_a_gguf_declaring_a_billion_experts(tmp_path: Path) -> None:
    """A real GGUF header (gguf.GGUFWriter) of a small Llama whose metadata declares 10^9
    experts: count and fit read the metadata and answer or refuse in one line, in 1 GB;
    inspect compares the tensors with it."""
    from checkpoints import write_gguf

    from specsheet.api.count import load
    from specsheet.quant.layouts import gguf_types

    spec = load("tiny").spec
    path = write_gguf(tmp_path / "experts.gguf", "llama", spec, gguf_types(spec, "f16"),
                      extra={"expert_count": 10**9, "expert_used_count": 2,
                             "expert_feed_forward_length": 64})
    dense = write_gguf(tmp_path / "dense.gguf", "llama", spec, gguf_types(spec, "f16"))
    totals = [json.loads(_under_1gb("count", str(p), "--json").stdout)["params"]["total"]
              for p in (dense, path)]
    # each of the 2 layers: its gated MLP (3 x 16 x 64) replaced by 10^9 experts of the same
    # three matrices and their rows of the router (16 each)
    assert totals[1] == totals[0] - 2 * 3 * 16 * 64 + 2 * 10**9 * (3 * 16 * 64 + 16)
    for args in (["count", str(path), "--json"], ["fit", str(path), "--gpu", "rtx-4090"],
                 ["inspect", str(path)]):
        result = _under_1gb(*args)
        assert result.returncode in (0, 2), (args, result.stderr[-2000:])
        if result.returncode == 2:
            _refused(result)
        else:
            assert result.stderr == "" or "note" in result.stderr, result.stderr
