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

``NamedTuple`` is ``typing.NamedTuple`` for a class statement, built the same way and the same
class, less two compiles a class that bytecode does not keep either: ``collections.namedtuple``
writes its ``__new__`` as a text and compiles it (looked up in ``CACHE`` here, as above), and
typing compiles each field's annotation text into a ``ForwardRef`` (kept here as the text it
is, as ``from __future__ import annotations`` leaves every other class's; ``get_type_hints``
reads both alike). About 0.2 ms a class at start-up, and ``serve`` builds 39.

mypy sees the standard decorator and ``typing.NamedTuple`` (the names are the same object for
it).
"""

from __future__ import annotations

import builtins
import collections
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

# class (module.qualname) -> its entry, {source text: code object}, marshalled on its own: a
# run reads the file's entries as bytes and unmarshals the entries of the classes it builds
_cache: dict[str, bytes] | None = None
_building = False  # write_cache is writing CACHE, whatever PYTHONDONTWRITEBYTECODE says


def _read(path: Path) -> dict[str, bytes]:
    try:
        loaded = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):  # none yet, or not ours to read
        loaded = {}
    return loaded if isinstance(loaded, dict) else {}


def _entry(data: object) -> dict[str, CodeType]:
    """A class's entry from its bytes ({} for anything else: a damaged or foreign file)."""
    try:
        entry = marshal.loads(data) if isinstance(data, bytes) else {}
    except (EOFError, ValueError, TypeError):
        entry = {}
    return entry if isinstance(entry, dict) else {}


def _write(path: Path, entries: dict[str, bytes]) -> None:
    """Write ``entries`` to ``path`` whole or not at all, unless bytecode writing is off."""
    if sys.dont_write_bytecode and not _building:
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


def _load() -> dict[str, bytes]:
    global _cache
    if _cache is None:
        _cache = _read(CACHE)
    return _cache


def _store(key: str, texts: dict[str, CodeType]) -> None:
    """Keep ``texts`` as the class's entry (replacing texts it no longer compiles), whole or not
    at all."""
    cache = _load()
    cache[key] = marshal.dumps(texts)
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
    # dataclasses calls the builtin exec on its texts; a module global shadows it
    with _kept(key, file, dataclasses, "exec"):
        yield


@contextmanager
def _kept(key: str, file: Path | None, module: Any, builtin: str) -> Iterator[None]:
    """``kept_compiles`` for the texts ``module`` hands to the builtin ``builtin`` (exec or
    eval), shadowed by a global of ``module`` while the block runs."""
    if builtin in vars(module):  # inside another block: that one keeps the texts
        yield
        return
    entries = _load() if file is None else _read(file)
    known = _entry(entries.get(key))
    used: dict[str, CodeType] = {}
    missed = False
    run = getattr(builtins, builtin)

    def compiled_run(source: Any, globals: Any = None, locals: Any = None) -> Any:
        nonlocal missed
        if not isinstance(source, str):
            return run(source, globals, locals)
        code = used.get(source) or known.get(source)  # two classes may compile one text
        if code is None:  # as exec or eval compiles it: no future flag of this module inherited
            code = compile(source, "<string>", builtin, dont_inherit=True)
            missed = True
        used[source] = code
        return run(code, globals, locals)

    setattr(module, builtin, compiled_run)
    try:
        yield
    finally:
        delattr(module, builtin)
    if not missed and set(used) == set(known):
        return
    if file is None:
        _store(key, used)
    else:
        entries[key] = marshal.dumps(used)
        _write(file, entries)


# what a NamedTuple class statement may not set, and what typing leaves out of the class (its own
# _prohibited and _special)
_PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields",
                         "_field_defaults", "_make", "_replace", "_asdict", "_source"})
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})


class _NamedTupleMeta(type):
    """``typing.NamedTupleMeta`` for a class statement (no Generic), the class built by
    ``collections.namedtuple`` with its ``__new__`` kept, the annotations as written."""

    def __new__(cls, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
        types = ns.get("__annotations__", {})
        defaults: list[str] = []
        for name in types:
            if name in ns:
                defaults.append(name)
            elif defaults:
                raise TypeError(f"Non-default namedtuple field {name} cannot follow default "
                                f"field{'s' if len(defaults) > 1 else ''} {', '.join(defaults)}")
        namedtuple: Any = collections.namedtuple  # its arguments are not literals here
        # collections.namedtuple calls the builtin eval on its __new__'s text
        with _kept(f"{ns['__module__']}.{ns['__qualname__']}", None, collections, "eval"):
            built = namedtuple(typename, list(types), module=ns["__module__"],
                               defaults=[ns[name] for name in defaults])
        built.__annotations__ = built.__new__.__annotations__ = dict(types)
        for key, value in ns.items():
            if key in _PROHIBITED:
                raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
            if key not in _SPECIAL and key not in built._fields:
                setattr(built, key, value)
        return built


if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
    from typing import NamedTuple as NamedTuple
else:
    _NamedTuple = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})

    def NamedTuple(typename: str, *args: Any, **kwargs: Any) -> Any:  # noqa: N802
        """``typing.NamedTuple``'s class statement (see the module); not its call form."""
        raise TypeError("specsheet.compiled.NamedTuple is for a class statement")

    NamedTuple.__mro_entries__ = lambda bases: (_NamedTuple,)


    def dataclass(cls: type | None = None, /, **options: Any) -> Any:
        """``dataclasses.dataclass``, its generated methods compiled once (see the module)."""
        if cls is None:
            return lambda cls: _build(cls, options)
        return _build(cls, options)


def write_cache(folder: Path | None = None) -> Path:
    """Build every class of the package that uses this ``dataclass`` and write ``CACHE``, or a
    file of its name in ``folder`` (the build hook, hatch_build.py: beside the package for an
    editable install, as it compiles the bytecode; for a wheel, a file the wheel ships, so
    that an install Python may not write to, or runs under PYTHONDONTWRITEBYTECODE, has it
    too). bench/startup.py and bench/sweep.py write it as an editable install does. Written
    even under PYTHONDONTWRITEBYTECODE, which then keeps the imports here from writing
    bytecode."""
    from importlib import import_module

    global _cache, _building, CACHE
    _building = True
    if folder is not None:
        CACHE = folder / CACHE.name
    _cache = {}
    try:
        CACHE.unlink()
    except FileNotFoundError:
        pass
    package = Path(__file__).parent
    for path in sorted(package.rglob("*.py")):
        if path.name != "compiled.py" and "specsheet.compiled import" in path.read_text("utf-8"):
            parts = path.relative_to(package.parent).with_suffix("").parts
            try:
                import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
            except ImportError:  # the command line's modules, where typer is not installed
                continue
    return CACHE


if __name__ == "__main__":
    from specsheet import compiled  # the module the classes import, not this __main__ copy

    print(compiled.write_cache(Path(sys.argv[1]) if len(sys.argv) > 1 else None))
