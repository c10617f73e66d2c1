"""The design being explored, without Textual: the preset fields the form has set, the model and
report they make (through ``specsheet.api``), and the preset file they save as.

A design is what a preset file holds: the spec fields given explicitly, the others derived
(d_ff = 4 x d, kv_heads = heads, ...). A form field left empty is derived again. Every figure
comes from the api; nothing here counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specsheet.api import count as api
from specsheet.api.spec import (
    DEFAULT_DTYPE,
    DTYPE_BITS,
    FIELD_DOCS,
    MAX_DIGITS,
    REQUIRED_FIELDS,
    FieldDoc,
    Model,
)
from specsheet.errors import SpecError, quoted
from specsheet.sources.convert import minimal_fields
from specsheet.sources.fields import merge

if TYPE_CHECKING:
    from specsheet.api.serve import Serving

DOCS: dict[str, FieldDoc] = {doc.name: doc for doc in FIELD_DOCS}

# the fields the form shows, in its order: numbers (typed), choices and switches
NUMBER_FIELDS: tuple[str, ...] = (
    *REQUIRED_FIELDS, "kv_heads", "head_dim", "d_ff", "experts", "experts_per_token",
    "expert_d_ff", "shared_d_ff", "sliding_window")
CHOICE_FIELDS: tuple[str, ...] = ("mlp", "norm", "positions", "qk_norm")
SWITCH_FIELDS: tuple[str, ...] = ("tied_embeddings", "qkv_bias", "o_bias", "mlp_bias")
FORM_FIELDS: tuple[str, ...] = (*NUMBER_FIELDS, *CHOICE_FIELDS, *SWITCH_FIELDS)

DTYPES: tuple[str, ...] = tuple(DTYPE_BITS)

# what left and right add to a number field (shift: ten times as much): a layer, a head, d_model
# and the MLP widths by 64 (a multiple most kernels want), the vocabulary by 64 (its usual
# padding), the context and a window by 256, the request's tokens by 8
STEPS: dict[str, int] = {
    "layers": 1, "d_model": 64, "heads": 1, "vocab": 64, "context": 256, "kv_heads": 1,
    "head_dim": 8, "d_ff": 64, "experts": 1, "experts_per_token": 1, "expert_d_ff": 64,
    "shared_d_ff": 64, "sliding_window": 256, "tokens": 8, "gpus": 1,
}
EDITED = "edited in specsheet explore"


def parse_number(name: str, text: str) -> int | None:
    """What was typed in the field ``name``: an integer (1,024 and 1_024 too), or None when the
    field is empty (derived again). Anything else raises SpecError naming the field."""
    cleaned = text.strip().replace(",", "").replace("_", "")
    if not cleaned:
        if name in REQUIRED_FIELDS:
            raise SpecError(f"{name}: required; one of the five numbers "
                            f"{', '.join(REQUIRED_FIELDS)}")
        return None
    expected = "a positive integer" if DOCS[name].type == "int" else "an integer of 0 or more"
    return _integer(name, text, cleaned, expected)


def stepped(name: str, text: str, times: int) -> str:
    """The text of field ``name`` after ``times`` steps (negative: down) from ``text``: never
    below 1 (0 for a field that may be off); text that is not a number steps from the lowest."""
    low = 0 if name in DOCS and DOCS[name].type != "int" else 1
    cleaned = text.strip().replace(",", "").replace("_", "")
    value = int(cleaned) if cleaned.isascii() and cleaned.isdigit() and len(cleaned) < 30 \
        else low
    return str(max(low, value + times * STEPS[name]))


def gpu_names() -> list[str]:
    """The GPU catalog's names, for the serving view."""
    from specsheet.hardware.catalog import catalog_index

    return list(catalog_index())


def serving(model: Model, gpu: str, gpus: int, tokens: int, dtype: str,
            kv_dtype: str) -> Serving:
    """``model`` served on ``gpus`` x ``gpu`` with requests of ``tokens`` tokens (api.serve)."""
    from specsheet.api.serve import serve

    return serve(model, gpu, dtype=dtype, kv_dtype=kv_dtype, gpus=gpus, max_model_len=tokens)


