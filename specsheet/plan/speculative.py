"""Speculative decoding as vLLM reserves memory for it (docs/serving.md, "Speculative
decoding"): the draft's weights on every GPU, the KV of its attention layers in the target's
blocks, and the lookahead slots a request holds beyond its tokens.

The rules, read in ``vllm-project/vllm``:

- the methods and their checks: ``vllm/config/speculative.py`` at ``002e77c1``
  (``SpeculativeConfig.__post_init__``, ``_verify_args``, ``_verify_and_get_draft_tp``,
  ``verify_equal_vocab_size_if_draft_model``, ``hf_config_override``): a draft without a method
  is ``draft_model``; tokens need a draft (or ngram, or mtp's own layers); the tokens are
  positive; an MTP draft defaults to its ``n_predict`` (num_nextn_predict_layers) tokens and
  more must be a multiple of it; a ``draft_model`` has the target's vocabulary; the draft's tp
  is the target's unless 1 is given;
- the draft's layers: ``model_executor/models/llama_eagle.py`` at ``00da9231``
  (``EagleLlamaForCausalLM``: the decoder layers, the first without its input norm, and
  ``fc`` [d, 2d]; the embedding and the head are the target's) and ``llama_eagle3.py`` at
  ``00bd1493`` (``Eagle3LlamaForCausalLM``: the first layer's qkv_proj reads 2d, a
  hidden_norm, ``fc`` [d, 3 d_target] replicated, the final norm, its own lm_head of
  draft_vocab_size rows and the int64 draft-to-target map); the MTP module is a decoder layer
  of the target's kind with enorm, hnorm, eh_proj [d, 2d] and the shared head's norm (the
  embedding and head shared with the target when pp is 1);
- the lookahead: ``v1/core/sched/scheduler.py`` at ``00024d31`` (``num_lookahead_tokens`` =
  num_speculative_tokens for eagle, eagle3, mtp and draft_model; 0 for ngram) and
  ``KVCacheManager.allocate_slots`` (the slots a request needs, capped at max_model_len);
- the draft's KV: its attention layers register in the same forward context as the target's
  and share its groups and blocks (``v1/kv_cache_interface.py`` at ``001cabc1``: a block of
  full-attention layers of one type costs the sum of their pages, ``UniformTypeKVCacheSpecs``).
"""

from __future__ import annotations

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, did_you_mean, quoted
from specsheet.model.memory import DTYPE_BITS, bytes_for
from specsheet.model.spec import ModelSpec
from specsheet.plan.kv_blocks import kv_groups, kv_values_per_layer
from specsheet.plan.parallel import Parallel, pad_vocab
from specsheet.plan.sharding import shard, stage_tensors, stored_bytes
from specsheet.quant.tensors import Tensor, model_tensors

# the methods vLLM's SpeculativeConfig accepts that specsheet models
METHODS = ("draft_model", "eagle", "eagle3", "mtp", "ngram")
HEADS = ("eagle", "eagle3")  # an EAGLE head reads the target's hidden states
INT64_BYTES = 8  # Eagle3's draft_id_to_target_id, torch.long


class Draft(NamedTuple):
    """What speculative decoding adds, as the plan needs it: the method, the tokens proposed
    a step, and the draft (None for ngram and for mtp, whose layers are the target's own)."""

    method: str
    tokens: int  # num_speculative_tokens
    name: str | None = None  # the draft model's name
    spec: ModelSpec | None = None  # the draft's spec (eagle, eagle3, draft_model)
    dtype: str | None = None  # the draft's stored dtype (the target's, as vLLM loads it)
    quant: str | None = None  # a draft_model's own shipped format (None: the dtype)
    group_size: int | None = None
    mtp_layers: int = 0  # mtp: the checkpoint's multi-token-prediction layers
    draft_vocab: int | None = None  # eagle3: the head's own vocabulary

    @property
    def lookahead(self) -> int:
        """vLLM's num_lookahead_tokens: the slots a running request holds beyond its tokens
        (0 for ngram, whose proposals need no KV of a draft)."""
        return 0 if self.method == "ngram" else self.tokens

    @property
    def layers(self) -> int:
        """The draft's attention layers, each with its own KV in the target's blocks."""
        if self.method == "mtp":
            return self.mtp_layers
        return self.spec.layers if self.spec is not None else 0


class DraftMemory(NamedTuple):
    """The draft on one GPU: its weights and the KV its layers add to one block."""

    weights_bytes: int  # the draft's weights (and its own rotary cache) on one GPU
    block_bytes: int  # the pages of every draft layer for one block of block_size tokens
    bytes_per_token: int  # one token in every draft layer, unrounded


