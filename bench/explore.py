"""Explorer start to first screen against a count table, in a real terminal (tmux).

Each round starts, in a new tmux window 120 x 44, ``specsheet count gpt2-small`` (its table,
until the shell prints the exit status) and ``specsheet explore gpt2-small``, the two in turn
(the order swapped every round, so drift on the machine touches both alike), and times from the
command's start to its screen showing, polling capture-pane every 5 ms:

    count          the table and the exit status
    explore        the first screen: the five numbers, the total, the bar and count's tables
    explore, form  the whole form (the details and the request, mounted after the first screen)

Prints each one's minimum, median and maximum, and the ratio explore / count round by round:
the ratio docs/performance.md tracks (the target: within 2x). ``--kind`` as in
bench/startup.py: ``bytecode`` (Python may cache the package's bytecode) or ``editable``
(PYTHONDONTWRITEBYTECODE=1, the package compiled as hatch_build.py compiles it).

``--floor`` adds, to each round, the least Textual app after the same command line and report:
one Static with the total, nothing else (its first frame as the explorer's is timed), Textual
imported as the explorer imports it (its dataclasses' compiled methods kept, asyncio without
ssl: specsheet.cli.commands.explore.import_app); its ratio to count is what no Textual first
frame can go below.

``--phases`` says where the time goes instead: the commands run in the terminal under a
wrapper that reads the process's CPU time (time.process_time, which a busy machine disturbs
less than the wall clock) at the end of each phase, up to count's exit and up to the moment the
explorer writes its first screen; it prints the medians, phase by phase. With ``--floor`` the
least Textual app's phases too.

The runs start in a tmux server of their own, whose environment is this one without
PYTHONDONTWRITEBYTECODE (``--kind editable`` sets it for each run).

    python bench/explore.py [--rounds N] [--kind bytecode|editable] [--floor] [--phases]
"""

from __future__ import annotations

import argparse
import compileall
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

TMUX = shutil.which("tmux")
TOTAL = "total 124,439,808 parameters"  # on the explorer's first screen
FORM = "compare with"  # the form's last field: the whole form is mounted


def timed(server: str, command: str, shown: tuple[str, ...], quit_keys: list[str],
          env: dict[str, str]) -> list[float]:
    """Seconds from starting ``command`` in a terminal to each of ``shown`` on its screen."""
    assert TMUX is not None
    session = f"bench-{uuid.uuid4().hex[:8]}"
    settings = [a for name, value in env.items() for a in ("-e", f"{name}={value}")]
    start = time.perf_counter()
    subprocess.run([TMUX, "-L", server, "new-session", "-d", "-s", session, "-x", "120", "-y",
                    "44", *settings, command], check=True)
    seen: dict[str, float] = {}
    try:
        while len(seen) < len(shown):
            screen = subprocess.run([TMUX, "-L", server, "capture-pane", "-p", "-t", session],
                                    capture_output=True, text=True, check=True).stdout
            now = time.perf_counter() - start
            seen.update((text, now) for text in shown if text in screen and text not in seen)
            if now > 60:
                raise SystemExit(f"no {shown!r} after 60 s:\n{screen}")
            time.sleep(0.005)
        if quit_keys:
            subprocess.run([TMUX, "-L", server, "send-keys", "-t", session, *quit_keys],
                           check=True)
            time.sleep(0.3)
        return [seen[text] for text in shown]
    finally:
        subprocess.run([TMUX, "-L", server, "kill-session", "-t", session], check=False)


