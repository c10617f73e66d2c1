"""The process's streams, owned in one place: what stdout can take, and what a failed write means.

- A reader that goes away (``specsheet ... | head -1``) is not an error: exit 0, quietly.
- A write that fails otherwise (a full disk, a closed stdout) exits ``ExitCode.OUTPUT_FAILED``
  with a line on stderr when stderr is open.
- A closed stderr never moves a message to stdout and never changes the exit code.
- A stdout or stderr that cannot encode Unicode (cp1252, ASCII) gets ASCII renderings (see
  ``ascii_only``) and replacement characters instead of an error.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import IO, Any

LOG_WIDTH = 160  # no terminal and no COLUMNS: wide enough for a compare of four models
FALLBACK_WIDTH = 80  # a COLUMNS that is not a positive integer


class OutputFailed(Exception):
    """The result could not be written to stdout (other than a reader that went away)."""


class ReaderGone(Exception):
    """The reader of stdout went away (a closed pipe): not an error, the command stops."""


class _ClosedStream:
    """Stands in for a stream whose file descriptor was closed before start (``>&-``)."""

    encoding = "utf-8"
    closed_fd = True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "stdout is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "stdout is closed")


def prepare() -> None:
    """Make the standard streams safe to use: a closed stderr discards, a closed stdout fails
    on the first write, and streams that cannot encode Unicode replace what they cannot show."""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long
    if sys.stdout is None:
        sys.stdout = _ClosedStream()
    for stream, errors in ((sys.stdout, "replace"), (sys.stderr, "backslashreplace")):
        if not _is_utf(stream):
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                reconfigure(errors=errors)


def _is_utf(stream: IO[Any] | Any) -> bool:
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "")
    return encoding.startswith("utf")


def ascii_only() -> bool:
    """True when stdout cannot encode the table characters (bars, ×, ², box lines)."""
    return not _is_utf(sys.stdout)


def write(text: str) -> None:
    """Write ``text`` to stdout. A reader that went away raises BrokenPipeError; any other
    failure OutputFailed."""
    try:
        sys.stdout.write(text)
    except BrokenPipeError:
        raise
    except OSError as e:
        raise OutputFailed(e.strerror or str(e)) from None


def is_write_failure(error: OSError) -> bool:
    """An error that writing to a stream gives: no space, no such stream, too large, I/O."""
    return error.errno in (errno.ENOSPC, errno.EBADF, errno.EFBIG, errno.EIO,
                           getattr(errno, "EDQUOT", -1))


def flush() -> None:
    """Flush stdout, with the failures of ``write``."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        raise OutputFailed(e.strerror or str(e)) from None
    except ValueError:  # flushing a closed file: nothing was buffered for it
        pass


def silence_stdout() -> None:
    """After a reader went away: point stdout at /dev/null so that nothing else fails."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def say(message: str) -> None:
    """One line on stderr; a stderr that cannot be written says nothing (and changes nothing)."""
    try:
        print(message, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def terminal_width() -> int:
    """The width to render for: COLUMNS when it is a positive integer, 80 when it is set to
    anything else (0, negative, garbage); without COLUMNS, the terminal's width, or LOG_WIDTH
    when stdout is not a terminal."""
    columns = os.environ.get("COLUMNS")
    if columns is not None:
        text = columns.strip()
        return int(text) if text.isascii() and text.isdigit() and int(text) > 0 \
            else FALLBACK_WIDTH
    if _isatty():
        import shutil  # lazy: only where no COLUMNS is set

        return shutil.get_terminal_size((FALLBACK_WIDTH, 24)).columns or FALLBACK_WIDTH
    return LOG_WIDTH


def _isatty() -> bool:
    try:
        return bool(sys.stdout.isatty())
    except (OSError, ValueError, AttributeError):
        return False


def use_color() -> bool:
    """Styles on a terminal, or where FORCE_COLOR (or PY_COLORS) is set; never where NO_COLOR
    is set (it wins) or TERM is dumb."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR") or os.environ.get("PY_COLORS") == "1":
        return True
    return _isatty() and os.environ.get("TERM", "") not in ("dumb", "unknown")
