"""Downloading a config.json (or a tokenizer.json) from the Hugging Face Hub into the local
cache, in huggingface_hub's layout (see ``hf_cache.py``), so that huggingface_hub reads it too.

A small standard-library client, not huggingface_hub (docs/hub.md has the measurements): one GET
of ``{endpoint}/{repo}/resolve/{revision}/{file}``, the Hub's relative redirects followed
with the token and a redirect elsewhere (a CDN) without it, no retries, and one deadline for the
whole exchange after which an unreachable Hub is an error. The answer is held in memory and
checked before anything is written; each file then appears whole or not at all.

Every failure is a one-line SpecError; the token never appears in one.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from email.message import Message
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote, urljoin, urlsplit

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, did_you_mean, quoted
from specsheet.sources import DEFAULT_TIMEOUT
from specsheet.sources.files import MAX_FILE_BYTES
from specsheet.sources.hf_cache import cached_repos, hf_cache_dir, is_commit, repo_folder
from specsheet.sources.hub_settings import HubUnreachable, endpoint, token

MAX_REDIRECTS = 10
# a tokenizer.json holds the whole vocabulary and its merges (Gemma 3's is 33 MB)
MAX_TOKENIZER_BYTES = 128 * 2**20
# what a commit or an ETag may hold to name a file or folder in the cache
_HEADER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-+=")


def _is_safe_name(text: str) -> bool:
    return 0 < len(text) <= 200 and set(text) <= _HEADER_CHARS and text not in (".", "..")


class _Ask(NamedTuple):
    """One request for a file of a repository: what the errors name."""

    repo_id: str
    revision: str
    endpoint: str
    timeout: float
    token: str | None
    filename: str = "config.json"
    max_bytes: int = MAX_FILE_BYTES
    span: tuple[int, int] | None = None  # bytes first to last of the file (a Range request)
    api: bool = False  # the repository's description (its files), not a file

    @property
    def url(self) -> str:
        revision = quote(self.revision, safe="")
        if self.api:
            return f"{self.endpoint}/api/models/{self.repo_id}/revision/{revision}"
        return f"{self.endpoint}/{self.repo_id}/resolve/{revision}/{quote(self.filename)}"


class _Answer(NamedTuple):
    body: bytes
    commit: str  # X-Repo-Commit: the commit the revision resolved to
    etag: str  # X-Linked-Etag or ETag, without quotes: the blob's name in the cache
    size: int | None = None  # the whole file's bytes, from a Range answer's Content-Range


def download_config(repo_id: str, revision: str = "main",
                    timeout: float = DEFAULT_TIMEOUT) -> Path:
    """Download ``repo_id``'s config.json at ``revision`` into the cache and return its path.
    Nothing is written unless the whole file arrived and is a JSON object."""
    return download_json(repo_id, revision, "config.json", timeout)


def download_json(repo_id: str, revision: str, filename: str,
                  timeout: float = DEFAULT_TIMEOUT) -> Path:
    """Download ``filename`` (config.json, tokenizer.json) of ``repo_id`` at ``revision`` into
    the cache and return its path; nothing is written unless the whole file arrived and is a
    JSON object."""
    if not (math.isfinite(timeout) and timeout > 0):
        raise SpecError(f"expected a number of seconds above 0, got {quoted(timeout)}",
                        field="timeout", value=timeout)
    limit = MAX_FILE_BYTES if filename == "config.json" else MAX_TOKENIZER_BYTES
    ask = _Ask(repo_id, revision, endpoint(), timeout, token(), filename, limit)
    answer = _within(ask, lambda: _fetch(ask))
    _check_config(ask, answer.body)
    return _store(ask, answer)


T = TypeVar("T")


def _within(ask: _Ask, work: Callable[[], T]) -> T:
    """The result of ``work()``, run in a thread that may take ``ask.timeout`` seconds in all
    (a socket timeout alone leaves name lookups and slow answers unbounded). An abandoned
    thread holds only memory: the cache is written by the caller, after it returns."""
    box: list[T | BaseException] = []

    def run() -> None:
        try:
            box.append(work())
        except BaseException as e:  # handed to the caller below
            box.append(e)

    thread = threading.Thread(target=run, name="specsheet-hub", daemon=True)
    thread.start()
    thread.join(ask.timeout)
    if not box:
        raise _timed_out(ask)
    result = box[0]
    if isinstance(result, BaseException):
        raise result
    return result


class HubTimeout(HubUnreachable):
    """No answer from the Hub within the timeout; the advice names the timeout as the reader
    gives it (``worded``): a larger ``timeout`` in the library, ``--timeout`` in the CLI."""

    def __init__(self, ask: _Ask) -> None:
        self.endpoint, self.timeout = ask.endpoint, ask.timeout
        super().__init__(self.worded(lambda field: f"a larger {field}"), source=ask.repo_id)

    def worded(self, spell: Callable[[str], str]) -> str:
        return (f"no answer from the Hugging Face Hub at {self.endpoint} within "
                f"{self.timeout:g} s (the timeout); check the network or HF_ENDPOINT, or allow "
                f"longer with {spell('timeout')}")


def _timed_out(ask: _Ask) -> SpecError:
    return HubTimeout(ask)


def _fetch(ask: _Ask) -> _Answer:
    """GET the resolve URL, following the Hub's relative redirects (a renamed repository) with
    the token, and a redirect elsewhere (a CDN) without it, as huggingface_hub does."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None  # a 3xx comes back as an HTTPError, to be followed below

    opener = urllib.request.build_opener(NoRedirect)
    headers = {"User-Agent": f"specsheet/{_version()}; python/{sys.version.split()[0]}",
               "Accept-Encoding": "identity"}
    if ask.span is not None:
        headers["Range"] = f"bytes={ask.span[0]}-{ask.span[1]}"

    def request(url: str, with_token: bool) -> urllib.request.Request:
        made = urllib.request.Request(url, headers=headers)
        if with_token and ask.token:  # never carried across a redirect
            made.add_unredirected_header("Authorization", f"Bearer {ask.token}")
        return made

    url = ask.url
    try:
        for _ in range(MAX_REDIRECTS):
            try:
                with opener.open(request(url, True), timeout=ask.timeout) as response:
                    commit, etag = ("", "") if ask.api else _identity(ask, response.headers)
                    return _answer(ask, response, commit, etag)
            except urllib.error.HTTPError as e:
                try:
                    location = e.headers.get("Location")
                    if not (300 <= e.code < 400 and location):
                        raise _http_error(ask, e.code, e.reason, e.headers) from None
                    target = urljoin(url, location)
                    if not urlsplit(location).netloc:  # the Hub's own: a renamed repository
                        url = target
                        continue
                    commit, etag = _identity(ask, e.headers)
                finally:
                    e.close()
            same_host = urlsplit(target).netloc == urlsplit(url).netloc
            try:  # elsewhere (a CDN) the address is signed and needs no token
                with urllib.request.urlopen(request(target, same_host),
                                            timeout=ask.timeout) as response:
                    return _answer(ask, response, commit, etag)
            except urllib.error.HTTPError as e:
                e.close()
                raise SpecError(f"{urlsplit(target).netloc}, where "
                                f"{ask.endpoint} sent the download, answered {e.code} "
                                f"{e.reason}", source=ask.repo_id) from None
        raise SpecError(f"more than {MAX_REDIRECTS} redirects from "
                        f"{ask.endpoint}", source=ask.repo_id)
    except SpecError:
        raise
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as e:
        raise _network_error(ask, e) from None