# Run in the terminal by --phases: the command, with the CPU time read at the end of each phase
# (marks patched onto the functions that end them) and written to the file given. "floor" runs
# the least Textual app (FLOOR_APP) instead of a command.
WRAPPER = r"""
import os, sys, time
marks = [("python start", time.process_time())]
_exit = os._exit
def mark(name):
    marks.append((name, time.process_time()))
SPENT = []
def done():
    mark("table" if sys.argv[1] == "count" else "first screen")
    for spent in SPENT:
        marks.extend((label, -value) for label, value in spent.items())
    with open(OUT, "a") as f:
        f.write(repr(marks) + "\n")
    _exit(0)
def instrument():
    # Textual's start: its CSS parsing, styling, layout and painting timed; the end of the
    # first screen (the frame with the total) ends the run
    from textual.app import App
    from textual.css.stylesheet import Stylesheet
    from textual.drivers.linux_driver import LinuxDriver
    from textual._compositor import Compositor
    _run, _write = App.run, LinuxDriver.write
    spent = {}
    busy = set()
    def timed(cls, method, label):
        inner = getattr(cls, method)
        def wrapped(*a, **k):
            if label in busy:
                return inner(*a, **k)
            busy.add(label)
            start = time.process_time()
            try:
                return inner(*a, **k)
            finally:
                busy.discard(label)
                spent[label] = spent.get(label, 0) + time.process_time() - start
        setattr(cls, method, wrapped)
    timed(Stylesheet, "parse", "  of which: parsing CSS")
    timed(Stylesheet, "apply", "  of which: styling the widgets")
    timed(Compositor, "reflow", "  of which: layout (the tables drawn)")
    timed(Compositor, "render_update", "  of which: painting the frame")
    SPENT.append(spent)
    def run(self, *a, **k):
        mark("app built")
        return _run(self, *a, **k)
    def write(self, data):
        result = _write(self, data)
        if "total 124,439,808" in data:
            done()
        return result
    App.run, LinuxDriver.write = run, write
import specsheet.cli.app as cli
mark("specsheet's CLI imported")
if sys.argv[1] == "floor":
    from specsheet.api import count as api
    total = api.report(api.load("gpt2-small")).params.total
    mark("model and report")
    exec(FLOOR_APP)
import specsheet.cli.commands.count as count_command
import specsheet.cli.commands.explore as explore_command
import specsheet.cli.options as options
_reports = options.reports
def reports(*a, **k):
    result = _reports(*a, **k)
    mark("model and report")
    return result
count_command.reports = explore_command.reports = options.reports = reports
os._exit = lambda code: done()
if sys.argv[1] == "explore":
    import builtins
    _import = builtins.__import__
    def traced(name, *a, **k):
        if name == "textual.app" and "textual.app" not in sys.modules:
            module = _import(name, *a, **k)
            mark("Textual imported (textual.app)")
            return module
        module = _import(name, *a, **k)
        if name == "specsheet.cli.explore.app" and not hasattr(traced, "seen"):
            traced.seen = True
            mark("Textual and the explorer imported")
            instrument()
        return module
    builtins.__import__ = traced
cli.main()
"""


# The least Textual app showing the total (``total``), Textual imported as the explorer imports
# it (specsheet.cli.commands.explore.import_app: its dataclasses' compiled methods kept, here in
# a file of the floor's own, FLOOR_FILE, and asyncio without ssl; the collector off); marks and
# instrument() are the phases' (no-ops otherwise)
FLOOR_APP = r"""
import gc
from pathlib import Path
from specsheet.cli.commands.explore import without_ssl
from specsheet.compiled import kept_compiles
gc.disable()
with kept_compiles("floor", Path(FLOOR_FILE)), without_ssl():
    from textual.app import App
mark("Textual imported (textual.app)")
from textual.widgets import Static
class Floor(App[None]):
    def compose(self):
        yield Static(f"total {total:,} parameters")
mark("Textual and the explorer imported")
instrument()
Floor().run()
"""


# Run in the terminal by --floor: the command line's imports and the report, as `specsheet
# explore` makes them, then the least Textual app showing the total
FLOOR = r"""
import specsheet.cli.app
from specsheet.api import count as api
total = api.report(api.load("gpt2-small")).params.total
def mark(name):
    pass
def instrument():
    pass
exec(FLOOR_APP)
"""


