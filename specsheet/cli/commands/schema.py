"""``specsheet schema``: the JSON Schema of every document specsheet writes."""

from typing import Any

from specsheet.cli import streams
from specsheet.views.schema import schema_text

SETTINGS: dict[str, Any] = {}


def schema() -> None:
    """Print the JSON Schema (draft 2020-12) of the documents that --json writes.

    Example: 'specsheet schema > specsheet.schema.json', then validate a CI job's output
    against it.
    """
    streams.write(schema_text())
