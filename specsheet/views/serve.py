"""``serve``: one model on GPUs as vLLM lays it out: its document (the serve entry that compare,
check and sweep reuse) and its tables."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from specsheet.views import SCHEMA_VERSION

if TYPE_CHECKING:
    from specsheet.plan.roofline import Estimates
    from specsheet.plan.serving import ServePlan
    from specsheet.views.table import TableView


def serve_entry(plan: ServePlan, est: Estimates | None,
                costs: dict[str, float | None]) -> dict[str, Any]:
    """The figures of serving one model (without the schema version): exact memory per GPU of
    the binding pipeline stage, the fit, and the roofline estimates (null when nothing fits)."""
    report, hw, layout = plan.report, plan.hardware, plan.layout
    return {
        "model": {"name": report.model.name, "origin": report.model.origin,
                  "format": report.weights.format, "format_source": report.weights.source,
                  "dtype": report.dtype,
                  "kv_dtype": plan.request.kv_layout or report.kv.dtype},
        "engine": _engine(plan),
        "hardware": {"name": hw.name, "label": hw.label, "memory_bytes": hw.memory_bytes,
                     "cuda_memory_bytes": hw.cuda_memory_bytes or None,
                     "bandwidth_bytes_per_s": hw.bandwidth_bytes_per_s,
                     "peak_flops_per_s": dict(hw.peak_flops_per_s),
                     "interconnect_bytes_per_s": hw.interconnect_bytes_per_s},
        "parallel": {"gpus": layout.gpus, "tp": layout.tp, "pp": layout.pp, "ep": layout.ep,
                     "dp": layout.dp, "dcp": layout.dcp},
        **_serve_memory(plan),
        "speculative": _speculative(plan),
        "estimates": None if est is None else _estimates_section(plan, est, costs),
        **({"images": images_entry(plan)} if plan.request.images else {}),
    }


def images_entry(plan: ServePlan) -> dict[str, Any]:
    """A request's images (their tokens are in estimates.prompt_tokens) and vLLM's encoder
    budget beside them."""
    from specsheet.plan.serving import encoder_cache
    from specsheet.views.count import image_request

    images = plan.request.images
    assert images is not None
    cache = encoder_cache(images, plan.request.batched_tokens)
    each = images.each
    return {
        **image_request(images),
        "tokens_per_image": each.tokens,
        "embeddings_per_image": each.embeddings,
        "tokens": images.tokens,
        "text_prompt_tokens": plan.request.prompt - images.tokens,
        "encoder_flops": images.encoder_flops,
        "encoder_cache": {"size": cache.size, "compute_budget": cache.compute_budget,
                          "max_tokens_per_item": cache.max_item,
                          "request_embeddings": cache.request,
                          "images_held": cache.images_held},
    }


def _speculative(plan: ServePlan) -> dict[str, Any] | None:
    if plan.request.draft is None:  # no speculative decoding: views/speculative.py not read
        return None
    from specsheet.views.speculative import speculative_section

    return speculative_section(plan)


def _engine(plan: ServePlan) -> dict[str, Any]:
    """The engine whose layout the plan follows, and the MoE kernel it pads the experts for."""
    from specsheet.plan.vllm_layout import ENGINE, default_moe_kernel

    report = plan.report
    mxfp4_moe = report.weights.format == "mxfp4" and report.model.spec.experts > 0
    kernel = (plan.request.moe_kernel or default_moe_kernel(plan.hardware)) if mxfp4_moe \
        else None
    return {"name": ENGINE.name, "version": ENGINE.version, "moe_kernel": kernel}


def fit_section(plan: ServePlan) -> dict[str, Any]:
    """The verdict and what it rests on: weights_fit (exact), the margin after one request of
    max_model_len, and the estimated terms inside it (0 with a given KV pool)."""
    s = plan.binding
    estimated = 0 if plan.kv_memory_given else s.activation_bytes + s.overhead_bytes
    if plan.kv_memory_given:
        margin = s.kv_pool_bytes - s.kv_bytes_per_request
    else:
        margin = (s.budget_bytes - s.weights_bytes - s.buffers_bytes - estimated
                  - s.kv_bytes_per_request)
    weights_fit = all(st.weights_bytes + st.buffers_bytes <= st.budget_bytes
                      for st in plan.stages)
    verdict = ("does_not_fit" if not plan.fits else "tight" if margin < estimated else "fits")
    return {"verdict": verdict, "weights_fit": weights_fit, "margin_bytes": margin,
            "estimated_bytes": estimated}


def calibration_section(plan: ServePlan) -> dict[str, Any] | None:
    """The figures of a vLLM log beside specsheet's (null without a log)."""
    if plan.calibration_source is None:
        return None
    return {"figures": [{"name": name, "log": logged, "specsheet": ours,
                         "difference": ours - logged} for name, logged, ours in plan.calibration],
            "source": plan.calibration_source}


