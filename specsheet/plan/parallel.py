"""The parallel layout, one type for serving and training: how the GPUs split a model.

gpus = dp x tp x pp: tensor parallelism splits each layer's matrices tp ways (vLLM's and
Megatron's parallel layers), pipeline parallelism splits the layers into pp stages
(``pp_partition``, vLLM's get_pp_indices), data parallelism repeats the rest dp times (training:
ZeRO shards over those ranks). ``check_parallel`` (serving, as vLLM accepts a layout) and
``check_training_parallel`` (training) check a layout and complete it; ``plan/sharding.py`` cuts
the tensors to one GPU's share under it. Errors carry the argument they are about as ``field``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.model.spec import ModelSpec

VOCAB_PADDING = 64  # vocab_parallel_embedding.DEFAULT_VOCAB_PADDING_SIZE


SCHEDULES = ("1f1b", "interleaved", "zero-bubble", "dualpipe")  # pipeline schedules
OFFLOADS = ("none", "optimizer")  # what lives in host memory (training)


class Parallel(NamedTuple):
    """How the GPUs are arranged: gpus = dp x tp x pp (x cp in training)."""

    gpus: int
    tp: int  # tensor-parallel ranks: each layer's matrices split tp ways
    pp: int  # pipeline stages: the layers split pp ways
    dp: int = 1  # data-parallel ranks (training: ZeRO shards over these)
    ep: int = 1  # expert-parallel ranks (serving): tp with expert parallelism, else 1
    sp: bool = False  # sequence parallelism along the tensor-parallel ranks (training)
    zero: int = 0  # ZeRO stage (training): 1 optimizer states, 2 + gradients, 3 + weights (FSDP)
    # training only, below: serving leaves them at their defaults
    cp: int = 1  # context-parallel ranks: each sequence split cp ways (ring attention)
    vpp: int = 1  # virtual pipeline stages per GPU (the interleaved schedule)
    schedule: str = "1f1b"  # the pipeline schedule: 1f1b, interleaved, zero-bubble, dualpipe
    shard_group: int = 0  # HSDP: ZeRO shards within groups of this many ranks (0: all dp x cp)
    offload: str = "none"  # optimizer: its states (and master weights) in host memory
    # serving only: decode context parallelism, each request's KV split over dcp of the tp
    # ranks (vLLM's --decode-context-parallel-size)
    dcp: int = 1

    @property
    def zero_ranks(self) -> int:
        """The ranks ZeRO shards the dense parameters' states over: dp x cp (Megatron's
        data-and-context-parallel group), or the HSDP shard group."""
        return self.shard_group or self.dp * self.cp

    @property
    def expert_zero_ranks(self) -> int:
        """The ranks ZeRO shards the routed experts' states over: the expert data-parallel
        group, zero_ranks x tp / ep (experts are not tensor-split under ep)."""
        if self.ep <= 1:
            return self.zero_ranks
        return max(1, self.zero_ranks * self.tp // self.ep)


def pad_vocab(vocab: int) -> int:
    """The vocabulary rounded up to a multiple of 64 (pad_vocab_size)."""
    return -(-vocab // VOCAB_PADDING) * VOCAB_PADDING


@lru_cache(maxsize=1024)  # a search asks for each stage of each layout, plan after plan
def pp_partition(layers: int, pp: int) -> tuple[range, ...]:
    """The layers of each pipeline stage, as vLLM's get_pp_indices assigns them: layers // pp
    each, the remainder one each to the stages before the last, from the second-to-last back."""
    sizes = [layers // pp] * pp
    for i in range(2, layers % pp + 2):
        sizes[-i] += 1
    ranges, start = [], 0
    for size in sizes:
        ranges.append(range(start, start + size))
        start += size
    return tuple(ranges)


def _divisors(n: int) -> list[int]:
    return [i for i in range(1, n + 1) if n % i == 0] if n <= 100_000 else [1]


class TpProblem(NamedTuple):
    """Why vLLM cannot split a model over tp GPUs."""

    what: str  # what tp does not divide ("does not divide the 64 attention heads")
    experts: bool  # the routed experts' width: expert parallelism (whole experts) avoids it


def tp_problem(spec: ModelSpec, tp: int, ep: bool = False) -> TpProblem | None:
    """Why vLLM cannot split ``spec`` over ``tp`` GPUs (with expert parallelism if ``ep``),
    or None: tp must divide the attention heads, the KV heads (or be a multiple of them), the
    state layers' heads and widths, the MLP, expert and shared-expert widths and the padded
    vocabulary. A model without attention layers (Mamba) has no heads to divide."""
    if spec.attention_layers and spec.heads % tp:
        return TpProblem(f"does not divide the {spec.heads} attention heads", False)
    kv = spec.kv_heads
    if spec.attention_layers and not spec.latent_attention:
        if kv >= tp and kv % tp:
            return TpProblem(f"does not divide the {kv} KV heads", False)
        if tp > kv and tp % kv:
            return TpProblem(f"exceeds the {kv} KV heads without being a multiple of them "
                             "(each KV head is then replicated on tp / KV heads GPUs)", False)
    state = _state_problem(spec, tp)
    if state:
        return TpProblem(state, False)
    if spec.dense_mlp_layers and spec.d_ff % tp:
        return TpProblem(f"does not divide the MLP width d_ff {spec.d_ff}", False)
    if spec.experts and not ep and spec.expert_d_ff % tp:
        return TpProblem(f"does not divide the expert width {spec.expert_d_ff}", True)
    if spec.shared_d_ff % tp:
        return TpProblem(f"does not divide the shared-expert width {spec.shared_d_ff}", False)
    if pad_vocab(spec.vocab) % tp:
        return TpProblem(f"does not divide the vocabulary padded to a multiple of "
                         f"{VOCAB_PADDING} ({pad_vocab(spec.vocab)})", False)
    return _tower_problem(spec, tp)


def _tower_problem(spec: ModelSpec, tp: int) -> TpProblem | None:
    """Why vLLM cannot cut the vision tower over ``tp`` GPUs (its parallel layers' ``divide``
    of the heads and of each column- or row-cut width), or None."""
    tower = spec.vision
    if tower is None:
        return None
    if tower.heads % tp:
        return TpProblem(f"does not divide the vision tower's {tower.heads} heads", False)
    from specsheet.model.vision import tower_tensors

    for t in tower_tensors(tower):
        width = t.shape[0] if t.cut == "column" else t.shape[-1] if t.cut == "row" else 0
        if width % tp:
            return TpProblem(f"does not divide the vision tower's {t.name} ({width} wide)",
                             False)
    return None


def _state_problem(spec: ModelSpec, tp: int) -> str | None:
    """Why vLLM's state layers cannot split over ``tp`` GPUs (its ``divide`` asserts in
    mamba_utils.MambaStateShapeCalculator), or None."""
    kinds = set(spec.layer_types)
    if kinds & {"mamba", "mamba2", "hybrid"} and spec.ssm_inner % tp:
        return f"does not divide the Mamba inner width {spec.ssm_inner}"
    if kinds & {"mamba2", "hybrid"}:
        if spec.ssm_heads % tp:
            return f"does not divide the {spec.ssm_heads} Mamba-2 heads"
        if spec.ssm_groups % tp and tp % spec.ssm_groups:
            return (f"neither divides nor is a multiple of the {spec.ssm_groups} Mamba-2 "
                    "groups")
    if "short_conv" in kinds and spec.d_model % tp:
        return f"does not divide the short convolutions' width {spec.d_model}"
    if "linear_attention" in kinds:
        if spec.linear_value_heads % tp:
            return f"does not divide the {spec.linear_value_heads} gated DeltaNet value heads"
        if spec.linear_key_heads % tp:
            return f"does not divide the {spec.linear_key_heads} gated DeltaNet key heads"
    return None


class TensorParallelError(SpecError):
    """A tp that vLLM cannot split the model over: ``problem`` says what tp does not divide
    (and whether expert parallelism would avoid it), ``working`` the tp values that work."""

    def __init__(self, tp: int, problem: TpProblem, working: tuple[int, ...]) -> None:
        self.tp = tp
        self.problem = problem
        self.working = working
        super().__init__(self.worded(lambda field: f"{field}=True"), field="tp", value=tp)

    def worded(self, spell: Callable[[str], str]) -> str:
        """The message, naming expert parallelism (the field ``ep``) as ``spell`` gives it
        where it would help."""
        hint = f" ({spell('ep')} splits experts instead)" if self.problem.experts else ""
        return (f"{self.tp} {self.problem.what}{hint}; tp values that work: "
                f"{', '.join(map(str, self.working))}")


def _positive(name: str, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value <= 0):
        raise SpecError("expected a positive integer, got "
                        f"{quoted(value)}", field=name, value=value)


def check_parallel(spec: ModelSpec, gpus: int | None, tp: int | None, pp: int | None,
                   ep: bool = False, dp: int | None = None,
                   dcp: int | None = None) -> Parallel:
    """The serving layout from what was given (tp = gpus / (dp x pp), pp and dp 1 by default),
    or SpecError saying what does not divide and which values would (TensorParallelError for
    tp). Data parallelism repeats the engine dp times (each with its own KV pool); with expert
    parallelism the experts spread over all tp x dp ranks (vLLM: EP size = TP x DP). Decode
    context parallelism (dcp) divides tp and needs multi-head latent attention, whose latent
    every tp rank otherwise holds whole."""
    for name, value in (("gpus", gpus), ("tp", tp), ("pp", pp), ("dp", dp), ("dcp", dcp)):
        _positive(name, value)
    pp, dp = pp or 1, dp or 1
    if tp is None:
        gpus = gpus or pp * dp
        if gpus % (pp * dp):
            raise SpecError(f"{gpus} GPUs are not a whole number of engines of pp {pp} x dp "
                            f"{dp}; give gpus = tp x pp x dp", field="gpus", value=gpus)
        tp = gpus // (pp * dp)
    elif gpus is None:
        gpus = tp * pp * dp
    if gpus != tp * pp * dp:
        shape = f"tp {tp} x pp {pp}" + (f" x dp {dp}" if dp > 1 else "")
        raise SpecError(f"{gpus} GPUs but {shape} = {tp * pp * dp}; give gpus = tp x pp"
                        + (" x dp" if dp > 1 else ""), field="gpus", value=gpus)
    dcp = dcp or 1
    if dcp > 1:
        if tp % dcp:
            raise SpecError(f"{dcp} does not divide tp {tp}; vLLM splits each request's KV "
                            "over dcp of the tensor-parallel ranks", field="dcp", value=dcp)
        if not spec.latent_attention:
            raise SpecError("decode context parallelism is modelled for multi-head latent "
                            "attention (DeepSeek, Kimi K2), whose latent every tensor-parallel "
                            "rank holds whole", field="dcp", value=dcp)
    if pp > spec.layers:
        raise SpecError(f"{pp} pipeline stages for {spec.layers} layers; at most {spec.layers}",
                        field="pp", value=pp)
    problem = tp_problem(spec, tp, ep)
    if problem:
        working = tuple(t for t in _divisors(spec.heads) if tp_problem(spec, t, ep) is None)
        raise TensorParallelError(tp, problem, working)
    if ep and not spec.experts:
        raise SpecError("expert parallelism needs a mixture-of-experts model", field="ep",
                        value=ep)
    return Parallel(gpus=gpus, tp=tp, pp=pp, dp=dp, ep=tp * dp if ep else 1, dcp=dcp)


def check_training_parallel(spec: ModelSpec, gpus: int | None, dp: int | None, tp: int, pp: int,
                            sp: bool, zero: int, *, cp: int = 1, ep: int = 1, vpp: int = 1,
                            schedule: str = "1f1b", shard_group: int | None = None,
                            offload: str = "none") -> Parallel:
    """The training layout, checked and completed: dp = gpus / (tp x pp x cp) when only gpus is
    given, gpus = dp x tp x pp x cp when it is not. A tensor-parallel rank holds whole heads;
    expert parallelism shards the routed experts over ep of the dp x cp x tp ranks (Megatron
    Core's expert-model-parallel group, experts not tensor-split); the interleaved schedule
    needs pp > 1 and vpp > 1 dividing each stage's layers; HSDP's shard group divides dp x cp;
    optimizer offload needs ZeRO 1 or more (DeepSpeed's offload_optimizer)."""
    for name, value in (("tp", tp), ("pp", pp), ("cp", cp), ("ep", ep), ("vpp", vpp)):
        if value < 1:
            raise SpecError(f"expected a positive number of ranks, got {value}", field=name,
                            value=value)
    if not 0 <= zero <= 3:
        raise SpecError(f"expected a stage from 0 to 3, got {zero}", field="zero", value=zero)
    if spec.attention_layers and spec.heads % tp:
        raise SpecError(f"{tp} does not divide the {spec.heads} attention heads; each "
                        "tensor-parallel rank holds whole heads", field="tp", value=tp)
    if pp > spec.layers:
        raise SpecError(f"{pp} pipeline stages for {spec.layers} layers; a stage needs a layer",
                        field="pp", value=pp)
    if sp and tp == 1:
        raise SpecError("sequence parallelism splits along the tensor-parallel ranks; it needs "
                        "tp above 1", field="sp", value=sp)
    if dp is not None and dp < 1:
        raise SpecError(f"expected a positive number of ranks, got {dp}", field="dp", value=dp)
    if gpus is not None and gpus < 1:
        raise SpecError(f"expected a positive number of GPUs, got {gpus}", field="gpus",
                        value=gpus)
    model = tp * pp * cp
    if gpus is None:
        gpus = (dp or 1) * model
    if dp is None:
        if gpus % model:
            raise SpecError(f"{gpus} GPUs is not dp x tp x pp x cp for tp {tp}, pp {pp} and cp "
                            f"{cp}; give a multiple of {model}"
                            if cp > 1 else
                            f"{gpus} GPUs is not dp x tp x pp for tp {tp} and pp {pp}; give a "
                            f"multiple of {model}", field="gpus", value=gpus)
        dp = gpus // model
    if gpus != dp * model:
        raise SpecError(f"{gpus} GPUs is not dp x tp x pp x cp = {dp} x {tp} x {pp} x {cp} = "
                        f"{dp * model}" if cp > 1 else
                        f"{gpus} GPUs is not dp x tp x pp = {dp} x {tp} x {pp} = "
                        f"{dp * model}", field="gpus", value=gpus)
    if ep > 1:
        if not spec.experts:
            raise SpecError("expert parallelism shards the routed experts; this model is "
                            "dense (no experts)", field="ep", value=ep)
        if spec.experts % ep:
            raise SpecError(f"{ep} does not divide the {spec.experts} routed experts",
                            field="ep", value=ep)
        if (dp * cp * tp) % ep:
            raise SpecError(f"{ep} expert-parallel ranks do not divide dp x cp x tp = "
                            f"{dp * cp * tp}, the ranks experts are spread over", field="ep",
                            value=ep)
    _check_schedule(spec, pp, vpp, schedule)
    if shard_group is not None and (shard_group < 1 or (dp * cp) % shard_group):
        raise SpecError(f"a shard group of {shard_group} does not divide the {dp * cp} "
                        "data-parallel ranks", field="shard_group", value=shard_group)
    if shard_group is not None and zero < 1:
        raise SpecError("a shard group is where ZeRO shards; give a ZeRO stage",
                        field="shard_group", value=shard_group)
    if offload not in OFFLOADS:
        raise SpecError(f"expected one of {', '.join(OFFLOADS)}, got {quoted(offload)}",
                        field="offload", value=offload)
    if offload == "optimizer" and zero < 1:
        raise SpecError("DeepSpeed offloads the optimizer with ZeRO stage 1, 2 or 3 only "
                        "(offload_optimizer); give a ZeRO stage", field="offload",
                        value=offload)
    return Parallel(gpus=gpus, tp=tp, pp=pp, dp=dp, ep=ep, sp=sp, zero=zero, cp=cp, vpp=vpp,
                    schedule=schedule, shard_group=shard_group or 0, offload=offload)


def _check_schedule(spec: ModelSpec, pp: int, vpp: int, schedule: str) -> None:
    if schedule not in SCHEDULES:
        raise SpecError(f"expected one of {', '.join(SCHEDULES)}, got {quoted(schedule)}",
                        field="schedule", value=schedule)
    if schedule != "1f1b" and pp == 1:
        raise SpecError(f"the {schedule} schedule is a pipeline schedule; it needs pp above 1",
                        field="schedule", value=schedule)
    if schedule == "dualpipe" and pp % 2:
        raise SpecError(f"DualPipe runs its micro-batches from both ends of the pipeline and "
                        f"needs an even number of stages, got pp {pp}", field="schedule",
                        value=schedule)
    if vpp > 1 and schedule != "interleaved":
        raise SpecError("virtual pipeline stages are the interleaved schedule's",
                        field="vpp", value=vpp)
    if schedule == "interleaved":
        if vpp == 1:
            raise SpecError("the interleaved schedule needs 2 or more virtual stages a GPU",
                            field="vpp", value=vpp)
        if spec.layers % (pp * vpp):
            raise SpecError(f"pp {pp} x vpp {vpp} = {pp * vpp} model chunks do not divide the "
                            f"{spec.layers} layers", field="vpp", value=vpp)
