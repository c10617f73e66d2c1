"""``specsheet explore``: the lessons' calculator in the terminal (a Textual app, an extra).

Textual is imported here only, when the command runs: no other command loads it."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from specsheet.api.spec import DEFAULT_DTYPE, REQUIRED_FIELDS
from specsheet.cli.model_source import NO_SOURCE, ModelSource, model_options
from specsheet.cli.options import (
    DTYPES,
    KvDtypeOpt,
    TokensOpt,
    complete_preset,
    reports,
)
from specsheet.errors import SpecError

SETTINGS: dict[str, Any] = {}
INSTALL = "pip install 'specsheet[explore]'"
MISSING = f"explore needs Textual, an optional extra: {INSTALL}"
START = "gpt2-small"  # the lessons' worked example


@model_options
def explore(
    model: Annotated[str | None, typer.Argument(
        help=f"Where to start: a preset name, a preset YAML file, a config.json or a model "
             f"folder, or hf:ORG/NAME [default: {START}].",
        show_default=False, autocompletion=complete_preset)] = None,
    tokens: TokensOpt = None,
    dtype: Annotated[str | None, typer.Option(
        "--dtype", help=f"Weight element type: {DTYPES} [default: bf16].",
        show_default=False)] = None,
    kv_dtype: KvDtypeOpt = DEFAULT_DTYPE,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="The file ctrl+s saves the design to [default: NAME.yaml].",
        show_default=False)] = None,
    src: ModelSource = NO_SOURCE,
) -> None:
    """Design a model in the terminal and watch its figures follow every keystroke.

    Needs the explore extra (pip install 'specsheet[explore]'). Keys: ctrl+s saves the design
    as a preset YAML file, ctrl+r goes back to the start, ctrl+q quits.
    Example: 'specsheet explore llama3-8b --tokens 8192'.
    """
    import importlib.util

    if importlib.util.find_spec("textual") is None:
        raise SpecError(MISSING)
    given = src.overrides()
    ref = model
    if model is None and not set(REQUIRED_FIELDS) <= set(given):
        ref = START  # without the five numbers, options edit the lessons' example
    (start,) = reports([ref], given, tokens, dtype, kv_dtype,
                       "lower --tokens or raise the context with --context", timeout=src.timeout)
    if not (_is_terminal(0) and _is_terminal(1)):
        raise SpecError("explore is interactive: run it in a terminal ('specsheet count' "
                        "writes the figures to a pipe or a file)")
    try:
        from specsheet.cli.explore.app import ExploreApp  # Textual: about 0.4 s of imports
    except ModuleNotFoundError as e:  # Textual there, but not whole
        if (e.name or "specsheet").startswith("specsheet"):
            raise
        raise SpecError(f"{MISSING} (No module named {e.name!r})") from None
    ExploreApp(start.model, tokens, dtype, kv_dtype, output).run()


def _is_terminal(fd: int) -> bool:
    import os

    try:
        return os.isatty(fd)
    except OSError:
        return False
