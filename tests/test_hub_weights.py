"""``inspect ORG/NAME`` reads a Hub repository's headers by HTTP Range requests and downloads
no weights (issue 23, item 6): against the fake Hub of test_hub.py, which answers Range as the
Hub's CDN does and counts the bytes it sends of each file. The document equals inspect of the
same files on disk; of each file only its header was sent (a safetensors file's 8 bytes and
its header, to the byte; a GGUF file's header and at most as many bytes again)."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.quant.layouts import gguf_types
from specsheet.sources.weights.gguf import read_gguf
from specsheet.sources.weights.remote import FIRST_CHUNK
from tests.checkpoints import (
    transformers_checkpoint,
    write_checkpoint,
    write_gguf,
    write_safetensors,
)
from tests.test_hub import LLAMA, MAIN, FakeHub, error_of, fake_hub  # noqa: F401 - the fixture
from tests.test_inspect import GGUF_CASES, gguf_file

runner = CliRunner()
REPO = "org/model"


def publish(hub: FakeHub, files: list[Path], repo: str = REPO) -> None:
    """``files`` as the repository's at main: config.json answered whole from memory, the
    weights from disk by range, as a file kept in LFS."""
    held: dict[str, bytes | Path] = {p.name: p.read_bytes() if p.suffix == ".json" else p
                                     for p in files}
    hub.repos[repo] = {"main": (MAIN, held), MAIN: (MAIN, held)}  # a branch, and its commit


def inspected(*args: str, code: int = 0) -> dict[str, Any]:
    result = runner.invoke(app, ["inspect", *args, "--json"])
    assert result.exit_code == code, result.stderr
    assert result.stderr == ""
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def same(remote: dict[str, Any], local: dict[str, Any]) -> None:
    """The two documents agree on every figure; only where the files are differs."""
    for document in (remote, local):
        document.pop("files")
        if document.get("check"):
            document["check"].pop("config")
    assert remote == local


def st_header_bytes(path: Path) -> int:
    """A safetensors file's 8 bytes and the header their integer gives the length of."""
    with path.open("rb") as f:
        return 8 + int(struct.unpack("<Q", f.read(8))[0])


@pytest.mark.parametrize("shards", [1, 3])
@pytest.mark.parametrize("name", ["llama-3.2-1b", "qwen3-30b-a3b", "deepseek-v2-lite"])
def test_a_safetensors_repository_is_read_by_its_headers(name: str, shards: int,
                                                         tmp_path: Path,
                                                         fake_hub: FakeHub) -> None:  # noqa: F811
    config, shapes = transformers_checkpoint(name, dtype="BF16")
    folder = write_checkpoint(tmp_path / name, config, shapes, shards=shards)
    publish(fake_hub, sorted(folder.iterdir()))
    local = inspected(str(folder), "--check")
    remote = inspected(REPO, "--check")
    weights = [p for p in folder.iterdir() if p.suffix == ".safetensors"]
    assert {p.name: fake_hub.sent[p.name] for p in weights} == {
        p.name: st_header_bytes(p) for p in weights}  # the header, to the byte
    assert sum(fake_hub.sent[p.name] for p in weights) * 10 < sum(
        p.stat().st_size for p in weights)
    assert remote["check"]["matches"] is True
    same(remote, local)


@pytest.mark.parametrize(("name", "arch", "ftype"), GGUF_CASES,
                         ids=[f"{n}-{f}" for n, _, f in GGUF_CASES])
def test_a_gguf_repository_is_read_by_its_header(name: str, arch: str, ftype: str,
                                                 tmp_path: Path,
                                                 fake_hub: FakeHub) -> None:  # noqa: F811
    path, _ = gguf_file(tmp_path, name, arch, ftype)
    publish(fake_hub, [path])
    local = inspected(str(path), "--check")
    remote = inspected(REPO, "--check")
    header = read_gguf(path).data_offset
    assert header < fake_hub.sent[path.name] <= max(FIRST_CHUNK, 2 * header)
    assert fake_hub.sent[path.name] * 4 < path.stat().st_size
    same(remote, local)


