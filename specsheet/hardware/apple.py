"""What macOS lets an Apple Silicon GPU use of the unified memory: Metal's
``recommendedMaxWorkingSetSize``, which llama.cpp's Metal backend reports as the device's memory
(ggml-metal-device.m ``ggml_metal_device_get_memory``: total = recommendedMaxWorkingSetSize).

Apple does not document the formula. The logged values (docs/local.md lists them with links):
2/3 of the RAM on 16 GB and 32 GB machines (16 GB M1 Pro / M2 Pro: 11453.25 MB = 10922.67 MiB,
leejet/stable-diffusion.cpp#108 and argilla-io/distilabel#593; 32 GB M2 Max: 21845.34 MiB,
ollama/ollama#434) and 3/4 above 32 GB (96 GB M2 Max: 73728.00 MiB, ggml-org/llama.cpp#3213).
macOS 26 raised it on large machines (128 GB: 107.52 GiB, antirez/ds4#893), so treat these as
the default of macOS 13 to 15. ``sysctl iogpu.wired_limit_mb=N`` sets it to N MiB exactly.
"""

from __future__ import annotations

from specsheet.hardware.catalog import Accelerator

GIB = 1 << 30
SMALL = (2, 3)  # machines of 32 GB and less: 2/3
LARGE = (3, 4)  # machines above 32 GB: 3/4


def unified_bytes(gpu: Accelerator) -> int:
    """The machine's RAM in bytes: Apple's "128 GB" is 128 GiB of memory chips (the catalog
    stores the marketed figure as SI bytes)."""
    return round(gpu.memory_bytes / 10**9) * GIB


def metal_working_set(gpu: Accelerator, wired_limit_mb: int | None = None) -> int:
    """The bytes Metal lets the GPU wire by default (or ``wired_limit_mb`` MiB when
    iogpu.wired_limit_mb is set)."""
    if wired_limit_mb:
        return wired_limit_mb << 20
    ram = unified_bytes(gpu)
    num, den = SMALL if ram <= 32 * GIB else LARGE
    return ram * num // den