def _version() -> str:
    """specsheet's installed version, for the User-Agent (the package root is not imported
    from here: it sits above the layers)."""
    try:
        return version("specsheet")
    except PackageNotFoundError:
        return "unknown"


def _identity(ask: _Ask, headers: Message) -> tuple[str, str]:
    """The commit and the blob name from the Hub's headers, or SpecError when they are not
    there (not a Hub: a proxy, a firewall's page, a wrong HF_ENDPOINT)."""
    commit = headers.get("X-Repo-Commit")
    etag = headers.get("X-Linked-Etag") or headers.get("ETag")
    if etag is not None:
        etag = etag.removeprefix("W/").strip('"')
    for name, value in (("X-Repo-Commit", commit), ("ETag", etag)):
        if value is None or not _is_safe_name(value):
            got = "no" if value is None else f"a strange {quoted(value[:60])} as"
            raise SpecError(f"{ask.endpoint} answered with {got} {name} header, "
                            "so it is not a Hugging Face Hub (or a proxy is in the way); "
                            "check HF_ENDPOINT", source=ask.repo_id)
    assert commit is not None and etag is not None
    return commit, etag


def _answer(ask: _Ask, response: http.client.HTTPResponse, commit: str, etag: str
            ) -> _Answer:
    """The answer's body (the bytes asked for, with the file's size, for a Range request)."""
    if ask.span is None:
        return _Answer(_read(ask, response), commit, etag)
    first, last = ask.span
    if response.status != 206:  # the server ignored the Range: the whole file follows
        length = response.headers.get("Content-Length")
        whole = int(length) if length and length.isdigit() else None
        if whole is None or whole > last - first + 1 or first:
            size = f"{whole:,} bytes" if whole is not None else "all of it"
            raise SpecError(f"{ask.endpoint} ignored the byte range asked of {ask.filename} "
                            f"(Range: bytes={first}-{last}) and began to send the whole file "
                            f"({size}); only headers are read, never weights, so nothing "
                            "more was downloaded", source=ask.repo_id)
        body = _read(ask._replace(max_bytes=last - first + 1), response)
        return _Answer(body, commit, etag, len(body))
    got = _content_range(response.headers.get("Content-Range"))
    if got is None or got[0] != first or got[1] > last:
        raise SpecError(f"{ask.endpoint} answered the byte range {first}-{last} of "
                        f"{ask.filename} with {quoted(response.headers.get('Content-Range'))}, "
                        "not those bytes", source=ask.repo_id)
    body = _read(ask._replace(max_bytes=last - first + 1), response)
    if len(body) != got[1] - got[0] + 1:
        raise SpecError(f"the answer from {ask.endpoint} ended early ({len(body):,} of "
                        f"{got[1] - got[0] + 1:,} bytes); try again", source=ask.repo_id)
    return _Answer(body, commit, etag, got[2])


