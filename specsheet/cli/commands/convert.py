"""``specsheet convert``: a model written as a preset YAML file."""

from typing import Any

import typer

from specsheet.cli import streams
from specsheet.cli.files import write_whole
from specsheet.cli.model_source import NO_SOURCE, ModelSource, model_options
from specsheet.cli.options import MODEL_ARG, say_notes
from specsheet.sources.resolve import resolve

SETTINGS: dict[str, Any] = {}


@model_options
def convert(
    model: str | None = MODEL_ARG,
    output: str | None = typer.Option(
        None, "--output", "-o", help="Write the preset to this file instead of stdout.",
        show_default=False),
    src: ModelSource = NO_SOURCE,
) -> None:
    """Write a model as a preset YAML file, to keep and edit (the spec options and --set
    change it on the way).

    Example: 'specsheet convert ./Llama-3.1-8B/config.json -o llama31.yaml'.
    """
    from specsheet.cli.options import option_errors
    from specsheet.sources.convert import to_yaml

    notes: list[str] = []
    try:
        with option_errors("raise the context with --context"):
            text = to_yaml(resolve(src.ref(model), src.overrides(), notes,
                                   src.checked_timeout()))
    finally:
        say_notes(notes)
    if output is None:
        streams.write(text)
        return
    write_whole(output, text)
    streams.say(f"wrote {output}")
