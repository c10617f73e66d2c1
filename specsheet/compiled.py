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
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any

CACHE = Path(__file__).with_name(f"dataclasses.{sys.implementation.cache_tag}.marshal")

# class (module.qualname) -> {source text: code object}, as read from CACHE
_cache: dict[str, dict[str, CodeType]] | None = None


def _load() -> dict[str, dict[str, CodeType]]:
    global _cache
    if _cache is None:
        try:
            loaded = marshal.loads(CACHE.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):  # none yet, or not ours to read
            loaded = {}
        _cache = loaded if isinstance(loaded, dict) else {}
    return _cache


def _store(key: str, texts: dict[str, CodeType]) -> None:
    """Keep ``texts`` as the class's entry (replacing texts it no longer compiles), whole or not
    at all."""
    cache = _load()
    cache[key] = texts
    if sys.dont_write_bytecode:
        return
    partial = CACHE.with_name(f"{CACHE.name}.{os.getpid()}.tmp")
    try:
        partial.write_bytes(marshal.dumps(cache))
        os.replace(partial, CACHE)
    except (OSError, ValueError):  # a read-only install: compiled again next run, as without it
        try:
            partial.unlink()
        except OSError:
            pass


def _build(cls: type, options: dict[str, Any]) -> type:
    key = f"{cls.__module__}.{cls.__qualname__}"
    known = _load().get(key, {})
    used: dict[str, CodeType] = {}
    missed = False

    def compiled_exec(source: Any, globals: Any = None, locals: Any = None) -> None:
        nonlocal missed
        if not isinstance(source, str):
            builtins.exec(source, globals, locals)
            return
        code = known.get(source)
        if code is None:  # as exec compiles it: no future flag of this module inherited
            code = compile(source, "<string>", "exec", dont_inherit=True)
            missed = True
        used[source] = code
        builtins.exec(code, globals, locals)

    hooked = "exec" not in vars(dataclasses)
    if hooked:  # dataclasses calls the builtin exec on its texts; a module global shadows it
        dataclasses.exec = compiled_exec  # type: ignore[attr-defined]
    try:
        built: type = dataclasses.dataclass(cls, **options)
    finally:
        if hooked:
            del dataclasses.exec  # type: ignore[attr-defined]
    if hooked and (missed or set(used) != set(known)):
        _store(key, used)
    return built


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