def calibration_view(plan: ServePlan) -> TableView:
    """The calibration as a table: figure, log, specsheet, difference."""
    from specsheet.units import exact, human_bytes
    from specsheet.views.table import TableView

    view = TableView(title=f"Calibration against {plan.calibration_source}",
                     headers=("Figure", "Log", "specsheet", "Difference"),
                     numeric=(False, True, True, True))

    def text(name: str, value: float) -> str:
        if name.endswith("_bytes"):
            return f"{'-' if value < 0 else ''}{human_bytes(abs(int(value)))}"
        return f"{value:,.2f}" if name == "max_concurrency" else exact(int(value))

    for name, logged, ours in plan.calibration:
        diff = ours - logged
        share = f" ({diff / logged:+.1%})" if logged else ""
        view.add(name.replace("_", " "), text(name, logged), text(name, ours),
                 f"{'+' if diff >= 0 else '-'}{text(name, abs(diff))}{share}")
    view.caption = ("Weights, activation, non-torch and pool against specsheet's prediction; "
                    "blocks, tokens and concurrency from the log's pool. The plan above uses "
                    "the log's measured terms.")
    return view


def _estimates_section(plan: ServePlan, est: Estimates,
                       costs: dict[str, float | None]) -> dict[str, Any]:
    """The roofline estimates of a serve entry, with the costs and their assumptions."""
    from specsheet.plan.roofline import assumptions

    request = plan.request
    return {
        "concurrency": est.concurrency,
        "prompt_tokens": request.prompt,
        "output_tokens": request.output,
        "compute_dtype": est.compute_dtype,
        "peak_flops_per_s": est.peak_flops_per_s,
        "mfu": est.mfu,
        "mbu": est.mbu,
        "prefill_s": est.prefill_s,
        "prefill_compute_s": est.prefill_compute_s,
        "prefill_allreduce_s": est.prefill_allreduce_s,
        "decode_context": est.decode_context,
        "decode_step_s": est.decode_step_s,
        "decode_bytes_per_step": est.decode_bytes,
        "decode_flops_per_step": est.decode_flops,
        "experts_touched": est.experts_touched,
        "tokens_per_s_per_request": est.tokens_per_s_per_request,
        "tokens_per_s_total": est.tokens_per_s_total,
        "tokens_per_s_end_to_end": est.tokens_per_s_end_to_end(request.output),
        "usd_per_gpu_hour": est.price,
        "tokens_per_word": est.tokens_per_word,
        "text_tokens": est.text_tokens,
        "text_words": est.text_words,
        **costs,
        "assumptions": assumptions(plan, est),
    }


def _serve_memory(plan: ServePlan) -> dict[str, Any]:
    """The sections of a serve entry that change with the tokens of a request."""
    request, s = plan.request, plan.binding
    return {
        "request": {"max_model_len": request.max_model_len,
                    "max_num_batched_tokens": request.batched_tokens,
                    "max_num_seqs": request.max_seqs,
                    "memory_utilization": None if plan.kv_memory_given
                    else float(plan.utilization),
                    "prefix_caching": request.prefix_caching,
                    "mamba_cache_mode": request.mamba_cache_mode},
        "memory_per_gpu": {
            "stage": s.stage,
            "layers": s.layers,
            "capacity_bytes": s.capacity_bytes,
            "budget_bytes": s.budget_bytes,
            "weights_bytes": s.weights_bytes,
            "buffers_bytes": s.buffers_bytes,
            "lora_bytes": s.lora_bytes,
            "allocator_bytes": s.allocator_bytes,
            "activation_bytes": s.activation_bytes,
            "overhead_bytes": s.overhead_bytes,
            "kv_pool_bytes": s.kv_pool_bytes,
            "kv_pool_given": plan.kv_memory_given,
            "kv_bytes_per_token": s.kv_bytes_per_token,
            "kv_bytes_per_request": s.kv_bytes_per_request,
            "state_bytes_per_request": s.state_bytes_per_request,
        },
        "kv_blocks": {
            "block_size": s.block_size,
            "page_bytes": s.page_bytes,
            "state_page_bytes": s.state_page_bytes,
            "groups": [{"window": g.window, "layers": g.layers, "state": g.state}
                       for g in s.groups],
            "layers_per_group": s.layers_per_group,
            "num_blocks": s.num_blocks,
            "blocks_per_request": s.blocks_per_request,
            "vllm_max_concurrency": plan.vllm_max_concurrency,
            "vllm_kv_tokens": s.vllm_kv_tokens,
            "state_pages_per_request": s.state_pages if s.state_page_bytes else 0,
        },
        "kv_offload": _offload(plan),
        "stages": [{"stage": st.stage, "layers": st.layers, "weights_bytes": st.weights_bytes,
                    "activation_bytes": st.activation_bytes, "kv_pool_bytes": st.kv_pool_bytes,
                    "num_blocks": st.num_blocks, "max_concurrency": st.max_concurrency}
                   for st in plan.stages],
        "fits": plan.fits,
        "fit": fit_section(plan),
        "calibration": calibration_section(plan),
        "max_concurrency": plan.max_concurrency,
        "max_context": plan.max_context,
    }


