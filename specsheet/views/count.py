"""``count``: the document of one model's every figure, its schema, and its breakdown and summary
tables.

Every view module is cut the same way: the document first, then its description
(``schemas()``, assembled by scripts/build_schema.py), then the tables, whose code imports
``views.table``, ``units`` and ``formulas`` inside its functions, so a ``--json`` run loads no
table code."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specsheet.figures import Report
from specsheet.views import SCHEMA_VERSION

if TYPE_CHECKING:
    from specsheet.model.images import Images
    from specsheet.views.table import RowStyle, TableView


def _shares(parts: dict[str, int], whole: int) -> dict[str, float]:
    return {name: value / whole for name, value in parts.items()}


def count_document(report: Report) -> dict[str, Any]:
    """The document of ``count``: every figure of one model."""
    model = report.model
    return {
        "schema_version": SCHEMA_VERSION,
        "name": model.name,
        "description": model.description,
        "origin": model.origin,
        "reference": model.reference,
        "published_total": model.published_total,
        "counted": model.counted,
        "spec": model.spec.as_dict(),
        "params": _params_section(report),
        "memory": _memory_section(report),
        "kv_cache": kv_section(report),
        "flops": flops_section(report),
        **({"images": images_section(report)} if report.images else {}),
    }


def image_request(images: Images) -> dict[str, Any]:
    """The images of a request as asked: how many, their size and where it came from, and the
    processor that counts their tokens (the first keys of count's and serve's images)."""
    return {
        "count": images.number,
        "width": images.each.width,
        "height": images.each.height,
        "size_source": "option" if images.size_given else "native",
        "processor": images.processor.family,
    }


def images_section(report: Report) -> dict[str, Any]:
    """The request's images: each one's tokens as its processor counts them, their sum (in
    kv_cache.tokens and flops.tokens beside the text's), and the language model's prefill FLOPs
    over them."""
    images = report.images
    assert images is not None
    each = images.each
    return {
        **image_request(images),
        "processor_sources": dict(images.processor.sources),
        "resized_width": each.resized_width,
        "resized_height": each.resized_height,
        "crops": each.crops,
        "patches_per_image": each.patches,
        "embeddings_per_image": each.embeddings,
        "special_tokens_per_image": each.special,
        "tokens_per_image": each.tokens,
        "tokens": images.tokens,
        "embeddings": images.embeddings,
        "text_tokens": report.text_tokens,
        "encoder_flops_per_image": images.each_encoder_flops,
        "encoder_flops": images.encoder_flops,
        "language_model_flops": images.tokens * report.flops.total,
        "prefill_flops": images.tokens * report.flops.total + (images.encoder_flops or 0),
    }


def kv_section(report: Report) -> dict[str, Any]:
    """The memory of one request at ``report``'s tokens (a sweep's point moves it)."""
    kv, spec = report.kv, report.model.spec
    return {
        "tokens": kv.tokens,
        "dtype": kv.dtype,
        "elements_per_token": kv.elements_per_token,
        "bytes_per_token": kv.bytes_per_token,
        "bytes_per_request": kv.bytes_per_request,
        "state_bytes": kv.state_bytes,
        "layers_by_kind": spec.layers_by_kind,
        "sliding_window": spec.sliding_window,
        "sliding_layers": len(spec.sliding_layers),
    }


def flops_section(report: Report) -> dict[str, Any]:
    """The forward FLOPs per token at ``report``'s tokens (a sweep's point moves them)."""
    fl = report.flops
    return {
        "tokens": fl.tokens,
        "forward_per_token": fl.total,
        "components": fl.parts(),
        "approx_2n_per_token": report.flops_2n,
        "approx_2n_error_percent": report.flops_2n_error,
    }


def _params_section(report: Report) -> dict[str, Any]:
    p = report.params
    block = p.block
    towers = {"language_model": p.language_model} if p.multimodal else {}
    return {
        "total": p.total,
        **towers,
        "non_embedding": p.non_embedding,
        "active": p.active,
        "components": p.components(),
        "moe": p.moe._asdict(),
        "shares": _shares(p.components(), p.total),
        "per_block": {
            "attention": block.attention,
            "mlp": block.mlp,
            "norms": block.norms,
            "total": block.total,
        },
        # attention and MLP as fractions of their sum: a block's weights without its norms
        "block_shares": _shares(
            {"attention": block.attention, "mlp": block.mlp}, block.attention + block.mlp
        ),
    }


def _memory_section(report: Report) -> dict[str, Any]:
    p = report.params
    return {
        "format": report.weights.format,
        "format_source": report.weights.source,
        "dtype": report.dtype,
        "weights_bytes": report.weights_bytes,
        "bits_per_weight": report.weights_bytes * 8 / p.total,
        "overhead_bytes": report.weights.overhead_bytes,
        "by_component": report.weights.by_component,
        "tensor_types": report.weights.tensor_types,
        "lower_bound": report.weights.lower_bound,
    }



def schemas() -> dict[str, Any]:
    """The schema of ``count_document`` (``count``) and of the spec every document holds."""
    from specsheet.model.flops import ForwardFlops
    from specsheet.model.params import COMPONENTS, MoEParams
    from specsheet.model.vision import TOWER_COMPONENTS
    from specsheet.views.schema import VERSION, ints, numbers, obj, optional, ref

    parts = (*COMPONENTS, *TOWER_COMPONENTS)  # vision and projector: a multimodal checkpoint's

    return {"spec": spec_schema(), "count": optional(obj({
        "schema_version": VERSION,
        "name": {"type": "string"},
        "description": {"type": "string"},
        "origin": {"type": "string", "description": "where the model was loaded from"},
        "reference": {"type": "string", "description": "a URL for the architecture"},
        "published_total": {"type": ["integer", "null"],
                            "description": "the publisher's parameter count, if known"},
        "counted": {"enum": ["whole model", "language model only"],
                    "description": "language model only: a vision or audio tower in the "
                                   "config is not counted (whole model: it is, as the "
                                   "vision and projector components)"},
        "spec": ref("spec"),
        "params": optional(obj({
            "total": {"type": "integer", "minimum": 1,
                      "description": "the whole checkpoint: with a vision tower, its tower "
                                     "and projector too"},
            "language_model": {"type": "integer", "minimum": 1,
                               "description": "a multimodal checkpoint's text model (total "
                                              "without vision and projector); absent for a "
                                              "text-only model"},
            "non_embedding": {"type": "integer", "minimum": 0},
            "active": {"type": "integer", "minimum": 1},
            "components": optional(ints(*parts), *TOWER_COMPONENTS),
            "moe": ints(*MoEParams._fields),
            "shares": optional(numbers(*parts), *TOWER_COMPONENTS),
            "per_block": ints("attention", "mlp", "norms", "total"),
            "block_shares": numbers("attention", "mlp"),
        }, "Parameters (counts)."), "language_model"),
        "memory": obj({
            "format": {"type": "string",
                       "description": "the quantization format, or the dtype without one"},
            "format_source": {"enum": ["config", "option", "default"],
                              "description": "where the format came from: the checkpoint's "
                                             "config (as shipped), an option, or the default"},
            "dtype": {"type": ["string", "null"],
                      "description": "the weights' dtype; with a format, the type given for "
                                     "its unquantized tensors, or null for the format's own"},
            "weights_bytes": {"type": "integer", "minimum": 1,
                              "description": "every stored tensor, all metadata included"},
            "bits_per_weight": {"type": "number", "description": "weights_bytes x 8 / total"},
            "overhead_bytes": {"type": "integer", "minimum": 0,
                               "description": "scales, zero points, indices, global scales"},
            "by_component": optional(ints(*parts), *TOWER_COMPONENTS),
            "tensor_types": {"type": "object",
                             "additionalProperties": {"type": "integer", "minimum": 0},
                             "description": "bytes by stored element type (BF16, Q4_K, I32)"},
            "lower_bound": {"type": "boolean",
                            "description": "int4 without scales: a lower bound"},
        }, "Weight memory in bytes."),
        "kv_cache": obj({
            "tokens": {"type": "integer", "minimum": 1},
            "dtype": {"type": "string"},
            "elements_per_token": {"type": "integer", "minimum": 0},
            "bytes_per_token": {"type": "integer", "minimum": 0},
            "bytes_per_request": {"type": "integer", "minimum": 1},
            "state_bytes": {"type": "integer", "minimum": 0,
                            "description": "the fixed state of state-space and linear-attention "
                                           "layers (0 for pure attention)"},
            "layers_by_kind": {"type": "object", "additionalProperties": {"type": "integer",
                                                                          "minimum": 1}},
            "sliding_window": {"type": "integer", "minimum": 0},
            "sliding_layers": {"type": "integer", "minimum": 0},
        }, "The memory of one request, in bytes: the attention layers' keys and values at T "
           "and the state of the other layers."),
        "flops": obj({
            "tokens": {"type": "integer", "minimum": 1},
            "forward_per_token": {"type": "integer", "minimum": 1},
            "components": ints(*ForwardFlops._fields[1:]),
            "approx_2n_per_token": {"type": "integer", "minimum": 0},
            "approx_2n_error_percent": {"type": "number"},
        }, "Forward FLOPs per token at T = tokens (exact), and the 2N estimate."),
        "images": images_schema(),
    }), "images")}


def images_schema() -> dict[str, Any]:
    """The schema of ``images_section``."""
    from specsheet.views.schema import obj

    count = {"type": "integer", "minimum": 0}
    return obj({
        "count": {"type": "integer", "minimum": 1},
        "width": {"type": "integer", "minimum": 1, "description": "pixels, as given"},
        "height": {"type": "integer", "minimum": 1},
        "size_source": {"enum": ["option", "native"],
                        "description": "native: the encoder's own resolution"},
        "processor": {"enum": ["gemma3", "qwen2_vl", "pixtral"],
                      "description": "the formula (docs/image-tokens.md)"},
        "processor_sources": {"type": "object", "additionalProperties": {"type": "string"},
                              "description": "each processor value and where it was read"},
        "resized_width": {"type": "integer", "minimum": 1,
                          "description": "the image (each crop) as the encoder takes it"},
        "resized_height": {"type": "integer", "minimum": 1},
        "crops": {**count, "description": "Gemma 3's pan-and-scan crops beside the image"},
        "patches_per_image": {**count, "description": "the encoder's input patches"},
        "embeddings_per_image": {**count, "description": "placeholders the encoder fills"},
        "special_tokens_per_image": {**count, "description": "begin, end, row breaks"},
        "tokens_per_image": {**count, "description": "embeddings + special tokens"},
        "tokens": {**count, "description": "count x tokens_per_image, in kv_cache.tokens"},
        "embeddings": count,
        "text_tokens": {**count, "description": "kv_cache.tokens - tokens"},
        "encoder_flops_per_image": {"type": ["integer", "null"], "minimum": 1,
                                    "description": "the vision encoder and projector on one "
                                                   "image (null: not counted for this "
                                                   "encoder)"},
        "encoder_flops": {"type": ["integer", "null"], "minimum": 1,
                          "description": "count x encoder_flops_per_image"},
        "language_model_flops": {**count, "description": "tokens x flops.forward_per_token: "
                                 "the language model's forward over the images' tokens"},
        "prefill_flops": {**count, "description": "language_model_flops + encoder_flops (0 "
                          "for an encoder not counted)"},
    }, "The request's images, only with images (docs/image-tokens.md).")


def spec_schema() -> dict[str, Any]:
    """Every spec field, from specsheet.model.spec.FIELD_DOCS (the schema cannot drift from
    them)."""
    from specsheet.model.spec import FIELD_DOCS, INPUT_ONLY_FIELDS
    from specsheet.views.schema import obj

    types: dict[str, dict[str, Any]] = {
        "int": {"type": "integer", "minimum": 1},
        "count": {"type": "integer", "minimum": 0},
        "bool": {"type": "boolean"},
        "layers": {"type": "array", "items": {"type": "integer", "minimum": 0}},
    }
    properties = {}
    for doc in FIELD_DOCS:
        if doc.name in INPUT_ONLY_FIELDS:
            continue
        if doc.type == "kinds":
            schema: dict[str, Any] = {"type": "array", "items": {"enum": list(doc.choices)}}
        else:
            schema = dict(types.get(doc.type) or {"enum": list(doc.choices)})
        schema["description"] = doc.help
        properties[doc.name] = schema
    return obj(properties, "Every spec field, after defaults are derived (docs/models.md).")


def breakdown_view(report: Report) -> TableView:
    """Part | Formula | Parameters | Share | bar, as in the worked GPT-2 small example."""
    from specsheet.units import exact, percent
    from specsheet.views.formulas import (
        attention_formula,
        layer_norm_formula,
        mlp_formula,
        norm_formula,
    )
    from specsheet.views.table import TableView, layers_text, share_bar

    spec, p = report.model.spec, report.params
    total = p.total
    view = TableView(
        title=f"{report.model.name}: where the {exact(total)} parameters live",
        headers=("Part", "Formula", "Parameters", "Share", ""),
        numeric=(False, False, True, True, False),
        optional=(False, False, False, False, True),
    )

    def line(part: str, formula: str, value: int, style: RowStyle = "") -> None:
        view.add(part, formula, exact(value), percent(value, total), share_bar(value, total),
                 style=style)

    def note(part: str, formula: str, value: int, text: str = "") -> None:
        view.add(part, formula, exact(value), "", text, style="sub")

    e = "e" if spec.embedding_dim != spec.d_model else "d"
    line("Embeddings", "token + position", p.embeddings)
    line("  token", f"V × {e}", p.token_embedding, "sub")
    if spec.positions == "learned":
        pos = "(n_max + 2) × d" if spec.position_offset == 2 else "n_max × d"
        if spec.position_offset not in (0, 2):
            pos = f"(n_max + {spec.position_offset}) × d"
    else:
        pos = f"{spec.positions}: no parameters"
    line("  position", pos, p.position_embedding, "sub")
    if p.embedding_projections:
        line("Embedding projections", "e × d in + d × e out", p.embedding_projections)
    weights = p.block.attention + p.block.mlp
    # A model without attention (or MLP) layers shows the part at 0 with no per-layer formula:
    # the formula would describe a layer the model does not have (Mamba-1, Mamba-2).
    line(f"Attention, {layers_text(spec.attention_layers)}", "L × per layer", p.attention)
    if spec.attention_layers:
        note("  per layer", attention_formula(spec), p.block.attention,
             f"{percent(p.block.attention, weights)} of attention + MLP")
    if p.ssm:
        kinds = ", ".join(f"{n} {kind}" for kind, n in spec.layers_by_kind.items()
                          if kind not in ("attention", "none"))
        parts = "projections, convolution" if set(spec.layer_types) <= {
            "attention", "short_conv", "none"} else "projections, convolution, A, D, dt"
        line(f"State-space layers, {kinds}", parts, p.ssm)
    if not spec.experts:
        line(f"MLP, {layers_text(spec.mlp_layers)}", "L × per layer", p.mlp)
        if spec.mlp_layers:
            note("  per layer", mlp_formula(spec), p.block.mlp,
                 f"{percent(p.block.mlp, weights)} of attention + MLP")
    else:
        moe = p.moe
        line(f"MLP and experts, {layers_text(spec.layers)}", "dense + router + experts", p.mlp)
        shared = " + shared" if moe.shared_experts else ""
        note("  per MoE layer", f"router + {spec.experts} experts{shared}", p.block.mlp,
             f"{percent(p.block.mlp, weights)} of attention + MLP")
        if spec.dense_mlp_layers:
            line(f"  dense MLP, {layers_text(spec.dense_mlp_layers)}", mlp_formula(spec), moe.dense,
                 "sub")
        router = "E × d + E (bias) per layer" if spec.router_bias else "E × d per layer"
        line(f"  router, {layers_text(spec.moe_layers)}", router, moe.router, "sub")
        line(f"  routed experts ({spec.experts} × {spec.moe_layers})",
             f"{mlp_formula(spec, 'f_e')} each", moe.routed_experts, "sub")
        if moe.shared_experts:
            gate = " + d (gate)" if spec.shared_expert_gate else ""
            line("  shared experts", f"{mlp_formula(spec, 'f_s')}{gate} per layer",
                 moe.shared_experts, "sub")
    line("Norms", norm_formula(spec) + (" + the mixers' norms" if p.ssm else ""), p.norms)
    note("  per layer", layer_norm_formula(spec), p.block.norms)
    if spec.tied_embeddings:
        head = "tied to the token embedding"
    else:
        head = f"V × {e}"
    if spec.head_bias:
        head += " + V (bias)"
    line("Output head", head, p.output_head)
    block = "attention + MoE MLP + norms" if spec.experts else "attention + MLP + norms"
    if spec.attention_layers:
        note("One layer", block, p.block.total)
    tower = spec.vision
    if tower is not None:
        line("Language model", "the parts above", p.language_model)
        line(f"Vision tower, {tower.layers} layers", f"{tower.encoder}: {tower.width} wide, "
             f"{tower.patch} × {tower.patch} patches", p.vision)
        line("Projector", f"{tower.projector}: {tower.width} → d", p.projector)
        line("Total", "language model + vision tower + projector", total, "total")
    else:
        line("Total", "sum of the parts", total, "total")
    if spec.experts:
        k = spec.experts_per_token
        note("Active per token", f"total - (E - {k}) experts per MoE layer", p.active,
             f"{percent(p.active, total)} of the total")
    return view


def summary_view(report: Report) -> TableView:
    """Totals, memory, KV cache and FLOPs: a readable figure and the exact integer."""
    from specsheet.units import (
        bits_per_weight,
        exact,
        human_bytes,
        human_count,
        human_flops,
        signed_percent,
    )
    from specsheet.views.table import TableView, describe_layers

    p, kv, fl, model = report.params, report.kv, report.flops, report.model
    t = exact(kv.tokens)
    view = TableView(
        title=f"{model.name}: memory and compute at T = {t} tokens",
        headers=("Figure", "Value", "Exact"),
        numeric=(False, True, True),
        optional=(False, True, False),
    )
    view.add("Parameters", human_count(p.total), exact(p.total))
    if p.multimodal:
        view.add("  language model", human_count(p.language_model), exact(p.language_model),
                 style="sub")
        view.add("  vision tower and projector", human_count(p.towers), exact(p.towers),
                 style="sub")
    view.add("  without embeddings", human_count(p.non_embedding), exact(p.non_embedding),
             style="sub")
    if model.spec.experts:
        view.add(f"  active per token ({model.spec.experts_per_token} of "
                 f"{model.spec.experts} experts)", human_count(p.active), exact(p.active),
                 style="sub")
    if model.counted != "whole model":
        view.add(f"  counted: {model.counted} ({model.description.rsplit(', ', 1)[-1]})", "",
                 "", style="sub")
    if model.published_total is not None:
        verdict = "matches" if model.published_total == p.total else "DIFFERS"
        view.add(f"  published total ({verdict})", human_count(model.published_total),
                 exact(model.published_total), style="sub")
    w = report.weights
    bound = ", a lower bound: no scales or zero points" if w.lower_bound else ""
    shipped = "as shipped: " if w.source == "config" else ""
    view.add(f"Weights ({shipped}{w.format}{bound})", human_bytes(w.weights_bytes),
             f"{exact(w.weights_bytes)} B")
    if w.quantized:
        view.add(f"  {bits_per_weight(w.weights_bytes, p.total)} bits per weight", "", "",
                 style="sub")
        view.add("  scales, zero points and indices", human_bytes(w.overhead_bytes),
                 f"{exact(w.overhead_bytes)} B", style="sub")
        for kind, size in w.tensor_types.items():
            view.add(f"  in {kind} tensors", human_bytes(size), f"{exact(size)} B",
                     style="sub")
    quantized_kv = " (quantized, a scale per tensor)" if kv.dtype in ("fp8", "int8", "int4") \
        else ""
    spec = model.spec
    if kv.state_bytes:
        kinds = ", ".join(f"{n} {kind}" for kind, n in spec.layers_by_kind.items())
        view.add(f"Request memory (T = {t}: KV + state; {kinds})",
                 human_bytes(kv.bytes_per_request), f"{exact(kv.bytes_per_request)} B")
        view.add(f"  KV cache ({kv.dtype}, {spec.attention_layers} attention layers){quantized_kv}",
                 human_bytes(kv.kv_bytes), f"{exact(kv.kv_bytes)} B", style="sub")
        view.add("    per token", human_bytes(kv.bytes_per_token),
                 f"{exact(kv.bytes_per_token)} B", style="sub")
        view.add(f"  state, whatever T (convolutions {kv.dtype}, recurrent fp32)",
                 human_bytes(kv.state_bytes), f"{exact(kv.state_bytes)} B", style="sub")
    else:
        view.add(f"KV cache per request (T = {t}, {kv.dtype}){quantized_kv}",
                 human_bytes(kv.bytes_per_request), f"{exact(kv.bytes_per_request)} B")
        view.add("  per token", human_bytes(kv.bytes_per_token),
                 f"{exact(kv.bytes_per_token)} B", style="sub")
    if spec.sliding_layers:
        view.add(f"  {describe_layers(spec.sliding_layers, spec.layers)} hold at most "
                 f"{exact(spec.sliding_window)} positions (sliding window)", "", "", style="sub")
    if spec.latent_attention:
        view.add("  caches the MLA latent (kv_lora_rank + qk_rope_head_dim per layer)", "", "",
                 style="sub")
    if report.images:
        _image_rows(view, report)
    view.add(f"Forward FLOPs per token (T = {t})", human_flops(fl.total), exact(fl.total))
    for name, label in FLOP_LABELS.items():
        value = fl.parts()[name]
        if value or name not in ("embedding_projections", "ssm"):
            view.add(f"  {label}", human_flops(value), exact(value), style="sub")
    view.add(f"  2N rule (estimate, {signed_percent(report.flops_2n_error)})",
             human_flops(report.flops_2n), exact(report.flops_2n), style="sub")
    view.caption = (
        "FLOPs: matrix multiplications only, a multiply-add is 2 FLOPs, each token attends to "
        "all T positions (no causal halving). Sizes in SI units (1 MB = 10^6 bytes)."
    )
    if report.images:
        each, family = report.images.each, report.images.processor.family
        counted = ("the vision encoder's FLOPs are its and its projector's matrix products, "
                   "once per image" if report.images.encoder_flops is not None else
                   "the vision encoder's FLOPs are not counted for this encoder")
        view.caption += (f" Images: resized to {each.resized_width}x{each.resized_height} as "
                         f"the {family} processor does; per image, the positions the vision "
                         f"encoder fills + special tokens (begin, end, rows); {counted}.")
    if fl.ssm:
        view.caption += (" State-space layers: their depthwise convolution counts as "
                         "FlopCounterMode counts it, and their scan as transformers' PyTorch "
                         "path runs it (docs/conventions.md).")
    return view


def _image_rows(view: TableView, report: Report) -> None:
    """The request's images: their tokens, one image's, and the text's beside them."""
    from specsheet.units import exact, human_count, human_flops

    images = report.images
    assert images is not None
    each = images.each
    native = "" if images.size_given else ", native"
    view.add(f"Image tokens ({images.number} x {each.width}x{each.height}{native})",
             human_count(images.tokens), exact(images.tokens))
    crops = f", {each.crops} crops" if each.crops else ""
    view.add(f"  per image: {exact(each.embeddings)} + {each.special} special "
             f"({images.processor.family}{crops})", "", exact(each.tokens), style="sub")
    view.add("  text beside them", human_count(report.text_tokens),
             exact(report.text_tokens), style="sub")
    if images.encoder_flops is not None:
        view.add("  vision encoder FLOPs", human_flops(images.encoder_flops),
                 exact(images.encoder_flops), style="sub")


FLOP_LABELS = {
    "attention_projections": "attention projections",
    "attention_context": "attention over the context",
    "ssm": "state-space layers (projections, convolution, scan)",
    "mlp": "MLP",
    "logits": "logits (output head)",
    "embedding_projections": "embedding projections",
}


def count_views(report: Report) -> list[TableView]:
    return [breakdown_view(report), summary_view(report)]

