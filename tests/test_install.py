"""The install lines the README gives, run from a wheel built of this checkout, offline.

A wheel of the checkout is built once a session (``pip wheel --no-build-isolation``: hatchling
from the test environment, nothing downloaded) and installed three ways, each into a place of its
own under the test's temporary directory:

- ``pip install <wheel>`` into a fresh venv (what ``pip install .`` does, from the wheel);
- ``pipx install <wheel>``;
- ``uvx --from <wheel> specsheet ...``.

No index is reachable: every installer is given ``--no-index`` (uv ``--offline`` too) and a
proxy that refuses, so a download would fail the test rather than pass it. specsheet's
dependencies come from a wheelhouse made here of the distributions installed in the test
environment (each packed again from its installed files, as its RECORD lists them), so the
installers resolve the wheel's declared dependencies as they would from an index, into
environments that hold nothing else: a dependency the command imports but pyproject.toml does not
declare fails here.

Each run checks the installed command, not the checkout: `count gpt2-small --json` gives the
published total 124,439,808 (REFERENCE.md), and the package is imported from the install.
pipx and uv come with the test extra; without one, its test fails saying it was not run and
why (never a silent skip).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import Distribution, distribution
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOTAL = 124_439_808  # GPT-2 small, the released checkpoint (REFERENCE.md)
WHERE = "import specsheet, sys; print(specsheet.__file__)"

pytestmark = pytest.mark.install



def _closure(name: str) -> list[Distribution]:
    """The installed distributions ``name`` needs to run (its requirements, theirs, ...; no
    extras), by their installed metadata."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: dict[str, Distribution] = {}
    todo = [name]
    while todo:
        for line in distribution(todo.pop()).requires or []:
            requirement = Requirement(line)
            if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
                continue
            key = canonicalize_name(requirement.name)
            if key not in seen:
                seen[key] = distribution(key)
                todo.append(key)
    return list(seen.values())


