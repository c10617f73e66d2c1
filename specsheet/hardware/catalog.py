"""The Accelerator record, its validation, and the built-in catalog.

Every figure is an integer in base units: bytes, bytes per second, FLOP per second (dense, never
the 2:4-sparse figure), each with the vendor's source. ``memory_bytes`` is what the device
reports where that differs from the marketing figure (an "80 GB" H100 reports 79.6 GiB).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, did_you_mean, quoted

#: Element types a peak may be given for, from widest to narrowest.
PEAK_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")

#: The fields of a hardware file: name -> what is expected, for messages.
REQUIRED = {
    "memory_bytes": "the device memory in bytes (an integer, or a quantity such as 80GiB)",
    "bandwidth_bytes_per_s": "the memory bandwidth in bytes per second (3.35e12, 3.35TB)",
    "peak_flops_per_s": "a mapping of element type to dense peak FLOP/s, e.g. {bf16: 989.4e12}",
}
OPTIONAL = {
    "name": "a lowercase name with hyphens",
    "label": "the vendor's product name",
    "vendor": "the vendor",
    "interconnect": "the link between GPUs, e.g. NVLink 4",
    "interconnect_bytes_per_s": "the GPU-to-GPU bandwidth per GPU, one way, in bytes per second",
    "cuda_memory_bytes": "the total CUDA reports (cudaMemGetInfo), which vLLM multiplies by "
                         "its memory utilization, in bytes",
    "sources": "a mapping of field to the datasheet that gives it",
    "notes": "free text",
}


class Accelerator(NamedTuple):
    """One accelerator (a GPU, TPU or NPU package as its software sees one device). A named
    tuple, not a frozen dataclass: the class is built in a quarter of the time (35 against
    140 us) as a command imports it."""

    name: str
    label: str
    vendor: str
    memory_bytes: int
    bandwidth_bytes_per_s: int
    peak_flops_per_s: Mapping[str, int]  # element type -> dense FLOP/s
    interconnect: str
    interconnect_bytes_per_s: int  # per GPU, one way; 0 when it has no GPU-to-GPU link
    sources: Mapping[str, str]
    notes: str = ""
    cuda_memory_bytes: int = 0  # what CUDA reports (0: not known; memory_bytes stands in)

    @property
    def device_bytes(self) -> int:
        """The device memory an engine sizes its pool from: CUDA's total where known."""
        return self.cuda_memory_bytes or self.memory_bytes

    def peak(self, dtype: str) -> int:
        """Dense peak FLOP/s for matrix multiplications in ``dtype``.

        A type the device has no unit for runs at its 16-bit rate (bf16, else fp16), then tf32,
        then fp32: an engine up-casts fp8, int8 or fp4 weights to the type the tensor cores
        take (an A100 runs fp8 weights at its bf16 rate, not its int8 one; an H100 runs mxfp4
        weights through bf16 kernels). An unknown ``dtype`` is read as bf16.
        """
        if dtype in self.peak_flops_per_s:
            return self.peak_flops_per_s[dtype]
        wider = ("fp16", "bf16") if dtype == "fp16" else ("bf16", "fp16")
        for fallback in (*wider, "tf32", "fp32"):
            if fallback in self.peak_flops_per_s:
                return self.peak_flops_per_s[fallback]
        return max(self.peak_flops_per_s.values())


def _quantity(value: object, field: str, origin: str, kind: str) -> int:
    """A positive integer from an int, a float such as 3.35e12, or a quantity string."""
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float):
        number = int(value) if value == value and value not in (float("inf"), float("-inf")) \
            else None
    elif isinstance(value, str):  # units only then: the built-in catalog's figures are ints
        from specsheet.units import parse_quantity

        text = value.strip()
        for suffix in ("/s", "ps", "flop/s", "flops"):
            if text.lower().endswith(suffix) and kind == "bytes":
                text = text[: -len(suffix)].strip()
        try:
            number = parse_quantity(text, "bytes" if kind == "bytes" else "count", field)
        except SpecError:
            number = None
    else:
        number = None
    if number is None or number <= 0:
        raise SpecError(f"{origin}: {field}: {quoted(value)} is not a positive quantity; expected "
                        f"{REQUIRED.get(field) or OPTIONAL.get(field) or 'a positive number'}")
    return number


