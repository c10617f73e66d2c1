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

    python bench/explore.py [--rounds N] [--kind bytecode|editable]
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import statistics
import subprocess
import sys
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


def spread(values: list[float], unit: float = 1000, fmt: str = "7.0f") -> str:
    """Minimum, median and maximum."""
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{low * unit:{fmt}} {mid * unit:{fmt}} {high * unit:{fmt}}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--kind", choices=("bytecode", "editable"), default="bytecode")
    args = parser.parse_args()
    specsheet = Path(sys.executable).with_name("specsheet")
    if TMUX is None or not specsheet.exists():
        raise SystemExit("needs tmux and specsheet installed beside this Python "
                         "(pip install '.[explore]')")
    env = {"PYTHONDONTWRITEBYTECODE": "1"} if args.kind == "editable" else {}
    if args.kind == "editable":
        import specsheet as package

        compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)
    count_command = f"{specsheet} count gpt2-small; echo EXIT=$?; sleep 30"
    explore_command = f"{specsheet} explore gpt2-small; sleep 30"
    count: list[float] = []
    first: list[float] = []
    form: list[float] = []
    server = f"bench-{uuid.uuid4().hex[:8]}"  # one tmux server for every round
    assert TMUX is not None
    subprocess.run([TMUX, "-L", server, "new-session", "-d", "-s", "keep", "sleep 600"],
                   check=True)
    try:
        timed(server, explore_command, (TOTAL, FORM), ["C-q"], env)  # warm the file cache
        timed(server, count_command, ("EXIT=",), [], env)
        for index in range(args.rounds):
            for run in (("count", "explore") if index % 2 == 0 else ("explore", "count")):
                if run == "count":
                    count += timed(server, count_command, ("EXIT=",), [], env)
                else:
                    shown, whole = timed(server, explore_command, (TOTAL, FORM), ["C-q"], env)
                    first.append(shown)
                    form.append(whole)
    finally:
        subprocess.run([TMUX, "-L", server, "kill-server"], check=False)
    ratios = [e / c for e, c in zip(first, count, strict=True)]
    forms = [f / c for f, c in zip(form, count, strict=True)]
    print(f"{args.rounds} rounds, {args.kind}; ms as min median max")
    print(f"count gpt2-small (table)      {spread(count)}")
    print(f"explore, first screen         {spread(first)}")
    print(f"explore, whole form           {spread(form)}")
    print(f"first screen / count          {spread(ratios, 1, '7.2f')}  (target: within 2x)")
    print(f"whole form / count            {spread(forms, 1, '7.2f')}")


if __name__ == "__main__":
    main()
