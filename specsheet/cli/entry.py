"""The ``specsheet`` command's entry point: the console script and ``python -m specsheet``.

The command line's imports (typer, click and the command's own modules) make some hundred
thousand objects that live as long as the process, and the cyclic garbage collector walks
them again at each full collection it starts while they are made: about 4% of a ``--json``
run's instructions. So the imports run with the collector paused, and what they made is then
frozen (``gc.freeze``: left out of every later collection, as nothing of it becomes garbage
before the process ends) and the collector resumes for the command's own work, which a large
sweep or checkpoint index makes real garbage in. Measured in docs/performance.md.
"""

from __future__ import annotations

import gc


def main() -> None:
    """Import the command line with the collector paused, freeze what it made, run it."""
    gc.disable()
    try:
        from specsheet.cli.app import main as run  # here, not at the top: the pause covers it
    finally:
        gc.freeze()
        gc.enable()
    run()
