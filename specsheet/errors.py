"""The one project exception and the process exit codes."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import IntEnum


class ExitCode(IntEnum):
    """Exit status of the ``specsheet`` command."""

    OK = 0
    CHECK_FAILED = 1  # a budget given to ``specsheet check`` was exceeded
    BAD_INPUT = 2  # bad input or usage: nothing was computed
    INTERNAL_ERROR = 70  # a failure specsheet did not foresee (a bug: please report it)
    OUTPUT_FAILED = 74  # the result could not be written (disk full, stdout closed)


class SpecError(ValueError):
    """Bad input: a file, field or value that specsheet cannot use.

    ``message`` is the fact, without the field or source it is about; ``field`` names the input
    (a spec field such as ``kv_heads``, or an argument of the library such as ``tp``, ``gpu`` or
    ``max_model_len``), ``value`` the value given, ``source`` where it came from (a file path,
    ``preset NAME``). ``str(e)`` is the line a library user reads: ``source: field: message``.
    The CLI names the field as the user typed it (``option --tp``) through ``line``, once, in
    ``specsheet.cli.errors``; no code parses a message to learn what it was about. The CLI
    prints the line on stderr and exits with ``ExitCode.BAD_INPUT``.
    """

    def __init__(self, message: str, *, field: str | None = None, value: object = None,
                 source: str | None = None, context: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.value = value
        self.source = source
        self.context = context  # what the error happened in, after the message: " (llama3-8b)"

    def worded(self, spell: Callable[[str], str]) -> str:
        """The message, naming any other input it mentions as ``spell(field)`` gives it (the
        CLI spells a field as its option). Most messages mention none: the message itself."""
        return self.message

    def line(self, label: str | None = None, spell: Callable[[str], str] | None = None) -> str:
        """The one line: ``source: label: message context``, where ``label`` names the field
        (default: the field's own name; ``""`` leaves it out) and ``spell`` the other inputs
        the message mentions (see ``worded``)."""
        named = self.field if label is None else label
        text = self.message if spell is None else self.worded(spell)
        source = self.source and shortened(self.source, head=120, tail=60)  # a path, a name
        return ": ".join(p for p in (source, named, text + self.context) if p)

    def __str__(self) -> str:
        return self.line()


def shortened(text: str, length: int | None = None, *, head: int = 40, tail: int = 20) -> str:
    """``text`` for one error line: as it is up to ``head + tail + 20`` characters (80), else
    its first ``head`` and last ``tail`` with its length said (``length``: the length of what
    ``text`` shows, default its own)."""
    if len(text) <= head + tail + 20:
        return text
    shown = len(text) if length is None else length
    return f"{text[:head]}...{text[-tail:]} ({shown:,} characters)"


def quoted(value: object) -> str:
    """``repr(value)`` for one error line, shortened as ``shortened`` shortens: a name or value
    the user gave, said back. A text's length is said as the text's, not the quoted form's."""
    return shortened(repr(value), len(value) if isinstance(value, str) else None)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest of ``choices``, or ``""``.

    A word that begins some choices (``h100`` of ``h100-sxm`` and ``h100-pcie``) suggests those,
    the first in ``choices``' order first and up to three others after it; otherwise the closest
    by difflib's ratio."""
    import difflib  # only on the error path

    choices = list(choices)
    if word != word.strip() and word.strip() in choices:
        return (f" (did you mean '{word.strip()}'? the name has white space or a control "
                "character around it, such as a Windows line ending)")
    if len(word) >= 2:
        begun = [c for c in choices if c.lower().startswith(word.lower()) and c != word]
        if begun:
            others = ", ".join(f"'{c}'" for c in begun[1:4])
            more = ", ..." if len(begun) > 4 else ""
            return f" (did you mean '{begun[0]}'?{f' also {others}{more}' if others else ''})"
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


class TokensOverContext(SpecError):
    """A request of more tokens than the model's context. The message states the fact; the
    CLI adds the advice that fits the command at hand."""


class NoTokenizer(SpecError):
    """No tokenizer to measure a text with (``specsheet.sources.tokenizer``). ``wants`` names
    the inputs that would give one: ``tokenizer`` (the path of a tokenizer.json),
    ``tokens_per_word`` (the ratio itself); the CLI adds them as advice, in its options' words.
    Here, not in the tokenizer's module, so that catching it imports nothing."""

    def __init__(self, message: str, *, wants: tuple[str, ...]) -> None:
        super().__init__(message, field="text")
        self.wants = wants
