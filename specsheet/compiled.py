"""``dataclass``, with the methods it generates compiled once and kept, as Python keeps bytecode.

``dataclasses.dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__``,
``__hash__`` and frozen ``__setattr__`` / ``__delattr__`` as source text and compiles that text
on every run: bytecode caching does not reach it. For ``ModelSpec``'s 54 fields that is about
3 ms a run, more than the rest of the arithmetic's imports together (docs/performance.md).

This ``dataclass`` is the standard one; while it builds a class, the texts it compiles are
looked up in ``CACHE`` (a marshal file of code objects keyed by their exact source text, one per
Python version, beside this module) and compiled only when missing. A cached code object is
the one compiling the same text gives, so the class is the same; a text that changed (a field
added) is simply not found and compiled as before. The file is written the way Python writes
``__pycache__``: after a class compiled something new, unless bytecode writing is off
(``PYTHONDONTWRITEBYTECODE``, ``-B``), and never at the cost of an error. The editable install
writes it at install (hatch_build.py), as it compiles the bytecode.

mypy sees the standard decorator (the names are the same object for it).
"""

from __future__ import annotations

import builtins
import dataclasses
import marshal
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any

CACHE = Path(__file__).with_name(f"dataclasses.{sys.implementation.cache_tag}.marshal")
# the same for an import of another package's modules (kept_compiles with a file of its own):
# a file apart, so that the commands that never make that import never read its entry
IMPORTS = Path(__file__).with_name(f"imports.{sys.implementation.cache_tag}.marshal")

# class (module.qualname) -> {source text: code object}, as read from CACHE
_cache: dict[str, dict[str, CodeType]] | None = None


def _read(path: Path) -> dict[str, dict[str, CodeType]]:
    try:
        loaded = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):  # none yet, or not ours to read
        loaded = {}
    return loaded if isinstance(loaded, dict) else {}


def _write(path: Path, entries: dict[str, dict[str, CodeType]]) -> None:
    """Write ``entries`` to ``path`` whole or not at all, unless bytecode writing is off."""
    if sys.dont_write_bytecode:
        return
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        partial.write_bytes(marshal.dumps(entries))
        os.replace(partial, path)
    except (OSError, ValueError):  # a read-only install: compiled again next run, as without it
        try:
            partial.unlink()
        except OSError:
            pass


def _load() -> dict[str, dict[str, CodeType]]:
    global _cache
    if _cache is None:
        _cache = _read(CACHE)
    return _cache


def _store(key: str, texts: dict[str, CodeType]) -> None:
    """Keep ``texts`` as the class's entry (replacing texts it no longer compiles), whole or not
    at all."""
    cache = _load()
    cache[key] = texts
    _write(CACHE, cache)


def _build(cls: type, options: dict[str, Any]) -> type:
    with kept_compiles(f"{cls.__module__}.{cls.__qualname__}"):
        built: type = dataclasses.dataclass(cls, **options)
    return built


@contextmanager
def kept_compiles(key: str, file: Path | None = None) -> Iterator[None]:
    """While the block runs, the texts ``dataclasses.dataclass`` compiles for the classes it
    builds are looked up under ``key`` and compiled only when missing; the entry is then kept
    (replacing texts no longer compiled) in ``CACHE``, or in ``file`` (read and written here
    alone). ``dataclass`` here builds one class in such a block; the explorer imports Textual
    in one (``IMPORTS``: its 42 dataclasses compiled about 10 ms of methods a run). Inside
    another block, the texts go to the outer block's entry."""
    if "exec" in vars(dataclasses):  # inside another block: that one keeps the texts
        yield
        return
    entries = _load() if file is None else _read(file)
    known = entries.get(key, {})
    used: dict[str, CodeType] = {}
    missed = False

    def compiled_exec(source: Any, globals: Any = None, locals: Any = None) -> None:
        nonlocal missed
        if not isinstance(source, str):
            builtins.exec(source, globals, locals)
            return
        code = used.get(source) or known.get(source)  # two classes may compile one text
        if code is None:  # as exec compiles it: no future flag of this module inherited
            code = compile(source, "<string>", "exec", dont_inherit=True)
            missed = True
        used[source] = code
        builtins.exec(code, globals, locals)

    # dataclasses calls the builtin exec on its texts; a module global shadows it
    dataclasses.exec = compiled_exec  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del dataclasses.exec  # type: ignore[attr-defined]
    if not missed and set(used) == set(known):
        return
    if file is None:
        _store(key, used)
    else:
        entries[key] = used
        _write(file, entries)


if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:

    def dataclass(cls: type | None = None, /, **options: Any) -> Any:
        """``dataclasses.dataclass``, its generated methods compiled once (see the module)."""
        if cls is None:
            return lambda cls: _build(cls, options)
        return _build(cls, options)


def write_cache() -> Path:
    """Build every class of the package that uses this ``dataclass`` and write ``CACHE`` (the
    editable install's build hook runs ``python -m specsheet.compiled``, as it compiles the
    bytecode; bench/startup.py does the same)."""
    from importlib import import_module

    global _cache
    sys.dont_write_bytecode = False
    _cache = {}
    try:
        CACHE.unlink()
    except FileNotFoundError:
        pass
    package = Path(__file__).parent
    for path in sorted(package.rglob("*.py")):
        if path.name != "compiled.py" and "specsheet.compiled import" in path.read_text("utf-8"):
            parts = path.relative_to(package.parent).with_suffix("").parts
            import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return CACHE


if __name__ == "__main__":
    from specsheet import compiled  # the module the classes import, not this __main__ copy

    print(compiled.write_cache())
