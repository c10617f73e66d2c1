"""ORG/NAME from the Hugging Face Hub, against a local fake Hub (http.server on 127.0.0.1 with
HF_ENDPOINT pointing at it): the first call downloads into huggingface_hub's cache layout, the
next makes no request at all, and every way the Hub can fail is one line and an empty cache."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.errors import SpecError
from specsheet.sources import hub, hub_download
from specsheet.sources.resolve import resolve

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
LLAMA = "meta-llama/Llama-3.1-8B"
OTHER = "someone/Some-Model-8B"  # no shipped preset was built from it: no offline answer
MAIN = "0e9e39f249a16976918f6564b8830bc894c89659"  # the commits the fake Hub serves
V1 = "1111111111111111111111111111111111111111"
GOOD_TOKEN = "hf_good_token_0123456789"
BAD_TOKEN = "hf_secret_token_that_must_never_be_printed"

runner = CliRunner()


def git_blob_sha(body: bytes) -> str:
    """The ETag the Hub gives a file kept in git: the sha1 of its git blob."""
    return hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()


class FakeHub:
    """What the fake Hub serves and what it was asked."""

    def __init__(self) -> None:
        llama = (DATA / "llama-3.1-8b.json").read_bytes()
        # repo -> revision -> (commit, files: their bytes, or a path to read them from)
        self.repos: dict[str, dict[str, tuple[str, dict[str, bytes | Path]]]] = {
            LLAMA: {"main": (MAIN, {"config.json": llama}),
                    "v1": (V1, {"config.json": llama}), MAIN: (MAIN, {"config.json": llama})},
            "org/weights-only": {"main": (MAIN, {"model.safetensors": b"..."})},
            "meta-llama/Llama-Gated": {"main": (MAIN, {"config.json": llama})},
        }
        self.gated = {"meta-llama/Llama-Gated"}
        self.renamed = {"old-org/old-name": LLAMA}  # answered with a relative redirect
        self.cdn: set[str] = set()  # repos whose file is served from another host
        self.broken: dict[str, tuple[int, dict[str, str], bytes]] = {}  # repo -> raw answer
        self.requests: list[tuple[str, dict[str, str]]] = []  # (path, headers)
        self.ignore_range: set[str] = set()  # repos answered whole whatever Range asks
        self.sent: dict[str, int] = {}  # file name -> body bytes sent of it
        self.port = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answer(self, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        self.requests.append((path, headers))
        if path.startswith("/cdn/"):
            return 200, {"Content-Length": "0"}, b""
        if path.startswith("/cdnfile/"):
            body = self.repos[LLAMA]["main"][1]["config.json"]
            return 200, {"Content-Length": str(len(body))}, body
        parts = path.lstrip("/").split("/")
        if parts[0] == "api" and len(parts) == 6 and parts[1] == "models" \
                and parts[4] == "revision":  # huggingface_hub's model_info: the files
            revisions = self.repos.get("/".join(parts[2:4]))
            if revisions is None:
                return 404, {"X-Error-Code": "RepoNotFound"}, b""
            found = revisions.get(parts[5])
            if found is None:
                return 404, {"X-Error-Code": "RevisionNotFound"}, b""
            listing = {"id": "/".join(parts[2:4]), "sha": found[0],
                       "siblings": [{"rfilename": name} for name in found[1]]}
            return 200, {"Content-Type": "application/json"}, json.dumps(listing).encode()
        if len(parts) < 5 or parts[2] != "resolve":
            return 404, {}, b"not found"
        repo, revision, filename = "/".join(parts[:2]), parts[3], "/".join(parts[4:])
        if repo in self.broken:
            return self.broken[repo]
        if repo in self.renamed:
            target = f"/{self.renamed[repo]}/resolve/{revision}/{filename}"
            return 307, {"Location": target}, b""
        if repo not in self.repos:
            return 404, {"X-Error-Code": "RepoNotFound",
                         "X-Error-Message": "Repository not found"}, b""
        auth = headers.get("Authorization")
        if repo in self.gated and auth != f"Bearer {GOOD_TOKEN}":
            return (401 if auth is None else 403), {"X-Error-Code": "GatedRepo"}, b""
        revisions = self.repos[repo]
        if revision not in revisions:
            return 404, {"X-Error-Code": "RevisionNotFound"}, b""
        commit, files = revisions[revision]
        if filename not in files:
            return 404, {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit}, b""
        held = files[filename]
        wanted = headers.get("Range", "")
        if isinstance(held, Path) or wanted:
            return self.ranged(repo, filename, commit, held, wanted)
        body = held
        meta = {"X-Repo-Commit": commit, "ETag": f'"{git_blob_sha(body)}"'}
        if repo in self.cdn:  # as for a file in LFS: the identity here, the bytes elsewhere
            cdn = f"http://localhost:{self.port}/cdnfile/{git_blob_sha(body)}"
            return 302, {**meta, "Location": cdn, "X-Linked-Etag": meta["ETag"]}, b""
        return 200, {**meta, "Content-Length": str(len(body)),
                     "Content-Type": "application/json"}, body


    def ranged(self, repo: str, filename: str, commit: str, held: bytes | Path,
               wanted: str) -> tuple[int, dict[str, str], bytes]:
        """A file kept in LFS, answered as the Hub's CDN answers: ``Range: bytes=A-B`` with
        206 and its Content-Range (B past the end: up to the end), no Range with the whole
        file; the bytes sent counted by file."""
        size = held.stat().st_size if isinstance(held, Path) else len(held)
        meta = {"X-Repo-Commit": commit, "ETag": f'"{size:040x}"', "Accept-Ranges": "bytes"}
        first, last = 0, size - 1
        status = 200
        if wanted and repo not in self.ignore_range:
            a, _, b = wanted.removeprefix("bytes=").partition("-")
            first, last, status = int(a), min(int(b), size - 1), 206
            meta["Content-Range"] = f"bytes {first}-{last}/{size}"
        if isinstance(held, Path):
            with held.open("rb") as f:
                f.seek(first)
                body = f.read(last - first + 1)
        else:
            body = held[first:last + 1]
        self.sent[filename] = self.sent.get(filename, 0) + len(body)
        return status, {**meta, "Content-Length": str(len(body))}, body


@pytest.fixture
def fake_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    """A fake Hub on 127.0.0.1, HF_ENDPOINT at it, an empty cache, and the network allowed."""
    state = FakeHub()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            status, headers, body = state.answer(self.path, dict(self.headers))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            if "Content-Length" not in headers:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # a client that read no more
                pass

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", state.endpoint)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE")
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def cache_dir() -> Path:
    return Path(os.environ["HF_HUB_CACHE"])


def files_in_cache() -> list[str]:
    root = cache_dir()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir()) \
        if root.exists() else []


def run(*args: str) -> Any:
    return runner.invoke(app, list(args))


def run_json(*args: str) -> dict[str, Any]:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def error_of(*args: str) -> str:
    """The one line on stderr of a command that must fail with exit 2 and an empty stdout."""
    result = run(*args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("specsheet: error: ")
    return lines[0].removeprefix("specsheet: error: ")


FIGURES = ("spec", "params", "memory", "kv_cache", "flops")


# ---- the first call downloads, the next asks nothing

def test_first_call_downloads_the_next_makes_no_request(fake_hub: FakeHub) -> None:
    """The issue's 'done when', in real processes: the same figures as the preset."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def count(*args: str) -> dict[str, Any]:
        result = subprocess.run([sys.executable, "-m", "specsheet", "count", *args, "--json"],
                                capture_output=True, text=True, env=env, check=False)
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
        doc: dict[str, Any] = json.loads(result.stdout)
        return doc

    first = count(LLAMA)
    assert len(fake_hub.requests) == 1
    assert fake_hub.requests[0][0] == f"/{LLAMA}/resolve/main/config.json"
    preset = count("llama3.1-8b")
    assert {k: first[k] for k in FIGURES} == {k: preset[k] for k in FIGURES}
    assert first["name"] == "Llama-3.1-8B"
    assert first["params"]["total"] == 8_030_261_248
    second = count(LLAMA)
    assert len(fake_hub.requests) == 1, "a cached config is read with no request"
    assert second == first


