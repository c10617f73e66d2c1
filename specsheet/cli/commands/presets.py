"""``specsheet presets``: the built-in presets."""

from typing import TYPE_CHECKING, Annotated, Any

import typer

from specsheet.api.spec import DEFAULT_DTYPE
from specsheet.cli.options import FormatOpt, JsonOpt, emit, output_format, reports
from specsheet.sources.fields import Overrides
from specsheet.views.catalog import presets_document

if TYPE_CHECKING:
    from specsheet.views.table import TableView

SETTINGS: dict[str, Any] = {}


LongOpt = Annotated[bool, typer.Option(
    "--long", "-l", help="The full table (every column) instead of one line a model.")]


def presets(fmt: FormatOpt = None, json_: JsonOpt = False, long: LongOpt = False) -> None:
    """List the built-in presets, one line a model (name, total, context, family); --long adds
    L, d, heads, KV heads, vocab and the description."""
    from specsheet.sources.presets import preset_index

    output = output_format(fmt, json_)
    listed = reports(list(preset_index()), Overrides(), None, DEFAULT_DTYPE, DEFAULT_DTYPE, "")
    listed.sort(key=lambda r: (r.model.name.split("-")[0], r.params.total))
    document = presets_document(listed)

    def views() -> "list[TableView]":
        from specsheet.views.catalog import presets_list, presets_view

        return [presets_view(listed) if long else presets_list(listed, "specsheet presets --long")]

    emit(output, document, document["presets"], views)