def test_a_large_gguf_header_is_read_in_growing_requests(tmp_path: Path,
                                                         fake_hub: FakeHub) -> None:  # noqa: F811
    """Llama 3.1 8B's header with its 128,256 tokens, scores and types (3 MB) and 16 GB of
    sparse data: at most twice the header is sent, in a handful of requests."""
    from specsheet.api.count import load

    spec = load("llama3.1-8b").spec
    path = write_gguf(tmp_path / "Llama-3.1-8B-F16.gguf", "llama", spec,
                      gguf_types(spec, "f16"), vocab_tokens=spec.vocab, data=False)
    publish(fake_hub, [path])
    remote = inspected(REPO, "--check")
    header = read_gguf(path).data_offset
    assert header > 2 * 10**6
    assert header < fake_hub.sent[path.name] < 2 * header + FIRST_CHUNK
    ranges = [h.get("Range") for p, h in fake_hub.requests if p.endswith(path.name)]
    assert len(ranges) <= 10 and ranges[0] == f"bytes=0-{FIRST_CHUNK - 1}"
    assert remote["params"]["total"] == 8_030_261_248
    same(remote, inspected(str(path), "--check"))


def test_a_repository_of_several_gguf_files_is_named_a_file(tmp_path: Path,
                                                           fake_hub: FakeHub) -> None:  # noqa: F811
    first, _ = gguf_file(tmp_path, "llama-3.2-1b", "llama", "q8_0")
    second, _ = gguf_file(tmp_path, "llama-3.2-1b", "llama", "f16")
    publish(fake_hub, [first, second])
    assert error_of("inspect", REPO) == (
        f"{REPO} holds 2 GGUF files: llama-3.2-1b-f16.gguf, llama-3.2-1b-q8_0.gguf; name "
        f"one as {REPO}:FILE")
    remote = inspected(f"{REPO}:{first.name}", "--check")
    assert remote["quant"] == "gguf-q8_0"
    assert second.name not in fake_hub.sent
    assert error_of("inspect", f"{REPO}:other.gguf") == (
        f"{REPO} has no file 'other.gguf' (its weights files: llama-3.2-1b-f16.gguf, "
        "llama-3.2-1b-q8_0.gguf)")


def test_a_repository_without_weights(fake_hub: FakeHub) -> None:  # noqa: F811
    assert error_of("inspect", LLAMA) == (
        f"{LLAMA} holds no weights files (no .safetensors, model.safetensors.index.json or "
        ".gguf); its files: config.json")
    assert error_of("inspect", "nobody/nothing") == (
        f"nobody/nothing: no such repository on {fake_hub.endpoint}, nor a file of that name "
        "here; a private one needs a login (`hf auth login`, or HF_TOKEN)")
    assert error_of("inspect", f"{LLAMA}@v9") == (
        f"{LLAMA}: no revision 'v9' on {fake_hub.endpoint} (expected a branch, tag or commit "
        "of the repository)")


def test_a_server_that_ignores_range_is_refused(tmp_path: Path,
                                                fake_hub: FakeHub) -> None:  # noqa: F811
    path, _ = gguf_file(tmp_path, "mistral-7b-v0.1", "llama", "q4_k_m")
    publish(fake_hub, [path])
    fake_hub.ignore_range.add(REPO)
    size = path.stat().st_size
    assert error_of("inspect", REPO) == (
        f"{REPO}: {fake_hub.endpoint} ignored the byte range asked of {path.name} (Range: "
        f"bytes=0-{FIRST_CHUNK - 1}) and began to send the whole file ({size:,} bytes); only "
        "headers are read, never weights, so nothing more was downloaded")


def test_a_header_length_past_the_cap_is_not_asked_for(tmp_path: Path,
                                                       fake_hub: FakeHub) -> None:  # noqa: F811
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", 2**40) + bytes(1000))
    publish(fake_hub, [path])
    assert "header length 1,099,511,627,776 bytes is larger than any safetensors header" \
        in error_of("inspect", REPO)
    assert fake_hub.sent == {"model.safetensors": 8}


