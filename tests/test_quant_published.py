"""specsheet's memory.weights_bytes against the bytes real quantized checkpoints hold.

Each row of tests/data/quantized_checkpoints.yaml is one published checkpoint (or llama.cpp's
published table) with the figure exactly as published, its precision and its source. The checks
take the precision at its word and nothing more:

- an exact tensor total (a sharded checkpoint's index.json ``total_size``) must equal ours;
- an exact GGUF file size minus ours is the file's header (magic, key-value metadata with the
  tokenizer, tensor infos, padding to the 32-byte alignment). No published source states that
  size, so it is derived, and then it must be a whole number of alignment units, lie between a
  lower bound counted from what the header must hold (every tensor info, 17 bytes a token at
  least) and a generous upper one, and be the same for every file of one repository, whose
  metadata differ only in ``general.file_type``: three quant levels of one repository agreeing
  on one header is a check to the byte of the differences between their tensor bytes;
- a rounded figure (llama.cpp's printed model size or buffer size, a README's GB) must contain
  ours within half its last digit (plus the safetensors headers for file sizes).

Tensors a checkpoint holds that specsheet does not count for the model are listed per row and
computed here from the model's shape, not taken from specsheet: Llama 3.1's ``rope_freqs``
(head_dim / 2 F32 values) and the fp16 zero bias that AutoGPTQ (2023-05-24 to 2024-03-25) and
optimum (until 2024-04-29) wrote on every quantized Linear.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

import specsheet
from specsheet.model.spec import ModelSpec
from specsheet.quant import FORMATS, quantized_bytes
from specsheet.sources.presets import preset_index

ROOT = Path(__file__).resolve().parent.parent
ROWS: list[dict[str, Any]] = yaml.safe_load(
    (ROOT / "tests" / "data" / "quantized_checkpoints.yaml").read_text(encoding="utf-8"))["rows"]
KINDS = {"tensor_bytes", "gguf_file_bytes", "tensor_size", "file_size", "bits_per_weight"}
UNITS = {"bytes": 1, "MiB": 2**20, "GiB": 2**30, "GB": 10**9}
GGUF_ALIGNMENT = 32  # gguf-py GGUF_DEFAULT_ALIGNMENT; none of these files sets general.alignment
GGUF_FIXED_HEADER = 4 + 4 + 8 + 8  # magic, version, tensor count, key-value count
SAFETENSORS_HEADERS_MAX = 2**20  # the JSON headers of a checkpoint's files, at most


def _rows(*kinds: str) -> list[Any]:
    return [pytest.param(row, id=row["id"]) for row in ROWS if row["kind"] in kinds]


def _spec(row: dict[str, Any]) -> ModelSpec:
    return specsheet.load(row["model"]).spec


def ours(row: dict[str, Any]) -> int:
    """memory.weights_bytes through the public API, as `specsheet count --quant` reports it."""
    report = specsheet.report(specsheet.load(row["model"]), quant=row["quant"],
                              group_size=row.get("group_size"))
    return report.to_dict()["memory"]["weights_bytes"]  # type: ignore[no-any-return]


def extra(row: dict[str, Any]) -> tuple[int, int]:
    """(bytes, elements) of the tensors the checkpoint holds beyond specsheet's count."""
    spec = _spec(row)
    size = elements = 0
    for name in row.get("extra", []):
        if name == "rope_freqs":  # rope_freqs.weight, F32 [head_dim / 2]
            elements += spec.head_dim // 2
            size += 4 * (spec.head_dim // 2)
        elif name == "gptq_zero_bias":  # an F16 [N] bias on every quantized Linear
            q, kv = spec.heads * spec.head_dim, spec.kv_heads * spec.head_dim
            mlp = (2 if spec.mlp == "gated" else 1) * spec.d_ff + spec.d_model
            outputs = q + 2 * kv + spec.d_model + mlp
            elements += spec.layers * outputs
            size += 2 * spec.layers * outputs
        else:
            raise AssertionError(f"unknown extra tensor {name!r}")
    return size, elements


def tensor_bytes(row: dict[str, Any]) -> int:
    return ours(row) + extra(row)[0]


def gguf_header(row: dict[str, Any]) -> int:
    """The published file size minus the tensor bytes: what the header must then be."""
    return int(row["published"]) - tensor_bytes(row)


def _within(value: int | Fraction, published: str, unit: int) -> bool:
    """value lies within half a unit of the published figure's last digit."""
    decimals = len(published.partition(".")[2])
    half = Fraction(unit, 2 * 10**decimals)
    return abs(value - Fraction(published) * unit) <= half


# ---- the data ------------------------------------------------------------------------------

@pytest.mark.parametrize("row", _rows(*KINDS))
def test_every_row_says_what_where_and_how_precise(row: dict[str, Any]) -> None:
    assert row["kind"] in KINDS and row["unit"] in (*UNITS, "bpw")
    assert row["quant"] in FORMATS and row["model"] in preset_index()
    assert row["source"].startswith("https://") and row["precision"] and row["toolchain"]
    Fraction(row["published"])  # a number, as published
    if row["kind"] in ("tensor_bytes", "gguf_file_bytes"):
        assert row["unit"] == "bytes" and row["published"].isdigit()


def test_the_table_covers_what_the_issue_asks_for() -> None:
    checkpoints = [row for row in ROWS if row["kind"] != "bits_per_weight"]
    assert len(checkpoints) >= 10
    gguf = {row["model"] for row in checkpoints if row["quant"].startswith("gguf-")}
    assert {"llama3.1-8b", "llama3-8b", "mistral-7b", "qwen2.5-7b"} <= gguf
    assert len({row["quant"] for row in checkpoints if row["quant"].startswith("gguf-")}) >= 4
    assert {"awq-int4", "gptq-int4", "mxfp4"} <= {row["quant"] for row in checkpoints}
    assert any(row["kind"] == "gguf_file_bytes" for row in checkpoints)


# ---- exact figures -------------------------------------------------------------------------

@pytest.mark.parametrize("row", _rows("tensor_bytes"))
def test_exact_tensor_bytes_are_ours_to_the_byte(row: dict[str, Any]) -> None:
    assert tensor_bytes(row) == int(row["published"])


@pytest.mark.parametrize("row", _rows("gguf_file_bytes"))
def test_gguf_file_size_minus_our_tensor_bytes_is_a_possible_header(row: dict[str, Any]) -> None:
    spec = _spec(row)
    stored = quantized_bytes(spec, row["quant"]).tensors
    # each tensor's data starts on the alignment; when every size is a multiple of it, the
    # data section is exactly the tensor bytes and starts where the header's padding ends
    assert all(t.nbytes % GGUF_ALIGNMENT == 0 for t in stored)
    header = gguf_header(row)
    assert header % GGUF_ALIGNMENT == 0
    infos = sum(8 + len(t.name.encode()) + 4 + 8 * len(t.shape) + 4 + 8 for t in stored)
    # a SentencePiece vocabulary: tokens (8-byte length + at least 1 byte), scores F32, types I32
    tokenizer = row["tokenizer"]
    assert tokenizer.startswith("SentencePiece") and f"{spec.vocab:,} tokens" in tokenizer
    lower = GGUF_FIXED_HEADER + infos + spec.vocab * (8 + 1 + 4 + 4)
    upper = lower + spec.vocab * 15 + 64 * 1024  # tokens of 16 bytes on average; 64 KiB of keys
    assert lower <= header <= upper


def test_gguf_files_of_one_repository_have_one_header() -> None:
    headers: dict[str, list[int]] = defaultdict(list)
    for row in ROWS:
        if row["kind"] == "gguf_file_bytes":
            headers[row["header_group"]].append(gguf_header(row))
    assert headers and all(len(sizes) >= 2 for sizes in headers.values())
    assert {group: set(sizes) for group, sizes in headers.items()} == {
        group: {sizes[0]} for group, sizes in headers.items()}


# ---- rounded figures -----------------------------------------------------------------------

@pytest.mark.parametrize("row", _rows("tensor_size"))
def test_llama_cpps_printed_tensor_size_contains_ours(row: dict[str, Any]) -> None:
    size = tensor_bytes(row)
    assert _within(size, row["published"], UNITS[row["unit"]])
    if "bpw" in row:  # llama.cpp: tensor bytes x 8 / tensor elements of the file
        elements = quantized_bytes(_spec(row), row["quant"]).params + extra(row)[1]
        assert _within(Fraction(size * 8, elements), row["bpw"], 1)


def _fits_file_size(size: int, row: dict[str, Any]) -> bool:
    """The files, tensors plus JSON headers (0 to SAFETENSORS_HEADERS_MAX bytes), round to the
    published size."""
    unit = UNITS[row["unit"]]
    decimals = len(row["published"].partition(".")[2])
    published, half = Fraction(row["published"]) * unit, Fraction(unit, 2 * 10**decimals)
    return published - half <= size + SAFETENSORS_HEADERS_MAX and size <= published + half


@pytest.mark.parametrize("row", _rows("file_size"))
def test_published_file_size_contains_ours_plus_headers(row: dict[str, Any]) -> None:
    assert _fits_file_size(tensor_bytes(row), row)


@pytest.mark.parametrize("row", _rows("bits_per_weight"))
def test_llama_cpps_bits_per_weight_table(row: dict[str, Any]) -> None:
    size = tensor_bytes(row)
    elements = quantized_bytes(_spec(row), row["quant"]).params + extra(row)[1]
    decimals = len(row["published"].partition(".")[2])
    assert f"{size * 8 / elements:.{decimals}f}" == row["published"]
    assert _within(size, row["size_gib"], 2**30)


def test_the_gptq_rows_tell_the_zero_biases_apart() -> None:
    """Without the zero biases the 2023 GPTQ files do not fit their published sizes: the rows
    decide which layout the files hold, they are not fitted to it."""
    rows = [row for row in ROWS if "gptq_zero_bias" in row.get("extra", [])]
    misses = [row["id"] for row in rows if not _fits_file_size(ours(row), row)]
    assert len(rows) >= 4 and len(misses) >= 3


# ---- docs ----------------------------------------------------------------------------------

def test_docs_table_lists_every_row_with_our_figure() -> None:
    docs = (ROOT / "docs" / "quantization.md").read_text(encoding="utf-8")
    for row in ROWS:
        assert f"`{row['id']}`" in docs, row["id"]
        assert f"{ours(row):,}" in docs, row["id"]
