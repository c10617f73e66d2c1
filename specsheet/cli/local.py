"""``specsheet check --engine llama.cpp``: a local placement against the least context and the
fewest GPU layers, for CI (exit 1 when one is not met)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from specsheet.cli.options import emit
from specsheet.errors import ExitCode, SpecError

if TYPE_CHECKING:
    from specsheet.cli.model_source import ModelSource
    from specsheet.views.table import TableView


def local_check(src: ModelSource, models: list[str], engine: str, gpu: str | None,
                quant: str | None, min_ctx: int | None, min_gpu_layers: int | None,
                output: str) -> None:
    """Place the one model as ``specsheet fit`` does (the model source's spec options and
    --set applied) and check it."""
    from specsheet.api.fit import FitRequest, check_fit
    from specsheet.cli.errors import as_options

    if len(models) > 1 or not models and src.hf is None and not src.overrides():
        raise SpecError("a check with --engine takes one model")
    gpus = tuple(g.strip() for g in gpu.split(",") if g.strip()) if gpu else ()
    with as_options():
        checked = check_fit(src.placed(models[0] if models else None),
                            FitRequest(gpu=gpus, quant=quant, engine=engine), min_ctx,
                            min_gpu_layers)
    document = checked.to_dict()

    def views() -> list[TableView]:
        from specsheet.views.fit import fit_check_view, fit_views

        return [fit_check_view(checked.fit, checked.checks), *fit_views(checked.fit)]

    rows = [{"name": checked.fit.model.name, **entry} for entry in document["checks"]]
    emit(output, document, rows, views)
    if not checked.ok:
        raise typer.Exit(ExitCode.CHECK_FAILED)
