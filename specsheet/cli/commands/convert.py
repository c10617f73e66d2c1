"""``specsheet convert``: a model written as a preset YAML file."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from specsheet.cli import streams
from specsheet.cli.files import write_whole
from specsheet.cli.options import TimeoutOpt, checked_timeout, complete_preset
from specsheet.sources import DEFAULT_TIMEOUT
from specsheet.sources.resolve import resolve

SETTINGS: dict[str, Any] = {}


def convert(
    model: Annotated[str, typer.Argument(
        help="A config.json, a model folder, hf:ORG/NAME, a preset name or a preset file.",
        show_default=False, autocompletion=complete_preset)],
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Write the preset to this file instead of stdout.",
        show_default=False)] = None,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT,
) -> None:
    """Write a model as a preset YAML file, to keep and edit.

    Example: 'specsheet convert ./Llama-3.1-8B/config.json -o llama31.yaml'.
    """
    from specsheet.sources.convert import to_yaml

    text = to_yaml(resolve(model, timeout=checked_timeout(timeout)))
    if output is None:
        streams.write(text)
        return
    write_whole(output, text)
    streams.say(f"wrote {output}")
