"""Explorer start to first screen against a count table, in a real terminal (tmux).

Each round starts, in a new tmux window 120 x 44, ``specsheet count gpt2-small`` (its table,
until the shell prints the exit status) and ``specsheet explore gpt2-small`` (until its first
screen shows the total, then ctrl+q), interleaved, and times from the command's start to the
screen showing it (capture-pane polled every 5 ms). Prints medians and explore / count, the
ratio docs/performance.md tracks (the target: within 2x).

    python bench/explore.py [--rounds N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
import uuid

TMUX = shutil.which("tmux")
COUNT = "specsheet count gpt2-small; echo EXIT=$?; sleep 30"
EXPLORE = f"{sys.executable} -m specsheet explore gpt2-small; sleep 30"


def timed(command: str, shown: str, quit_keys: list[str]) -> float:
    """Seconds from starting ``command`` in a terminal to ``shown`` on its screen."""
    assert TMUX is not None
    session = f"bench-{uuid.uuid4().hex[:8]}"
    start = time.perf_counter()
    subprocess.run([TMUX, "new-session", "-d", "-s", session, "-x", "120", "-y", "44", command],
                   check=True)
    try:
        while True:
            screen = subprocess.run([TMUX, "capture-pane", "-p", "-t", session],
                                    capture_output=True, text=True, check=True).stdout
            if shown in screen:
                elapsed = time.perf_counter() - start
                break
            if time.perf_counter() - start > 60:
                raise SystemExit(f"no {shown!r} after 60 s:\n{screen}")
            time.sleep(0.005)
        if quit_keys:
            subprocess.run([TMUX, "send-keys", "-t", session, *quit_keys], check=True)
            time.sleep(0.3)
        return elapsed
    finally:
        subprocess.run([TMUX, "kill-session", "-t", session], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    if TMUX is None or shutil.which("specsheet") is None:
        raise SystemExit("needs tmux and an installed specsheet (pip install '.[explore]')")
    count, explore = [], []
    keep = f"bench-keep-{uuid.uuid4().hex[:8]}"  # one tmux server for every round
    subprocess.run([TMUX, "new-session", "-d", "-s", keep, "sleep 600"], check=True)
    try:
        for _ in range(args.rounds):
            count.append(timed(COUNT, "EXIT=", []))
            explore.append(timed(EXPLORE, "total 124,439,808 parameters", ["C-q"]))
    finally:
        subprocess.run([TMUX, "kill-session", "-t", keep], check=False)
    c, e = statistics.median(count), statistics.median(explore)
    print(f"count gpt2-small (table)   median {c * 1000:7.0f} ms over {args.rounds} rounds")
    print(f"explore, first screen      median {e * 1000:7.0f} ms")
    print(f"explore / count            {e / c:.2f}x (target: within 2x)")


if __name__ == "__main__":
    main()