def check_method(method: str | None, tokens: int | None, draft: bool,
                 draft_ref: str | None = None) -> str:
    """The method as vLLM infers it, after the checks that need no model: a draft without a
    method is draft_model, or eagle / eagle3 when its name says so (``eagle-`` / ``eagle3`` in
    it, as ``SpeculativeConfig.__post_init__`` detects them); tokens without a draft are
    refused unless the method brings its own proposer (ngram) or layers (mtp); ngram and mtp
    take no draft."""
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int)
                               or tokens < 1):
        raise SpecError(f"expected a positive number of tokens, got {quoted(tokens)}",
                        field="speculative_tokens", value=tokens)
    if method is not None and method not in METHODS:
        raise SpecError("unknown speculative method "
                        f"{quoted(method)}{did_you_mean(method, METHODS)};"
                        f" expected one of {', '.join(METHODS)}", field="speculative_method",
                        value=method)
    if method is None:
        if not draft:
            raise SpecError("speculative tokens need a draft model or a method (vLLM: "
                            "num_speculative_tokens was provided but without speculative "
                            "model)", field="speculative_tokens", value=tokens)
        named = (draft_ref or "").lower()
        method = ("eagle" if "eagle-" in named else "eagle3" if "eagle3" in named
                  else "draft_model")
    if method in ("ngram", "mtp") and draft:
        why = ("proposes from the request's own n-grams and loads no draft model"
               if method == "ngram" else "drafts with the checkpoint's own multi-token-"
               "prediction layers")
        raise SpecError(f"method {method} {why}; drop the draft", field="draft")
    if method in (*HEADS, "draft_model") and not draft:
        raise SpecError(f"method {method} needs its draft model (vLLM: num_speculative_tokens "
                        "was provided but without speculative model)", field="draft")
    if method != "mtp" and tokens is None:
        raise SpecError(f"method {method} needs the number of speculative tokens (vLLM: "
                        "num_speculative_tokens must be provided)", field="speculative_tokens")
    return method


def mtp_tokens(tokens: int | None, layers: int, name: str) -> int:
    """The tokens of an MTP draft: its layers by default (n_predict); more must be a multiple
    of them, as vLLM reuses the modules in turn."""
    if layers < 1:
        raise SpecError(f"{name} has no multi-token-prediction layers (its config's "
                        "num_nextn_predict_layers is 0 or absent, or its family has none "
                        "specsheet models: DeepSeek-V3, GLM-4.5); vLLM refuses method mtp for "
                        "it", field="speculative_method", value="mtp")
    if tokens is None:
        return layers
    if tokens > layers and tokens % layers:
        raise SpecError(f"{tokens} speculative tokens over {layers} MTP layers: vLLM needs a "
                        f"multiple of {layers} (num_speculative_tokens must be divisible by "
                        "n_predict)", field="speculative_tokens", value=tokens)
    return tokens


def check_draft(target: ModelSpec, draft: Draft, layout: Parallel, target_name: str) -> None:
    """What vLLM refuses, or specsheet does not model, for ``draft`` on ``target``."""
    if layout.pp > 1:
        raise SpecError(f"speculative decoding ({draft.method}) is modelled at pp 1 (the "
                        "draft on every GPU of one stage)", field="pp", value=layout.pp)
    groups = kv_groups(target, range(target.layers))
    if draft.method != "ngram" and (len(groups) != 1 or groups[0].window or groups[0].state):
        raise SpecError(f"a draft's KV is modelled for a target whose every layer is full "
                        f"attention; {target_name} has sliding-window or state layers",
                        field="speculative_method", value=draft.method)
    spec = draft.spec
    if spec is None:
        return
    layers = kv_groups(spec, range(spec.layers))
    if len(layers) != 1 or layers[0].window or layers[0].state or spec.latent_attention:
        raise SpecError(f"the draft {draft.name} is modelled when its every layer is full "
                        "attention of plain heads", field="draft", value=draft.name)
    if draft.method == "draft_model" and spec.vocab != target.vocab:
        raise SpecError(f"the draft {draft.name} has a vocabulary of {spec.vocab:,} tokens, "
                        f"{target_name} {target.vocab:,}; vLLM refuses a draft model of "
                        "another vocabulary (verify_equal_vocab_size_if_draft_model)",
                        field="draft", value=draft.name)
    if draft.method in HEADS:
        if spec.d_model != target.d_model:
            raise SpecError(f"an EAGLE head reads {target_name}'s hidden states of width "
                            f"{target.d_model:,}; the draft {draft.name}'s is {spec.d_model:,}",
                            field="draft", value=draft.name)
        if spec.experts or spec.mlp != "gated":
            raise SpecError(f"the EAGLE head {draft.name} is modelled as vLLM's Llama head "
                            "(a gated MLP, no experts)", field="draft", value=draft.name)
    from specsheet.plan.parallel import check_parallel

    try:
        check_parallel(spec, layout.tp, layout.tp, 1)
    except SpecError as e:
        raise SpecError(f"the draft {draft.name} at tp {layout.tp} (vLLM's draft tp is the "
                        f"target's): {e.message}", field="draft", value=draft.name) from None