def _offload(plan: ServePlan) -> dict[str, int] | None:
    o = plan.kv_offload
    return None if o is None else {"bytes": o.bytes, "bytes_per_block": o.bytes_per_block,
                                   "blocks": o.blocks, "tokens": o.tokens}


def serve_document(plan: ServePlan, est: Estimates | None,
                   costs: dict[str, float | None]) -> dict[str, Any]:
    """The document of ``serve``."""
    return {"schema_version": SCHEMA_VERSION, **serve_entry(plan, est, costs)}



def schemas() -> dict[str, Any]:
    """The schema of ``serve_entry`` and of ``serve_document`` (``serve``: the entry and its
    schema_version)."""
    from specsheet.views.schema import VERSION, ints, obj, optional
    from specsheet.views.speculative import speculative_schema

    count = {"type": "integer", "minimum": 0}
    seconds = {"type": "number", "minimum": 0}
    usd = {"type": ["number", "null"], "minimum": 0}
    estimates = obj({
        "concurrency": {"type": "integer", "minimum": 1},
        "prompt_tokens": {"type": "integer", "minimum": 1},
        "output_tokens": {"type": "integer", "minimum": 1},
        "compute_dtype": {"type": "string"},
        "peak_flops_per_s": {"type": "integer", "minimum": 1},
        "mfu": {"type": "number"}, "mbu": {"type": "number"},
        "prefill_s": {**seconds, "description": "time to first token (estimate)"},
        "prefill_compute_s": seconds, "prefill_allreduce_s": seconds,
        "decode_context": {"type": "integer", "minimum": 1,
                           "description": "tokens of each request at the average decode step"},
        "decode_step_s": seconds,
        "decode_bytes_per_step": {"type": "number", "minimum": 0,
                                  "description": "weights touched and KV read, all stages"},
        "decode_flops_per_step": count,
        "experts_touched": {"type": "number", "minimum": 0, "maximum": 1},
        "tokens_per_s_per_request": {"type": "number", "minimum": 0},
        "tokens_per_s_total": {"type": "number", "minimum": 0},
        "tokens_per_s_end_to_end": {"type": "number", "minimum": 0,
                                    "description": "output tokens/s with the prefills counted"},
        "usd_per_gpu_hour": usd,
        "tokens_per_word": {"type": ["number", "null"]},
        "text_tokens": {"type": ["integer", "null"], "minimum": 0,
                        "description": "with a text: its tokens under the model's tokenizer"},
        "text_words": {"type": ["integer", "null"], "minimum": 1,
                       "description": "with a text: its words (runs of non-white-space)"},
        "usd_per_request": usd,
        "usd_per_million_output_tokens": usd,
        "usd_per_million_input_tokens": usd,
        "usd_per_million_output_words": usd,
        "assumptions": {"type": "array", "items": {"type": "string"}},
    }, "Roofline estimates (upper bounds on speed at mfu = mbu = 1) for the request "
       "shape; null when no "
       "request fits.")
    entry = obj({
        "model": obj({"name": {"type": "string"}, "origin": {"type": "string"},
                      "format": {"type": "string"},
                      "format_source": {"enum": ["config", "option", "default"]},
                      "dtype": {"type": ["string", "null"]},
                      "kv_dtype": {"type": "string"}}),
        "engine": obj({"name": {"type": "string"}, "version": {"type": "string"},
                       "moe_kernel": {"type": ["string", "null"],
                                      "description": "the MXFP4 MoE kernel whose padding the "
                                                     "experts follow; null without"}},
                      "The engine whose layout the plan follows (docs/serving.md)."),
        "hardware": obj({"name": {"type": "string"}, "label": {"type": "string"},
                         "memory_bytes": count,
                         "cuda_memory_bytes": {"type": ["integer", "null"], "description":
                                               "the total CUDA reports, which the pool is "
                                               "sized from; null: not in the catalog"},
                         "bandwidth_bytes_per_s": count,
                         "peak_flops_per_s": {"type": "object",
                                              "additionalProperties": count},
                         "interconnect_bytes_per_s": count}),
        "parallel": ints("gpus", "tp", "pp", "ep", "dp", "dcp", minimum=1),
        "request": obj({"max_model_len": {"type": "integer", "minimum": 1},
                        "max_num_batched_tokens": {"type": "integer", "minimum": 1},
                        "max_num_seqs": {"type": "integer", "minimum": 1},
                        "memory_utilization": {"type": ["number", "null"]},
                        "prefix_caching": {"type": "boolean"},
                        "mamba_cache_mode": {"enum": ["none", "align", "all"],
                                             "description": "the state pages a hybrid's "
                                             "request keeps: none (prefix caching off) 1, "
                                             "align 2, all one per block"}}),
        "memory_per_gpu": obj({
            "stage": count, "layers": count, "capacity_bytes": count, "budget_bytes": count,
            "weights_bytes": count,
            "buffers_bytes": {**count, "description": "what vLLM allocates beside the weights "
                              "at load (the rotary cos/sin cache, the LoRA slots, a "
                              "speculative draft), subtracted from the pool"},
            "lora_bytes": {**count, "description": "the LoRA adapter slots among "
                           "buffers_bytes (0 without LoRA slots)"},
            "allocator_bytes": {**count, "description": "PyTorch's caching allocator's "
                                "rounding and unsplit segment tails among buffers_bytes, for "
                                "weights stored in a dtype (0 for a quantization format)"},
            "activation_bytes": {**count, "description": "an estimate"},
            "overhead_bytes": {**count, "description": "an estimate"},
            "kv_pool_bytes": count, "kv_pool_given": {"type": "boolean"},
            "kv_bytes_per_token": count,
            "kv_bytes_per_request": {**count, "description": "a request of max_model_len in "
                                     "whole blocks, its state included"},
            "state_bytes_per_request": {**count, "description": "the part of "
                                        "kv_bytes_per_request holding a hybrid model's state "
                                        "(Mamba, gated DeltaNet), in padded pages; 0 without"},
        }, "One GPU of the pipeline stage that admits the fewest requests (exact)."),
        "kv_blocks": obj({
            "block_size": {"type": "integer", "minimum": 1,
                           "description": "tokens per attention block: 16, raised for a "
                                          "hybrid until one page holds a state"},
            "page_bytes": count,
            "state_page_bytes": {**count, "description": "one state layer's page for one "
                                 "request before padding to page_bytes; 0 without state"},
            "groups": {"type": "array", "items": obj({
                "window": count, "layers": count, "state": {"type": "boolean"}})},
            "layers_per_group": count, "num_blocks": count, "blocks_per_request": count,
            "vllm_max_concurrency": {"type": "number", "minimum": 0},
            "vllm_kv_tokens": {**count, "description": "vLLM's \"GPU KV cache size\" in "
                               "tokens: num_blocks // groups x block_size"},
            "state_pages_per_request": {**count, "description": "pages one state layer "
                                        "keeps for a request of max_model_len (the "
                                        "mamba_cache_mode's); 0 without state layers"},
        }, "vLLM's KV-cache blocks on that GPU."),
        "kv_offload": {"oneOf": [{"type": "null"}, obj({
            "bytes": count,
            "bytes_per_block": {**count, "description": "one block of every layer on every "
                                "GPU of the engine: page x layers per group x tp x pp"},
            "blocks": {**count, "description": "CPU blocks: bytes // bytes_per_block"},
            "tokens": {**count, "description": "blocks // groups x block_size; CPU tokens, "
                       "not GPU blocks: concurrency is unchanged"}},
            "vLLM's native CPU KV offload; null without it.")]},
        "stages": {"type": "array", "items": ints("stage", "layers", "weights_bytes",
                                                  "activation_bytes", "kv_pool_bytes",
                                                  "num_blocks", "max_concurrency")},
        "fits": {"type": "boolean"},
        "fit": obj({"verdict": {"enum": ["fits", "tight", "does_not_fit"]},
                    "weights_fit": {"type": "boolean", "description": "the weights alone "
                                    "within the budget on every GPU (exact)"},
                    "margin_bytes": {"type": "integer", "description": "the budget left "
                                     "after one request of max_model_len"},
                    "estimated_bytes": {**count, "description": "the estimated terms in the "
                                        "margin; tight: margin below them"}},
                   "The verdict and the estimates it rests on."),
        "max_concurrency": count,
        "calibration": {"oneOf": [{"type": "null"}, obj({
            "figures": {"type": "array", "items": obj({
                "name": {"type": "string"}, "log": {"type": "number"},
                "specsheet": {"type": "number"}, "difference": {"type": "number"}})},
            "source": {"type": "string"}},
            "A vLLM log's figures beside specsheet's; null without a log.")]},
        "max_context": count,
        "speculative": speculative_schema(),
        "estimates": {"oneOf": [{"type": "null"}, estimates]},
        "images": obj({
            "count": {"type": "integer", "minimum": 1},
            "width": {"type": "integer", "minimum": 1},
            "height": {"type": "integer", "minimum": 1},
            "size_source": {"enum": ["option", "native"]},
            "processor": {"type": "string"},
            "tokens_per_image": count,
            "embeddings_per_image": count,
            "tokens": {**count, "description": "count x tokens_per_image, in "
                       "estimates.prompt_tokens"},
            "text_prompt_tokens": {**count, "description": "the prompt's text tokens"},
            "encoder_flops": {"type": ["integer", "null"], "minimum": 1,
                              "description": "the vision encoder and projector on the "
                                             "request's images, in estimates.prefill_s (null: "
                                             "not counted for this encoder)"},
            "encoder_cache": obj({
                "size": {**count, "description": "encoder embeddings the cache holds: "
                         "max(encoder_cache_size, max_tokens_per_item)"},
                "compute_budget": {**count, "description": "embeddings encoded in one step: "
                                   "max(max_num_batched_encoder_embeds, max_tokens_per_item)"},
                "max_tokens_per_item": {**count, "description": "the embeddings of the "
                                        "largest image the processor makes"},
                "request_embeddings": count,
                "images_held": {**count, "description": "images of this size the cache "
                                "holds at once"}},
                "vLLM's multimodal encoder budget (v1/core/encoder_cache_manager.py), both "
                "settings at their default, max_num_batched_tokens."),
        }, "The images of a request (only with images; docs/image-tokens.md)."),
    }, "Serving one model on GPUs (docs/serving.md).")
    optional(entry, "images")
    return {"serve_entry": entry,
            "serve": optional(obj({"schema_version": VERSION, **entry["properties"]}),
                              "images")}