def server_environment() -> dict[str, str]:
    """The environment of the tmux server the runs start in: this one, without
    PYTHONDONTWRITEBYTECODE (--kind editable sets it for each run), so that a bytecode run
    may cache what it compiles whatever the shell that started the bench has set."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def floor_script(folder: Path, body: str) -> str:
    """``body`` (FLOOR or WRAPPER) with what it needs: FLOOR_APP, and its file of kept
    compiles in ``folder``."""
    return (f"FLOOR_FILE = {str(folder / 'floor.marshal')!r}\nFLOOR_APP = {FLOOR_APP!r}\n"
            f"{body}")


def phases(rounds: int, specsheet: Path, env: dict[str, str], floor: bool) -> None:
    """Median CPU milliseconds of each phase of count (to its exit), of explore (to its first
    screen) and with ``floor`` of the least Textual app (to its first frame), in turn in the
    terminal."""
    import ast

    assert TMUX is not None
    server = f"bench-{uuid.uuid4().hex[:8]}"
    subprocess.run([TMUX, "-L", server, "new-session", "-d", "-s", "keep", "sleep 600"],
                   check=True, env=server_environment())
    names = ("count", "explore", "floor") if floor else ("count", "explore")
    found: dict[str, list[list[tuple[str, float]]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as folder:
        try:
            for index in range(rounds + 1):  # the first round warms the file cache
                for name in (names if index % 2 == 0 else names[::-1]):
                    out = Path(folder) / f"{name}.txt"
                    script = Path(folder) / "wrapper.py"
                    script.write_text(floor_script(Path(folder), f"OUT = {str(out)!r}\n{WRAPPER}"),
                                      encoding="utf-8")
                    python = specsheet.with_name("python")
                    before = len(out.read_text().splitlines()) if out.exists() else 0
                    command = f"{python} {script} {name} gpt2-small; sleep 30"
                    settings = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
                    session = f"phase-{uuid.uuid4().hex[:8]}"
                    subprocess.run([TMUX, "-L", server, "new-session", "-d", "-s", session,
                                    "-x", "120", "-y", "44", *settings, command], check=True)
                    deadline = time.perf_counter() + 60
                    while not (out.exists() and len(out.read_text().splitlines()) > before):
                        if time.perf_counter() > deadline:
                            raise SystemExit(f"{name}: no first screen after 60 s")
                        time.sleep(0.02)
                    subprocess.run([TMUX, "-L", server, "kill-session", "-t", session],
                                   check=False)
                    if index:
                        found[name].append(ast.literal_eval(out.read_text().splitlines()[-1]))
        finally:
            subprocess.run([TMUX, "-L", server, "kill-server"], check=False)
    print(f"{rounds} rounds; CPU ms, median of each phase (and its end, from the process's "
          "start)")
    for name, runs in found.items():
        print(f"{name}:")
        for i, (phase, at) in enumerate(runs[0][1:], start=1):
            if at < 0:  # a part of the phase before it (its CPU time, negated)
                part = statistics.median(-run[i][1] for run in runs)
                print(f"  {phase:38} {part * 1000:6.0f}")
                continue
            length = statistics.median(run[i][1] - run[i - 1][1] for run in runs)
            end = statistics.median(run[i][1] for run in runs)
            print(f"  {phase:38} {length * 1000:6.0f}   (at {end * 1000:4.0f})")


def spread(values: list[float], unit: float = 1000, fmt: str = "7.0f") -> str:
    """Minimum, median and maximum."""
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{low * unit:{fmt}} {mid * unit:{fmt}} {high * unit:{fmt}}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--kind", choices=("bytecode", "editable"), default="bytecode")
    parser.add_argument("--floor", action="store_true",
                        help="also time the least Textual app (one Static) against count")
    parser.add_argument("--phases", action="store_true",
                        help="where the CPU time goes, phase by phase, instead")
    args = parser.parse_args()
    specsheet = Path(sys.executable).with_name("specsheet")
    if TMUX is None or not specsheet.exists():
        raise SystemExit("needs tmux and specsheet installed beside this Python "
                         "(pip install '.[explore]')")
    env = {"PYTHONDONTWRITEBYTECODE": "1"} if args.kind == "editable" else {}
    if args.kind == "editable":
        import specsheet as package

        compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)
    if args.phases:
        phases(args.rounds, specsheet, env, args.floor)
        return
    folder = tempfile.TemporaryDirectory()  # the floor's kept compiles
    count_command = f"{specsheet} count gpt2-small; echo EXIT=$?; sleep 30"
    explore_command = f"{specsheet} explore gpt2-small; sleep 30"
    floor_command = (f"{specsheet.with_name('python')} -c "
                     f"{shlex.quote(floor_script(Path(folder.name), FLOOR))}; sleep 30")
    count: list[float] = []
    first: list[float] = []
    form: list[float] = []
    floor: list[float] = []
    server = f"bench-{uuid.uuid4().hex[:8]}"  # one tmux server for every round
    assert TMUX is not None
    subprocess.run([TMUX, "-L", server, "new-session", "-d", "-s", "keep", "sleep 600"],
                   check=True, env=server_environment())
    try:
        timed(server, explore_command, (TOTAL, FORM), ["C-q"], env)  # warm the file cache
        timed(server, count_command, ("EXIT=",), [], env)
        if args.floor:
            timed(server, floor_command, (TOTAL,), ["C-q"], env)
        runs = ("count", "explore", "floor") if args.floor else ("count", "explore")
        for index in range(args.rounds):
            for run in (runs if index % 2 == 0 else runs[::-1]):
                if run == "count":
                    count += timed(server, count_command, ("EXIT=",), [], env)
                elif run == "floor":
                    floor += timed(server, floor_command, (TOTAL,), ["C-q"], env)
                else:
                    shown, whole = timed(server, explore_command, (TOTAL, FORM), ["C-q"], env)
                    first.append(shown)
                    form.append(whole)
    finally:
        subprocess.run([TMUX, "-L", server, "kill-server"], check=False)
        folder.cleanup()
    ratios = [e / c for e, c in zip(first, count, strict=True)]
    forms = [f / c for f, c in zip(form, count, strict=True)]
    print(f"{args.rounds} rounds, {args.kind}; ms as min median max")
    print(f"count gpt2-small (table)      {spread(count)}")
    print(f"explore, first screen         {spread(first)}")
    print(f"explore, whole form           {spread(form)}")
    print(f"first screen / count          {spread(ratios, 1, '7.2f')}  (target: within 2x)")
    print(f"whole form / count            {spread(forms, 1, '7.2f')}")
    if floor:
        floors = [f / c for f, c in zip(floor, count, strict=True)]
        print(f"least Textual app             {spread(floor)}")
        print(f"least Textual app / count     {spread(floors, 1, '7.2f')}")


if __name__ == "__main__":
    main()