def test_a_truncated_gguf_on_the_hub(tmp_path: Path, fake_hub: FakeHub) -> None:  # noqa: F811
    path, _ = gguf_file(tmp_path, "llama-3.2-1b", "llama", "q8_0")
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(path.read_bytes()[:1000])
    publish(fake_hub, [cut])
    assert error_of("inspect", REPO) == (
        f"{REPO}/cut.gguf: the length of the name of tensor 9 (21 bytes) at byte 988 is more "
        "than the file could hold (4 bytes left)")


def test_an_index_naming_a_shard_the_repository_lacks(tmp_path: Path,
                                                      fake_hub: FakeHub) -> None:  # noqa: F811
    config, shapes = transformers_checkpoint("llama-3.2-1b", dtype="BF16")
    folder = write_checkpoint(tmp_path / "m", config, shapes, shards=2)
    publish(fake_hub, [p for p in sorted(folder.iterdir()) if not p.name.startswith("model-00002")])
    assert error_of("inspect", REPO) == (
        f"{REPO}/model.safetensors.index.json: names shard "
        "'model-00002-of-00002.safetensors', which the repository lacks")


FIRST, SECOND = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"


def _two_shards(tmp_path: Path) -> tuple[Path, dict[str, Any], dict[str, str]]:
    """Llama 3.2 1B in two shards: its folder, shapes and the index's weight_map."""
    config, shapes = transformers_checkpoint("llama-3.2-1b", dtype="BF16")
    folder = write_checkpoint(tmp_path / "m", config, shapes, shards=2)
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    return folder, shapes, index["weight_map"]


