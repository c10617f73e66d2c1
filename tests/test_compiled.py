"""specsheet.compiled: dataclasses' generated methods compiled once and kept, the classes the
same as dataclasses builds them (docs/performance.md)."""

from __future__ import annotations

import collections
import dataclasses
import importlib
import inspect
import marshal
import os
import pickle
import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest

from specsheet import compiled
from specsheet.model.spec import ModelSpec


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "dataclasses.test.marshal"
    monkeypatch.setattr(compiled, "CACHE", path)
    monkeypatch.setattr(compiled, "_cache", None)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return path


def _record(decorate: Any, extra: bool = False) -> type:
    class Record:
        name: str
        size: int
        parts: tuple[int, ...] = ()
        note: str = "x"
        if extra:
            more: int = 0

    Record.__qualname__ = "Record"
    return decorate(frozen=True)(Record)  # type: ignore[no-any-return]


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []

    def counted(source: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(source)
        return compile(source, *args, **kwargs)

    monkeypatch.setattr(compiled, "compile", counted, raising=False)
    return seen


# the texts dataclasses compiles for a frozen class: one function per method, or from Python
# 3.13 one function that makes them all (dataclasses._FuncBuilder)
TEXTS = 1 if sys.version_info >= (3, 13) else 6


def _same(ours: type, theirs: type) -> None:
    assert inspect.signature(ours) == inspect.signature(theirs)
    names = [f.name for f in dataclasses.fields(theirs)]
    assert [f.name for f in dataclasses.fields(ours)] == names
    a, b = ours("a", 1, (2, 3)), theirs("a", 1, (2, 3))
    assert repr(a) == repr(b) == "Record(name='a', size=1, parts=(2, 3), note='x')"
    assert hash(a) == hash(b) == hash(("a", 1, (2, 3), "x"))
    assert a == ours("a", 1, (2, 3)) and a != ours("a", 2)
    assert (a == b) is False  # another class: dataclasses' __eq__ says NotImplemented
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.size = 2  # type: ignore[misc]
    assert dataclasses.replace(a, size=5) == ours("a", 5, (2, 3))
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        assert getattr(ours, name).__code__.co_code == getattr(theirs, name).__code__.co_code


def test_a_class_is_the_one_dataclasses_builds(cache: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    theirs = _record(dataclasses.dataclass)
    seen = _compiles(monkeypatch)
    first = _record(compiled.dataclass)
    assert len(seen) == TEXTS and cache.is_file()  # compiled once, then kept
    _same(first, theirs)
    monkeypatch.setattr(compiled, "_cache", None)  # a new run reads the file
    seen.clear()
    second = _record(compiled.dataclass)
    assert seen == []
    _same(second, theirs)
    assert "exec" not in vars(dataclasses)  # the hook is gone once the class is built


def test_a_changed_class_is_compiled_again(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _record(compiled.dataclass)
    seen = _compiles(monkeypatch)
    grown = _record(compiled.dataclass, extra=True)
    assert seen  # its __init__, __repr__ ... are new texts
    assert [f.name for f in dataclasses.fields(grown)] == ["name", "size", "parts", "note",
                                                           "more"]
    assert grown("a", 1).more == 0
    (entry,) = (marshal.loads(v) for k, v in marshal.loads(cache.read_bytes()).items()
                if k.endswith("Record"))  # each entry marshalled on its own
    assert len(entry) == TEXTS and all("more" in text for text in entry if "__init__" in text)


def test_a_damaged_or_foreign_file_is_ignored(cache: Path) -> None:
    for content in (b"not marshal", marshal.dumps([1, 2]), b"",
                    marshal.dumps({f"{__name__}.Record": b"not marshal"}),
                    marshal.dumps({f"{__name__}.Record": {"a": 1}})):
        cache.write_bytes(content)
        compiled._cache = None
        _same(_record(compiled.dataclass), _record(dataclasses.dataclass))


def test_nothing_is_written_without_bytecode(cache: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _same(_record(compiled.dataclass), _record(dataclasses.dataclass))
    assert not cache.exists()
    assert list(cache.parent.iterdir()) == []


def test_model_spec_is_still_a_frozen_dataclass() -> None:
    spec = ModelSpec.create(layers=2, d_model=64, heads=4, vocab=100, context=32)
    params = ModelSpec.__dataclass_params__  # type: ignore[attr-defined]
    assert dataclasses.is_dataclass(spec) and params.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.layers = 3  # type: ignore[misc]
    assert dataclasses.replace(spec, layers=3) == ModelSpec.create(layers=3, d_model=64,
                                                                   heads=4, vocab=100,
                                                                   context=32)


def test_the_cache_is_what_the_install_writes(tmp_path: Path) -> None:
    """``python -m specsheet.compiled`` (run by the editable install's build hook) writes an
    entry for each dataclass of the package."""
    script = (
        "import sys, dataclasses, marshal\n"
        "from specsheet import compiled\n"
        "compiled.CACHE = compiled.Path(sys.argv[1])\n"
        "print(compiled.write_cache())\n"
        "keys = sorted(marshal.loads(compiled.CACHE.read_bytes()))\n"
        "print(' '.join(keys))\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "c.marshal")],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    keys = out[1].split()
    assert [k for k in keys if not _named_tuple(k)] == [
        "specsheet.model.spec.ModelSpec", "specsheet.model.vision.VisionTower"]
    # and every NamedTuple class statement of the package's modules (the explorer's aside)
    package = Path(compiled.__file__).parent
    statements = sorted(
        ".".join((*path.relative_to(package.parent).with_suffix("").parts, name))
        .replace(".__init__.", ".")
        for path in package.rglob("*.py") if "explore" not in path.parts
        for name in re.findall(r"^class (\w+)\(NamedTuple\):", path.read_text("utf-8"), re.M))
    assert len(statements) > 100
    assert [k for k in keys if _named_tuple(k)] == statements


def test_the_wheel_copy_is_written_without_bytecode(tmp_path: Path) -> None:
    """``python -m specsheet.compiled FOLDER`` (the wheel's build, hatch_build.py) writes the
    file of the cache's name into FOLDER even under PYTHONDONTWRITEBYTECODE, which keeps the
    package's own file as it was."""
    before = compiled.CACHE.read_bytes() if compiled.CACHE.exists() else None
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-m", "specsheet.compiled", str(tmp_path)],
                         capture_output=True, text=True, check=True, env=env).stdout
    assert Path(out.strip()) == tmp_path / compiled.CACHE.name
    keys = marshal.loads((tmp_path / compiled.CACHE.name).read_bytes())
    assert "specsheet.model.spec.ModelSpec" in keys and len(keys) > 100
    assert (compiled.CACHE.read_bytes() if compiled.CACHE.exists() else None) == before


def _named_tuple(key: str) -> bool:
    """Whether the class a cache key names is a named tuple."""
    module, _, name = key.rpartition(".")
    return hasattr(getattr(importlib.import_module(module), name), "_fields")


def test_an_import_keeps_the_compiles_of_every_dataclass_in_its_own_file(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``kept_compiles(key, file)``, as the explorer imports Textual: every class the standard
    decorator builds inside is the one it builds outside; a second run compiles nothing; the
    entry lives in ``file``, which the package's classes' cache never reads."""
    file = cache.with_name("imports.test.marshal")
    theirs = _record(dataclasses.dataclass)
    seen = _compiles(monkeypatch)
    with compiled.kept_compiles("an import", file):
        first = _record(dataclasses.dataclass)
        mine = _record(compiled.dataclass)  # inside a block: the texts go to its entry
    assert len(seen) == TEXTS  # the same texts: compiled once
    _same(first, theirs)
    _same(mine, theirs)
    assert "exec" not in vars(dataclasses)
    assert list(marshal.loads(file.read_bytes())) == ["an import"] and not cache.exists()
    seen.clear()
    with compiled.kept_compiles("an import", file):  # the next run reads the file
        second = _record(dataclasses.dataclass)
    assert seen == []
    _same(second, theirs)


def test_the_explorer_imports_textual_with_its_compiles_kept(tmp_path: Path) -> None:
    """``specsheet explore``'s import of Textual keeps its dataclasses' compiled methods
    (Textual's own, 42 classes in 8.2) in compiled.IMPORTS, not in the package's cache."""
    script = (
        "import sys, marshal\n"
        "from specsheet import compiled\n"
        "compiled.IMPORTS = compiled.Path(sys.argv[1])\n"
        "compiled.CACHE = compiled.Path(sys.argv[2])\n"
        "from specsheet.cli.commands.explore import APP_KEY, import_app\n"
        "import_app()\n"
        "entry = marshal.loads(marshal.loads(compiled.IMPORTS.read_bytes())[APP_KEY])\n"
        "print(len(entry), sum('__create_fn__' in t for t in entry))\n"
        "print(APP_KEY in marshal.loads(compiled.CACHE.read_bytes()))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "i.marshal"),
                          str(tmp_path / "c.marshal")], capture_output=True, text=True,
                         check=True, env=env).stdout.split()
    # each text the methods dataclasses generated: 42 texts in 3.10 to 3.12, one a class (40) after
    assert int(out[0]) == int(out[1]) >= (40 if sys.version_info >= (3, 13) else 42)
    assert out[2] == "False"


def _pair(base: Any) -> type:
    """The same class statement on ``base``: typing's NamedTuple or specsheet's."""

    class Pair(base):  # type: ignore[misc, valid-type]
        """Two sizes and a note."""

        name: str
        size: int
        parts: tuple[int, ...] = ()
        note: str | None = None

        def total(self) -> int:
            return self.size + sum(self.parts)

        @property
        def label(self) -> str:
            return f"{self.name}:{self.size}"

    Pair.__qualname__ = "Pair"
    return Pair


def test_a_named_tuple_is_the_one_typing_builds(cache: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``compiled.NamedTuple`` builds the class ``typing.NamedTuple`` builds: its fields,
    defaults, signature, repr, equality and hash as a tuple, methods, docstring, pickling,
    ``_replace``, ``_asdict`` and ``__new__``'s bytecode; its ``__new__`` compiled once, then
    read from the cache; annotations as written (this module's are text)."""
    theirs = _pair(typing.NamedTuple)
    seen: list[str] = []

    def counted(source: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(source)
        return compile(source, *args, **kwargs)

    monkeypatch.setattr(compiled, "compile", counted, raising=False)
    ours = _pair(compiled.NamedTuple)
    assert len(seen) == 1 and seen[0].startswith("lambda _cls, name, size, parts, note:")
    assert ours.__mro__[1:] == theirs.__mro__[1:] == (tuple, object)
    for name in ("_fields", "_field_defaults", "__doc__", "__module__", "__qualname__",
                 "__match_args__", "__slots__"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert [(p.name, p.kind, p.default) for p in inspect.signature(ours).parameters.values()] \
        == [(p.name, p.kind, p.default) for p in inspect.signature(theirs).parameters.values()]
    assert ours.__new__.__code__.co_code == theirs.__new__.__code__.co_code
    assert ours.__new__.__defaults__ == theirs.__new__.__defaults__ == ((), None)
    assert typing.get_type_hints(ours) == typing.get_type_hints(theirs)
    assert ours.__annotations__ == {"name": "str", "size": "int", "parts": "tuple[int, ...]",
                                    "note": "str | None"}
    a, b = ours("a", 1, (2, 3)), theirs("a", 1, (2, 3))
    assert repr(a) == repr(b) == "Pair(name='a', size=1, parts=(2, 3), note=None)"
    assert a == b == ("a", 1, (2, 3), None) and hash(a) == hash(b)
    assert a.total() == b.total() == 6 and a.label == b.label == "a:1"
    assert a._replace(size=5) == ("a", 5, (2, 3), None) and a._asdict() == b._asdict()
    assert ours._make(["b", 2, (), None]) == theirs._make(["b", 2, (), None])
    monkeypatch.setattr(sys.modules[__name__], "Pair", ours, raising=False)
    assert pickle.loads(pickle.dumps(a)) == a
    assert "eval" not in vars(collections)  # the hook is gone once the class is built
    compiled._cache = None  # a new run reads the file
    seen.clear()
    assert _pair(compiled.NamedTuple)("a", 1) == ("a", 1, (), None) and seen == []


def test_a_named_tuple_statement_is_checked_as_typing_checks_it() -> None:
    with pytest.raises(TypeError, match="Non-default namedtuple field size cannot follow "
                                        "default field name"):

        class Late(compiled.NamedTuple):
            name: str = ""
            size: int

    with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _asdict"):

        class Own(compiled.NamedTuple):
            name: str

            def _asdict(self) -> dict[str, Any]:
                return {}
SSL_SCRIPT = """
import sys
if sys.argv[1] == "ssl first":
    import ssl
from specsheet.cli.commands.explore import import_app
import_app()
print("textual.widgets._checkbox" in sys.modules, "textual.widgets._input" in sys.modules)
import asyncio
import asyncio.base_events, asyncio.selector_events, asyncio.sslproto
print("ssl" in sys.modules)
print(sorted(m.__name__ for m in (asyncio.base_events, asyncio.selector_events,
                                  asyncio.sslproto) if m.ssl is None))
print(asyncio.run(asyncio.sleep(0, "loop ran")))
import ssl
print(ssl.PROTOCOL_TLS_CLIENT.name)
"""


@pytest.mark.parametrize("case", ["fresh", "ssl first"])
def test_the_explorer_imports_asyncio_without_ssl(case: str) -> None:
    """The explorer's import of Textual (and asyncio) leaves ssl out: asyncio takes it as
    optional; the event loop runs; a later ``import ssl`` gets the real module. A process that
    imported ssl before keeps asyncio's ssl as it is. And the switches' widget (Checkbox) is
    imported with the details, after the first frame (Input comes with Textual's app)."""
    out = subprocess.run([sys.executable, "-c", SSL_SCRIPT, case], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert out.pop(0) == "False True"
    if case == "fresh":
        assert out[:2] == ["False", "['asyncio.base_events', 'asyncio.selector_events', "
                                    "'asyncio.sslproto']"]
    else:
        assert out[:2] == ["True", "[]"]
    assert out[2:] == ["loop ran", "PROTOCOL_TLS_CLIENT"]
