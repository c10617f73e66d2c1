"""Which tensors a checkpoint leaves unquantized: its config's module lists matched against
specsheet's tensors.

A config.json names modules as transformers and vLLM do (``model.layers.0.self_attn.q_proj``,
``lm_head``); specsheet's tensors carry GGUF names (``blk.0.attn_q.weight``). ``module_names``
gives a tensor's module under the names the common families use (Llama's ``mlp``, Mixtral's
``block_sparse_moe``, gpt-oss's ``router``), and ``kept`` says whether an entry of the list
covers it, as vLLM matches them:

- exact (vLLM ``quantization/utils/quant_utils.py::is_layer_skipped``, compressed-tensors
  ``utils.py::should_ignore_layer``): the module itself or a parent module (``lm_head``,
  ``model.layers.3.self_attn``); ``re:`` entries are regular expressions matched from the start
  (``re.match``); entries with ``*`` are globs (gpt-oss's ``model.layers.*.self_attn``);
- substring (AWQ's ``is_layer_skipped_awq``, bitsandbytes' ``llm_int8_skip_modules``): the
  entry anywhere in the module's name (``visual``, ``lm_head``).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable

from specsheet.quant.tensors import Tensor

# GGUF module -> the HF module under each family's spelling (after model.layers.N.)
_LAYER_MODULES: dict[str, tuple[str, ...]] = {
    "attn_q": ("self_attn.q_proj",),
    "attn_k": ("self_attn.k_proj",),
    "attn_v": ("self_attn.v_proj",),
    "attn_qkv": ("self_attn.qkv_proj", "self_attn.query_key_value"),
    "attn_output": ("self_attn.o_proj", "self_attn.dense"),
    "attn_q_a": ("self_attn.q_a_proj",),
    "attn_q_b": ("self_attn.q_b_proj",),
    "attn_kv_a_mqa": ("self_attn.kv_a_proj_with_mqa",),
    "attn_kv_b": ("self_attn.kv_b_proj",),
    "attn_sinks": ("self_attn.sinks",),
    "ffn_gate": ("mlp.gate_proj",),
    "ffn_up": ("mlp.up_proj",),
    "ffn_down": ("mlp.down_proj",),
    "ffn_gate_inp": ("mlp.gate", "mlp.router", "block_sparse_moe.gate"),
    "ffn_gate_exps": ("mlp.experts.gate_proj", "mlp.experts.gate_up_proj",
                      "block_sparse_moe.experts.w1"),
    "ffn_up_exps": ("mlp.experts.up_proj", "mlp.experts.gate_up_proj",
                    "block_sparse_moe.experts.w3"),
    "ffn_down_exps": ("mlp.experts.down_proj", "block_sparse_moe.experts.w2"),
    "ffn_gate_shexp": ("mlp.shared_experts.gate_proj", "mlp.shared_expert.gate_proj"),
    "ffn_up_shexp": ("mlp.shared_experts.up_proj", "mlp.shared_expert.up_proj"),
    "ffn_down_shexp": ("mlp.shared_experts.down_proj", "mlp.shared_expert.down_proj"),
    "ffn_gate_inp_shexp": ("mlp.shared_expert_gate",),
}
_OUTSIDE: dict[str, tuple[str, ...]] = {
    "token_embd": ("model.embed_tokens",),
    "output": ("lm_head",),
    "position_embd": ("model.embed_positions",),
}


def module_names(t: Tensor) -> tuple[str, ...]:
    """The HF module names of the module ``t`` belongs to (empty when specsheet knows none)."""
    parts = t.name.split(".")
    if parts[0] == "blk" and len(parts) > 2:
        return tuple(f"model.layers.{parts[1]}.{m}" for m in _LAYER_MODULES.get(parts[2], ()))
    return _OUTSIDE.get(parts[0], ())


def _covers(entry: str, module: str, match: str) -> bool:
    if entry.startswith("re:"):
        try:
            return re.match(entry[3:], module) is not None
        except re.error:
            return False
    if match == "substring":
        return entry in module
    if "*" in entry:
        return fnmatch.fnmatchcase(module, entry) or fnmatch.fnmatchcase(module, entry + ".*")
    return module == entry or module.startswith(entry + ".")


def kept(t: Tensor, keep: Iterable[str], match: str = "exact") -> bool:
    """Whether an entry of ``keep`` names ``t``'s module (or a parent of it)."""
    names = module_names(t)
    return any(_covers(entry, m, match) for entry in keep for m in names)


def keeper(keep: Iterable[str], match: str = "exact") -> Callable[[Tensor], bool]:
    """``kept`` with ``keep`` read once, for a list of many tensors: each entry's test is made
    beforehand (a regular expression and a glob compiled, as ``re.match`` and
    ``fnmatch.fnmatchcase`` compile them), and answers as ``_covers`` does."""
    tests = [_test(entry, match) for entry in keep]

    def covered(t: Tensor) -> bool:
        return any(test(m) for m in module_names(t) for test in tests)

    return covered


def _test(entry: str, match: str) -> Callable[[str], bool]:
    """``_covers`` of ``entry``, as a test of one module name."""
    if entry.startswith("re:"):
        try:
            pattern = re.compile(entry[3:])
        except re.error:
            return lambda module: False
        return lambda module: pattern.match(module) is not None
    if match == "substring":
        return lambda module: entry in module
    if "*" in entry:  # fnmatchcase: its pattern, translated and compiled
        whole = re.compile(fnmatch.translate(entry)).match
        below = re.compile(fnmatch.translate(entry + ".*")).match
        return lambda module: whole(module) is not None or below(module) is not None
    parent = entry + "."
    return lambda module: module == entry or module.startswith(parent)


def layer_blind(keep: Iterable[str]) -> bool:
    """Whether no entry of ``keep`` can tell one layer's module from another's of the same
    kind, however the entries match (exact, glob or substring): none is a regular expression
    or holds a digit, a ``?`` or a ``[``. A module's name differs from the same module's in
    another layer only in the run of digits of the layer number (``model.layers.N.``); an
    entry without digits meets that run only where a ``*`` takes it whole (a glob), and a
    ``*`` takes any run, so every layer's module is covered alike (a substring without
    digits lies in the parts around the run, which are the same; a parent entry without
    digits ends before it)."""
    return not any(entry.startswith("re:") or any(c.isdigit() or c in "?[" for c in entry)
                   for entry in keep)


def unmatched(tensors: Iterable[Tensor], keep: tuple[str, ...], match: str = "exact"
              ) -> bool:
    """True when ``keep`` is not empty and none of its entries names a module of ``tensors``."""
    if not keep:
        return False
    return not any(kept(t, keep, match) for t in tensors)


def check_patterns(keep: Iterable[str]) -> str | None:
    """The first ``re:`` entry that is no regular expression, else None."""
    for entry in keep:
        if entry.startswith("re:"):
            try:
                re.compile(entry[3:])
            except re.error:
                return entry
    return None