def serve_views(plan: ServePlan, est: Estimates | None, costs: dict[str, float | None],
                options: Mapping[str, str],
                to_fit: tuple[int | None, int | None] = (None, None)) -> list[TableView]:
    """Memory per GPU as a stacked bar against the capacity, then the fit, then the estimates.
    ``options``: how the reader sets an input, by its name (``price``), for the advice in a
    cell; ``to_fit``: for a plan that does not fit, the fewest GPUs and the longest
    max_model_len that fit (api.serve.to_fit), said under the fit."""
    from specsheet.plan.vllm_layout import ENGINE
    from specsheet.units import exact, human_bytes, percent
    from specsheet.views.table import (
        TableView,
        blocks_text,
        fits_with,
        layers_text,
        seconds_text,
        stacked_bar,
        usd_text,
    )

    s, layout, hw = plan.binding, plan.layout, plan.hardware
    name, price = plan.report.model.name, options["price"]
    shipped = "as shipped: " if plan.report.weights.source == "config" else ""
    where = f"{layout.gpus} x {hw.name}" + (f", tp {layout.tp}" if layout.tp > 1 else "") + (
        f", pp {layout.pp}" if layout.pp > 1 else "") + (
        f", ep {layout.ep}" if layout.ep > 1 else "") + (
        f", dp {layout.dp}" if layout.dp > 1 else "") + (
        f", dcp {layout.dcp}" if layout.dcp > 1 else "")
    stage = f" (stage {s.stage} of {layout.pp}: {layers_text(s.layers)})" if layout.pp > 1 else ""
    memory = TableView(
        title=f"{name} ({shipped}{plan.report.weights.format}) on {where}: memory per GPU"
              f"{stage}",
        headers=("Part", "Bytes", "Of capacity", "", "Exact"),
        numeric=(False, True, True, False, True),
        optional=(False, False, True, True, False),
    )
    cap = s.capacity_bytes
    rotary = s.buffers_bytes - s.lora_bytes - s.allocator_bytes
    buffers = ", ".join(n for n, b in (("Rotary cache", rotary), ("LoRA slots", s.lora_bytes),
                                       ("allocator tails", s.allocator_bytes)) if b)
    parts = [("Weights", s.weights_bytes),
             (buffers[:1].upper() + buffers[1:], s.buffers_bytes),
             ("Activation peak (estimate)", s.activation_bytes),
             ("Runtime overhead (estimate)", s.overhead_bytes),
             (f"KV pool ({plan.report.kv.dtype})" + (" (given)" if plan.kv_memory_given else ""),
              s.kv_pool_bytes)]
    if s.draft_bytes:  # speculative decoding's draft, a part of its own
        from specsheet.views.speculative import draft_label

        parts[1] = (parts[1][0], s.buffers_bytes - s.draft_bytes)
        parts.insert(1, (draft_label(plan), s.draft_bytes))
    parts = [p for p in parts if p[1] or not p[0].startswith("Rotary")]
    at = 0
    for label, value in parts:
        memory.add(label, human_bytes(value), percent(value, cap),
                   stacked_bar(min(at, cap), min(at + value, cap), cap), exact(value))
        at += value
    if not plan.kv_memory_given:
        memory.add(f"Budget: {float(plan.utilization):g} x capacity",
                   human_bytes(s.budget_bytes), percent(s.budget_bytes, cap),
                   stacked_bar(0, min(s.budget_bytes, cap), cap), exact(s.budget_bytes),
                   style="sub")
    memory.add(f"Capacity ({hw.label})", human_bytes(cap), "100%", stacked_bar(0, cap, cap),
               exact(cap), style="total")
    memory.caption = ("Each bar is one part's place in the GPU's memory, stacked left to right. "
                      "The activation peak and the overhead are estimates (docs/serving.md). "
                      f"Layout as {ENGINE.name} {ENGINE.version} lays it out.")

    fit = TableView(title=f"Fit at max-model-len {exact(plan.request.max_model_len)}: "
                          f"{'fits' if plan.fits else 'DOES NOT FIT'}",
                    headers=("Figure", "Value"), numeric=(False, True))
    fit.add("KV cache per token (one GPU)", f"{exact(s.kv_bytes_per_token)} B")
    state_blocks = s.state_blocks_per_request
    attention = s.blocks_per_request > state_blocks
    if state_blocks:
        if attention:
            fit.add(f"KV cache per request (blocks of {exact(s.block_size)})",
                    f"{human_bytes(s.kv_bytes_per_request - s.state_bytes_per_request)} "
                    f"({blocks_text(s.blocks_per_request - state_blocks)})")
        fit.add("State per request (padded pages)" if attention else
                "State per request (a page a layer)",
                f"{human_bytes(s.state_bytes_per_request)} ({blocks_text(state_blocks)})")
        if attention:
            fit.add("KV + state per request",
                    f"{human_bytes(s.kv_bytes_per_request)} ({blocks_text(s.blocks_per_request)})")
    else:
        fit.add(f"KV cache per request (blocks of {exact(s.block_size)})",
                f"{human_bytes(s.kv_bytes_per_request)} ({exact(s.blocks_per_request)} blocks)")
    if plan.request.draft is not None:
        from specsheet.views.speculative import add_draft_rows

        add_draft_rows(plan, fit)
    fit.add("KV blocks in the pool", exact(s.num_blocks))
    offload = plan.kv_offload
    if offload is not None:
        fit.add("CPU KV offload (no GPU block)", f"{human_bytes(offload.bytes)}: "
                f"{exact(offload.blocks)} blocks, {exact(offload.tokens)} tokens")
    fit.add("Maximum concurrency (requests)",
            f"{exact(plan.max_concurrency)} (vLLM logs {plan.vllm_max_concurrency:.2f}x)")
    context = plan.report.model.spec.context
    fit.add("Longest request alone (tokens)", exact(plan.max_context) + (
        " (the model's context)" if plan.max_context == context else ""))
    fit.caption = ("As vLLM sizes its pool: blocks = pool // (block bytes x layers per group), "
                   "concurrency = blocks / blocks per request (docs/serving.md).")
    gpus, longest = to_fit
    ways = [f"{options['max_model_len']} {longest} or less"] if longest else []
    ways += [f"{options['gpus']} {gpus}"] if gpus else []
    if ways:
        fit.caption += f" {fits_with(ways)}"
    if plan.request.images:
        from specsheet.plan.serving import encoder_cache

        images = plan.request.images
        cache = encoder_cache(images, plan.request.batched_tokens)
        fit.add(f"Image tokens per request ({images.number} x {exact(images.each.tokens)}, "
                f"{images.each.width}x{images.each.height})", exact(images.tokens))
        fit.add("Encoder cache (embeddings)",
                f"{exact(cache.size)} ({exact(cache.images_held)} images)")
        fit.caption += (" The encoder cache holds max(max-num-batched-tokens, the largest "
                        f"image's {exact(cache.max_item)}) embeddings, as vLLM's "
                        "compute_mm_encoder_budget sizes it.")
    if plan.request.draft is not None and s.draft_block_bytes:
        fit.caption += " A block holds the draft's layers' pages too."
    if state_blocks and attention:
        fit.caption += (f" A state page ({exact(s.state_page_bytes)} B per layer, in "
                        f"{plan.report.dtype or 'bf16'}) is padded to the attention block of "
                        f"{exact(s.block_size)} tokens ({exact(s.page_bytes)} B), as vLLM pads "
                        "it.")
    if s.mamba_cache_mode != "none":
        fit.caption += (f" Prefix caching: mamba_cache_mode {s.mamba_cache_mode} keeps "
                        f"{exact(s.state_pages)} state pages a layer per request.")
    if offload is not None:
        fit.caption += (" The offload's CPU blocks hold prefixes evicted from the GPU; "
                        "concurrency is the GPU pool's.")
    views = [memory, fit]
    if plan.calibration_source is not None:
        views.append(calibration_view(plan))
    if est is None:
        return views
    shape = (f"{exact(plan.request.prompt)} in, {exact(plan.request.output)} out, "
             f"{exact(est.concurrency)} at once")
    times = TableView(title=f"Estimates (roofline, mfu {est.mfu:g}, mbu {est.mbu:g}): {shape}",
                      headers=("Estimate", "Value"), numeric=(False, True))
    times.add("Time to first token (prefill)", seconds_text(est.prefill_s))
    if est.prefill_allreduce_s:
        times.add("  of which all-reduce", seconds_text(est.prefill_allreduce_s), style="sub")
    times.add("Decode step", seconds_text(est.decode_step_s))
    times.add("Tokens/s per request", f"{est.tokens_per_s_per_request:,.1f}")
    times.add("Tokens/s in total", f"{est.tokens_per_s_total:,.0f}")
    times.add("  with the prefills counted",
              f"{est.tokens_per_s_end_to_end(plan.request.output):,.0f}", style="sub")
    if plan.report.model.spec.experts:
        times.add("Routed experts read per step", f"{est.experts_touched:.1%}")
    times.add("Cost per request", usd_text(costs["usd_per_request"], price))
    times.add("Cost per million output tokens",
              usd_text(costs["usd_per_million_output_tokens"], price))
    times.add("Cost per million input tokens",
              usd_text(costs["usd_per_million_input_tokens"], price))
    if est.tokens_per_word is not None:
        measured = (f", measured: {exact(est.text_tokens)} tokens / {exact(est.text_words)} "
                    "words" if est.text_tokens is not None and est.text_words else "")
        times.add(f"Cost per million output words ({est.tokens_per_word:.3g} tokens a word"
                  f"{measured})", usd_text(costs["usd_per_million_output_words"], price))
    from specsheet.plan.roofline import speed_wording

    times.caption = (f"Estimates: {speed_wording(est.mfu, est.mbu).removeprefix('roofline: ')}"
                     "; docs/serving.md states every formula.")
    views.append(times)
    return views

