"""Serving plan: a model on N accelerators as vLLM lays it out, and what that leaves for requests.

Exact parts (integers; docs/serving.md cites the vLLM code each follows):

- the weights on one GPU of each pipeline stage: in a dtype, the stage's tensors with each kind of
  block counted once (``sharding.stage_tensors_alike``, ``held_bytes``) and the caching
  allocator's tails (``allocator.py``); in a quantization format, ``sharding.stage_tensors``
  tensor by tensor as the format stores them (``sharding.stored_bytes``);
- the KV cache per request on one GPU at max_model_len tokens, in whole blocks, a hybrid's state
  in pages (``kv_blocks``);
- the KV pool: floor(U x memory) - weights - activation peak - overhead (or ``kv_memory``),
  its blocks (``get_num_blocks``) and the requests that fit (``get_max_concurrency_for_kv_cache_
  config``), on the pipeline stage that holds the fewest.

The activation peak and the runtime overhead are estimates (``activation_estimate``,
``OVERHEAD_BYTES``), labelled so wherever they are shown. The time and cost figures are roofline
estimates (``plan/roofline.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.figures import Report
from specsheet.hardware.catalog import Accelerator
from specsheet.model.memory import DTYPE_BITS
from specsheet.model.spec import STATE_KINDS, ModelSpec
from specsheet.plan.kv_blocks import (
    FP8_DS_MLA_BLOCK,
    FP8_DS_MLA_TOKEN_BYTES,
    KVGroup,
    attention_layers,
    check_kv_layout,
    group_blocks,
    kv_block_size,
    kv_groups,
    kv_values_per_layer,
    state_page_bytes,
    state_pages,
)
from specsheet.plan.parallel import Parallel, pad_vocab, pp_partition
from specsheet.plan.sharding import COMPUTED, Cut, shard
from specsheet.plan.vllm_layout import lora_slot_bytes, rotary_cache_bytes
from specsheet.quant.tensors import Tensor, layer_tensors

if TYPE_CHECKING:
    from specsheet.model.images import Images
    from specsheet.plan.speculative import Draft

DEFAULT_MEMORY_UTILIZATION = "0.9"  # CacheConfig.gpu_memory_utilization
OVERHEAD_BYTES = 2**30  # an estimate: CUDA context, NCCL buffers, CUDA graphs (docs/serving.md)
ACTIVATION_BYTES = 2  # activations in bf16/fp16
LOGIT_BYTES = 4  # the sampler's logits in fp32
GIB = 2**30


class StageMemory(NamedTuple):
    """One GPU of one pipeline stage: what it holds and the KV pool it leaves."""

    stage: int
    layers: int
    capacity_bytes: int
    budget_bytes: int  # floor(U x capacity), or the capacity with a given KV pool
    weights_bytes: int
    expert_bytes: int  # the routed experts among the weights
    activation_bytes: int  # an estimate
    overhead_bytes: int  # an estimate
    kv_pool_bytes: int
    kv_bytes_per_token: int  # one token in every attention layer of the stage, unrounded
    block_size: int  # tokens per attention block (raised for a hybrid)
    page_bytes: int  # one block of one layer (a state layer's page padded to it)
    state_page_bytes: int  # one state layer's page for one request, unpadded (0: no state)
    groups: tuple[KVGroup, ...]
    layers_per_group: int
    num_blocks: int  # pool // page // layers_per_group (get_num_blocks)
    blocks_per_request: int  # at max_model_len
    kv_read_per_token: int  # decode: bytes one request's KV adds per cached position (estimate)
    # buffers vLLM allocates on the GPU beside the weights, counted in its "Model loading
    # took" figure: the rotary cos/sin cache (vllm_layout.rotary_cache_bytes)
    buffers_bytes: int = 0
    dcp: int = 1  # decode context parallelism: a block stands for block_size x dcp tokens
    lora_bytes: int = 0  # the LoRA adapter slots among buffers_bytes
    # the caching allocator's segment tails among buffers_bytes (plan/allocator.py)
    allocator_bytes: int = 0
    mamba_cache_mode: str = "none"  # the state pages a request keeps (kv_blocks.state_pages)
    state_pages: int = 1  # pages of one state layer for a request of max_model_len
    # speculative decoding (plan/speculative.py): the draft's weights among buffers_bytes, its
    # layers' pages in one block, a token of them, and the lookahead slots a request holds
    # beyond its tokens (up to max_model_len)
    draft_bytes: int = 0
    draft_block_bytes: int = 0
    draft_bytes_per_token: int = 0
    lookahead: int = 0
    max_model_len: int = 0

    @property
    def block_bytes(self) -> int:
        """One block in every layer of the stage: the groups' pages and the draft's."""
        return self.page_bytes * self.layers_per_group + self.draft_block_bytes

    def blocks_for(self, tokens: int, batched_tokens: int) -> int:
        """Blocks one request of ``tokens`` holds on this GPU, every group counted; with
        decode context parallelism a full-attention block holds block_size x dcp tokens of
        the request (cache_config's effective block size), each GPU 1 / dcp of them. With
        speculative decoding a request holds its lookahead slots too, up to max_model_len
        (``KVCacheManager.allocate_slots``)."""
        if self.lookahead:
            tokens = min(tokens + self.lookahead, max(tokens, self.max_model_len))
        return sum(group_blocks(g, tokens, batched_tokens, self.block_size * self.dcp,
                                self.mamba_cache_mode) for g in self.groups)

    @property
    def kv_bytes_per_request(self) -> int:
        """The pool one request of max_model_len takes, its state included: blocks x page x
        layers per group."""
        return self.blocks_per_request * self.block_bytes

    @property
    def state_blocks_per_request(self) -> int:
        """The blocks of ``blocks_per_request`` that hold the state: the state pages of the
        mamba_cache_mode (one without prefix caching) per state group."""
        return self.state_pages * sum(1 for g in self.groups if g.state)

    @property
    def state_bytes_per_request(self) -> int:
        """The part of ``kv_bytes_per_request`` that holds the state, in padded pages (a padded
        group's missing layers included, as vLLM allocates them)."""
        return self.state_blocks_per_request * self.page_bytes * self.layers_per_group

    @property
    def vllm_kv_tokens(self) -> int:
        """vLLM's "GPU KV cache size: N tokens": num_blocks // groups x block_size
        (``_report_kv_cache_config``, v1/core/kv_cache_utils.py, through 0.19; 0.20 and later
        print int(concurrency x max_model_len) instead, PR 40694)."""
        if not self.groups:
            return 0
        return self.num_blocks // len(self.groups) * self.block_size * self.dcp

    @property
    def max_concurrency(self) -> int:
        """floor(num_blocks / blocks per request): vLLM's "Maximum concurrency", whole."""
        return self.num_blocks // self.blocks_per_request if self.blocks_per_request else 0

    @property
    def weights_fit(self) -> bool:
        return (self.weights_bytes + self.buffers_bytes + self.activation_bytes
                + self.overhead_bytes <= self.budget_bytes)


def _state_inputs(spec: ModelSpec) -> tuple[Tensor, ...]:
    """The input projection (ssm_in, LFM2's shortconv.in_proj) of the first state layer of
    each kind (the tensors of that layer alone are listed)."""
    firsts: dict[str, Tensor] = {}
    for i, kind in enumerate(spec.layer_types):
        if kind not in firsts and kind in STATE_KINDS:
            firsts.update((kind, t) for t in layer_tensors(spec, i)
                          if t.name.endswith((".ssm_in.weight", ".shortconv.in_proj.weight")))
    return tuple(firsts.values())


def activation_estimate(spec: ModelSpec, layout: Parallel, last: bool, batched_tokens: int,
                        max_seqs: int) -> int:
    """An estimate of vLLM's profile-run peak on a stage that holds layers: max_num_batched_tokens
    x (2 x d + the widest intermediate of a layer on one GPU) x 2 bytes, plus on the last stage
    the sampler's fp32 logits for min(max_num_seqs, max_num_batched_tokens) requests:
    S x pad64(V) / tp x 4."""
    tp, d = layout.tp, spec.d_model
    matrices = 2 if spec.mlp == "gated" else 1
    kv_gpu = max(1, spec.kv_heads // tp)
    if spec.latent_attention:
        attention = spec.heads // tp * (2 * spec.head_dim - spec.qk_rope_head_dim
                                        + spec.v_head_dim)
    else:
        attention = spec.heads // tp * spec.head_dim + 2 * kv_gpu * spec.head_dim
    widths = [attention]
    state_rows = {shard(spec, t, layout).shape[0] for t in _state_inputs(spec)}
    widths += state_rows  # a state layer's input projection on one GPU
    if spec.dense_mlp_layers:
        widths.append(matrices * spec.d_ff // tp)
    if spec.experts:
        expert = spec.expert_d_ff if layout.ep > 1 else spec.expert_d_ff // tp
        widths.append(spec.experts_per_token * matrices * expert
                      + matrices * spec.shared_d_ff // tp)
    total = batched_tokens * (2 * d + max(widths)) * ACTIVATION_BYTES
    if last:
        total += min(max_seqs, batched_tokens) * pad_vocab(spec.vocab) // tp * LOGIT_BYTES
    return total


def _quantized_weights(report: Report, hardware: Accelerator, layout: Parallel, stage: int,
                       layers: range, quant: str, group_size: int | None,
                       moe_kernel: str | None, cut: Cut) -> tuple[int, int]:
    """The bytes of the weights and of the routed experts one GPU of stage ``stage`` holds,
    stored as ``quant`` stores them, tensor by tensor (a format's choices read each tensor's
    name and layer)."""
    spec, dtype, w = report.model.spec, report.dtype, report.weights
    tensors = cut.stage_tensors(spec, layout, stage)
    if w.router_score_bias:  # stored, and loaded whole on every GPU
        from specsheet.quant.tensors import score_bias_tensors

        tensors += score_bias_tensors(spec, layers)
    expert_tensors = tuple(t for t in tensors if "_exps." in t.name)
    if quant == "mxfp4" and spec.experts:  # vLLM's MoE kernels pad the experts
        from specsheet.plan.vllm_layout import default_moe_kernel, mxfp4_expert_bytes

        kernel = moe_kernel or default_moe_kernel(hardware)
        experts = mxfp4_expert_bytes(spec, layout, len({t.layer for t in expert_tensors}),
                                     kernel)
        weights = experts + cut.stored_bytes(
            spec, tuple(t for t in tensors if "_exps." not in t.name), dtype, quant,
            group_size, w.keep, w.match, w.file_types)
    else:
        weights = cut.stored_bytes(spec, tensors, dtype, quant, group_size, w.keep, w.match,
                                   w.file_types)
        experts = cut.stored_bytes(spec, expert_tensors, dtype, quant, group_size, w.keep,
                                   w.match, w.file_types) if spec.experts else 0
    return weights, experts


def stage_memories(report: Report, hardware: Accelerator, layout: Parallel, max_model_len: int,
                   utilization: Share, kv_memory: int | None, batched_tokens: int,
                   max_seqs: int, group_size: int | None, moe_kernel: str | None = None,
                   measured: Measured | None = None, block_size: int | None = None,
                   kv_layout: str | None = None, lora: tuple[int, int] = (0, 16),
                   mamba_mode: str = "none", draft: Draft | None = None,
                   cut: Cut | None = None) -> tuple[StageMemory, ...]:
    """The memory of one GPU of each pipeline stage (``cut``: where its tensors and their
    bytes come from, a search's cache or computed). What every stage shares (the KV block, a
    token's bits, the state page, the draft's pages, the budget) is worked out once."""
    spec = report.model.spec
    quant = report.weights.format if report.weights.quantized else None
    dtype = report.dtype
    cut = cut or COMPUTED
    w = report.weights
    group_size = w.group_size if group_size is None else group_size
    overhead = OVERHEAD_BYTES
    capacity = hardware.device_bytes  # CUDA's total where the catalog has it
    if measured is not None:  # a vLLM log's figures in place of the estimates
        overhead = overhead if measured.overhead is None else measured.overhead
        capacity = capacity if measured.total is None else measured.total
    budget = utilization.of(capacity) if kv_memory is None else capacity
    values = kv_values_per_layer(spec, layout.tp)
    kv_dtype = report.kv.dtype
    state_dtype = dtype or "bf16"
    check_kv_layout(spec, kv_layout)
    block = block_size or (FP8_DS_MLA_BLOCK if kv_layout else
                           kv_block_size(spec, hardware, layout.tp, kv_dtype, state_dtype,
                                         max_model_len, layout.dcp, mamba_mode))
    state_page = state_page_bytes(spec, layout.tp, state_dtype)
    token_bits = FP8_DS_MLA_TOKEN_BYTES * 8 if kv_layout else values * DTYPE_BITS[kv_dtype]
    page = -(-block * token_bits // 8) if spec.attention_layers else state_page
    draft_bytes, draft_block, draft_per_token = _draft(report, draft, layout, block, token_bits,
                                                       quant, group_size)
    pages = state_pages(mamba_mode, max_model_len, block * layout.dcp)
    peak = activation_estimate(spec, layout, False, batched_tokens, max_seqs) \
        if layout.pp > 1 else 0
    last_peak = activation_estimate(spec, layout, True, batched_tokens, max_seqs)
    stages = []
    for stage, layers in enumerate(pp_partition(spec.layers, layout.pp)):
        tails = 0
        if quant is None:  # and the caching allocator's unsplit tails (allocator.py)
            weights, experts, tails = cut.stage_weights(spec, layout, stage, dtype,
                                                        w.router_score_bias)
        else:
            weights, experts = _quantized_weights(report, hardware, layout, stage, layers,
                                                  quant, group_size, moe_kernel, cut)
        attention = attention_layers(spec, layers)
        buffers = rotary_cache_bytes(spec, dtype) if attention else 0
        buffers += tails
        lora_bytes = lora_slot_bytes(spec, layout.tp, layers, *lora, dtype) if lora[0] else 0
        buffers += lora_bytes
        activation = (last_peak if stage == layout.pp - 1 else peak) if layers else 0
        if measured is not None and measured.activation is not None:
            activation = measured.activation
        if kv_memory is None:
            pool = max(0, budget - weights - buffers - activation - overhead - draft_bytes)
        else:
            pool = kv_memory
        buffers += draft_bytes  # loaded with the weights, out of the pool
        groups = tuple(kv_groups(spec, layers))
        per_group = max((g.layers for g in groups), default=0)
        num_blocks = pool // page // per_group if per_group else 0
        if draft_block and per_group:  # one type of full attention: pages summed
            num_blocks = pool // (page * per_group + draft_block)
        blocks = sum(group_blocks(g, max_model_len, batched_tokens, block * layout.dcp,
                                  mamba_mode)
                     for g in groups)  # the lookahead stops at max_model_len
        stages.append(StageMemory(
            stage=stage, layers=len(layers), capacity_bytes=capacity, budget_bytes=budget,
            weights_bytes=weights, expert_bytes=experts, activation_bytes=activation,
            overhead_bytes=overhead, kv_pool_bytes=pool,
            kv_bytes_per_token=token_bits * len(attention) // 8, block_size=block,
            page_bytes=page, state_page_bytes=state_page, groups=groups,
            layers_per_group=per_group, num_blocks=num_blocks, blocks_per_request=blocks,
            kv_read_per_token=token_bits // 8 // layout.dcp, buffers_bytes=buffers,
            dcp=layout.dcp, lora_bytes=lora_bytes, allocator_bytes=tails,
            mamba_cache_mode=mamba_mode, state_pages=pages, draft_bytes=draft_bytes,
            draft_block_bytes=draft_block, draft_bytes_per_token=draft_per_token,
            lookahead=draft.lookahead if draft else 0, max_model_len=max_model_len))
    return tuple(stages)


def _draft(report: Report, draft: Draft | None, layout: Parallel, block: int,
           token_bits: int, quant: str | None, group_size: int | None
           ) -> tuple[int, int, int]:
    """The draft's weights and KV on one GPU, a ``DraftMemory`` (zeros without speculative
    decoding, whose module is then not imported)."""
    if draft is None:
        return 0, 0, 0
    from specsheet.plan.speculative import draft_memory

    w = report.weights
    return draft_memory(report.model.spec, draft, layout, block, token_bits, report.kv.dtype,
                        report.dtype, quant, group_size, w.keep, w.match, w.router_score_bias)


# ---- the plan ----------------------------------------------------------------------------------

class Measured(NamedTuple):
    """Terms a vLLM log measured, in place of the estimates (None: not in the log)."""

    activation: int | None = None  # PyTorch activation peak
    overhead: int | None = None  # non-torch memory
    total: int | None = None  # the device memory CUDA reported


class Request(NamedTuple):
    """The request shape: max_model_len for memory; prompt and output for the estimates."""

    max_model_len: int
    prompt: int
    output: int
    batched_tokens: int  # max_num_batched_tokens
    max_seqs: int  # max_num_seqs
    moe_kernel: str | None = None  # vLLM's MXFP4 MoE kernel (default: by GPU generation)
    block_size: int | None = None  # tokens per KV block (default: as the backend forces it)
    kv_layout: str | None = None  # a vLLM cache layout beyond a dtype: fp8_ds_mla
    max_loras: int = 0  # LoRA adapter slots vLLM preallocates (0: --enable-lora off)
    max_lora_rank: int = 16  # their rank (LoRAConfig.max_lora_rank)
    prefix_caching: bool = False  # --enable-prefix-caching (changes a hybrid's state pages)
    mamba_cache_mode: str = "none"  # resolved by kv_blocks.mamba_cache_mode
    kv_offload: int = 0  # bytes of CPU memory for KV offload, over the engine's GPUs
    images: Images | None = None  # the images of a request (their tokens are in prompt)
    draft: Draft | None = None  # speculative decoding (plan/speculative.py); None: off


class Offload(NamedTuple):
    """vLLM's native CPU KV offload (``--kv-offloading-size``, OffloadingConnector): a CPU
    tier of blocks that GPU blocks are stored to and loaded back from on a prefix hit; it adds
    no GPU block. ``CPUOffloadingSpec`` (v1/kv_offload/cpu/spec.py at 0072b0b7): num_blocks =
    cpu_bytes_to_use // (page x KV-cache tensors x world size), the offloaded block as large
    as the GPU's; cpu_bytes_to_use is the size in bytes, the total over the engine's GPUs."""

    bytes: int  # cpu_bytes_to_use
    bytes_per_block: int  # page x layers per group (one tensor each) x tp x pp
    blocks: int  # num_blocks of the CPU tier
    tokens: int  # blocks // groups x block_size (x dcp), as the GPU's tokens are counted


class EncoderCache(NamedTuple):
    """vLLM's multimodal encoder budget, in encoder embeddings (one per image placeholder).

    vllm/v1/core/encoder_cache_manager.py, ``compute_mm_encoder_budget`` (commit 003ad86e):
    the cache holds max(encoder_cache_size, max_tokens_per_mm_item) embeddings and a step
    encodes at most max(max_num_batched_encoder_embeds, max_tokens_per_mm_item); both settings
    default to max_num_batched_tokens (vllm/config/scheduler.py), and max_tokens_per_mm_item is
    the embeddings of the largest image the processor makes (model/images.max_embeddings)."""

    size: int  # embeddings the cache holds (encoder_cache_size)
    compute_budget: int  # embeddings encoded in one step
    max_item: int  # max_tokens_per_mm_item
    request: int  # the embeddings of one request's images
    images_held: int  # images of the request's size the cache holds at once


def encoder_cache(images: Images, batched_tokens: int) -> EncoderCache:
    """The encoder budget beside ``images`` (vLLM's defaults: both settings are
    ``batched_tokens``)."""
    from specsheet.model.images import max_embeddings

    top = max_embeddings(images.processor)
    size = max(batched_tokens, top)
    return EncoderCache(size, max(batched_tokens, top), top, images.embeddings,
                        size // images.each.embeddings)


class ServePlan(NamedTuple):
    """Every exact figure of serving one model on ``layout`` of ``hardware``."""

    report: Report
    hardware: Accelerator
    layout: Parallel
    request: Request
    utilization: Share
    kv_memory_given: bool
    stages: tuple[StageMemory, ...]
    # figure by figure against a vLLM log: (name, the log's value, specsheet's value)
    calibration: tuple[tuple[str, float, float], ...] = ()
    calibration_source: str | None = None
    calibration_unreadable: tuple[str, ...] = ()  # log lines naming a figure, not read

    @property
    def binding(self) -> StageMemory:
        """The stage that admits the fewest requests (then the one with the most weights)."""
        return min(self.stages, key=lambda s: (s.max_concurrency, -s.weights_bytes))

    @property
    def max_concurrency(self) -> int:
        return min(s.max_concurrency for s in self.stages)

    @property
    def vllm_max_concurrency(self) -> float:
        """num_blocks / blocks per request, as vLLM logs it ("%.2fx")."""
        s = self.binding
        return s.num_blocks / s.blocks_per_request if s.blocks_per_request else 0.0

    @property
    def fits(self) -> bool:
        """Every stage holds its weights and at least one request of max_model_len."""
        return all(s.weights_fit for s in self.stages) and self.max_concurrency >= 1

    @property
    def max_context(self) -> int:
        """The longest request that fits alone (up to the model's context), in tokens."""
        spec = self.report.model.spec
        best = spec.context
        for s in self.stages:
            def fits(t: int, s: StageMemory = s) -> bool:
                return s.blocks_for(t, self.request.batched_tokens) <= s.num_blocks
            if fits(best):
                continue
            low, high = 0, best  # fits(low), not fits(high)
            while high - low > 1:
                mid = (low + high) // 2
                low, high = (mid, high) if fits(mid) else (low, mid)
            best = low
        return best if all(s.weights_fit for s in self.stages) else 0

    @property
    def kv_offload(self) -> Offload | None:
        """The CPU tier of vLLM's native KV offload (None without it): see ``Offload``."""
        if not self.request.kv_offload:
            return None
        s = self.binding
        per_block = s.page_bytes * s.layers_per_group * self.layout.tp * self.layout.pp
        blocks = self.request.kv_offload // per_block if per_block else 0
        tokens = blocks // len(s.groups) * s.block_size * s.dcp if s.groups else 0
        return Offload(self.request.kv_offload, per_block, blocks, tokens)

    def concurrency_at(self, tokens: int) -> int:
        """Requests of ``tokens`` tokens the pool holds at once (every stage)."""
        return min(s.num_blocks // max(1, s.blocks_for(tokens, self.request.batched_tokens))
                   for s in self.stages)


def default_batched_tokens(hardware: Accelerator) -> int:
    """vLLM's `vllm serve` default max_num_batched_tokens: 8,192 on a GPU of 70 GiB or more that
    is not an A100, else 2,048 (EngineArgs.get_batch_defaults)."""
    return 8192 if _large(hardware) else 2048


def default_max_seqs(hardware: Accelerator) -> int:
    """vLLM's `vllm serve` default max_num_seqs: 1,024 on a large GPU, else 256."""
    return 1024 if _large(hardware) else 256


def _large(hardware: Accelerator) -> bool:
    return hardware.memory_bytes >= 70 * GIB and "a100" not in hardware.name.lower()


class Share(NamedTuple):
    """An exact share in (0, 1] written as a decimal: numerator / denominator (0.9 = 9 / 10).
    (fractions.Fraction would cost the start-up its import of decimal.)"""

    numerator: int
    denominator: int

    def of(self, whole: int) -> int:
        """floor(share x whole), exactly."""
        return whole * self.numerator // self.denominator

    def __float__(self) -> float:
        return self.numerator / self.denominator


def parse_utilization(text: str) -> Share:
    """U in (0, 1] from its decimal text (0.9, .95, 1), exactly."""
    whole, _, decimals = text.strip().partition(".")
    digits = whole + decimals
    if not digits or not digits.isascii() or not digits.isdigit():
        raise SpecError(f"expected a number in (0, 1] such as 0.9, got {quoted(text)}",
                        field="memory_utilization", value=text)
    value = Share(int(digits), 10 ** len(decimals))
    if not 0 < value.numerator <= value.denominator:
        raise SpecError(f"expected a number in (0, 1], got {text.strip()}",
                        field="memory_utilization", value=text)
    return value


def over_context(report: Report, max_model_len: int) -> SpecError:
    return SpecError(f"{max_model_len:,} exceeds the context of {report.model.name} "
                     f"({report.model.spec.context:,} tokens)", field="max_model_len",
                     value=max_model_len)


def plan_serving(report: Report, hardware: Accelerator, layout: Parallel, request: Request,
                 utilization: Share | None = None,
                 kv_memory: int | None = None, group_size: int | None = None,
                 measured: Measured | None = None, cut: Cut | None = None) -> ServePlan:
    """Lay ``report``'s model out on ``layout`` GPUs of ``hardware`` (see the module docstring).
    ``report`` gives the weights' format and dtype and the KV dtype; ``cut``, where each
    stage's tensors and their bytes come from (a search passes its cache)."""
    spec = report.model.spec
    utilization = utilization or parse_utilization(DEFAULT_MEMORY_UTILIZATION)
    if request.max_model_len > spec.context:
        raise over_context(report, request.max_model_len)
    stages = stage_memories(report, hardware, layout, request.max_model_len, utilization,
                            kv_memory, request.batched_tokens, request.max_seqs, group_size,
                            request.moe_kernel, measured, request.block_size,
                            request.kv_layout, (request.max_loras, request.max_lora_rank),
                            request.mamba_cache_mode, request.draft, cut)
    return ServePlan(report, hardware, layout, request, utilization, kv_memory is not None,
                     stages)