def _content_range(value: str | None) -> tuple[int, int, int] | None:
    """``bytes FIRST-LAST/SIZE`` as three integers, or None."""
    unit, _, rest = (value or "").partition(" ")
    span, _, size = rest.partition("/")
    first, _, last = span.partition("-")
    if unit != "bytes" or not all(n.isdigit() for n in (first, last, size)):
        return None
    return int(first), int(last), int(size)


def fetch_bytes(repo_id: str, revision: str, filename: str, first: int, last: int,
                timeout: float = DEFAULT_TIMEOUT) -> tuple[bytes, int]:
    """Bytes ``first`` to ``last`` of ``filename`` (fewer at its end) by one Range request,
    and the file's size; nothing is kept in the cache. A server that would send more than
    the bytes asked for is an error, never a download."""
    ask = _Ask(repo_id, revision, endpoint(), _checked(timeout), token(), filename,
               last - first + 1, (first, last))
    answer = _within(ask, lambda: _fetch(ask))
    assert answer.size is not None
    return answer.body, answer.size


def fetch_file(repo_id: str, revision: str, filename: str, max_bytes: int,
               timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """The whole of a small file (an index.json), at most ``max_bytes``; not kept."""
    ask = _Ask(repo_id, revision, endpoint(), _checked(timeout), token(), filename, max_bytes)
    return _within(ask, lambda: _fetch(ask)).body


def repository_files(repo_id: str, revision: str,
                     timeout: float = DEFAULT_TIMEOUT) -> tuple[str, list[str]]:
    """The commit ``revision`` names and the files of the repository there, as the Hub's API
    lists them (``/api/models/ORG/NAME/revision/REV``, huggingface_hub's ``model_info``)."""
    ask = _Ask(repo_id, revision, endpoint(), _checked(timeout), token(), "the file list",
               MAX_TOKENIZER_BYTES, api=True)
    body = _within(ask, lambda: _fetch(ask)).body
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        data = None
    siblings = data.get("siblings") if isinstance(data, dict) else None
    commit = data.get("sha") if isinstance(data, dict) else None
    if not isinstance(siblings, list) or not isinstance(commit, str) \
            or not _is_safe_name(commit):
        raise SpecError(f"the answer from {ask.endpoint} is not a repository's description "
                        "(its files and commit); a proxy or a wrong HF_ENDPOINT can cause "
                        "this", source=repo_id)
    names = [s["rfilename"] for s in siblings
             if isinstance(s, dict) and isinstance(s.get("rfilename"), str)]
    return commit, names


def _checked(timeout: float) -> float:
    if not (math.isfinite(timeout) and timeout > 0):
        raise SpecError(f"expected a number of seconds above 0, got {quoted(timeout)}",
                        field="timeout", value=timeout)
    return timeout


def _read(ask: _Ask, response: http.client.HTTPResponse) -> bytes:
    """The whole body, at most MAX_FILE_BYTES; an answer that ends early is an error."""
    length = response.headers.get("Content-Length")
    expected = int(length) if length and length.isdigit() else None
    if expected is not None and expected > ask.max_bytes:
        raise SpecError(f"the Hub's {ask.filename} is {expected:,} bytes, "
                        f"larger than any such file ({ask.max_bytes // 2**20} MiB at most)",
                        source=ask.repo_id)
    body = response.read(ask.max_bytes + 1)
    if len(body) > ask.max_bytes:
        raise SpecError(f"the Hub's {ask.filename} is larger than any such file "
                        f"({ask.max_bytes // 2**20} MiB at most)", source=ask.repo_id)
    if expected is not None and len(body) != expected:
        raise SpecError(f"the answer from {ask.endpoint} ended early ("
                        f"{len(body):,} of {expected:,} bytes); try again", source=ask.repo_id)
    return body


def _http_error(ask: _Ask, status: int, reason: object, headers: Message) -> SpecError:
    """An error answer as one line, read the way huggingface_hub reads it (X-Error-Code)."""
    code = headers.get("X-Error-Code")
    message = headers.get("X-Error-Message")
    repo, hub = ask.repo_id, ask.endpoint
    if code == "RevisionNotFound":
        return SpecError(f"no revision '{ask.revision}' on {hub} (expected a branch, "
                         "tag or commit of the repository)", source=repo)
    if code == "EntryNotFound":
        return SpecError(f"the repository has no {ask.filename} at revision "
                         f"'{ask.revision}' on {hub}; a model in the transformers layout has one",
                         source=repo)
    if code == "GatedRepo":
        sent = " (the token sent has no access to it yet)" if ask.token else ""
        return SpecError(f"{repo} is a gated model{sent}: accept its licence on {hub}/{repo}, "
                         "then log in with `hf auth login` or set HF_TOKEN")
    if message == "Access to this resource is disabled.":
        return SpecError(f"access to this repository is disabled on {hub}", source=repo)
    if status == 401 and message == "Invalid credentials in Authorization header":
        return SpecError(f"{hub} refused the token (invalid credentials): log in again with "
                         "`hf auth login`, or correct HF_TOKEN")
    if code == "RepoNotFound" or status in (401, 404):
        login = ("the token sent cannot see it if it is private" if ask.token
                 else "a private one needs a login (`hf auth login`, or HF_TOKEN)")
        cached = [name for name in cached_repos() if name != repo]
        return SpecError(f"no such repository on {hub}{did_you_mean(repo, cached)}, "
                         f"nor a file of that name here; {login}", source=repo)
    said = f"{status} {reason}".strip() + (f" ({message})" if message else "")
    if status >= 500:
        return SpecError(f"the Hugging Face Hub at {hub} answered {said}, a server "
                         "error; try again later", source=repo)
    if status == 429:
        return SpecError(f"the Hugging Face Hub at {hub} answered {said}: too many "
                         "requests; try again later", source=repo)
    return SpecError(f"the Hugging Face Hub at {hub} answered {said}", source=repo)


def _network_error(ask: _Ask, error: BaseException) -> SpecError:
    """A failure to talk to the Hub at all, naming the endpoint (and the timeout)."""
    reason = error.reason if isinstance(error, urllib.error.URLError) else error
    if isinstance(reason, TimeoutError):
        return _timed_out(ask)
    if isinstance(reason, OSError) and reason.strerror:
        why = reason.strerror
    else:
        why = str(reason) or type(reason).__name__
    return HubUnreachable(f"cannot reach the Hugging Face Hub at {ask.endpoint} "
                     f"({' '.join(str(why).split())}); check the network or HF_ENDPOINT "
                     f"(the timeout is {ask.timeout:g} s)", source=ask.repo_id)


def _check_config(ask: _Ask, body: bytes) -> None:
    """SpecError unless ``body`` is a JSON object (an HTML page from a portal or a proxy is
    not), so that nothing but a config enters the cache."""
    try:
        data = json.loads(body.decode("utf-8-sig"))
        why = "" if isinstance(data, dict) else f"JSON, but {type(data).__name__} not an object"
    except UnicodeDecodeError as e:
        why = f"not UTF-8 text (byte {e.start})"
    except json.JSONDecodeError as e:
        why = f"line {e.lineno}: not valid JSON: {e.msg}"
    except RecursionError:
        why = "not valid JSON: nested too deeply"
    if why:
        what = "config" if ask.filename == "config.json" else ask.filename
        raise SpecError(f"the answer from {ask.endpoint} is not a JSON {what} "
                        f"({why}); a proxy or a wrong HF_ENDPOINT can cause this",
                        source=ask.repo_id)


def _store(ask: _Ask, answer: _Answer) -> Path:
    """Write the blob, the snapshot's link to it, then the ref (last, so that a ref never
    names a snapshot without its file). Each file appears whole or not at all."""
    folder = repo_folder(ask.repo_id)
    blob = folder / "blobs" / answer.etag
    pointer = folder / "snapshots" / answer.commit / ask.filename
    try:
        blob.parent.mkdir(parents=True, exist_ok=True)
        if not blob.is_file():
            _write_whole(blob, answer.body)
        pointer.parent.mkdir(parents=True, exist_ok=True)
        _link(blob, pointer, answer.body)
        if ask.revision != answer.commit and not is_commit(ask.revision):
            ref = folder / "refs" / ask.revision
            ref.parent.mkdir(parents=True, exist_ok=True)
            _write_whole(ref, answer.commit.encode())
        _tag_cache(hf_cache_dir())
    except OSError as e:
        raise SpecError(f"cannot write to the Hugging Face cache: "
                        f"{e.strerror or e}; HF_HUB_CACHE chooses another place",
                        source=str(folder)) from None
    return pointer


def _temporary(path: Path) -> Path:
    """A name beside ``path`` that no other process uses (as huggingface_hub's downloads)."""
    return path.with_name(f"{path.name}.{os.urandom(4).hex()}.incomplete")


def _write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it into place."""
    temporary = _temporary(path)
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _link(blob: Path, pointer: Path, data: bytes) -> None:
    """Point ``pointer`` at ``blob`` with a relative symbolic link, or a copy where links are
    not allowed (Windows without developer mode); replaced in one step."""
    temporary = _temporary(pointer)
    try:
        try:
            os.symlink(os.path.relpath(blob, pointer.parent), temporary)
        except (OSError, NotImplementedError):
            temporary.write_bytes(data)
        os.replace(temporary, pointer)
    finally:
        temporary.unlink(missing_ok=True)


CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by specsheet.\n"
                "# For information about cache directory tags, see:\n"
                "#\thttps://bford.info/cachedir/\n")


def _tag_cache(cache: Path) -> None:
    """Mark the cache for backup tools (CACHEDIR.TAG), as huggingface_hub does."""
    tag = cache / "CACHEDIR.TAG"
    if not tag.exists():
        try:
            tag.write_text(CACHEDIR_TAG, encoding="utf-8")
        except OSError:
            pass

