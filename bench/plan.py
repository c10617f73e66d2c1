"""``specsheet plan MODEL --gpu all`` from start to exit, as a user runs it (the target: under 2 s
for deepseek-v3, the whole catalog; issue 22).

Each round runs the installed command (or ``python -m specsheet``) with ``--json`` and with the
table, and prints the median wall time of each, the memory plans the search evaluated and the
layouts it skipped. No timing is asserted anywhere: this prints figures to compare by hand.

    python bench/plan.py [--rounds N] [--model NAME]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time

TARGET_S = 2.0
INSTALLED = shutil.which("specsheet")
COMMAND = [INSTALLED] if INSTALLED else [sys.executable, "-m", "specsheet"]


def timed(argv: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr}")
    return elapsed, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--model", default="deepseek-v3")
    args = parser.parse_args()
    base = [*COMMAND, "plan", args.model, "--gpu", "all"]
    runs: dict[str, list[float]] = {"json": [], "table": []}
    document = None
    for _ in range(args.rounds):  # interleaved, so a busy moment hits both alike
        elapsed, out = timed([*base, "--json"])
        runs["json"].append(elapsed)
        document = json.loads(out)
        runs["table"].append(timed(base)[0])
    assert document is not None
    print(f"specsheet plan {args.model} --gpu all: {len(document['candidates'])} candidates, "
          f"{document['searched']} memory plans, skipped {document['skipped']['refused']} "
          f"refused and {document['skipped']['memory']} over memory")
    for name, times in runs.items():
        median = statistics.median(times)
        print(f"  {name:5}  median {median:.2f} s  (min {min(times):.2f}, max "
              f"{max(times):.2f}; target {TARGET_S:.0f} s: {median / TARGET_S:.2f}x)")


if __name__ == "__main__":
    main()
