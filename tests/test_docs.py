"""The README and docs/ show real output, run their Python examples, and document every command,
option, preset field and exit code."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
from pathlib import Path

import pytest

from specsheet.cli.app import COMMANDS, build_command
from specsheet.errors import ExitCode
from specsheet.model.spec import FIELD_DOCS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def load_script(name: str) -> object:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_shown_output_is_current(page: Path) -> None:
    """Run python scripts/update_docs.py when this fails."""
    text = page.read_text(encoding="utf-8")
    assert load_script("update_docs").render(text) == text  # type: ignore[attr-defined]


PYTHON_EXAMPLES = [(page, block) for page in PAGES
                   for block in PYTHON_BLOCK.findall(page.read_text(encoding="utf-8"))]


@pytest.mark.parametrize(("page", "code"), PYTHON_EXAMPLES,
                         ids=[f"{p.name}-{i}" for i, (p, _) in enumerate(PYTHON_EXAMPLES)])
def test_python_examples_print_what_they_say(page: Path, code: str) -> None:
    expected = "".join(line.split("  # ", 1)[1] + "\n" for line in code.splitlines()
                       if line.lstrip().startswith("print(") and "  # " in line)
    assert expected, "an example shows what it prints in a # comment"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(page), "exec"), {})  # noqa: S102 - our own documentation
    assert out.getvalue() == expected


def test_readme_is_short() -> None:
    assert len(README.read_bytes()) <= 12_000


def test_readme_counts_the_goldens_it_claims() -> None:
    """"checked ... against transformers for N model configs": N is the configs with goldens in
    tests/golden, the multimodal checkpoints of tests/golden/multimodal among them (two of
    which, Gemma 3 4B and Llama 4 Scout, have text goldens too, and count once)."""
    import re

    claimed = re.search(r"against transformers for (\d+) model configs", README.read_text("utf-8"))
    assert claimed is not None
    golden = ROOT / "tests" / "golden"
    configs = {p.stem for p in golden.glob("*.json")} | {
        p.stem for p in (golden / "multimodal").glob("*.json")}
    assert int(claimed.group(1)) == len(configs)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_is_in_the_readme_and_the_reference(command: str) -> None:
    assert f"specsheet {command}" in README.read_text(encoding="utf-8")
    assert f"## `specsheet {command}" in (DOCS / "cli.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_option_is_in_the_reference(command: str) -> None:
    reference = (DOCS / "cli.md").read_text(encoding="utf-8")
    for param in build_command(command).params:
        if param.param_type_name == "option" and param.name not in ("help",):
            names = [n for n in (*param.opts, *param.secondary_opts) if n.startswith("--")]
            assert any(f"`{n}" in reference or f"{n}" in reference for n in names), names


@pytest.mark.parametrize("code", list(ExitCode))
def test_every_exit_code_is_documented(code: ExitCode) -> None:
    assert f"| {code.value} | `{code.name}` |" in (DOCS / "cli.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("field", [f.name for f in FIELD_DOCS])
def test_every_preset_field_is_documented(field: str) -> None:
    assert f"| `{field}` |" in (DOCS / "models.md").read_text(encoding="utf-8")


def test_readme_setup_commands_are_the_ci_commands() -> None:
    readme = README.read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = "pip install '.[test]' && pytest"
    assert test_command in readme and test_command in ci
    # a new user installs this checkout (PyPI's "specsheet" is another project); pipx and uvx
    # take a wheel of it, as tests/test_install.py does
    assert "pip install . && specsheet count gpt2-small" in readme
    assert "`pipx install dist/specsheet-*.whl`" in readme
    assert "`uvx --from dist/specsheet-*.whl specsheet`" in readme
    tested = (ROOT / "tests" / "test_install.py").read_text(encoding="utf-8")
    assert '[pipx, "install"' in tested and '"--from",' in tested and "tests/test_install.py" \
        in readme


def test_docs_link_to_pages_that_exist() -> None:
    for page in PAGES:
        for target in re.findall(r"\]\(([\w./-]+\.md)(?:#[\w-]+)?\)", page.read_text("utf-8")):
            assert (page.parent / target).is_file(), f"{page.name} links to {target}"


SH_BLOCK = re.compile(r"```(?:sh|bash|console)\n(.*?)```", re.DOTALL)
HUB_NAME = re.compile(r"(?:^|\s)(?:hf:)?[A-Za-z0-9][\w.-]*/[\w.-]+(?:@\S+)?(?=\s|$)")


def shown_commands() -> list[tuple[str, str, bool]]:
    """Every ``specsheet ...`` line the README and docs/ show in a shell block, cut before the
    shell's own syntax (``|``, ``||``, ``;``, ``>``), leaving out placeholders (``MODEL``,
    ``...``), Hub names (the tests never reach the network) and files a reader would have;
    with whether the page shows it failing (its next line is ``specsheet: error: ...``)."""
    found = []
    for page in PAGES:
        for block in SH_BLOCK.findall(page.read_text(encoding="utf-8")):
            lines = block.splitlines()
            for n, line in enumerate(lines):
                fails = n + 1 < len(lines) and lines[n + 1].startswith("specsheet: error:")
                line = line.removeprefix("$ ").strip()
                if not line.startswith("specsheet "):
                    continue
                line = re.split(r"\s(?:\|\|?|;|>>?|&&|2>)\s?", line)[0]
                if re.search(r"\.\.\.|[A-Z]{3,}|<|\$|\*|~|explore", line):
                    continue
                words = line.split()[1:]
                paths = [w for w in words if "/" in w and not w.startswith("-")]
                if any(not (ROOT / w).exists() for w in paths) or HUB_NAME.search(line):
                    continue
                found.append((page.name, line, fails))
    return found


@pytest.mark.parametrize(("page", "line", "fails"), shown_commands(),
                         ids=[f"{p}:{line[10:50]}" for p, line, _ in shown_commands()])
def test_shown_commands_run(page: str, line: str, fails: bool, tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A command the docs show a reader exits 0 (or 1, a check that fails), never 2, unless
    the page shows its error."""
    import shlex

    from typer.testing import CliRunner

    from specsheet.cli.app import app

    words = shlex.split(line)[1:]
    for i, word in enumerate(words[:-1]):
        if word in ("--svg", "--html", "--output", "-o"):
            words[i + 1] = str(tmp_path / Path(words[i + 1]).name)
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, words)
    assert result.exit_code in ((2,) if fails else (0, 1)), (page, line, result.output)
