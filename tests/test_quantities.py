"""Limits for ``specsheet check``: every accepted form, and the rejected ones."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specsheet.errors import SpecError
from specsheet.units import parse_quantity, parse_seconds


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("8000000000", "count", 8_000_000_000),
    ("8B", "count", 8_000_000_000),
    ("8b", "count", 8_000_000_000),
    ("20G", "count", 20_000_000_000),
    ("1.5e9", "count", 1_500_000_000),
    ("2.5k", "count", 2_500),
    ("7M", "count", 7_000_000),
    ("1T", "count", 10**12),
    ("16GB", "bytes", 16_000_000_000),
    ("16.06GB", "bytes", 16_060_000_000),
    ("16 GB", "bytes", 16_000_000_000),
    ("1GiB", "bytes", 1_073_741_824),
    ("512MiB", "bytes", 512 * 2**20),
    ("2KiB", "bytes", 2048),
    ("1TiB", "bytes", 2**40),
    ("3KB", "bytes", 3000),
    ("1G", "bytes", 10**9),
    ("100B", "bytes", 100),  # for bytes, B is a byte
    ("1e3", "bytes", 1000),
    ("0", "bytes", 0),
    ("0.5", "count", 0),  # a figure holds against 0.5 exactly when it holds against 0
    # every spelling specsheet itself prints is accepted back
    ("16Gi", "bytes", 16 * 2**30),
    ("20 GFLOP", "count", 20_000_000_000),
    ("285 MFLOP", "count", 285_000_000),
    ("1,024", "count", 1024),
    ("1_024", "bytes", 1024),
    ("1,073,741,824 B", "bytes", 1_073_741_824),
    ("124,439,808", "count", 124_439_808),
    ("124.4M", "count", 124_400_000),
    ("8.03B", "count", 8_030_000_000),
    ("37.7 MB", "bytes", 37_700_000),
    ("16.1 GB", "bytes", 16_100_000_000),
])
def test_accepted_forms(text: str, kind: str, value: int) -> None:
    assert parse_quantity(text, kind, "--max-x") == value  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "kind"), [
    ("", "count"), ("abc", "count"), ("-1", "bytes"), ("8GB", "count"), ("1GiB", "count"),
    ("16 gigs", "bytes"), ("1.2.3", "count"), ("1e999", "bytes"), ("inf", "count"),
    ("nan", "bytes"), ("0x10", "count"), ("10,24", "count"), ("1,,024", "count"),
    (",024", "count"), ("16Gi", "count"), ("16 GFLOP", "bytes"), ("GB", "bytes"),
    ("1_", "count"),
])
def test_rejected_forms_name_the_option_and_the_accepted_forms(text: str, kind: str) -> None:
    with pytest.raises(SpecError, match="option --max-x: .*") as e:
        parse_quantity(text, kind, "--max-x")  # type: ignore[arg-type]
    assert "expected" in str(e.value) or "out of range" in str(e.value)


@given(st.integers(0, 10**30))
def test_plain_integers_are_exact(n: int) -> None:
    assert parse_quantity(str(n), "count", "--max-params") == n
    assert parse_quantity(str(n), "bytes", "--max-kv") == n


@given(st.integers(0, 10**6), st.sampled_from([("KiB", 2**10), ("MiB", 2**20), ("GiB", 2**30),
                                               ("GB", 10**9), ("MB", 10**6)]))
def test_suffixes_multiply_exactly(n: int, suffix: tuple[str, int]) -> None:
    assert parse_quantity(f"{n}{suffix[0]}", "bytes", "--max-kv") == n * suffix[1]


@given(st.integers(min_value=0, max_value=10**17))
def test_every_figure_specsheet_prints_parses_back(n: int) -> None:
    """What a table shows can be pasted into a limit: the exact integer gives the figure, the
    readable form a value within its rounding (three significant digits)."""
    from specsheet.units import exact, human_bytes, human_count, human_flops

    assert parse_quantity(exact(n), "count", "--max-x") == n
    assert parse_quantity(f"{exact(n)} B", "bytes", "--max-x") == n
    for text, kind in ((human_bytes(n), "bytes"), (human_flops(n), "count"),
                       (human_count(n), "count")):
        value = parse_quantity(text, kind, "--max-x")  # type: ignore[arg-type]
        assert abs(value - n) <= n * 0.005 + 1, (text, value, n)


_PREFIXES = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "B": 10**9, "T": 10**12, "P": 10**15}
# the integers each side of where a shown figure gains a digit or a prefix, at every prefix
_EDGES = sorted({m * 10**e + d for e in range(0, 11) for m in (9995, 99949, 99950, 999499,
                                                                 999500, 999949, 999950, 1000)
                 for d in (-1, 0, 1)})


@pytest.mark.parametrize(("n", "si", "count"), [
    (99_961_274_368, "100 GB", "100.0B"),  # an H100 NVL's memory: not 100.0 GB
    (999_600_000, "1.00 GB", "999.6M"),  # not 1000 MB
    (9_996_000_000, "10.0 GB", "10.0B"),  # not 10.00 GB
    (999_499, "999 KB", "999.5K"),
    (999_950, "1.00 MB", "1.00M"),  # not 1000.0K
    (248_879_616, "249 MB", "248.9M"),
    (8_030_261_248, "8.03 GB", "8.03B"),
])
def test_a_figure_is_said_as_rounded(n: int, si: str, count: str) -> None:
    from specsheet.units import human_bytes, human_count

    assert (human_bytes(n), human_count(n)) == (si, count)


@pytest.mark.parametrize(("value", "base", "text"), [
    (8_790, 1_000, "8.79x"), (24, 1, "24x"), (155, 10_000, "0.0155x"), (1, 10_000, "<0.001x"),
    (999_499, 1_000, "999x"), (999_500, 1_000, "1,000x"),  # not 1e+03x
    (671_026_404_352, 124_439_808, "5,392x"),  # deepseek-v3 over gpt2-small: not 5.39e+03x
    (10**16, 1, "1.00e+16x"),
])
def test_a_ratio_is_said_without_an_exponent_below_the_prefixes(value: int, base: int,
                                                                 text: str) -> None:
    from specsheet.units import ratio

    assert ratio(value, base) == text


@pytest.mark.parametrize(("value", "text"), [
    (0.03218, "0.03218"), (39.2448, "39.24"), (3354.2, "3,354"), (50_000.0, "50,000"),
    (900_000.0, "900,000"), (12_345.6, "12,346"), (9_999.6, "10,000"),
])
def test_a_measured_figure_has_four_significant_digits_and_no_exponent(value: float,
                                                                       text: str) -> None:
    from specsheet.units import significant

    assert significant(value) == text


@given(st.one_of(st.integers(1000, 10**17), st.sampled_from(_EDGES[20:])))
def test_a_readable_figure_has_the_digits_it_promises(n: int) -> None:
    """Three significant digits with a prefix (bytes, FLOPs); two decimals below 10 and one
    from there (counts); each between 1 and 1000 of its prefix as shown, and the figure
    rounded to its last digit."""
    from specsheet.units import human_bytes, human_count

    number, unit = human_bytes(n).split(" ")
    digits = number.replace(".", "").lstrip("0")
    assert len(digits) == 3, (n, number)
    said = [(number, unit[:-1], len(number.partition(".")[2]))]
    if n < 999_950_000_000_000:  # a count past 999.9T is said as 1.00e+15
        count = human_count(n)
        decimals = len(count.split(".")[1][:-1])
        assert decimals == (2 if float(count[:-1]) < 10 else 1), (n, count)
        said.append((count[:-1], count[-1], decimals))
    for shown, prefix, places in said:
        value = float(shown)
        assert 1 <= value < 1000, (n, shown, prefix)
        error = abs(value * _PREFIXES[prefix] - n)
        assert error <= 0.5 * 10**-places * _PREFIXES[prefix] * (1 + 1e-9), (n, shown, prefix)


@pytest.mark.parametrize(("text", "seconds"), [
    ("1", 1.0), ("0.05", 0.05), ("1e-3", 0.001), ("50ms", 0.05), ("50 ms", 0.05),
    ("500MS", 0.5), ("1.5s", 1.5), ("2 s", 2.0), (".5ms", 0.0005), ("5e1ms", 0.05),
    ("1.234ms", 0.001234), ("-5ms", -0.005),  # a sign is read; the limit is refused after
])
def test_seconds_read_as_the_tables_print_times(text: str, seconds: float) -> None:
    """What a table shows (``34.7 ms``) can be given as a time limit: ``50ms`` is the very
    float ``0.05`` is, not 50 x 0.001 rounded twice."""
    assert parse_seconds(text, "--max-tpot") == seconds


@given(st.decimals(min_value=0, max_value=10**6, places=6, allow_nan=False))
def test_milliseconds_are_the_float_of_the_same_seconds(number: object) -> None:
    from decimal import Decimal

    assert isinstance(number, Decimal)
    assert parse_seconds(f"{number}ms", "--max-ttft") == float(number / 1000)


@pytest.mark.parametrize("text", ["50xs", "ms", "", "1 m s", "1e99999ms", "fast"])
def test_rejected_times_name_the_option_and_the_forms(text: str) -> None:
    with pytest.raises(SpecError, match="option --max-tpot: .*(not a time; expected seconds "
                                        r"\(0.05\), or a number with ms or s|out of range)"):
        parse_seconds(text, "--max-tpot")