def _repack(dist: Distribution, into: Path) -> Path:
    """A wheel of an installed distribution: the files its RECORD lists inside site-packages
    (not scripts, which the installer writes again from entry_points.txt, nor bytecode), its
    dist-info less the installer's own files, and a RECORD of the files as packed."""
    wheel_text = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel_text.splitlines()
            if line.startswith("Tag:")]
    name = dist.metadata["Name"].replace("-", "_").replace(".", "_")
    # the compressed tag set of the file name: py2.py3-none-any, cp311-cp311-a.b
    tag = "-".join(".".join(dict.fromkeys(t.split("-")[i] for t in tags)) for i in range(3))
    path = into / f"{name}-{dist.version}-{tag}.whl"
    info = f"{name}-{dist.version}.dist-info"
    record: list[tuple[str, str, str]] = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for file in dist.files or []:
            relative = file.as_posix()
            parts = relative.split("/")
            if ".." in parts or "__pycache__" in parts or relative.endswith(".pyc"):
                continue
            if parts[0].endswith(".dist-info"):
                if parts[-1] in {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}:
                    continue
                relative = "/".join([info, *parts[1:]])
            data = Path(str(dist.locate_file(file))).read_bytes()
            wheel.writestr(relative, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append((relative, f"sha256={digest.decode()}", str(len(data))))
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows([*record, (f"{info}/RECORD", "", "")])
        wheel.writestr(f"{info}/RECORD", out.getvalue())
    return path


def _offline(home: Path) -> dict[str, str]:
    """The environment of an install: no pip configuration of this machine, no index, a proxy
    that refuses (127.0.0.1:9, the discard port, where nothing listens), caches under ``home``."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "UV_", "PIPX_", "VIRTUAL_ENV"))}
    env.update({
        "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
        "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
        "NO_PROXY": "", "no_proxy": "", "UV_NO_CONFIG": "1", "UV_OFFLINE": "1",
        "UV_CACHE_DIR": str(home / "uv-cache"), "UV_TOOL_DIR": str(home / "uv-tools"),
        "UV_PYTHON": sys.executable, "UV_PYTHON_DOWNLOADS": "never",
        "XDG_CACHE_HOME": str(home / "cache"), "XDG_DATA_HOME": str(home / "data"),
        "HOME": str(home), "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1",
    })
    return env


class Built:
    def __init__(self, wheel: Path, house: Path) -> None:
        self.wheel = wheel
        self.house = house  # the dependencies' wheels


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Built:
    """The checkout's wheel and its dependencies' wheelhouse, made once a session (the first
    worker makes them under a lock; the others find them)."""
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp() if worker_id == "master" \
        else tmp_path_factory.getbasetemp().parent
    root = shared / "install-wheels"
    with FileLock(str(shared / "install-wheels.lock")):
        done = root / "done"
        if not done.exists():
            shutil.rmtree(root, ignore_errors=True)
            (root / "dist").mkdir(parents=True)
            (root / "house").mkdir()
            result = subprocess.run(
                [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-index",
                 "--no-build-isolation", "-q", "-w", str(root / "dist")],
                capture_output=True, text=True, check=False, env=_offline(root),
                cwd=root)
            assert result.returncode == 0, result.stderr
            for dist in _closure("specsheet"):
                _repack(dist, root / "house")
            done.write_text("ok")
    (wheel,) = (root / "dist").glob("specsheet-*.whl")
    return Built(wheel, root / "house")


def _run(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False, env=env,
                          cwd=cwd, timeout=240)


def _check_count(command: list[str], env: dict[str, str], cwd: Path) -> None:
    result = _run([*command, "count", "gpt2-small", "--json"], env, cwd)
    assert result.returncode == 0, (command, result.stdout, result.stderr)
    assert json.loads(result.stdout)["params"]["total"] == TOTAL


def _not_run(tool: str) -> None:
    pytest.fail(f"NOT RUN: {tool} is not installed here, so the README's {tool} line was not "
                f"tested (pip install '.[test]' brings it)", pytrace=False)


def test_the_wheel_holds_the_package_and_its_data(built: Built) -> None:
    """The wheel ships every module (the presets' and the catalog's data among them), the
    preset YAML files and the schema."""
    names = set(zipfile.ZipFile(built.wheel).namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "specsheet").rglob("*.py")}
    assert modules <= names, sorted(modules - names)[:5]
    presets = {f"specsheet/presets/{p.name}" for p in (ROOT / "presets").glob("*.yaml")}
    assert len(presets) > 50 and presets <= names, sorted(presets - names)[:5]
    assert {"specsheet/sources/preset_data.py", "specsheet/views/schema.json",
            "specsheet/hardware/accelerator_data.py"} <= names
    assert not [n for n in names if n.endswith(".pyc")]
    # the dataclasses' compiled methods, for the Python that built it (hatch_build.py)
    assert f"specsheet/dataclasses.{sys.implementation.cache_tag}.marshal" in names


def test_pip_install_wheel_into_a_fresh_venv(built: Built, tmp_path: Path) -> None:
    """``pip install <wheel>`` into a new venv, then the installed command from elsewhere."""
    env = _offline(tmp_path)
    venv = tmp_path / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], env, tmp_path)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    install = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-index", "--find-links", str(built.house), str(built.wheel)],
                   env, tmp_path)
    assert install.returncode == 0, install.stderr
    _check_count([str(venv / "bin" / "specsheet")], env, tmp_path)
    where = _run([str(python), "-c", WHERE], env, tmp_path)
    assert where.stdout.startswith(str(venv)), where.stdout  # the wheel, not the checkout
    # the console script of the wheel, in a pipe: the table (rich, from the wheelhouse)
    table = _run([str(venv / "bin" / "specsheet"), "count", "gpt2-small"], env, tmp_path)
    assert table.returncode == 0 and "124,439,808" in table.stdout, table.stderr
    # under PYTHONDONTWRITEBYTECODE (the environment here), the methods of the classes a
    # report builds come from the file the wheel ships, none compiled; without the file,
    # every run compiles them (and writes nothing)
    probe = _run([str(python), "-c", _COMPILES], env, tmp_path)
    assert probe.returncode == 0 and probe.stdout.split() == ["0"], (probe.stdout, probe.stderr)
    (cache,) = (venv / "lib").glob("python*/site-packages/specsheet/dataclasses.*.marshal")
    cache.unlink()
    probe = _run([str(python), "-c", _COMPILES], env, tmp_path)
    assert probe.returncode == 0 and int(probe.stdout) > 10, (probe.stdout, probe.stderr)
    assert not cache.exists()


# the dataclass and namedtuple methods compiled while a report is built (their texts begin so)
_COMPILES = """
import builtins
texts = []
real = builtins.compile
def compile(source, *args, **kwargs):
    if isinstance(source, str) and source.startswith(("def __create_fn__", "lambda _cls")):
        texts.append(source)
    return real(source, *args, **kwargs)
builtins.compile = compile
import specsheet
specsheet.report(specsheet.load("llama3-8b"))
print(len(texts))
"""


def test_pipx_install_wheel(built: Built, tmp_path: Path) -> None:
    """``pipx install <wheel>``: the command on pipx's bin directory, in pipx's own venv."""
    pipx = shutil.which("pipx", path=str(Path(sys.executable).parent)) or shutil.which("pipx")
    if pipx is None:
        _not_run("pipx")
    assert pipx is not None
    env = _offline(tmp_path)
    env.update({"PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin"),
                "PIPX_MAN_DIR": str(tmp_path / "man"), "PIPX_DEFAULT_PYTHON": sys.executable,
                "PIP_FIND_LINKS": str(built.house)})
    install = _run([pipx, "install", "--pip-args", f"--no-index --find-links {built.house}",
                    str(built.wheel)], env, tmp_path)
    assert install.returncode == 0, (install.stdout, install.stderr)
    _check_count([str(tmp_path / "bin" / "specsheet")], env, tmp_path)
    venv = tmp_path / "pipx" / "venvs" / "specsheet"
    where = _run([str(venv / "bin" / "python"), "-c", WHERE], env, tmp_path)
    assert where.stdout.startswith(str(venv)), where.stdout


def test_uvx_from_wheel(built: Built, tmp_path: Path) -> None:
    """``uvx --from <wheel> specsheet ...``: uv's temporary environment, offline."""
    uvx = shutil.which("uvx", path=str(Path(sys.executable).parent)) or shutil.which("uvx")
    if uvx is None:
        _not_run("uvx (uv)")
    assert uvx is not None
    env = _offline(tmp_path)
    _check_count([uvx, "--offline", "--no-index", "--find-links", str(built.house), "--from",
                  str(built.wheel), "specsheet"], env, tmp_path)
