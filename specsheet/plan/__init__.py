"""Questions asked of a model, one module per job: the parallel layout, the tensor cut, vLLM's KV
blocks, the serving plan, its roofline estimates, budgets and checks, the training plan."""

from specsheet.errors import SpecError
from specsheet.quant import MAX_LISTED_LAYERS

# the most layers a question that walks the layers one by one takes (a serving plan's stages, KV
# groups and tensors; a training plan; a local placement; an inspection's expected tensors):
# about 5 s for a serving plan at this many; the largest published model has 126. count answers
# any number (no list per layer). The same number as the listing of a model's tensors.
MAX_WALKED_LAYERS = MAX_LISTED_LAYERS

# the most layers llama.cpp's automatic GPU-layer count is searched for: the search tries every
# count from the most down (plan/local.py most_layers), a placement each, so its work grows
# with the square of the layers (about 5 s at this many); given a count, a placement takes up
# to MAX_WALKED_LAYERS.
MAX_SEARCHED_LAYERS = 512

# the most GPUs a plan search covers: it lists every tp x pp (x dp replicas) layout of up to
# this many, which grows a little faster than the count (about 5 s for one GPU kind at 4,096
# with replicas); a cluster past it is a plan of several searches.
MAX_SEARCHED_GPUS = 4096


def check_walked(layers: int, name: str, question: str) -> None:
    """Refuse a model ``name`` of more than ``MAX_WALKED_LAYERS`` layers before ``question``
    (a serving plan, a training plan, ...) builds anything per layer."""
    if layers > MAX_WALKED_LAYERS:
        raise SpecError(f"{name} has {layers:,} layers; {question} walks the layers one by "
                        f"one and takes at most {MAX_WALKED_LAYERS:,} (count answers any "
                        "number)", field="layers", value=layers)


def check_searched(layers: int, name: str) -> None:
    """Refuse the automatic GPU-layer search for a model ``name`` of more than
    ``MAX_SEARCHED_LAYERS`` layers, before it starts."""
    if layers > MAX_SEARCHED_LAYERS:
        raise SpecError(f"{name} has {layers:,} layers; the automatic search tries every count "
                        f"of GPU layers and takes at most {MAX_SEARCHED_LAYERS:,} layers: give "
                        "the count (count answers any number)", field="n_gpu_layers",
                        value="auto")


def check_searched_gpus(gpus: int, field: str) -> None:
    """Refuse a plan search of more than ``MAX_SEARCHED_GPUS`` GPUs (``field``: the argument
    that asked for them) before it lists any layout."""
    if gpus > MAX_SEARCHED_GPUS:
        raise SpecError(f"a search covers at most {MAX_SEARCHED_GPUS:,} GPUs, got {gpus:,}",
                        field=field, value=gpus)