def draft_memory(target: ModelSpec, draft: Draft, layout: Parallel, block: int,
                 target_token_bits: int, kv_dtype: str, target_dtype: str | None,
                 target_quant: str | None, target_group: int | None,
                 keep: tuple[str, ...] = (), match: str = "exact",
                 score_bias: bool = False) -> DraftMemory:
    """The draft on one GPU of ``layout``: weights and the KV of its layers per block
    (``target_token_bits``: one token of one target layer, which an MTP layer's equals; a
    draft model's layers cache in the target's ``kv_dtype``)."""
    dtype = draft.dtype or target_dtype or "bf16"
    tp = layout.tp
    if draft.method == "ngram":
        return DraftMemory(0, 0, 0)
    if draft.method == "mtp":
        weights = _mtp_bytes(target, draft.mtp_layers, layout, target_dtype, target_quant,
                             target_group, keep, match, score_bias)
        token_bits = target_token_bits
    else:
        spec = draft.spec
        assert spec is not None
        one = Parallel(gpus=tp, tp=tp, pp=1)
        if draft.method == "draft_model":
            weights = stored_bytes(spec, stage_tensors(spec, one, 0), dtype, draft.quant,
                                   draft.group_size)
        else:
            weights = bytes_for(sum(t.elements for t in _head_tensors(
                target, spec, draft, one)), dtype)
            if draft.method == "eagle3":  # the int64 map from draft to target tokens
                weights += (draft.draft_vocab or spec.vocab) * INT64_BYTES
        weights += _draft_rotary(target, spec, dtype)
        token_bits = kv_values_per_layer(spec, tp) * DTYPE_BITS[kv_dtype]
    layers = draft.layers
    return DraftMemory(weights_bytes=weights, block_bytes=-(-block * token_bits // 8) * layers,
                       bytes_per_token=token_bits * layers // 8)


def _layer_tensors(spec: ModelSpec, layout: Parallel) -> list[Tensor]:
    return [shard(spec, t, layout) for t in model_tensors(spec) if t.layer is not None]


def _head_tensors(target: ModelSpec, spec: ModelSpec, draft: Draft, layout: Parallel
                  ) -> list[Tensor]:
    """An EAGLE head's tensors on one GPU (the embedding and, for eagle, the head shared
    with the target, so not its own)."""
    d = spec.d_model
    held: list[Tensor] = []
    for t in _layer_tensors(spec, layout):
        if t.layer == 0 and draft.method == "eagle" and t.name.endswith(".attn_norm.weight"):
            continue  # disable_input_layernorm: nn.Identity
        if t.layer == 0 and draft.method == "eagle3" and t.name.endswith(
                (".attn_q.weight", ".attn_k.weight", ".attn_v.weight")):
            t = t._replace(shape=(t.shape[0], 2 * t.shape[1]))  # embeds + hidden states
        held.append(t)
    if draft.method == "eagle":
        held.append(Tensor("fc.weight", (d, 2 * d), "eagle", "linear"))
        return held
    vocab = draft.draft_vocab or spec.vocab
    held += [Tensor("blk.0.hidden_norm.weight", (d,), "norms", "norm", 0),
             Tensor("fc.weight", (d, 3 * target.d_model), "eagle", "linear"),
             Tensor("output_norm.weight", (d,), "norms", "norm"),
             Tensor("output.weight", (pad_vocab(vocab) // layout.tp, d), "output_head",
                    "head")]
    return held


def _draft_rotary(target: ModelSpec, spec: ModelSpec, dtype: str) -> int:
    """The draft's own rotary cos/sin cache: none when it equals the target's (get_rope hands
    out one instance per shape, ``_ROPE_DICT``)."""
    from specsheet.plan.vllm_layout import rotary_cache_bytes

    if (spec.context, spec.head_dim, spec.positions) == (target.context, target.head_dim,
                                                         target.positions):
        return 0
    return rotary_cache_bytes(spec, dtype)


def _mtp_bytes(target: ModelSpec, layers: int, layout: Parallel, dtype: str | None,
               quant: str | None, group_size: int | None, keep: tuple[str, ...], match: str,
               score_bias: bool) -> int:
    """The MTP modules on one GPU: each a decoder layer like the target's last (stored in the
    target's format, as vLLM aligns the draft's quantization to it), with enorm, hnorm and
    the shared head's norm (d each) and eh_proj [d, 2d] in the model's dtype, whole."""
    last = target.layers - 1
    tensors = tuple(shard(target, t, layout) for t in model_tensors(target) if t.layer == last)
    if score_bias:
        from specsheet.quant.tensors import score_bias_tensors

        tensors += score_bias_tensors(target, range(last, last + 1))
    layer = stored_bytes(target, tensors, dtype, quant, group_size, keep, match)
    d = target.d_model
    return layers * (layer + bytes_for(3 * d + 2 * d * d, dtype or "bf16"))
