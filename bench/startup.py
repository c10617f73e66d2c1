"""Start-up cost of the specsheet command against the imports it cannot avoid.

Runs each command at least 20 times, interleaved (one of each per round, so drift on the
machine touches all of them alike; each round in an order of its own, drawn from a fixed
seed, so that no command always follows the same one), and prints medians and the ratios
the project tracks:

    json path   = specsheet count gpt2-small --json   / python -c "import typer"
    table path  = specsheet count gpt2-small          / python -c "import typer, rich.table"
    all presets = specsheet compare <every preset> --json / specsheet count gpt2-small --json
    cached hub  = specsheet count meta-llama/Llama-3.1-8B --json (its config.json in a Hugging
                  Face cache made for the run, HF_HUB_OFFLINE=1) / python -c "import typer"
    every other command's --json (train, serve, check, compare, sweep, fit, presets, hardware),
    convert and schema           / python -c "import typer"
    every table (presets, hardware, serve, fit) / python -c "import typer, rich.table"
    --help                        / python -c "import typer"

Each is measured for the kinds of install users have:

    bytecode      a wheel, or any install whose modules Python may cache as bytecode
    editable      an editable install under PYTHONDONTWRITEBYTECODE=1 (common in containers):
                  Python writes no bytecode, so the package runs on what the install compiled
                  (hatch_build.py compiles it, as pip compiles a wheel, and writes the
                  dataclasses' compiled methods, specsheet/compiled.py)
    uncompiled    for reference, no target: the same with no bytecode at all, every module of
                  specsheet compiled from source on every run (as before hatch_build.py), and
                  the dataclasses' methods too

Each run's CPU time (user + system, from the kernel's accounting of the finished process) is
what the ratios compare: the ratio of the medians. Beside it: the wall time's, the ratio
against the same baseline imported as specsheet's entry point imports it (the garbage
collector paused, then its objects frozen: "paused"), which is specsheet's own share of the
run, and where the middle half of the ratios of one round's two runs lie ("rounds"), which
shows how far the machine moves a verdict. On a shared machine a process also waits for a
core, which the wall time counts and the command does not cost.

    python bench/startup.py [--rounds N] [--kind bytecode|editable|uncompiled ...] [--only TEXT]
"""

from __future__ import annotations

import argparse
import atexit
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HUB_MODEL = "meta-llama/Llama-3.1-8B"
HERE = tempfile.mkdtemp(prefix="specsheet-bench-")  # where every command runs: nothing in it
atexit.register(shutil.rmtree, HERE, ignore_errors=True)
COMMIT = "0" * 40


def commands() -> dict[str, list[str]]:
    specsheet = shutil.which("specsheet")
    if specsheet is None:
        raise SystemExit("specsheet is not installed: pip install .")
    from specsheet.sources.presets import preset_index

    py = sys.executable
    return {
        "import typer": [py, "-c", "import typer"],
        "import typer, rich.table": [py, "-c", "import typer, rich.table"],
        # the same imports as the entry point makes them (specsheet/cli/entry.py): the garbage
        # collector paused, then what they made frozen; for reference, specsheet's own share
        PAUSED["import typer"]: [py, "-c", PAUSE.format("typer")],
        PAUSED["import typer, rich.table"]: [py, "-c", PAUSE.format("typer, rich.table")],
        "count --json": [specsheet, "count", "gpt2-small", "--json"],
        "count (table)": [specsheet, "count", "gpt2-small"],
        "compare all presets --json": [specsheet, "compare", *preset_index(), "--json"],
        "count ORG/NAME --json": [specsheet, "count", HUB_MODEL, "--json"],
        "train --json": [specsheet, "train", "llama3-8b", "--json"],
        "serve --json": [specsheet, "serve", "llama3-70b", "--gpu", "h100-sxm", "--gpus", "8",
                         "--json"],
        "check --json": [specsheet, "check", "llama3-8b", "--max-weights", "17GB", "--json"],
        "compare --json": [specsheet, "compare", "llama3-8b", "llama3-70b", "--json"],
        "sweep --json": [specsheet, "sweep", "llama3.1-8b", "--tokens", "1k:128k:x2", "--json"],
        "fit --json": [specsheet, "fit", "llama3-8b", "--gpu", "rtx-4090", "--ctx", "8192",
                       "--json"],
        "fit (table)": [specsheet, "fit", "llama3-8b", "--gpu", "rtx-4090", "--ctx", "8192"],
        "convert": [specsheet, "convert", "llama3-8b"],
        "presets --json": [specsheet, "presets", "--json"],
        "hardware --json": [specsheet, "hardware", "--json"],
        "schema": [specsheet, "schema"],
        "presets (table)": [specsheet, "presets"],
        "hardware (table)": [specsheet, "hardware"],
        "serve (table)": [specsheet, "serve", "llama3-70b", "--gpu", "h100-sxm", "--gpus", "8"],
        "--help": [specsheet, "--help"],
    }


def hub_cache(root: Path) -> Path:
    """A Hugging Face cache holding HUB_MODEL's config.json (the tests' copy), as the Hub's
    client leaves it: a snapshot and refs/main."""
    folder = root / ("models--" + HUB_MODEL.replace("/", "--"))
    (folder / "snapshots" / COMMIT).mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(COMMIT)
    config = Path(__file__).resolve().parent.parent / "tests" / "data" / "llama-3.1-8b.json"
    (folder / "snapshots" / COMMIT / "config.json").write_bytes(config.read_bytes())
    return root


def package() -> Path:
    import specsheet

    return Path(specsheet.__file__).parent