def test_the_cache_has_huggingface_hubs_layout(fake_hub: FakeHub) -> None:
    run_json("count", LLAMA)
    body = (DATA / "llama-3.1-8b.json").read_bytes()
    etag = git_blob_sha(body)
    folder = cache_dir() / "models--meta-llama--Llama-3.1-8B"
    assert (folder / "blobs" / etag).read_bytes() == body
    pointer = folder / "snapshots" / MAIN / "config.json"
    assert pointer.is_symlink()
    assert os.readlink(pointer) == os.path.join("..", "..", "blobs", etag)
    assert (folder / "refs" / "main").read_text() == MAIN
    assert (cache_dir() / "CACHEDIR.TAG").read_text().startswith(
        "Signature: 8a477f597d28d172789f06886806bc55")
    assert not [p for p in files_in_cache() if p.endswith(".incomplete")]


def test_a_revision_is_pinned_with_an_at(fake_hub: FakeHub) -> None:
    doc = run_json("count", f"{LLAMA}@v1")
    assert doc["params"]["total"] == 8_030_261_248
    assert fake_hub.requests[-1][0] == f"/{LLAMA}/resolve/v1/config.json"
    folder = cache_dir() / "models--meta-llama--Llama-3.1-8B"
    assert (folder / "refs" / "v1").read_text() == V1
    assert not (folder / "refs" / "main").exists()
    run_json("count", f"{LLAMA}@v1")
    assert len(fake_hub.requests) == 1
    # main is not v1: asking for it asks the Hub
    run_json("count", LLAMA)
    assert [path for path, _ in fake_hub.requests] == [
        f"/{LLAMA}/resolve/v1/config.json", f"/{LLAMA}/resolve/main/config.json"]


