"""Quantities both ways: numbers as a person writes them (rendering only; the arithmetic stays
exact), and limits as a person types them (8B, 16GB, 1GiB, 20 GFLOP), parsed to exact integers.

A limit is kept as an exact integer: a figure (always an integer) holds against a limit x
exactly when it holds against floor(x), so 16.06GB and 1.5e9 lose nothing.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from specsheet.errors import SpecError, quoted

_COUNT_PREFIXES = ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "K"))
_SI_PREFIXES = ((10**15, "P"), (10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "K"))


def exact(n: int) -> str:
    """An integer with thousands separators: 124,439,808."""
    return f"{n:,}"


def _beyond_prefixes(n: int) -> str:
    """Numbers past the largest prefix, in scientific notation without leaving the integers
    (floats overflow near 1e308; a model of 10^30 layers is bad input, not a crash)."""
    from decimal import Decimal  # lazy, as fractions below: a few ms of start-up

    return f"{Decimal(n):.3g}"


# Each prefix with the least magnitude that is said in it: a count is said with one decimal
# from 10 (124.4M), so 999.95K is 1.00M; three significant digits (249 MB) make 999.5 MB 1.00
# GB. Integers, so that the step is exact: 2,000 x |n| >= 1,999 x scale is |n| >= 0.9995 x scale.
_COUNT_STEPS = tuple((19_999 * scale, scale, prefix) for scale, prefix in _COUNT_PREFIXES)
_SI_STEPS = tuple((1_999 * scale, scale, prefix) for scale, prefix in _SI_PREFIXES)


def human_count(n: int) -> str:
    """A parameter count: 124.4M, 85.1M, 8.03B, 7.68K, 512 (as rounded: 9.996M is 10.0M and
    999.96K 1.00M)."""
    magnitude = 20_000 * abs(n)
    if magnitude >= 19_999 * 10**15:
        return _beyond_prefixes(n)
    for least, scale, prefix in _COUNT_STEPS:
        if magnitude >= least:
            value = n / scale
            return f"{value:.2f}{prefix}" if abs(value) < 9.995 else f"{value:.1f}{prefix}"
    return str(n)


def _three_digits(value: float) -> str:
    """Three significant digits as rounded: 1.07, 24.2, 249; 10.0 (of 9.996), 100 (of 99.96)."""
    size = abs(value)
    if size < 9.995:
        return f"{value:.2f}"
    return f"{value:.1f}" if size < 99.95 else f"{value:.0f}"


def human_si(n: int, unit: str) -> str:
    """Three significant digits with an SI prefix (1 KB = 1,000 B): 249 MB, 1.07 GB, 247 MFLOP
    (as rounded: 999.6 MB is 1.00 GB)."""
    magnitude = 2_000 * abs(n)
    if magnitude >= 1_999 * 10**18:
        return f"{_beyond_prefixes(n)} {unit}"
    for least, scale, prefix in _SI_STEPS:
        if magnitude >= least:
            return f"{_three_digits(n / scale)} {prefix}{unit}"
    return f"{n} {unit}"


def significant(value: float, digits: int = 4) -> str:
    """A measured figure (a time, a rate) to ``digits`` significant digits, its thousands
    separated, and whole from where that would take an exponent: 0.03218, 39.24, 3,354,
    50,000 (not 5e+04)."""
    text = f"{value:,.{digits}g}"
    return f"{value:,.0f}" if "e+" in text else text


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
    """``value / base`` with three significant digits: 8.79x, 0.0155x; below 0.001, <0.001x;
    from 999.5 the whole number, rounded: 5,394x (not 5.39e+03x)."""
    if base == 0:
        return "-"
    from fractions import Fraction

    r = Fraction(value, base)
    if 0 < r < Fraction(1, 1000):
        return "<0.001x"
    if r >= 10**15:
        return f"{_beyond_prefixes(value // base)}x"
    if abs(r) >= Fraction(1999, 2):
        return f"{round(r):,}x"
    return f"{float(r):.3g}x"


def bits_per_weight(weights_bytes: int, params: int) -> str:
    """Stored bits per parameter with four decimals, as llama.cpp prints them: 4.8944."""
    return f"{weights_bytes * 8 / params:.4f}"


def signed_percent(value: float) -> str:
    """A relative error in percent with its sign: +0.0%, -31.2%."""
    return f"{value:+.1f}%"


# ---- parsing limits ---------------------------------------------------------------------------

QuantityKind = Literal["count", "bytes", "tokens"]

_SI = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "p": 10**15}
_BINARY = {"ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40, "pi": 2**50}
_SUFFIXES: dict[QuantityKind, dict[str, int]] = {
    # counts (parameters, FLOPs): B is a billion, as in "8B parameters"
    "count": {"": 1, **_SI, "b": 10**9},
    # bytes: B is a byte; KB, MB, GB, TB are SI; Ki, KiB ... binary
    "bytes": {"": 1, "b": 1, **_SI, **{f"{p}b": v for p, v in _SI.items()}, **_BINARY,
              **{f"{p}b": v for p, v in _BINARY.items()}},
    # tokens: k and M as context lengths are named (4k = 4,096; 128k = 131,072), Ki and Mi too
    "tokens": {"": 1, "k": 2**10, "m": 2**20, "ki": 2**10, "mi": 2**20},
}
# units a figure is printed with, allowed after the prefix: 20 GFLOP, 8.03B params
_UNITS: dict[QuantityKind, tuple[str, ...]] = {
    "count": ("flops", "flop", "parameters", "params"),
    "bytes": ("bytes", "byte"),
    "tokens": ("tokens", "token"),
}
_FORMS: dict[QuantityKind, str] = {
    "count": "an integer (1,024 and 1_024 too), 1.5e9, or a number with k, M, G (or B), T, P "
             "and an optional unit: 8B, 20G, 20 GFLOP, 1.5e9",
    "bytes": "an integer (1,024 and 1_024 too), 1.5e9, or a number with KB, MB, GB, TB (SI), "
             "Ki, Mi, Gi, Ti or KiB, MiB, GiB, TiB (binary), or k, M, G, T: 16GB, 16 GB, 1GiB, "
             "16Gi",
    "tokens": "an integer (1024 or 1_024), or a number with k or M as context lengths are "
              "named (binary: 4k = 4,096, 128k = 131,072, 1M = 1,048,576)",
}
_QUANTITY = (r"(?P<number>(?:[0-9](?:[0-9]|[,_](?=[0-9]))*)?\.?[0-9]+(?:[eE][+-]?[0-9]+)?)"
             r"\s*(?P<suffix>[A-Za-z]*)")


def parse_quantity(text: str, kind: QuantityKind, field: str) -> int:
    """The largest integer not above ``text`` read as a quantity of ``kind``.

    Every spelling specsheet prints is accepted: thousands separators (``1,024``, ``1_024``),
    SI and binary prefixes (``16GB``, ``16Gi``, ``1GiB``), a unit after them (``20 GFLOP``).
    Raises SpecError with ``field`` (the input's name) and the accepted forms when ``text``
    is not one.
    """
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
        raise _bad(field, f"{quoted(text)} is not a quantity; expected {_FORMS[kind]}")
    number = match["number"].replace(",", "").replace("_", "")
    exponent = re.search(r"[eE]([+-]?[0-9]+)", number)
    if exponent and abs(int(exponent[1])) > 100 or len(number) > 120:
        raise _bad(field, f"{quoted(text)} is out of range")
    if number.isdigit():  # an integer: no need of fractions (and its import, ~5 ms)
        return int(number) * multiplier
    from fractions import Fraction

    return math.floor(Fraction(number) * multiplier)


_SECONDS = r"(?P<mantissa>[+-]?[0-9]*\.?[0-9]+)(?:[eE](?P<exponent>[+-]?[0-9]+))?\s*(?P<unit>ms|s)"


def parse_seconds(text: str, field: str) -> float:
    """``text`` read as a time in seconds: a number (``0.05``, ``1e-3``, anything ``float``
    reads) or a number with a unit, ``ms`` or ``s`` (``50ms``, ``1.5 s``), as the tables print
    times. ``50ms`` is the float ``0.05`` is: the number's exponent lowered by 3, read once.
    Raises SpecError with ``field`` and the accepted forms when ``text`` is neither."""
    try:
        return float(text)
    except ValueError:
        pass
    match = re.fullmatch(_SECONDS, text.strip(), re.IGNORECASE)
    if match is None:
        raise _bad(field, f"{quoted(text)} is not a time; expected seconds (0.05), or a number "
                          "with ms or s: 50ms, 1.5s")
    exponent = int(match["exponent"] or 0) - (3 if match["unit"].lower() == "ms" else 0)
    if abs(exponent) > 400:
        raise _bad(field, f"{quoted(text)} is out of range")
    return float(f"{match['mantissa']}e{exponent}")


# ---- parsing series (the axes of a sweep) -----------------------------------------------------

MAX_POINTS = 10_000  # points in a sweep, all axes together


def parse_series(text: str, kind: QuantityKind, field: str, minimum: int = 1,
                 limit: int = MAX_POINTS) -> list[int]:
    """The values of an axis, in order and without repeats: a comma list (``12,24,48``), a
    geometric range ``START:STOP:xFACTOR`` (``1k:128k:x2``; ``*FACTOR`` too) or an arithmetic
    range ``START:STOP:+STEP`` (``+`` optional). A range starts at START and stops at the last
    value not above STOP; a factor may be a fraction (x1.5), its values rounded down. Each number
    is a quantity of ``kind`` (see parse_quantity); commas separate values, so write 1_024 for a
    thousands separator. Raises SpecError with ``field`` (the input's name); more than
    ``limit`` values is one.
    """
    text = text.strip()
    if ":" not in text:
        items = [item.strip() for item in text.split(",")]
        if not all(items):
            raise _bad(field, f"{quoted(text)} has an empty value; expected values "
                            "separated by commas (12,24,48) or a range (1k:128k:x2, 512:4096:+512)")
        values = [_at_least(parse_quantity(item, kind, field), minimum, field, item)
                  for item in items]
        return _checked_count(list(dict.fromkeys(values)), text, field, limit)
    parts = text.split(":")
    if len(parts) != 3 or not all(p.strip() for p in parts):
        raise _bad(field, f"{quoted(text)} is not a range; expected START:STOP:xFACTOR "
                        "(1k:128k:x2) or START:STOP:+STEP (512:4096:+512)")
    start_text, stop_text, step_text = (p.strip() for p in parts)
    start = _at_least(parse_quantity(start_text, kind, field), minimum, field, start_text)
    stop = parse_quantity(stop_text, kind, field)
    if stop < start:
        raise _bad(field, f"the range {quoted(text)} stops ({stop:,}) below where it "
                        f"starts ({start:,}); expected START <= STOP")
    geometric = step_text[0] in "xX*"
    if geometric:
        factor_text = step_text[1:].strip()
        factor: Any  # an int, or a Fraction for x1.5 (fractions is imported only then)
        if factor_text.isascii() and factor_text.isdigit():
            factor = int(factor_text)
        else:
            from fractions import Fraction

            try:
                factor = Fraction(factor_text)
            except (ValueError, ZeroDivisionError):
                raise _bad(field, f"{quoted(step_text)} is not a factor; expected x "
                                "and a number above 1 (x2, x1.5)") from None
        if factor <= 1:
            raise _bad(field, f"the factor {factor_text} of {quoted(text)} would never "
                            "reach the stop; expected a factor above 1 (x2, x1.5)")
        if start == 0:
            raise _bad(field, f"a geometric range {quoted(text)} cannot start at 0")
        count = math.floor(math.log(stop / start) / math.log(factor) + 1e-9) + 1
        if count > limit:
            raise _bad(field, f"{quoted(text)} gives {count:,} points, more than "
                            f"{limit:,}; take a larger factor or step")
        steps: list[int] = []
        exact = type(factor)(start)  # an int, or a Fraction: exact either way
        while exact <= stop:
            steps.append(int(exact))  # floor: exact is positive
            if len(steps) > limit:
                break
            exact *= factor
        return _checked_count(list(dict.fromkeys(steps)), text, field, limit)
    negative = step_text.startswith("-")
    step = 0 if negative else parse_quantity(step_text.removeprefix("+"), kind, field)
    if step <= 0:
        raise _bad(field, f"the step {step_text} of {quoted(text)} would never reach "
                        "the stop; expected a step above 0 (+512) or a factor (x2)")
    count = (stop - start) // step + 1
    if count > limit:
        wider = -(-(stop - start) // (limit - 1))
        raise _bad(field, f"{quoted(text)} gives {count:,} points, more than "
                        f"{limit:,}; take a larger step ({start_text}:{stop_text}:+{wider}) or "
                        f"a factor ({start_text}:{stop_text}:x2)")
    return list(range(start, stop + 1, step))


def _at_least(value: int, minimum: int, field: str, text: str) -> int:
    if value < minimum:
        expected = "a positive integer" if minimum == 1 else f"at least {minimum}"
        raise _bad(field, f"expected {expected}, got {quoted(text)}")
    return value


def _checked_count(values: list[int], text: str, field: str, limit: int) -> list[int]:
    if len(values) > limit:
        raise _bad(field, f"{quoted(text)} gives more than {limit:,} points; take a "
                        "larger factor or step, or fewer values")
    return values


def _bad(field: str, message: str) -> SpecError:
    """The error about input ``field``; the CLI names the option that gave it. A caller that
    passes an option as it is typed (two dashes and its name) gets it named as an option."""
    return SpecError(message, field=f"option {field}" if field.startswith("-") else field)
