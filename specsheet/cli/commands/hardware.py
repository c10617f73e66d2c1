"""``specsheet hardware [NAME]``: the built-in accelerators, or one of them (or a file) in full."""

from typing import TYPE_CHECKING, Any

import typer

from specsheet.cli.options import FORMAT_OPT, JSON_OPT, emit, output_format

if TYPE_CHECKING:
    from specsheet.views.table import TableView

SETTINGS: dict[str, Any] = {}


def complete_hardware(incomplete: str) -> list[str]:
    """Shell completion: the built-in names that start with ``incomplete``."""
    from specsheet.hardware.catalog import catalog_index

    return [name for name in catalog_index() if name.startswith(incomplete)]


GPU_ARG: str | None = typer.Argument(
    None,
    help="A built-in accelerator (see the list without it) or a hardware YAML file, written like "
         "the built-in ones (docs/hardware.md). Leave out to list the built-ins.",
    show_default=False, autocompletion=complete_hardware)


def hardware(gpu: str | None = GPU_ARG, fmt: str | None = FORMAT_OPT, json_: bool = JSON_OPT,
             long: bool = typer.Option(
                 False, "--long", "-l",
                 help="The full list (fp8, fp4, interconnect) instead of one line an "
                      "accelerator.")) -> None:
    """List the built-in accelerators (memory, bandwidth, dense peaks, interconnect), or show one
    with every figure and its source."""
    output = output_format(fmt, json_)
    if gpu is None:
        from specsheet.hardware.catalog import builtin, catalog_index
        from specsheet.views.catalog import hardware_document

        listed = [builtin(name) for name in catalog_index()]
        document = hardware_document(listed)

        def views() -> "list[TableView]":
            from specsheet.views.catalog import hardware_list, hardware_view

            return [hardware_view(listed) if long
                    else hardware_list(listed, "specsheet hardware --long")]

        emit(output, document, document["accelerators"], views)
        return

    from specsheet.sources.hardware import load_accelerator
    from specsheet.views.catalog import accelerator_document

    accelerator = load_accelerator(gpu)
    one = accelerator_document(accelerator)

    def view() -> "list[TableView]":
        from specsheet.views.catalog import accelerator_view

        return [accelerator_view(accelerator)]

    emit(output, one, [one["accelerator"]], view)
