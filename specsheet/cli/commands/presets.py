"""``specsheet presets``: the built-in presets."""

from typing import TYPE_CHECKING, Any

import typer

from specsheet.api.spec import count_params
from specsheet.cli.options import FORMAT_OPT, JSON_OPT, emit, option_errors, output_format
from specsheet.sources.resolve import load_preset
from specsheet.views.catalog import presets_document

if TYPE_CHECKING:
    from specsheet.views.table import TableView

SETTINGS: dict[str, Any] = {}


LONG_OPT: bool = typer.Option(
    False, "--long", "-l", help="The full table (every column) instead of one line a model.")


def presets(fmt: str | None = FORMAT_OPT, json_: bool = JSON_OPT, long: bool = LONG_OPT) -> None:
    """List the built-in presets, one line a model (name, total, context, family); --long adds
    L, d, heads, KV heads, vocab and the description."""
    from specsheet.sources.presets import preset_index

    output = output_format(fmt, json_)
    # each preset's model and its parameters counted: all the list shows, so no report (KV
    # cache, FLOPs, weights) is built, nor the format its checkpoint ships in read
    with option_errors(""):
        models = [load_preset(name, shipped=False) for name in preset_index()]
    listed = [(model, count_params(model.spec)) for model in models]
    listed.sort(key=lambda p: (p[0].name.split("-")[0], p[1].total))
    document = presets_document(listed)

    def views() -> "list[TableView]":
        from specsheet.views.catalog import presets_list, presets_view

        return [presets_view(listed) if long else presets_list(listed, "specsheet presets --long")]

    emit(output, document, document["presets"], views)