def _write_index(folder: Path, weight_map: dict[str, str]) -> None:
    (folder / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": weight_map}))


@pytest.mark.parametrize("fault", ["wrong shard", "no such tensor", "in both shards",
                                   "not in the index"])
def test_an_index_that_disagrees_with_the_shards_is_read_alike_on_disk_and_on_the_hub(
        fault: str, tmp_path: Path, fake_hub: FakeHub) -> None:  # noqa: F811
    """The same answer from the folder and from the repository, as index.py checks both: the
    same message after the index's or file's place, or the same document."""
    folder, shapes, weight_map = _two_shards(tmp_path)
    norm = "model.norm.weight"
    home = weight_map[norm]
    other = SECOND if home == FIRST else FIRST
    kept = {name: shapes[name] for name, shard in weight_map.items() if shard == other}
    index = folder / "model.safetensors.index.json"
    if fault == "wrong shard":
        _write_index(folder, {**weight_map, norm: other})
        expected = f"{index}: maps tensor {norm!r} to {other}, but {home} holds it"
    elif fault == "no such tensor":
        _write_index(folder, {**weight_map, "model.extra.weight": other})
        expected = f"{index}: maps tensor 'model.extra.weight' to {other}, which does not hold it"
    elif fault == "in both shards":  # the norm written into the other shard too
        write_safetensors(folder / other, {**kept, norm: shapes[norm]})
        # the shards read in the order the index first names them
        first, second = dict.fromkeys(weight_map.values())
        expected = f"tensor {norm!r} is in both {folder / first} and {folder / second}"
    else:  # a tensor of a shard the index does not name: read and counted, as vLLM does
        before = inspected(str(folder))
        write_safetensors(folder / other, {**kept, "model.extra.weight": ("F32", (7, 3))})
        expected = None
    publish(fake_hub, sorted(folder.iterdir()))
    if expected is None:
        local, remote = inspected(str(folder)), inspected(REPO)
        assert (local["tensors"], local["params"]["components"]["other"]) == (
            before["tensors"] + 1, 21)
        assert local["other_tensors"] == ["model.extra.weight"]
        same(remote, local)
        return
    result = runner.invoke(app, ["inspect", str(folder), "--json"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"specsheet: error: {expected}\n"
    assert error_of("inspect", REPO) == expected.replace(str(folder), REPO)


def test_offline_reads_the_cached_snapshot(fake_hub: FakeHub,  # noqa: F811
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert error_of("inspect", REPO).startswith(f"{REPO}: not in the local Hugging Face cache")
    assert fake_hub.requests == []


def test_inspect_of_a_hub_repository_in_a_real_process_and_a_pipe(
        tmp_path: Path, fake_hub: FakeHub) -> None:  # noqa: F811
    """The installed command against the fake Hub (HF_ENDPOINT reaches the process): `| head
    -1` under pipefail exits 0 0, and at 80 columns no line is wider."""
    from tests.commands import shell

    path, _ = gguf_file(tmp_path, "qwen3-30b-a3b", "qwen3moe", "q4_k_m")
    publish(fake_hub, [path])
    piped = shell(f"specsheet inspect {REPO} --check | head -1; "
                  "echo \"codes ${PIPESTATUS[*]}\"")
    assert piped.stdout.decode().splitlines()[-1] == "codes 0 0", piped.stderr
    assert piped.stderr == b""
    wide = shell(f"specsheet inspect {REPO} --check", COLUMNS="80")
    assert wide.returncode == 0, wide.stderr
    assert max(len(line) for line in wide.stdout.decode().splitlines()) <= 80
    assert fake_hub.sent[path.name] <= FIRST_CHUNK * 2  # two runs, the header each time


def test_a_gguf_header_past_the_cap_stops_the_reading(tmp_path: Path, fake_hub: FakeHub,  # noqa: F811
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap on a GGUF header read from the Hub (256 MiB), lowered to 1 MiB for a 3 MB
    header: refused once the next request would pass it, the bytes sent under the cap."""
    from specsheet.api.count import load
    from specsheet.sources.weights import remote

    monkeypatch.setattr(remote, "MAX_GGUF_HEADER", 2**20)
    spec = load("llama3.1-8b").spec
    path = write_gguf(tmp_path / "big.gguf", "llama", spec, gguf_types(spec, "f16"),
                      vocab_tokens=spec.vocab, data=False)
    publish(fake_hub, [path])
    assert error_of("inspect", REPO) == (
        f"{REPO}/big.gguf: 1 MiB of its header read without reaching the tensor data; larger "
        "than any GGUF header (a tokenizer of 256,000 tokens takes a few MB), so nothing more "
        "is read")
    assert fake_hub.sent["big.gguf"] <= 2**20


def test_a_split_gguf_is_read_whole(tmp_path: Path, fake_hub: FakeHub) -> None:  # noqa: F811
    """llama.cpp's gguf-split names: the repository's one model in two files, its tensors
    divided between them, read as a folder of them is read on disk."""
    from specsheet.quant.tensors import model_tensors
    from tests.checkpoints import spec_of

    config, _ = transformers_checkpoint("llama-3.2-1b")
    spec = spec_of(config)
    shapes = {t.name: t.shape for t in model_tensors(spec)}
    names = list(shapes)
    folder = tmp_path / "split"
    folder.mkdir()
    for i, part in enumerate((names[:len(names) // 2], names[len(names) // 2:])):
        write_gguf(folder / f"llama-q8_0-0000{i + 1}-of-00002.gguf", "llama", spec,
                   gguf_types(spec, "q8_0"), tensors={n: shapes[n] for n in part})
    publish(fake_hub, sorted(folder.iterdir()))
    remote = inspected(REPO, "--check")
    assert remote["files"] == [f"{REPO}/llama-q8_0-00001-of-00002.gguf",
                               f"{REPO}/llama-q8_0-00002-of-00002.gguf"]
    assert remote["check"]["matches"] is True
    same(remote, inspected(str(folder), "--check"))


def test_a_safetensors_repository_without_a_config(tmp_path: Path,
                                                   fake_hub: FakeHub) -> None:  # noqa: F811
    config, shapes = transformers_checkpoint("llama-3.2-1b", dtype="BF16")
    folder = write_checkpoint(tmp_path / "m", config, shapes)
    publish(fake_hub, [folder / "model.safetensors"])
    assert inspected(REPO)["params"]["total"] > 0
    assert error_of("inspect", REPO, "--check") == (
        f"{REPO}: --check needs a config to compare with: no config.json in {REPO}")
