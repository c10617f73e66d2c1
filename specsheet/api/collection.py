"""The cyclic garbage collector paused while a command makes many small objects that hold no
cycles (a checkpoint's tensors, a sweep's points and their documents): each collection their
creation would set off traverses every object made so far, and nothing it could free is there.
Freed by their reference counts as ever; the collector is restored afterwards."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_cyclic_collection() -> Iterator[None]:
    """The cyclic garbage collector paused, then restored: a 90,000-tensor checkpoint is
    read into 180,000 small tuples that hold no cycles, and the collections their creation
    would set off (each traversing every tuple made so far) took a third of the time; a
    1,000-point sweep's grid, documents and text, some 3 ms of 50."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
