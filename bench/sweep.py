"""The cost of a sweep of 1,000 points against one count (targets: <= 1.5x `count --json` as
JSON and as CSV, <= 2x the count table as a table).

Runs each command at least 20 times, interleaved (each round in an order of its own, drawn
from a fixed seed, as bench/startup.py does), with the specsheet of this checkout
(``python -m specsheet``, so an installed copy cannot stand in for it), and prints the medians
of the wall-clock time and of the CPU time each run took (user + system, as the kernel counts
it: steadier than the wall clock on a machine shared with other work), and the ratios of both
(of the medians, and where the middle half of the rounds' ratios lie, as bench/startup.py):

    tokens  sweep llama3.1-8b --tokens 128:128000:+128 --json   (1,000 points, 1 axis)
    2 axes  sweep llama3.1-8b --tokens 1k:100k:+1k --batch 1:10:+1 --json  (1,000 points)
    gpu     sweep llama3.1-8b --tokens 128:128000:+128 --gpu h100-sxm --json  (serve's
            document at 1,000 points; no target, for reference)
    csv     sweep llama3.1-8b --tokens 128:128000:+128 --format csv
    table   sweep llama3.1-8b --tokens 128:128000:+128 (1,000 rows and the chart) against
            count llama3.1-8b (the table)
    8-point sweep llama3.1-8b --tokens 1k:128k:x2 --gpu h100-sxm (8 points, rich and the chart;
            for reference)

The package is byte-compiled first, as an install compiles it (hatch_build.py), and its
dataclasses' compiled methods written (specsheet/compiled.py).

    python bench/sweep.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from startup import middle_half

ROOT = Path(__file__).resolve().parent.parent
SPECSHEET = [sys.executable, "-m", "specsheet"]
COMMANDS = {
    "count --json": ["count", "llama3.1-8b", "--json"],
    "sweep 1,000 points --json": ["sweep", "llama3.1-8b", "--tokens", "128:128000:+128",
                                  "--json"],
    "sweep 1,000 points, 2 axes --json": ["sweep", "llama3.1-8b", "--tokens", "1k:100k:+1k",
                                          "--batch", "1:10:+1", "--json"],
    "sweep 1,000 points --gpu --json": ["sweep", "llama3.1-8b", "--tokens", "128:128000:+128",
                                        "--gpu", "h100-sxm", "--json"],
    "sweep 1,000 points --format csv": ["sweep", "llama3.1-8b", "--tokens", "128:128000:+128",
                                        "--format", "csv"],
    "count (table)": ["count", "llama3.1-8b"],
    "sweep 1,000 points (table, chart)": ["sweep", "llama3.1-8b", "--tokens",
                                          "128:128000:+128"],
    "sweep 8 points (table, chart)": ["sweep", "llama3.1-8b", "--tokens", "1k:128k:x2",
                                      "--gpu", "h100-sxm"],
}
RATIOS = [
    ("sweep --json", "sweep 1,000 points --json", "count --json", 1.5),
    ("2 axes", "sweep 1,000 points, 2 axes --json", "count --json", 1.5),
    ("gpu", "sweep 1,000 points --gpu --json", "count --json", None),
    ("csv", "sweep 1,000 points --format csv", "count --json", 1.5),
    ("table", "sweep 1,000 points (table, chart)", "count (table)", 2.0),
    ("8-point", "sweep 8 points (table, chart)", "count (table)", None),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="runs of each command (>= 20)")
    rounds = max(20, parser.parse_args().rounds)
    import compileall

    compileall.compile_dir(str(ROOT / "specsheet"), quiet=1)  # as an install compiles it,
    # with the dataclasses' compiled methods (an out-of-date file would compile some each run;
    # written even under PYTHONDONTWRITEBYTECODE)
    subprocess.run([sys.executable, "-m", "specsheet.compiled"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"}
    wall: dict[str, list[float]] = {name: [] for name in COMMANDS}
    cpu: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for args in COMMANDS.values():  # warm the file cache and the bytecode
        _run(args, env)
    order = list(COMMANDS.items())
    shuffle = random.Random(19).shuffle  # each round in an order of its own, the same each run
    for _ in range(rounds):
        shuffle(order)
        for name, args in order:
            seconds, cpu_seconds = _run(args, env)
            wall[name].append(seconds)
            cpu[name].append(cpu_seconds)
    for label, times in (("wall", wall), ("cpu", cpu)):
        med = {name: statistics.median(values) * 1000 for name, values in times.items()}
        print(f"{label}: medians of {rounds} interleaved runs")
        for name, ms in med.items():
            print(f"  {name:<36} {ms:7.1f} ms")
        print(f"{label}: ratios (target)")
        for short, a, b, target in RATIOS:
            r = med[a] / med[b]
            verdict = "(reference)" if target is None else "ok" if r <= target else "OVER"
            low, high = middle_half([x / y for x, y in zip(times[a], times[b], strict=True)])
            print(f"  {short:<12} {a} / {b}: {r:.2f}x (rounds {low:.2f}-{high:.2f}x) "
                  f"({f'<= {target}x' if target else 'none'}) {verdict}")
    return 0


def _run(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One run's wall-clock seconds and CPU seconds (user + system, the kernel's count)."""
    start = time.perf_counter()
    process = subprocess.Popen([*SPECSHEET, *args], stdout=subprocess.DEVNULL, env=env,
                               cwd=ROOT)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"{' '.join(args)} exited {process.returncode}")
    return seconds, usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    sys.exit(main())
