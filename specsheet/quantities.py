"""Parsing the limits given to ``specsheet check``: 8B, 16GB, 1GiB, 20G, 1.5e9.

A limit is kept as an exact integer: a figure (always an integer) holds against a limit x
exactly when it holds against floor(x), so 16.06GB and 1.5e9 lose nothing.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Literal

from specsheet.errors import SpecError

QuantityKind = Literal["count", "bytes"]

_SI = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "p": 10**15}
_BINARY = {"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "pib": 2**50}
_SUFFIXES: dict[QuantityKind, dict[str, int]] = {
    # counts (parameters, FLOPs): B is a billion, as in "8B parameters"
    "count": {"": 1, **_SI, "b": 10**9},
    # bytes: B is a byte; KB, MB, GB, TB are SI, KiB ... TiB binary
    "bytes": {"": 1, "b": 1, **_SI, **{f"{p}b": v for p, v in _SI.items()}, **_BINARY},
}
_FORMS: dict[QuantityKind, str] = {
    "count": "an integer, 1.5e9, or a number with k, M, G (or B), T: 8B, 20G, 1.5e9",
    "bytes": "an integer, 1.5e9, or a number with KB, MB, GB, TB (SI), KiB, MiB, GiB, TiB "
             "(binary) or k, M, G, T: 16GB, 1GiB",
}
_QUANTITY = re.compile(r"(?P<number>[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(?P<suffix>[A-Za-z]*)")


def parse_quantity(text: str, kind: QuantityKind, option: str) -> int:
    """The largest integer not above ``text`` read as a quantity of ``kind``.

    Raises SpecError naming ``option`` and the accepted forms when ``text`` is not one.
    """
    match = _QUANTITY.fullmatch(text.strip())
    multiplier = _SUFFIXES[kind].get(match["suffix"].lower()) if match else None
    if match is None or multiplier is None:
        raise SpecError(f"option {option}: {text!r} is not a quantity; expected {_FORMS[kind]}")
    exponent = re.search(r"[eE]([+-]?[0-9]+)", match["number"])
    if exponent and abs(int(exponent[1])) > 100:
        raise SpecError(f"option {option}: {text!r} is out of range")
    return math.floor(Fraction(match["number"]) * multiplier)
