"""The house keeps its shape: no CLI option name below the CLI, no import circle, no module too
large to read (docs/architecture.md), options in the style that starts fast. Each check is also
run on a tree that breaks it."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "specsheet"
# the stages that know nothing of the command line
BELOW_THE_CLI = ("model", "quant", "plan", "sources", "views", "render")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
MAX_LINES = 650
LONGER_ALLOWED = {"specsheet/sources/hf_config/families.py"}  # the families registry


def option_names(root: Path) -> Iterator[str]:
    """``path:line: '--option'`` for every option name in a string literal (docstrings and
    comments are not strings the program uses, and are left out)."""
    for stage in BELOW_THE_CLI:
        for path in sorted((root / "specsheet" / stage).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                          if isinstance(node, (ast.Module, ast.FunctionDef,
                                               ast.AsyncFunctionDef, ast.ClassDef))
                          and node.body and isinstance(node.body[0], ast.Expr)
                          and isinstance(node.body[0].value, ast.Constant)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                        and id(node) not in docstrings:
                    for match in OPTION.finditer(node.value):
                        yield f"{path.relative_to(root)}:{node.lineno}: {match.group()!r}"


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the specsheet modules it imports anywhere (at the top, in a function, under
    TYPE_CHECKING), from the source."""
    modules = {}
    for path in (root / "specsheet").rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                    + ([base] if base else []))
                targets.add(base)
                targets.update(f"{base}.{a.name}" for a in node.names)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _is_package_init_edge(a: str, b: str) -> bool:
    """A package's ``__init__`` re-exporting its own submodules is not a circle of modules."""
    return b.startswith(a + ".") or a.startswith(b + ".")


def module_circles(root: Path) -> list[list[str]]:
    graph = import_graph(root)
    pruned = {a: {b for b in targets if not _is_package_init_edge(a, b)}
              for a, targets in graph.items()}
    return circles(pruned)


def test_no_option_name_below_the_cli() -> None:
    found = list(option_names(ROOT))
    assert not found, "CLI option names below the CLI (name the field; cli/ spells it):\n" + \
        "\n".join(found)


def test_an_option_name_in_the_plan_is_found(tmp_path: Path) -> None:
    plan = tmp_path / "specsheet" / "plan"
    plan.mkdir(parents=True)
    (plan / "bad.py").write_text('"""A docstring may say --gpu."""\nWORDS = "give --max-params"\n')
    for stage in BELOW_THE_CLI:
        (tmp_path / "specsheet" / stage).mkdir(parents=True, exist_ok=True)
    assert list(option_names(tmp_path)) == ["specsheet/plan/bad.py:2: '--max-params'"]


def test_no_import_circle() -> None:
    assert module_circles(ROOT) == []


def test_an_import_circle_is_found(tmp_path: Path) -> None:
    package = tmp_path / "specsheet"
    (package / "sources").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sources" / "__init__.py").write_text("")
    (package / "sources" / "a.py").write_text("from specsheet.sources.b import x\n")
    (package / "sources" / "b.py").write_text(
        "def x() -> None:\n    from specsheet.sources import a  # noqa: F401\n")
    assert module_circles(tmp_path) == [["specsheet.sources.a", "specsheet.sources.b"]]


@pytest.mark.parametrize("path", sorted(
    str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")
    if str(p.relative_to(ROOT)) not in LONGER_ALLOWED))
def test_no_module_is_too_long(path: str) -> None:
    lines = len((ROOT / path).read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path} has {lines} lines; cut it by job (at most {MAX_LINES})"


# what reads a text (split with no argument only folds its white space: not a read)
_READS = {"startswith", "endswith", "partition", "rpartition", "removeprefix", "removesuffix",
          "split", "find", "index"}


def message_parsing(root: Path) -> Iterator[str]:
    """``path:line`` of every place an except clause reads its exception's text to learn what
    it was about: ``str(e).startswith(...)``, ``"x" in str(e)``, ``e.message.partition(...)``."""
    def is_text(node: ast.AST, name: str) -> bool:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "str" and node.args and isinstance(node.args[0], ast.Name):
            return node.args[0].id == name
        return isinstance(node, ast.Attribute) and node.attr == "message" and \
            isinstance(node.value, ast.Name) and node.value.id == name

    for path in sorted((root / "specsheet").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for handler in ast.walk(tree):
            if not isinstance(handler, ast.ExceptHandler) or handler.name is None:
                continue
            for node in ast.walk(handler):
                read = (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr in _READS and is_text(node.func.value, handler.name)
                        and (node.func.attr != "split" or bool(node.args)))
                tested = isinstance(node, ast.Compare) and any(
                    isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and any(
                    is_text(c, handler.name) for c in node.comparators)
                if read or tested:
                    yield f"{path.relative_to(root)}:{node.lineno}"


def test_no_module_parses_an_error_message() -> None:
    assert list(message_parsing(ROOT)) == []


def test_parsing_a_message_is_found(tmp_path: Path) -> None:
    package = tmp_path / "specsheet"
    package.mkdir()
    (package / "bad.py").write_text(
        "def f() -> None:\n    try:\n        pass\n    except ValueError as e:\n"
        "        if str(e).startswith('tp:'):\n            raise\n"
        "        if 'digits' in str(e):\n            raise\n")
    assert list(message_parsing(tmp_path)) == ["specsheet/bad.py:5", "specsheet/bad.py:7"]


def slow_options(root: Path) -> Iterator[str]:
    """``path:line`` of every option written as an ``Annotated`` alias, and of every command
    module under ``from __future__ import annotations`` (its signature then texts, which typer's
    build compiles each run): cli/options.py says why, docs/performance.md measures it."""
    for path in sorted((root / "specsheet" / "cli").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        command = path.parent.name == "commands"
        for node in ast.walk(tree):
            annotated = isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and node.value.id == "Annotated"
            future = command and isinstance(node, ast.ImportFrom) and \
                node.module == "__future__"
            if annotated or future:
                yield f"{path.relative_to(root)}:{node.lineno}"


def test_options_are_in_the_style_that_starts_fast() -> None:
    assert list(slow_options(ROOT)) == []


def test_an_annotated_option_is_found(tmp_path: Path) -> None:
    commands = tmp_path / "specsheet" / "cli" / "commands"
    commands.mkdir(parents=True)
    (tmp_path / "specsheet" / "cli" / "options.py").write_text(
        "from typing import Annotated\n\nimport typer\n\n"
        "GpuOpt = Annotated[str, typer.Option('--gpu')]\n")
    (commands / "serve.py").write_text("from __future__ import annotations\n")
    assert list(slow_options(tmp_path)) == ["specsheet/cli/commands/serve.py:1",
                                            "specsheet/cli/options.py:5"]