def measure(rounds: int, cache: Path, kind: str,
            only: tuple[str, ...] = ()) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) seconds of each run. ``kind``: bytecode, editable or uncompiled (see the
    module's docstring); ``only``: the commands whose name holds one of these (and the
    baselines)."""
    import compileall

    cmds = commands()
    env = {**os.environ, "COLUMNS": "160", "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for folder in package().rglob("__pycache__"):
        shutil.rmtree(folder)
    from specsheet.compiled import CACHE  # the dataclasses' compiled methods, kept as bytecode is

    CACHE.unlink(missing_ok=True)
    if kind != "bytecode":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    if kind == "editable":  # what hatch_build.py does
        compileall.compile_dir(str(package()), quiet=1)
        subprocess.run([sys.executable, "-m", "specsheet.compiled"], env={
            k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"},
            stdout=subprocess.DEVNULL, check=True, cwd=package().parent)
    if only:
        cmds = {name: cmd for name, cmd in cmds.items() if name in BASELINES or any(
            part in name for part in only)}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
    for cmd in cmds.values():  # warm the file cache and the bytecode
        run(cmd, env)
    order = list(cmds.items())
    shuffle = random.Random(19).shuffle  # the same orders every run of the bench
    for _ in range(rounds):
        # in one fixed order a command always ran after the same one, and whatever that one
        # left the machine in fell on it alone: hardware --json (after presets --json) read
        # 1.17x where its instructions are 1.07x typer's, then 1.01x in orders shuffled
        shuffle(order)
        for name, cmd in order:
            times[name].append(run(cmd, env))
    return times


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One run of ``cmd``: its wall time, and the CPU time (user + system) the process used,
    which waiting for a core on a shared machine does not inflate. It runs in an empty folder
    (``HERE``): ``python -c`` looks for every module first where it runs, and a stray
    ``nt.py`` there (``ntpath`` tries ``import nt``) once cost the baseline more than the
    whole of typer's import."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env, cwd=HERE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="runs of each command (>= 20)")
    parser.add_argument("--kind", choices=("bytecode", "editable", "uncompiled"),
                        action="append", help="the install kinds to measure [default: all]")
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="measure the commands whose name holds TEXT (and the baselines)")
    args = parser.parse_args()
    rounds = max(20, args.rounds)
    for kind in args.kind or ("bytecode", "editable", "uncompiled"):
        with tempfile.TemporaryDirectory() as root:
            times = measure(rounds, hub_cache(Path(root)), kind, tuple(args.only))
        report(kind, rounds, times)
    compileall_package()
    return 0


def compileall_package() -> None:
    """Leave the package compiled, as its install left it."""
    import compileall

    compileall.compile_dir(str(package()), quiet=1)
    subprocess.run([sys.executable, "-m", "specsheet.compiled"], stdout=subprocess.DEVNULL,
                   check=True, cwd=package().parent, env={
                       k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})


JSON = ("count --json", "count ORG/NAME --json", "train --json", "serve --json", "check --json",
        "compare --json", "sweep --json", "fit --json", "convert", "presets --json",
        "hardware --json", "schema")
TABLES = ("count (table)", "presets (table)", "hardware (table)", "serve (table)",
          "fit (table)")
# every command's --json (and convert, schema) against typer's import; every table against
# typer's and rich.table's; --help against typer's (issue #19's targets)
PAUSED = {"import typer": "import typer (paused)",
          "import typer, rich.table": "import typer, rich.table (paused)"}
PAUSE = "import gc; gc.disable(); import {}; gc.freeze(); gc.enable()"
BASELINES = ("import typer", "import typer, rich.table", "count --json", *PAUSED.values())
RATIOS = [
    *((name, name, "import typer", 1.15) for name in JSON),
    *((name, name, "import typer, rich.table", 1.15) for name in TABLES),
    ("--help", "--help", "import typer", 1.15),
    ("all presets", "compare all presets --json", "count --json", 1.3),
]


def report(kind: str, rounds: int, times: dict[str, list[tuple[float, float]]]) -> None:
    """Medians, and the ratios against their targets (for reference only when uncompiled).
    The verdict is the CPU time's: on a machine shared with other work a process also waits
    for a core, which the wall time counts and the command does not cost."""
    wall = {name: statistics.median(w for w, _ in values) * 1000 for name, values in times.items()}
    cpu = {name: statistics.median(c for _, c in values) * 1000 for name, values in times.items()}
    print(f"{kind}: medians of {rounds} interleaved runs, CPU (user + system) and wall")
    for name in times:
        print(f"  {name:<28} {cpu[name]:7.1f} ms cpu {wall[name]:7.1f} ms wall")
    print(f"{kind}: ratios, CPU (wall), target")
    for label, a, b, target in RATIOS:
        if a not in times:
            continue
        r = cpu[a] / cpu[b]
        verdict = "(reference)" if kind == "uncompiled" else "ok" if r <= target else "OVER"
        paused = f"; {cpu[a] / cpu[PAUSED[b]]:.2f}x paused" if b in PAUSED else ""
        low, high = middle_half([x / y for (_, x), (_, y) in zip(times[a], times[b], strict=True)])
        print(f"  {label:<26} / {b}: {r:.2f}x ({wall[a] / wall[b]:.2f}x wall{paused}; "
              f"rounds {low:.2f}-{high:.2f}x) (<= {target}x) {verdict}")


def middle_half(values: list[float]) -> tuple[float, float]:
    """The first and third quartiles of ``values``: where the middle half of them lie. Of the
    ratios of one round's two runs: how far the machine moved a verdict run by run."""
    low, _, high = statistics.quantiles(values, n=4)
    return low, high


if __name__ == "__main__":
    sys.exit(main())
