"""Files the command writes: whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

from specsheet.errors import SpecError


def write_whole(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, renamed into
    place once complete: a full disk or an interrupted run leaves the old file (or none), never
    half a file. A path that exists and is not a regular file (a device, a pipe) is written to
    directly: it is never replaced. Errors name the path."""
    import tempfile  # lazy: it imports random (start-up)

    target = Path(path)
    if target.exists() and not target.is_file() and not target.is_dir():
        try:
            with open(target, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise SpecError(f"{path}: cannot write: {e.strerror}") from None
        return
    if target.is_dir():
        raise SpecError(f"{path}: cannot write: it is a folder; name a file")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise SpecError(f"{path}: cannot write: the folder {folder} does not exist")
    try:
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as e:
        raise SpecError(f"{path}: cannot write: {e.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(temporary, target.stat().st_mode & 0o7777 if target.exists() else _new_mode())
        os.replace(temporary, target)
    except OSError as e:
        Path(temporary).unlink(missing_ok=True)
        raise SpecError(f"{path}: cannot write: {e.strerror}") from None


def check_writable(path: str, option: str) -> None:
    """Refuse ``path`` before anything is computed or written when ``write_whole`` could not
    write it: a folder, or a file in a folder that does not exist or cannot be written to."""
    target = Path(path)
    if target.is_dir():
        raise SpecError(f"option {option}: cannot write {path}: it is a folder; name a file")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise SpecError(f"option {option}: cannot write {path}: the folder {folder} does not "
                        "exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise SpecError(f"option {option}: cannot write {path}: the folder {folder} is not "
                        "writable")


def _new_mode() -> int:
    """The mode open() would give a new file: 0o666 less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
