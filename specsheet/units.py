"""Quantities both ways: numbers as a person writes them (rendering only; the arithmetic stays
exact), and limits as a person types them (8B, 16GB, 1GiB, 20 GFLOP), parsed to exact integers.

A limit is kept as an exact integer: a figure (always an integer) holds against a limit x
exactly when it holds against floor(x), so 16.06GB and 1.5e9 lose nothing.
"""

from __future__ import annotations

from typing import Literal

from specsheet.errors import SpecError

_COUNT_PREFIXES = ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "K"))
_SI_PREFIXES = ((10**15, "P"), (10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "K"))


def exact(n: int) -> str:
    """An integer with thousands separators: 124,439,808."""
    return f"{n:,}"


def _beyond_prefixes(n: int) -> str:
    """Numbers past the largest prefix, in scientific notation without leaving the integers
    (floats overflow near 1e308; a model of 10^30 layers is bad input, not a crash)."""
    from decimal import Decimal

    return f"{Decimal(n):.3g}"


def human_count(n: int) -> str:
    """A parameter count: 124.4M, 85.1M, 8.03B, 7.68K, 512."""
    if abs(n) >= 10**15:
        return _beyond_prefixes(n)
    for scale, prefix in _COUNT_PREFIXES:
        if abs(n) >= scale:
            value = n / scale
            return f"{value:.1f}{prefix}" if abs(value) >= 10 else f"{value:.2f}{prefix}"
    return str(n)


def _three_digits(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def human_si(n: int, unit: str) -> str:
    """Three significant digits with an SI prefix (1 KB = 1,000 B): 249 MB, 1.07 GB, 247 MFLOP."""
    if abs(n) >= 10**18:
        return f"{_beyond_prefixes(n)} {unit}"
    for scale, prefix in _SI_PREFIXES:
        if abs(n) >= scale:
            return f"{_three_digits(n / scale)} {prefix}{unit}"
    return f"{n} {unit}"


def human_bytes(n: int) -> str:
    """Bytes in SI units: 248,879,616 -> 249 MB."""
    return human_si(n, "B")


def human_flops(n: int) -> str:
    """FLOPs in SI units: 247,100,928 -> 247 MFLOP."""
    return human_si(n, "FLOP")


def percent(part: int, whole: int) -> str:
    """A share with one decimal; shares that round to 0 but are not 0 read '<0.1%'."""
    if whole == 0:
        return "-"
    share = 100 * part / whole
    if 0 < share < 0.05:
        return "<0.1%"
    return f"{share:.1f}%"


def ratio(value: int, base: int) -> str:
    """``value / base`` with three significant digits: 8.79x, 0.0155x; below 0.001, <0.001x."""
    if base == 0:
        return "-"
    from fractions import Fraction

    r = Fraction(value, base)
    if 0 < r < Fraction(1, 1000):
        return "<0.001x"
    if r >= 10**15:
        return f"{_beyond_prefixes(value // base)}x"
    return f"{float(r):.3g}x"


def bits_per_weight(weights_bytes: int, params: int) -> str:
    """Stored bits per parameter with four decimals, as llama.cpp prints them: 4.8944."""
    return f"{weights_bytes * 8 / params:.4f}"


def signed_percent(value: float) -> str:
    """A relative error in percent with its sign: +0.0%, -31.2%."""
    return f"{value:+.1f}%"


# ---- parsing limits ---------------------------------------------------------------------------

QuantityKind = Literal["count", "bytes"]

_SI = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "p": 10**15}
_BINARY = {"ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40, "pi": 2**50}
_SUFFIXES: dict[QuantityKind, dict[str, int]] = {
    # counts (parameters, FLOPs): B is a billion, as in "8B parameters"
    "count": {"": 1, **_SI, "b": 10**9},
    # bytes: B is a byte; KB, MB, GB, TB are SI; Ki, KiB ... binary
    "bytes": {"": 1, "b": 1, **_SI, **{f"{p}b": v for p, v in _SI.items()}, **_BINARY,
              **{f"{p}b": v for p, v in _BINARY.items()}},
}
# units a figure is printed with, allowed after the prefix: 20 GFLOP, 8.03B params
_UNITS: dict[QuantityKind, tuple[str, ...]] = {
    "count": ("flops", "flop", "parameters", "params"),
    "bytes": ("bytes", "byte"),
}
_FORMS: dict[QuantityKind, str] = {
    "count": "an integer (1,024 and 1_024 too), 1.5e9, or a number with k, M, G (or B), T, P "
             "and an optional unit: 8B, 20G, 20 GFLOP, 1.5e9",
    "bytes": "an integer (1,024 and 1_024 too), 1.5e9, or a number with KB, MB, GB, TB (SI), "
             "Ki, Mi, Gi, Ti or KiB, MiB, GiB, TiB (binary), or k, M, G, T: 16GB, 16 GB, 1GiB, "
             "16Gi",
}
_QUANTITY = (r"(?P<number>(?:[0-9](?:[0-9]|[,_](?=[0-9]))*)?\.?[0-9]+(?:[eE][+-]?[0-9]+)?)"
             r"\s*(?P<suffix>[A-Za-z]*)")


def parse_quantity(text: str, kind: QuantityKind, option: str) -> int:
    """The largest integer not above ``text`` read as a quantity of ``kind``.

    Every spelling specsheet prints is accepted: thousands separators (``1,024``, ``1_024``),
    SI and binary prefixes (``16GB``, ``16Gi``, ``1GiB``), a unit after them (``20 GFLOP``).
    Raises SpecError naming ``option`` and the accepted forms when ``text`` is not one.
    """
    import math
    import re
    from fractions import Fraction

    match = re.fullmatch(_QUANTITY, text.strip())
    multiplier = None
    if match:
        suffix = match["suffix"].lower()
        for unit in _UNITS[kind]:
            if suffix.endswith(unit):
                suffix = suffix.removesuffix(unit)
                break
        multiplier = _SUFFIXES[kind].get(suffix)
        whole = re.split(r"[.eE]", match["number"])[0]
        if "," in whole and not re.fullmatch(r"[0-9]{1,3}(,[0-9]{3})+", whole):
            multiplier = None  # commas group thousands: 1,024 and 16,000,000, not 10,24
    if match is None or multiplier is None:
        raise SpecError(f"option {option}: {text!r} is not a quantity; expected {_FORMS[kind]}")
    number = match["number"].replace(",", "").replace("_", "")
    exponent = re.search(r"[eE]([+-]?[0-9]+)", number)
    if exponent and abs(int(exponent[1])) > 100 or len(number) > 120:
        raise SpecError(f"option {option}: {text!r} is out of range")
    return math.floor(Fraction(number) * multiplier)
