"""The start-up ratios of bench/startup.py counted in instructions, which a noisy machine does
not move: for telling a real change from the machine's drift, not for the verdicts.

Each command of bench/startup.py (its `--only` choice, and the baselines) runs once under
valgrind's callgrind, which counts the instructions the process executes (Ir): the same count
for the same binary, inputs and environment, whatever else the machine is doing. The string
hash is fixed (PYTHONHASHSEED=0) so that dicts and sets are built alike in every run.

Instructions are not time: a bytecode file read, a cache miss or a page fault costs more than
its instructions, and importing typer reads many files, so the ratios here run higher than
bench/startup.py's CPU ratios (on one machine, `serve --json` 1.34x in instructions against
1.20x in CPU time). The targets are bench/startup.py's; compare a command's count before and
after a change, and its ratio with the same ratio of another tree.

    python bench/instructions.py [--only TEXT ...] [--jobs N]

Needs valgrind (Debian's package) and an installed specsheet, as bench/startup.py does.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import startup  # noqa: E402
from startup import BASELINES, RATIOS, commands, compileall_package, hub_cache  # noqa: E402

COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def instructions(cmd: list[str], env: dict[str, str], folder: Path) -> int:
    """The instructions one run of ``cmd`` executes (callgrind's Ir)."""
    out = folder / f"callgrind.{os.urandom(4).hex()}"
    # the console script's interpreter runs it, as its first line says (callgrind follows no
    # script header)
    argv = [sys.executable, *cmd] if cmd[0] != sys.executable else cmd
    result = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                             *argv], env=env, capture_output=True, text=True, check=False,
                            cwd=startup.HERE)  # an empty folder, as bench/startup.py's runs
    found = COLLECTED.search(result.stderr)
    if result.returncode != 0 or found is None:
        raise SystemExit(f"{' '.join(cmd[:3])}: exit {result.returncode}\n{result.stderr[-800:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="count the commands whose name holds TEXT (and the baselines)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="runs at once (a count does not depend on it)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    compileall_package()  # bytecode and the compiled methods in place, as after a wheel install
    with tempfile.TemporaryDirectory() as root:
        cmds = commands()
        if args.only:
            cmds = {name: cmd for name, cmd in cmds.items() if name in BASELINES or any(
                part in name for part in args.only)}
        env = {**os.environ, "COLUMNS": "160", "HF_HUB_CACHE": str(hub_cache(Path(root))),
               "HF_HUB_OFFLINE": "1", "PYTHONHASHSEED": "0"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            counts = dict(zip(cmds, pool.map(lambda c: instructions(c, env, Path(root)),
                                             cmds.values()), strict=True))
    print("instructions (callgrind Ir), one run each")
    for name, count in counts.items():
        print(f"  {name:<34} {count / 1e6:9.1f} M")
    print("ratios in instructions (the targets are CPU time's: bench/startup.py)")
    for label, a, b, target in RATIOS:
        if a in counts:
            print(f"  {label:<26} / {b}: {counts[a] / counts[b]:.3f}x (CPU target {target}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
