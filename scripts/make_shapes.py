"""Transformers' own tensors of a checkpoint, for the inspect tests: tests/data/shapes/NAME.json.

A developer tool, run by hand in a scratch virtual environment (torch and transformers never
become dependencies of specsheet or of its tests):

    python -m venv /tmp/hf && /tmp/hf/bin/pip install torch transformers
    /tmp/hf/bin/python scripts/make_shapes.py [NAME ...]

Each model is tests/data/NAME.json made small (tests/checkpoints.py's ``small_config``: 2 layers,
d = 64, 4 experts, so that the tests can write real files of it), built on PyTorch's meta device
as scripts/make_goldens.py builds it, and its tensors taken as ``save_pretrained`` would write
them: ``state_dict()``, tied weights removed (``remove_tied_weights_from_state_dict``) and the
weight conversions of transformers 5 reverted (``revert_weight_conversion``: fused experts back
to the per-expert tensors published checkpoints hold). Each file records the config it was built
from, the versions of torch and transformers, and every tensor's name, dtype (safetensors' name)
and shape, in the checkpoint's order.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import torch
import transformers
from make_goldens import build, load
from transformers.core_model_loading import revert_weight_conversion
from transformers.modeling_utils import remove_tied_weights_from_state_dict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
from small import small_config, wide_config  # noqa: E402  (tests/small.py: stdlib only)

SHAPES = ROOT / "tests" / "data" / "shapes"
# one or two of each family the inspect tests cover: dense, GQA, MoE, MLA, fused projections
NAMES = ["gpt2", "llama-3.2-1b", "qwen2.5-0.5b", "qwen3-0.6b", "gemma-2-2b", "mistral-7b-v0.1",
         "mixtral-8x7b", "qwen3-30b-a3b", "qwen1.5-moe-a2.7b", "deepseek-v2-lite",
         "pythia-160m", "phi-3-mini-4k", "olmo-2-7b", "starcoder2-3b"]
# and wide (d = 256: GGML's k-quants need rows of 256), written NAME.wide.json
WIDE = ["mistral-7b-v0.1", "qwen3-30b-a3b"]
DTYPES = {torch.bfloat16: "BF16", torch.float16: "F16", torch.float32: "F32",
          torch.float64: "F64", torch.int64: "I64", torch.int32: "I32", torch.int8: "I8",
          torch.uint8: "U8", torch.bool: "BOOL"}


def shapes(name: str, wide: bool = False) -> dict[str, object]:
    small = wide_config(name) if wide else small_config(name)
    config, _ = load(copy.deepcopy(small))  # transformers rewrites rope_scaling in place
    if (getattr(config, "pad_token_id", None) or 0) >= config.vocab_size:
        config.pad_token_id = None  # Phi-3's 32000 is past the small vocabulary; no tensor
    model = build(config)
    state = remove_tied_weights_from_state_dict(model.state_dict(), model)
    saved = revert_weight_conversion(model, state)
    return {
        "name": name,
        "config_of": "wide_config" if wide else "small_config",
        "built_by": "scripts/make_shapes.py",
        "torch": torch.__version__.split("+")[0],
        "transformers": transformers.__version__,
        "architecture": type(model).__name__,
        "config": small,
        "tensors": {k: [DTYPES[t.dtype], list(t.shape)] for k, t in saved.items()},
    }


def main(names: list[str]) -> int:
    SHAPES.mkdir(parents=True, exist_ok=True)
    todo = [(n, False) for n in names or NAMES] + [(n, True) for n in WIDE if n in (names or WIDE)]
    for name, wide in todo:
        data = shapes(name, wide)
        path = SHAPES / f"{name}{'.wide' if wide else ''}.json"
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"{path.relative_to(ROOT)}: {data['architecture']}, {len(data['tensors'])} tensors")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
