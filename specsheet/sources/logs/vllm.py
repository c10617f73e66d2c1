"""A vLLM start-up log read for the figures it prints (docs/serving.md, "Calibration").

V0 (``vllm/worker/worker.py``, ``model_runner.py``, ``executor_base.py``) and V1
(``vllm/v1/worker/gpu_worker.py``, ``gpu_model_runner.py``, ``vllm/v1/core/kv_cache_utils.py``)
lines, with anything before them on the line (timestamps, ``(VllmWorker rank=0 pid=..)``, a
container name). Users paste excerpts: whatever lines are there are read; the rest stays None.
A line that names a figure but whose value cannot be read is kept in ``unreadable``.
"""

from __future__ import annotations

import re
from pathlib import Path

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError

_NUM = r"(-?[0-9][0-9,]*(?:\.[0-9]+)?)"
_GIB = _NUM + r"\s*(GiB|GB|MiB)"

# figure -> (the words that announce it, the patterns that read it)
_FIGURES: dict[str, tuple[str, tuple[str, ...]]] = {
    "weights": ("weights take|Model loading took|Loading model weights took",
                (r"Model loading took " + _GIB, r"Loading model weights took " + _GIB,
                 r"model weights take\s*" + _GIB)),
    "non_torch": ("non_torch_memory", (r"non_torch_memory(?: takes|=|\s+)\s*" + _GIB,)),
    "activation": ("activation peak memory",
                   (r"PyTorch activation peak memory(?: takes)?\s*" + _GIB,)),
    "cuda_graph": ("Graph capturing finished|Estimated CUDA graph memory",
                   (r"Graph capturing finished in [0-9.]+ secs?, took " + _GIB,
                    r"Estimated CUDA graph memory: " + _GIB)),
    "kv_memory": ("Available KV cache memory|reserved for KV Cache|kv_cache_size=|"
                  "available_kv_cache_memory",
                  (r"Available KV cache memory: " + _GIB,
                   r"the rest of the memory reserved for KV Cache is\s*" + _GIB,
                   r"kv_cache_size=" + _GIB, r"available_kv_cache_memory\s+" + _GIB)),
    "total": ("total_gpu_memory", (r"total_gpu_memory(?: \(|=|\s+)\s*" + _GIB,)),
    "kv_tokens": ("GPU KV cache size", (r"GPU KV cache size: " + _NUM + " tokens",)),
    "gpu_blocks": ("# GPU blocks|# cuda blocks",
                   (r"# (?:GPU|cuda) blocks: " + _NUM,)),
    "concurrency": ("Maximum concurrency for",
                    (r"Maximum concurrency for " + _NUM + r" tokens per request: " + _NUM
                     + "x",)),
    "utilization": ("gpu_memory_utilization",
                    (r"gpu_memory_utilization(?: \(|=)" + _NUM,)),
    "tp": ("tensor_parallel_size", (r"tensor_parallel_size=" + _NUM,)),
    "max_model_len": ("max_seq_len=|max_model_len=", (r"max_seq_len=" + _NUM,
                                                      r"max_model_len=" + _NUM)),
}
_UNITS = {"GiB": 2**30, "GB": 2**30, "MiB": 2**20}  # V0 prints GiB labelled "GB"
_SETTINGS = ("tp", "max_model_len", "utilization", "total")


class VllmLog(NamedTuple):
    """The figures one log prints (bytes, tokens, blocks; None when it does not print them)."""

    source: str
    weights_bytes: int | None = None
    non_torch_bytes: int | None = None
    activation_bytes: int | None = None
    cuda_graph_bytes: int | None = None
    kv_memory_bytes: int | None = None  # the pool, the smallest of the ranks' lines
    total_bytes: int | None = None  # the device memory CUDA reported
    kv_tokens: int | None = None
    gpu_blocks: int | None = None
    concurrency: float | None = None
    concurrency_tokens: int | None = None  # the N of "Maximum concurrency for N tokens"
    utilization: str | None = None  # as printed (0.90)
    tp: int | None = None
    max_model_len: int | None = None
    printed_gib: dict[str, str] = {}  # figure -> the GiB text as printed, for its rounding
    unreadable: tuple[str, ...] = ()  # lines that name a figure but could not be read


def _bytes(number: str, unit: str) -> int:
    return round(float(number.replace(",", "")) * _UNITS[unit])


def read_vllm_log(path: str) -> VllmLog:
    """The figures of the vLLM log at ``path``; SpecError when it holds none of them or when
    its settings contradict each other."""
    from specsheet.sources.files import read_text

    text = read_text(Path(path))
    values: dict[str, list[tuple[str, ...]]] = {}
    unreadable: list[str] = []
    for line in text.splitlines():
        for figure, (words, patterns) in _FIGURES.items():
            if not re.search(words, line):
                continue
            found = [m.groups() for p in patterns for m in re.finditer(p, line)]
            if found:
                values.setdefault(figure, []).extend(found)
            elif figure not in ("tp", "max_model_len", "utilization"):
                unreadable.append(line.strip()[:120])
    if not values:
        raise SpecError("no vLLM start-up figures in this file (model weights, KV cache "
                        "memory, GPU KV cache size, maximum concurrency, ...)", source=path)
    for figure in _SETTINGS:
        seen = set(values.get(figure, []))
        if len({float(v[0].replace(",", "")) for v in seen}) > 1:
            shown = ", ".join(sorted({v[0] for v in seen}))
            raise SpecError(f"the log's lines contradict each other: {figure} is {shown}",
                            source=path)
    fields: dict[str, object] = {"source": path, "unreadable": tuple(unreadable)}
    printed: dict[str, str] = {}
    for figure in ("weights", "non_torch", "activation", "cuda_graph", "kv_memory", "total"):
        if figure in values:
            pick = min if figure == "kv_memory" else max  # the engine takes the smallest pool
            number, unit = pick(values[figure], key=lambda v: _bytes(*v))
            fields[f"{figure}_bytes"] = _bytes(number, unit)
            printed[figure] = number
    for figure in ("kv_tokens", "gpu_blocks"):
        if figure in values:
            fields[figure] = min(int(v[0].replace(",", "")) for v in values[figure])
    if "concurrency" in values:
        tokens, times = min(values["concurrency"], key=lambda v: float(v[1].replace(",", "")))
        fields["concurrency"] = float(times.replace(",", ""))
        fields["concurrency_tokens"] = int(tokens.replace(",", ""))
    if "utilization" in values:
        fields["utilization"] = values["utilization"][0][0]
    for figure in ("tp", "max_model_len"):
        if figure in values:
            fields[figure] = int(values[figure][0][0].replace(",", ""))
    fields["printed_gib"] = printed
    return VllmLog(**fields)  # type: ignore[arg-type]