def test_a_commit_is_pinned_without_a_ref(fake_hub: FakeHub) -> None:
    run_json("count", f"hf:{LLAMA}@{MAIN}")
    folder = cache_dir() / "models--meta-llama--Llama-3.1-8B"
    assert (folder / "snapshots" / MAIN / "config.json").is_file()
    assert not (folder / "refs").exists()
    run_json("count", f"{LLAMA}@{MAIN}")
    assert len(fake_hub.requests) == 1


def test_the_hf_prefix_and_option_read_the_cache_then_the_hub(fake_hub: FakeHub) -> None:
    assert run_json("count", "--hf", LLAMA)["params"]["total"] == 8_030_261_248
    assert run_json("count", f"hf:{LLAMA}")["params"]["total"] == 8_030_261_248
    assert len(fake_hub.requests) == 1


def test_compare_check_and_convert_take_a_hub_name(fake_hub: FakeHub, tmp_path: Path) -> None:
    both = run_json("compare", LLAMA, "llama3.1-8b")
    assert [m["params"]["total"] for m in both["models"]] == [8_030_261_248] * 2
    assert run("check", LLAMA, "--max-params", "8B").exit_code == 1
    out = tmp_path / "llama.yaml"
    assert run("convert", LLAMA, "-o", str(out)).exit_code == 0
    assert "d_model: 4096" in out.read_text()
    assert len(fake_hub.requests) == 1


