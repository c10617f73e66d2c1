"""A GGUF file as a model's format: the GGML type the file holds for each of the tensors of the
model its metadata describes, so that count, serve and the rest store that model's tensors as
the file stores them (not as llama-quantize's rule for the file type would).

llama.cpp's converter fuses some tensors (``convert_hf_to_gguf.py``): GPT-2's, GPT-NeoX's and
Phi-3's q, k and v in one ``attn_qkv``, Phi-3's gate and up in one ``ffn_up`` of twice the rows.
A fused tensor's type is each part's: GGML stores a tensor row by row (``ggml_row_size`` x
rows), so the parts' rows of the same length take the fused tensor's bytes between them.
"""

from __future__ import annotations

from specsheet.compiled import NamedTuple
from specsheet.model.spec import ModelSpec
from specsheet.quant.formats import FORMATS, GGML_TYPES
from specsheet.quant.layouts import gguf_types
from specsheet.quant.stored import TensorInfo
from specsheet.quant.tensors import model_tensors

# a fused tensor -> the parts specsheet's tensors name (plan/inspection.py reads them alike)
_FUSED = {"attn_qkv": ("attn_q", "attn_k", "attn_v"), "ffn_up": ("ffn_gate", "ffn_up")}


class FileTypes(NamedTuple):
    """The file's types of the model's tensors, the llama-quantize file type whose rule gives
    the same types (None: no rule does), and why the file's types cannot be used ("" when
    they can)."""

    types: tuple[tuple[str, str], ...]
    mixture: str | None
    problem: str


def file_types(spec: ModelSpec, tensors: list[TensorInfo]) -> FileTypes:
    """The GGML type of each of ``spec``'s tensors in a file of ``tensors``: every tensor of
    the model found in the file (or in the fused tensor that holds it) with its shape, and
    every tensor of the file so found (the bytes of both sides are then the same)."""
    held = {t.name: t for t in tensors}
    used: dict[str, int] = {}  # the file's tensor -> the model's values it holds
    types: list[tuple[str, str]] = []
    for t in model_tensors(spec):
        found = held.get(t.name)
        if found is not None and found.shape != t.shape:
            fused = _fused(t.name, held)
            if fused is None:
                return FileTypes((), None, f"its tensor {t.name} is {list(found.shape)}, "
                                 f"not the {list(t.shape)} its metadata gives")
            found = fused
        elif found is None:
            found = _fused(t.name, held)
            if found is None:
                return FileTypes((), None, f"it holds no tensor {t.name}")
        if found.dtype not in GGML_TYPES:
            return FileTypes((), None, f"specsheet has no layout of GGML type {found.dtype} "
                             f"(tensor {found.name})")
        used[found.name] = used.get(found.name, 0) + t.elements
        types.append((t.name, found.dtype))
    for name, elements in used.items():
        if elements != held[name].elements:
            return FileTypes((), None, f"its tensor {name} {list(held[name].shape)} holds "
                             f"{held[name].elements:,} values, not the {elements:,} of the "
                             "tensors of its metadata's model it stands for")
    extra = [name for name in held if name not in used]
    if extra:
        more = f" and {len(extra) - 1:,} more" if len(extra) > 1 else ""
        return FileTypes((), None, f"it holds {extra[0]}{more}, which its metadata's model "
                         "has not")
    return FileTypes(tuple(types), _mixture(spec, dict(types)), "")


def _fused(name: str, held: dict[str, TensorInfo]) -> TensorInfo | None:
    """The fused tensor of the file that holds ``name`` (blk.3.attn_q.weight in
    blk.3.attn_qkv.weight), or None."""
    parts = name.split(".")
    if len(parts) != 4 or parts[0] != "blk":
        return None
    for fused, members in _FUSED.items():
        if parts[2] in members:
            found = held.get(".".join((parts[0], parts[1], fused, parts[3])))
            if found is not None:
                return found
    return None


def _mixture(spec: ModelSpec, types: dict[str, str]) -> str | None:
    """The gguf-* format whose llama-quantize rule gives exactly ``types``, or None."""
    from specsheet.errors import SpecError

    for name, fmt in FORMATS.items():
        if fmt.family != "gguf":
            continue
        try:
            if gguf_types(spec, name.removeprefix("gguf-")) == types:
                return name
        except SpecError:
            continue
    return None
