"""``specsheet inspect PATH``: a checkpoint's real tensors, read from its headers, against the
figures its config gives."""

from typing import TYPE_CHECKING, Any

import typer

from specsheet.cli.options import FORMAT_OPT, JSON_OPT, OPTION_NAMES, emit, output_format
from specsheet.errors import ExitCode, SpecError

if TYPE_CHECKING:
    from specsheet.views.table import TableView

SETTINGS: dict[str, Any] = {
    "epilog": "Reads headers only: no weight data, no torch. Exit codes: 0 done (with --check: "
              "every component matches), 1 with --check: a difference, 2 bad input."}


def inspect(
    path: str = typer.Argument(
        ...,
        help="A .safetensors or .gguf file, a folder of them, a model.safetensors.index.json, "
             "hf:ORG/NAME (the local Hugging Face cache), or ORG/NAME[@REVISION][:FILE] (its "
             "headers read from the Hub by byte ranges; no weights downloaded).",
        show_default=False),
    check: bool = typer.Option(
        False, "--check",
        help="Exit 1 when a component differs from the figures of the config found "
             "beside the weights (config.json, or the GGUF's metadata); 2 without one."),
    fmt: str | None = FORMAT_OPT,
    json_: bool = JSON_OPT,
) -> None:
    """A checkpoint's tensors by component, their element types, parameters and bytes, and
    the figures its config gives, component by component.

    Examples: 'specsheet inspect ./Llama-3.2-1B', 'specsheet inspect model.gguf --check',
    'specsheet inspect hf:Qwen/Qwen3-0.6B --json', 'specsheet inspect Qwen/Qwen3-0.6B --check'.
    """
    output = output_format(fmt, json_)
    # The cyclic collector stays paused through the command, as specsheet.api.inspect pauses
    # it while it reads: the tuples of a large checkpoint (DeepSeek-V3's index: some 300,000)
    # are freed by their reference counts when _written returns, before any collection walks
    # them (resumed after specsheet.api.inspect, the first one took about 50 ms).
    from specsheet.api.collection import no_cyclic_collection

    with no_cyclic_collection():
        matches = _written(path, check, output)
    if check and not matches:
        raise typer.Exit(ExitCode.CHECK_FAILED)


def _written(path: str, check: bool, output: str) -> bool:
    """Inspect ``path`` and write it in ``output``; whether it matches its config (True
    without one: ``check`` asks for one)."""
    from specsheet.api.inspect import inspect as inspect_checkpoint

    inspection = inspect_checkpoint(path)
    if check and inspection.check is None:
        raise SpecError(f"--check needs a config to compare with: {inspection.note}",
                        source=path)
    document = inspection.to_dict()

    def views() -> "list[TableView]":
        from specsheet.views.inspect import inspect_views

        return inspect_views(inspection, OPTION_NAMES)

    emit(output, document, [document], views)
    return inspection.check is None or inspection.check.matches