def accelerator_from_mapping(data: object, origin: str) -> Accelerator:
    """Validate a hardware file's mapping; SpecError names ``origin``, the field and the
    expected form."""
    if not isinstance(data, Mapping):
        got = ("a list" if isinstance(data, list) else "nothing (null)" if data is None
               else repr(data))
        raise SpecError(f"{origin}: expected a mapping of hardware fields "
                        f"({', '.join(REQUIRED)}), got {got}")
    known = {*REQUIRED, *OPTIONAL}
    for key in data:
        if key not in known:
            raise SpecError(f"{origin}: unknown field "
                            f"{quoted(key)}{did_you_mean(str(key), known)}; "
                            f"expected {', '.join(sorted(known))}")
    for key in REQUIRED:
        if key not in data:
            raise SpecError(f"{origin}: missing field {quoted(key)}: {REQUIRED[key]}")
    peaks = data["peak_flops_per_s"]
    if not isinstance(peaks, Mapping) or not peaks:
        raise SpecError(f"{origin}: peak_flops_per_s: expected {REQUIRED['peak_flops_per_s']}")
    peak: dict[str, int] = {}
    for dtype, value in peaks.items():
        if dtype not in PEAK_DTYPES:
            raise SpecError(f"{origin}: peak_flops_per_s: unknown element type {quoted(dtype)}"
                            f"{did_you_mean(str(dtype), PEAK_DTYPES)}; expected one of "
                            f"{', '.join(PEAK_DTYPES)}")
        peak[dtype] = _quantity(value, f"peak_flops_per_s.{dtype}", origin, "count")
    link = data.get("interconnect_bytes_per_s", 0)
    sources = data.get("sources", {})
    if not isinstance(sources, Mapping):
        raise SpecError(f"{origin}: sources: expected {OPTIONAL['sources']}")
    texts = {}
    for key in ("name", "label", "vendor", "interconnect", "notes"):
        value = data.get(key, "")
        if not isinstance(value, str):
            raise SpecError(f"{origin}: {key}: expected {OPTIONAL[key]}, got {quoted(value)}")
        texts[key] = value.strip()
    name = texts["name"] or Path(origin).stem
    return Accelerator(
        name=name,
        label=texts["label"] or name,
        vendor=texts["vendor"],
        memory_bytes=_quantity(data["memory_bytes"], "memory_bytes", origin, "bytes"),
        bandwidth_bytes_per_s=_quantity(data["bandwidth_bytes_per_s"],
                                        "bandwidth_bytes_per_s", origin, "bytes"),
        peak_flops_per_s=peak,
        interconnect=texts["interconnect"],
        interconnect_bytes_per_s=0 if link == 0 else _quantity(
            link, "interconnect_bytes_per_s", origin, "bytes"),
        sources={str(k): str(v) for k, v in sources.items()},
        notes=texts["notes"],
        cuda_memory_bytes=_quantity(data["cuda_memory_bytes"], "cuda_memory_bytes", origin,
                                    "bytes") if "cuda_memory_bytes" in data else 0,
    )


@cache
def catalog_index() -> dict[str, dict[str, Any]]:
    """Every built-in accelerator's mapping (as written in its YAML file), by name, sorted
    (``accelerator_data.py``, which scripts/build_hardware.py writes).

    Callers must not mutate the mappings: the index is one per process."""
    from specsheet.hardware.accelerator_data import ACCELERATORS

    return ACCELERATORS


def builtin(name: str) -> Accelerator:
    """A built-in accelerator by name, or SpecError with a did-you-mean."""
    index = catalog_index()
    if name not in index:
        raise SpecError(f"unknown GPU {quoted(name)}{did_you_mean(name, _flagships_first(index))}; "
                        "'specsheet hardware' lists them, or give a path to a hardware YAML file")
    return accelerator_from_mapping(index[name], f"hardware {name}")


def _flagships_first(index: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The built-in names, fastest bf16 part first, so that a name that begins several (``h100``)
    suggests the flagship (``h100-sxm``) before its PCIe and NVL cousins; then the faster memory."""
    def figure(name: str, field: str, dtype: str = "") -> int:
        value = index[name].get(field)
        if dtype:
            value = value.get(dtype, 0) if isinstance(value, Mapping) else 0
        return value if isinstance(value, int) else 0

    return sorted(index, key=lambda name: (-figure(name, "peak_flops_per_s", "bf16"),
                                           -figure(name, "bandwidth_bytes_per_s"), name))


def accelerator_yaml_dir() -> Path:
    """Where the built-in hardware YAML files are."""
    return Path(__file__).with_name("accelerators")
