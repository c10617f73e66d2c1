"""One model source on every command that takes a model: ``--hf``, ``--timeout``, the five
numbers and every spec option, and ``--set``, defined once.

A command adopts the whole group with one decorator and one parameter::

    @model_options
    def count(model: ModelArg = None, ..., src: ModelSource = NO_SOURCE) -> None:
        given = src.overrides()               # --set, then the named spec options
        ref = src.ref(model)                  # MODEL, or hf:ORG/NAME for --hf

The decorator adds the group's options to the command's signature (typer reads them from it)
and hands them to the command as one ``ModelSource``: a new source or spec field added here
reaches every command at once (tests/test_model_source.py runs every command with every kind
of source)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from specsheet.cli.options import (
    SPEC_OPTIONS,
    AttnBiasOpt,
    ContextOpt,
    DffOpt,
    DModelOpt,
    HeadDimOpt,
    HeadsOpt,
    HfOpt,
    KvHeadsOpt,
    LayersOpt,
    MlpBiasOpt,
    MlpOpt,
    NormOpt,
    PositionsOpt,
    SetOpt,
    TiedOpt,
    TimeoutOpt,
    VocabOpt,
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

# the group's parameters, in the order --help lists them: (name, annotation, default)
_GROUP: tuple[tuple[str, Any, Any], ...] = (
    ("hf", HfOpt, None),
    ("timeout", TimeoutOpt, DEFAULT_TIMEOUT),
    ("layers", LayersOpt, None),
    ("d_model", DModelOpt, None),
    ("heads", HeadsOpt, None),
    ("vocab", VocabOpt, None),
    ("context", ContextOpt, None),
    ("kv_heads", KvHeadsOpt, None),
    ("head_dim", HeadDimOpt, None),
    ("d_ff", DffOpt, None),
    ("mlp", MlpOpt, None),
    ("norm", NormOpt, None),
    ("attn_bias", AttnBiasOpt, None),
    ("mlp_bias", MlpBiasOpt, None),
    ("positions", PositionsOpt, None),
    ("tied", TiedOpt, None),
    ("settings", SetOpt, None),
)
GROUP_PARAMETERS = tuple(name for name, _, _ in _GROUP)
assert set(SPEC_OPTIONS) <= set(GROUP_PARAMETERS)


def model_options(command: F) -> F:
    """``command`` with the model-source group's options; it receives them as ``src``."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "src"]
    clash = {p.name for p in own} & set(GROUP_PARAMETERS)
    if clash or "src" not in signature.parameters:
        raise TypeError(f"{command.__name__}: the model-source group owns {sorted(clash)}; "
                        "take them as src: ModelSource")
    added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                               annotation=annotation) for name, annotation, default in _GROUP]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        group = {name: kwargs.pop(name, default) for name, _, default in _GROUP}
        src = ModelSource(hf=group.pop("hf"), timeout=group.pop("timeout"),
                          settings=tuple(group.pop("settings") or ()),
                          spec=tuple(group.items()))
        return command(*args, src=src, **kwargs)

    parameters = own + added
    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {**{p.name: p.annotation for p in parameters},
                               "return": signature.return_annotation}
    return wrapper  # type: ignore[return-value]