def parse_tokens(text: str) -> int | None:
    """The tokens of a request as typed: an integer, or None (empty) for the model's context."""
    cleaned = text.strip().replace(",", "").replace("_", "")
    if not cleaned:
        return None
    tokens = _integer("tokens", text, cleaned, "a positive integer")
    if not tokens:
        raise SpecError("tokens: expected a positive integer, got 0")
    return tokens


def _integer(name: str, text: str, cleaned: str, expected: str) -> int:
    """ASCII digits only (str.isdigit also takes other scripts' digits), and few enough of them
    to be a size."""
    if not (cleaned.isascii() and cleaned.isdigit()):
        shown = text.strip() if len(text.strip()) <= 40 else text.strip()[:40] + "..."
        raise SpecError(f"{name}: expected {expected}, got {quoted(shown)}")
    if len(cleaned.lstrip("0")) > MAX_DIGITS:
        raise SpecError(f"{name}: an integer of more than {MAX_DIGITS} digits is beyond any "
                        "model; expected a size")
    return int(cleaned)


class Design:
    """A model being edited: where it started, and the spec fields given so far.

    ``model()`` and ``report()`` raise SpecError with the line to show for a design that is not
    a model (a field no spec accepts, heads that do not divide d_model, ...)."""

    def __init__(self, start: Model) -> None:
        self.start = start
        self.start_fields: dict[str, Any] = {}
        self.fields: dict[str, Any] = {}
        self.name = ""  # "" means the automatic name (see ``auto_name``)
        self.restart(start)

    def restart(self, start: Model) -> None:
        """Begin again from ``start`` (a preset picked, or the reset key)."""
        self.start = start
        self.start_fields = minimal_fields(start.spec)
        self.fields = dict(self.start_fields)
        self.name = ""

    @property
    def edited(self) -> bool:
        return self.fields != self.start_fields

    @property
    def auto_name(self) -> str:
        """The start's name, with ``-edited`` once a field differs from it."""
        return f"{self.start.name}-edited" if self.edited else self.start.name

    def set(self, name: str, value: Any) -> bool:
        """Give field ``name`` the value ``value`` (None: derive it again); True when the design
        changed. A field turned off (experts 0, no window) drops the fields that only mean
        something with it on, as an option on the command line does."""
        if value is None:
            if name not in self.fields:
                return False
            del self.fields[name]
            return True
        if self.fields.get(name) == value:
            return False
        self.fields = merge(self.fields, {name: value})
        return True

    def model(self) -> Model:
        """The design as a Model (SpecError when it is not one)."""
        name = self.name or self.auto_name
        if not self.edited:
            return self.start._replace(name=name)
        return api.load(None, **self.fields)._replace(
            name=name, origin=f"{self.start.origin}, edited",
            description=f"{self.start.name}, {EDITED}")

    def extra_fields(self) -> dict[str, Any]:
        """The given fields the form has no input for (kept from the start as they are)."""
        return {k: v for k, v in self.fields.items() if k not in FORM_FIELDS}


def report(model: Model, tokens: int | None, dtype: str = DEFAULT_DTYPE,
           kv_dtype: str = DEFAULT_DTYPE) -> api.Report:
    """The figures of ``model`` at ``tokens`` (None: its context); tokens past the context are
    refused with advice that fits the form."""
    from specsheet.errors import TokensOverContext

    try:
        return api.report(model, tokens=tokens, dtype=dtype, kv_dtype=kv_dtype)
    except TokensOverContext as e:
        raise SpecError(f"{e}; lower the tokens or raise the context") from None


def save(model: Model, path: str) -> None:
    """Write ``model`` to ``path`` as the preset YAML ``specsheet convert`` writes, whole or not
    at all (a temporary file renamed into place)."""
    from specsheet.cli.files import write_whole
    from specsheet.sources.convert import to_yaml

    if not path.strip():
        raise SpecError("save: name a file to save to")
    write_whole(path, to_yaml(model, by="specsheet explore"))