def test_an_existing_path_wins_over_the_hub(fake_hub: FakeHub, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "meta-llama" / "Llama-3.1-8B"
    folder.mkdir(parents=True)
    (folder / "config.json").write_bytes((DATA / "qwen2.5-7b.json").read_bytes())
    monkeypatch.chdir(tmp_path)
    assert run_json("count", LLAMA)["params"]["total"] == 7_615_616_512
    assert fake_hub.requests == []


def test_a_file_name_is_never_a_repository(fake_hub: FakeHub) -> None:
    assert error_of("count", "configs/model.json") == "configs/model.json: no such file"
    assert fake_hub.requests == []


def test_a_renamed_repository_is_followed_with_the_token(fake_hub: FakeHub,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", GOOD_TOKEN)
    assert run_json("count", "old-org/old-name")["params"]["total"] == 8_030_261_248
    assert [path for path, _ in fake_hub.requests] == [
        "/old-org/old-name/resolve/main/config.json", f"/{LLAMA}/resolve/main/config.json"]
    assert all(h.get("Authorization") == f"Bearer {GOOD_TOKEN}" for _, h in fake_hub.requests)


def test_a_file_elsewhere_is_fetched_without_the_token(fake_hub: FakeHub,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    fake_hub.cdn.add(LLAMA)
    monkeypatch.setenv("HF_TOKEN", GOOD_TOKEN)
    assert run_json("count", LLAMA)["params"]["total"] == 8_030_261_248
    (_, to_hub), (cdn_path, to_cdn) = fake_hub.requests
    assert to_hub.get("Authorization") == f"Bearer {GOOD_TOKEN}"
    assert cdn_path.startswith("/cdnfile/")
    assert "Authorization" not in to_cdn
    etag = git_blob_sha((DATA / "llama-3.1-8b.json").read_bytes())
    assert (cache_dir() / "models--meta-llama--Llama-3.1-8B" / "blobs" / etag).is_file()


def test_a_copy_where_links_are_not_allowed(fake_hub: FakeHub,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(*args: Any, **kwargs: Any) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "symlink", no_links)
    path = hub_download.download_config(LLAMA)
    assert not path.is_symlink()
    assert path.read_bytes() == (DATA / "llama-3.1-8b.json").read_bytes()


# ---- settings: tokens, offline, endpoint

@pytest.mark.parametrize("where", ["HF_TOKEN", "HF_TOKEN_PATH", "HF_HOME"])
def test_the_token_and_the_saved_login_are_sent(fake_hub: FakeHub, where: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    if where == "HF_TOKEN":
        monkeypatch.setenv("HF_TOKEN", GOOD_TOKEN)
    elif where == "HF_TOKEN_PATH":
        (tmp_path / "my-token").write_text(GOOD_TOKEN + "\n")
        monkeypatch.setenv("HF_TOKEN_PATH", str(tmp_path / "my-token"))
    else:
        (Path(os.environ["HF_HOME"]) / "token").write_text(GOOD_TOKEN)
    assert run_json("count", "meta-llama/Llama-Gated")["params"]["total"] == 8_030_261_248
    assert fake_hub.requests[0][1]["Authorization"] == f"Bearer {GOOD_TOKEN}"


def test_no_token_is_sent_when_implicit_tokens_are_disabled(
        fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    (Path(os.environ["HF_HOME"]) / "token").write_text(GOOD_TOKEN)
    monkeypatch.setenv("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1")
    run_json("count", LLAMA)
    assert "Authorization" not in fake_hub.requests[0][1]


def test_offline_reads_the_cache_and_never_the_network(fake_hub: FakeHub,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    run_json("count", LLAMA)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert run_json("count", LLAMA)["params"]["total"] == 8_030_261_248
    # a name no shipped preset was built from (test_model_source.py: one that was)
    message = error_of("count", "someone/Some-Model-1B")
    assert message.startswith("someone/Some-Model-1B: not in the local Hugging Face cache")
    assert "HF_HUB_OFFLINE is set" in message
    assert "hf download someone/Some-Model-1B config.json" in message
    assert len(fake_hub.requests) == 1


def test_a_mirror_endpoint_with_a_trailing_slash(fake_hub: FakeHub,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", fake_hub.endpoint + "/")
    run_json("count", LLAMA)
    assert fake_hub.requests[0][0] == f"/{LLAMA}/resolve/main/config.json"


def test_an_endpoint_that_is_not_an_address(fake_hub: FakeHub,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "hub.example.org")
    assert error_of("count", LLAMA).startswith(
        "HF_ENDPOINT: expected an http:// or https:// address")


# ---- every way the Hub can fail: one line, exit 2, nothing in the cache

def test_a_repository_that_does_not_exist(fake_hub: FakeHub) -> None:
    run_json("count", LLAMA)  # now in the cache, for the did-you-mean
    before = files_in_cache()
    message = error_of("count", "meta-llama/Llama-3.1-8b")
    assert message.startswith(f"meta-llama/Llama-3.1-8b: no such repository on "
                              f"{fake_hub.endpoint} (did you mean '{LLAMA}'?)")
    assert "hf auth login" in message
    assert files_in_cache() == before


def test_a_gated_repository_without_a_token(fake_hub: FakeHub) -> None:
    message = error_of("count", "meta-llama/Llama-Gated")
    assert message.startswith("meta-llama/Llama-Gated is a gated model: accept")
    assert f"accept its licence on {fake_hub.endpoint}/meta-llama/Llama-Gated" in message
    assert "hf auth login" in message and "HF_TOKEN" in message
    assert files_in_cache() == []


def test_a_gated_repository_with_a_token_never_prints_it(fake_hub: FakeHub,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", BAD_TOKEN)
    result = run("count", "meta-llama/Llama-Gated")
    assert result.exit_code == 2
    assert "the token sent has no access to it yet" in result.stderr
    assert BAD_TOKEN not in result.stderr + result.stdout
    assert fake_hub.requests[0][1]["Authorization"] == f"Bearer {BAD_TOKEN}"
    assert files_in_cache() == []


def test_a_revision_that_does_not_exist(fake_hub: FakeHub) -> None:
    message = error_of("count", f"{LLAMA}@v9")
    assert message.startswith(f"{LLAMA}: no revision 'v9' on {fake_hub.endpoint}")
    assert files_in_cache() == []


def test_a_repository_without_a_config(fake_hub: FakeHub) -> None:
    message = error_of("count", "org/weights-only")
    assert message.startswith(
        "org/weights-only: the repository has no config.json at revision 'main'")
    assert files_in_cache() == []


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_server_error(fake_hub: FakeHub, status: int) -> None:
    fake_hub.broken[LLAMA] = (status, {}, b"<html>down</html>")
    message = error_of("count", LLAMA)
    assert message.startswith(
        f"{LLAMA}: the Hugging Face Hub at {fake_hub.endpoint} answered {status}")
    assert "a server error; try again later" in message
    assert files_in_cache() == []


def test_too_many_requests(fake_hub: FakeHub) -> None:
    fake_hub.broken[LLAMA] = (429, {}, b"")
    assert error_of("count", LLAMA) == (
        f"{LLAMA}: the Hugging Face Hub at {fake_hub.endpoint} answered 429 Too Many Requests: "
        "too many requests; try again later")


COMMIT_HEADERS = {"X-Repo-Commit": MAIN, "ETag": '"abc123"'}


@pytest.mark.parametrize(("body", "why"), [
    (b"<!doctype html><title>Sign in to the Wi-Fi</title>", "line 1: not valid JSON"),
    (b"[1, 2, 3]", "JSON, but list not an object"),
    (b"\xff\xfe{}", "not UTF-8 text"),
])
def test_an_answer_that_is_not_a_json_config(fake_hub: FakeHub, body: bytes, why: str) -> None:
    fake_hub.broken[LLAMA] = (200, COMMIT_HEADERS, body)
    message = error_of("count", LLAMA)
    assert message.startswith(
        f"{LLAMA}: the answer from {fake_hub.endpoint} is not a JSON config ({why}")
    assert files_in_cache() == []


def test_json_that_is_not_a_model_config(fake_hub: FakeHub) -> None:
    """The repository's own file is cached (huggingface_hub would too); it is not a config."""
    fake_hub.broken[LLAMA] = (200, COMMIT_HEADERS, b'{"hello": "world"}')
    assert error_of("count", LLAMA).endswith(
        "config.json: expected a Hugging Face config.json with a model_type")


def test_an_answer_without_the_hubs_headers(fake_hub: FakeHub) -> None:
    fake_hub.broken[LLAMA] = (200, {"ETag": '"abc"'}, b"{}")
    message = error_of("count", LLAMA)
    assert message.startswith(f"{LLAMA}: {fake_hub.endpoint} answered with no X-Repo-Commit "
                              "header, so it is not a Hugging Face Hub")
    fake_hub.broken[LLAMA] = (200, {"X-Repo-Commit": "../../../etc", "ETag": '"abc"'}, b"{}")
    assert error_of("count", LLAMA).startswith(
        f"{LLAMA}: {fake_hub.endpoint} answered with a strange '../../../etc' as X-Repo-Commit")
    assert files_in_cache() == []


def test_an_answer_that_ends_early(fake_hub: FakeHub) -> None:
    fake_hub.broken[LLAMA] = (200, {**COMMIT_HEADERS, "Content-Length": "5000"}, b'{"a": 1}')
    assert error_of("count", LLAMA) == (
        f"{LLAMA}: the answer from {fake_hub.endpoint} ended early (8 of 5,000 bytes); try again")
    assert files_in_cache() == []


def test_a_hub_that_refuses_connections(fake_hub: FakeHub,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    message = error_of("count", OTHER)
    assert message.startswith(f"{OTHER}: cannot reach the Hugging Face Hub at "
                              f"http://127.0.0.1:{port} (Connection refused)")
    assert "the timeout is 10 s" in message
    assert files_in_cache() == []


def test_a_hub_that_never_answers_times_out(fake_hub: FakeHub,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as silent:  # accepts connections (the kernel does) and says nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"http://127.0.0.1:{silent.getsockname()[1]}"
        monkeypatch.setenv("HF_ENDPOINT", address)
        start = time.monotonic()
        with pytest.raises(SpecError) as caught:
            resolve(OTHER, timeout=0.5)
        elapsed = time.monotonic() - start
        result = runner.invoke(app, ["count", OTHER, "--timeout", "0.5"])
    assert 0.4 < elapsed < 3
    assert str(caught.value) == (
        f"{OTHER}: no answer from the Hugging Face Hub at {address} within 0.5 s (the "
        "timeout); check the network or HF_ENDPOINT, or allow longer with a larger timeout")
    assert files_in_cache() == []
    assert result.exit_code == 2
    assert result.stderr.endswith("check the network or HF_ENDPOINT, or allow longer with "
                                  "--timeout\n")


def test_a_cache_that_cannot_be_written(fake_hub: FakeHub) -> None:
    cache_dir().parent.mkdir(exist_ok=True)
    cache_dir().write_text("a file where the cache should be")
    message = error_of("count", LLAMA)
    assert message.startswith(f"{cache_dir() / 'models--meta-llama--Llama-3.1-8B'}: cannot "
                              "write to the Hugging Face cache")


# ---- what a cached lookup imports, and multimodal configs

def test_a_cached_lookup_imports_no_http_client(fake_hub: FakeHub, tmp_path: Path) -> None:
    run_json("count", LLAMA)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "specsheet", "count", LLAMA, "--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stderr
    modules = {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines()
               if line.startswith("import time:")}
    assert "specsheet.sources.hub" in modules
    assert "specsheet.sources.hub_download" not in modules
    for banned in ("urllib.request", "http.client", "huggingface_hub", "ssl", "socket"):
        assert banned not in modules, banned
    assert len(fake_hub.requests) == 1

    result = subprocess.run([sys.executable, "-X", "importtime", "-c", "import specsheet"],
                            capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    modules = {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines()
               if line.startswith("import time:")}
    assert not modules & {"urllib.request", "http.client", "huggingface_hub"}


def test_a_multimodal_config_counts_the_whole_checkpoint() -> None:
    model = resolve(str(DATA / "gemma-3-4b.json"))
    assert model.counted == "whole model"
    assert model.description == ("gemma3_text config.json, read from text_config, siglip "
                                 "vision tower and projector counted")
    assert resolve(str(DATA / "llama-3.1-8b.json")).counted == "whole model"


def test_a_wrapper_whose_tower_specsheet_does_not_read_counts_its_language_model(
        tmp_path: Path) -> None:
    """PaliGemma's tower is not one specsheet counts: the language model, said so."""
    config = {"model_type": "paligemma", "text_config": {"model_type": "gemma",
                                                          "num_hidden_layers": 2},
              "vision_config": {"model_type": "siglip_vision_model"}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    model = resolve(str(tmp_path / "config.json"))
    assert model.counted == "language model only"
    assert model.description.endswith("vision tower not counted")


def test_count_of_gemma_3_27b_on_the_hub_gives_both(fake_hub: FakeHub) -> None:
    """The issue's 'done when': the whole checkpoint (as transformers'
    AutoModelForImageTextToText counts it) and the language model."""
    body = (DATA / "multimodal" / "gemma-3-27b.json").read_bytes()
    fake_hub.repos["google/gemma-3-27b-it"] = {"main": (MAIN, {"config.json": body})}
    doc = run_json("count", "google/gemma-3-27b-it")
    assert doc["params"]["total"] == 27_432_406_640
    assert doc["params"]["language_model"] == 27_009_346_304
    assert doc["counted"] == "whole model"
    text = run("count", "google/gemma-3-27b-it").stdout
    assert "27,432,406,640" in text and "27,009,346,304" in text
    assert resolve("llama3.1-8b").counted == "whole model"


@pytest.mark.parametrize(("text", "expected"), [
    (LLAMA, hub.HubReference(LLAMA, None)),
    (f"{LLAMA}@v1.0", hub.HubReference(LLAMA, "v1.0")),
    (f"{LLAMA}@refs/pr/1", hub.HubReference(LLAMA, "refs/pr/1")),
    ("gpt2", None), ("a/b/c", None), ("./x", None), ("org/model.json", None),
    ("org--x/name", None), ("org/na..me", None), ("-org/name", None), ("/abs/path", None),
])
def test_what_names_a_repository(text: str, expected: hub.HubReference | None) -> None:
    assert hub.parse_reference(text) == expected


@pytest.mark.parametrize("revision", ["", "../x", "a b", "refs//x", "a\\b"])
def test_a_revision_that_cannot_be_one(revision: str) -> None:
    with pytest.raises(SpecError, match="expected ORG/NAME@REVISION"):
        hub.parse_reference(f"{LLAMA}@{revision}")


@pytest.mark.parametrize("timeout", [0.0, -1.0, float("nan"), float("inf")])
def test_a_timeout_that_cannot_be_one(fake_hub: FakeHub, timeout: float) -> None:
    with pytest.raises(SpecError, match="timeout: expected a number of seconds above 0"):
        resolve(LLAMA, timeout=timeout)
    assert fake_hub.requests == []


# ---- a tokenizer.json for --text, from the same commit as the config

def test_text_downloads_the_tokenizer_of_the_configs_commit_once(fake_hub: FakeHub,
                                                                 tmp_path: Path) -> None:
    """serve --text on ORG/NAME: the tokenizer.json of the commit the config came from lands in
    the same snapshot, and the next call asks the Hub nothing."""
    import tokenizers

    made = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    made.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    made.train_from_iterator(["the cat sat on the mat ."],
                             tokenizers.trainers.WordLevelTrainer(special_tokens=["[UNK]"]))
    made.save(str(tmp_path / "tokenizer.json"))
    for revision in ("main", MAIN):
        fake_hub.repos[LLAMA][revision][1]["tokenizer.json"] = \
            (tmp_path / "tokenizer.json").read_bytes()
    text = tmp_path / "text.txt"
    text.write_text("the cat sat. the dog sat on the mat.\n")  # 9 words, 11 tokens
    args = (LLAMA, "--gpu", "h100-sxm", "--text", str(text), "--concurrency", "1")
    first = run_json("serve", *args)
    assert (first["estimates"]["text_tokens"], first["estimates"]["text_words"]) == (11, 9)
    assert [path for path, _ in fake_hub.requests] == [
        f"/{LLAMA}/resolve/main/config.json", f"/{LLAMA}/resolve/{MAIN}/tokenizer.json"]
    assert f"models--meta-llama--Llama-3.1-8B/snapshots/{MAIN}/tokenizer.json" in files_in_cache()
    fake_hub.requests.clear()
    assert run_json("serve", *args)["estimates"] == first["estimates"]
    assert fake_hub.requests == []


def test_a_repository_without_a_tokenizer(fake_hub: FakeHub, tmp_path: Path) -> None:
    text = tmp_path / "text.txt"
    text.write_text("a few words\n")
    message = error_of("serve", LLAMA, "--gpu", "h100-sxm", "--text", str(text),
                       "--concurrency", "1")
    assert message.startswith(f"{LLAMA}: the repository has no tokenizer.json at revision "
                              f"'{MAIN}'"), message
    assert not any(name.endswith("tokenizer.json") for name in files_in_cache())
