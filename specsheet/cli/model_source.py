"""One model source on every command that takes a model: ``--hf``, ``--timeout``, the five
numbers and every spec option, and ``--set``, defined once.

A command adopts the whole group with one decorator and one parameter::

    @model_options
    def count(model: str | None = MODEL_ARG, ..., src: ModelSource = NO_SOURCE) -> None:
        given = src.overrides()               # --set, then the named spec options
        ref = src.ref(model)                  # MODEL, or hf:ORG/NAME for --hf

The decorator adds the group's options to the command's signature (typer reads them from it)
and hands them to the command as one ``ModelSource``: a new source or spec field added here
reaches every command at once (tests/test_model_source.py runs every command with every kind
of source)."""

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from specsheet.cli.options import (
    ATTN_BIAS_OPT,
    CONTEXT_OPT,
    D_MODEL_OPT,
    DFF_OPT,
    HEAD_DIM_OPT,
    HEADS_OPT,
    HF_OPT,
    KV_HEADS_OPT,
    LAYERS_OPT,
    MLP_BIAS_OPT,
    MLP_OPT,
    NORM_OPT,
    POSITIONS_OPT,
    SET_OPT,
    SPEC_OPTIONS,
    TIED_OPT,
    TIMEOUT_OPT,
    VOCAB_OPT,
    checked_timeout,
    overrides,
    source,
)
from specsheet.compiled import NamedTuple
from specsheet.sources import DEFAULT_TIMEOUT
from specsheet.sources.fields import Overrides

F = TypeVar("F", bound=Callable[..., Any])


class ModelSource(NamedTuple):
    """What the shared group gave: the Hub name of ``--hf``, ``--timeout``, ``--set``'s
    settings and the named spec options (by their parameter names, None when not given)."""

    hf: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    settings: tuple[str, ...] = ()
    spec: tuple[tuple[str, Any], ...] = ()

    def overrides(self) -> Overrides:
        """The spec fields given, each labelled with its option (--set first; options win)."""
        return overrides(list(self.settings) or None, dict(self.spec))

    def ref(self, model: str | None) -> str | None:
        """The model reference: MODEL, or ``hf:ORG/NAME`` for --hf."""
        return source(model, self.hf)

    def refs(self, models: list[str] | None) -> list[str | None]:
        """Every model of a command that takes several (and --hf's, or the five numbers when
        none is named)."""
        refs: list[str | None] = list(models or [])
        if self.hf is not None or not refs:
            refs.append(source(None, self.hf))
        return refs

    def checked_timeout(self) -> float:
        """``--timeout``, checked whether or not the Hub is asked."""
        return checked_timeout(self.timeout)

    def placed(self, model: str | None) -> Any:
        """What a local placement (fit, check --engine) takes: a .gguf file as it is (its own
        tensors), else the model the source names with the spec options and --set applied (a
        .gguf given them: its metadata)."""
        from specsheet.cli.options import say_notes
        from specsheet.sources.resolve import resolve

        ref, given = self.ref(model), self.overrides()
        if ref is not None and ref.lower().endswith(".gguf") and not given:
            return ref
        notes: list[str] = []
        try:
            return resolve(ref, given, notes, self.checked_timeout())
        finally:
            say_notes(notes)


NO_SOURCE = ModelSource()


def _group(*, hf: str | None = HF_OPT, timeout: float = TIMEOUT_OPT,
           layers: int | None = LAYERS_OPT, d_model: int | None = D_MODEL_OPT,
           heads: int | None = HEADS_OPT, vocab: int | None = VOCAB_OPT,
           context: int | None = CONTEXT_OPT, kv_heads: int | None = KV_HEADS_OPT,
           head_dim: int | None = HEAD_DIM_OPT, d_ff: int | None = DFF_OPT,
           mlp: str | None = MLP_OPT, norm: str | None = NORM_OPT,
           attn_bias: bool | None = ATTN_BIAS_OPT, mlp_bias: bool | None = MLP_BIAS_OPT,
           positions: str | None = POSITIONS_OPT, tied: bool | None = TIED_OPT,
           settings: list[str] | None = SET_OPT) -> None:
    """The group's parameters, in the order --help lists them (each default is its option)."""


_GROUP = tuple(inspect.signature(_group).parameters.values())
GROUP_PARAMETERS = tuple(parameter.name for parameter in _GROUP)
assert set(SPEC_OPTIONS) <= set(GROUP_PARAMETERS)


def model_options(command: F) -> F:
    """``command`` with the model-source group's options; it receives them as ``src``."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "src"]
    clash = {p.name for p in own} & set(GROUP_PARAMETERS)
    if clash or "src" not in signature.parameters:
        raise TypeError(f"{command.__name__}: the model-source group owns {sorted(clash)}; "
                        "take them as src: ModelSource")

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        group = {p.name: kwargs.pop(p.name, p.default.default) for p in _GROUP}
        src = ModelSource(hf=group.pop("hf"), timeout=group.pop("timeout"),
                          settings=tuple(group.pop("settings") or ()),
                          spec=tuple(group.items()))
        return command(*args, src=src, **kwargs)

    parameters = own + list(_GROUP)
    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {**{p.name: p.annotation for p in parameters},
                               "return": signature.return_annotation}
    return wrapper  # type: ignore[return-value]
