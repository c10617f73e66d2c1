"""What would make a local placement that does not fit, fit (``specsheet fit``'s "no" says it).

Each way changes one setting of the request and is placed again, the whole search included,
before it is said: a way is only named when that placement fits, compute estimate counted.

    >>> import specsheet as s
    >>> from specsheet.api.fit_ways import fit_ways
    >>> request = s.FitRequest(gpu=("rtx-4090",), host_memory=16 << 30)
    >>> ways = fit_ways("llama3-70b", request, s.fit("llama3-70b", request))
    >>> ways.quant, ways.host_memory >> 30, ways.gpu, ways.ctx
    ('gguf-q3_k_m', 19, ('rtx-4090', 'rtx-4090'), None)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError

if TYPE_CHECKING:
    from specsheet.api.fit import Fit, FitRequest
    from specsheet.model.spec import Model

GIB = 1 << 30
MOST_DEVICES = 8  # the most GPUs the "more GPUs" way tries: a workstation's slots
# the formats people download, most bits first: llama.cpp's usual k-quants (the files every
# GGUF repository ships), and mlx-community's conversions
QUANT_LADDERS = {
    "gguf": ("gguf-q8_0", "gguf-q6_k", "gguf-q5_k_m", "gguf-q4_k_m", "gguf-q3_k_m", "gguf-q2_k"),
    "mlx": ("mlx-8bit", "mlx-6bit", "mlx-4bit", "mlx-3bit"),
}


class FitWays(NamedTuple):
    """The ways found, each None when there is none: fewer GPU layers than the request's
    (the most that fit), a q8_0 KV cache (``cache_type``, K and V), the format of the most
    bits in QUANT_LADDERS that fits, the host memory (bytes, whole GiB) that holds what the
    GPUs do not, the longest context that fits at the placement (``ctx``, tokens, the
    request's unit: ``--ctx``), and the fewest GPUs that hold it (``gpu``: the request's
    list with its last GPU repeated)."""

    n_gpu_layers: int | None
    cache_type: str | None
    quant: str | None
    host_memory: int | None
    ctx: int | None = None
    gpu: tuple[str, ...] | None = None


NONE = FitWays(None, None, None, None)


def fit_ways(model: str | Model, request: FitRequest, placed: Fit) -> FitWays:
    """What would make ``placed`` (``model`` under ``request``) fit; NONE when it fits or
    nothing is checked (no GPU and no host memory given).

    - GPU layers: with a count given (or all), the most that fit (``-ngl auto``'s answer).
    - KV cache: llama.cpp's q8_0 for K and V (it needs flash attention, on or auto).
    - Format: the first of the engine's ladder below the current format's bits that fits,
      for a model (a .gguf file holds its own types).
    - Host memory: when it was given, the host's share with the GPUs holding what they can
      (placed again without the limit), rounded up to a GiB.
    - Context: the placement's longest context (``max_ctx``), placed again at it.
    - GPUs: one more of the last GPU given, then two ..., up to MOST_DEVICES in all (tried
      first: when so many do not hold it, the search stops there); not for MLX (one
      machine), a tensor split (it names each GPU's share) or split mode none (one GPU holds
      the model)."""
    from specsheet.api.fit import fit

    p = placed.placement
    if p.fits_estimate or not (p.devices or p.host.memory_bytes):
        return NONE
    if isinstance(model, str) and not model.lower().endswith(".gguf"):
        from specsheet.api.count import load

        model = load(model)

    def fits(trial: FitRequest) -> Fit | None:
        try:
            again = fit(model, trial)
        except SpecError:  # a setting this model or engine does not take
            return None
        return again if again.placement.fits_estimate else None

    layers = None
    if request.n_gpu_layers != "auto" and p.devices and request.engine != "mlx":
        found = fits(request._replace(n_gpu_layers="auto"))
        layers = found.placement.on_gpu if found else None
    cache = None
    if (request.engine != "mlx" and request.flash_attn != "off"
            and request.cache_type_k == request.cache_type_v == "f16"
            and fits(request._replace(cache_type_k="q8_0", cache_type_v="q8_0"))):
        cache = "q8_0"
    quant = None
    if not isinstance(model, str):
        for candidate in _smaller(placed.quant, request.engine):
            if fits(request._replace(quant=candidate)):
                quant = candidate
                break
    host = None
    if request.host_memory is not None:
        free = fits(request._replace(host_memory=None))
        if free is not None:
            need = -(-free.placement.host.total_bytes // GIB) * GIB
            if need > request.host_memory and fits(request._replace(host_memory=need)):
                host = need
    ctx = None
    if placed.max_ctx is not None and fits(request._replace(ctx=placed.max_ctx)):
        ctx = placed.max_ctx
    gpu = None
    if (request.gpu and request.engine != "mlx" and not request.tensor_split
            and request.split_mode != "none"):
        def more(n: int) -> FitRequest:
            return request._replace(gpu=request.gpu + (request.gpu[-1],) * (n - len(request.gpu)))

        # the most first: when they do not hold it, no fewer do (a placement is searched
        # afresh at each count), and a model far too large costs one search, not seven
        if len(request.gpu) < MOST_DEVICES and fits(more(MOST_DEVICES)):
            n = next(n for n in range(len(request.gpu) + 1, MOST_DEVICES + 1)
                     if n == MOST_DEVICES or fits(more(n)))
            gpu = more(n).gpu
    return FitWays(layers, cache, quant, host, ctx, gpu)


def _bits(name: str) -> int | None:
    """A format's nominal bits: gguf-q4_k_m 4, mlx-6bit 6, gguf-f16 16; None when unknown."""
    found = re.match(r"(?:gguf-[a-z]*|mlx-)(\d+)", name)
    return int(found.group(1)) if found else None


def _smaller(quant: str, engine: str) -> tuple[str, ...]:
    """The engine's ladder below ``quant``: after it when it is on the ladder, else the
    formats of fewer nominal bits."""
    ladder = QUANT_LADDERS["mlx" if engine == "mlx" else "gguf"]
    if quant in ladder:
        return ladder[ladder.index(quant) + 1:]
    bits = _bits(quant)
    return tuple(q for q in ladder if bits is not None and (_bits(q) or 0) < bits)
