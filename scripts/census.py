"""The census: every model_type of transformers with a decoder, and what specsheet says of it.

Two steps, so that the test suite runs offline:

    python -m venv /tmp/tf && /tmp/tf/bin/pip install transformers   # no torch needed
    /tmp/tf/bin/python scripts/census.py --refresh   # rewrite tests/data/census/census.json
    python scripts/census.py                          # rewrite the table in docs/models.md

``--refresh`` lists transformers' own tables (transformers.models.auto):
MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES give the
model_types with a decoder class; MODEL_FOR_MASKED_LM_MAPPING_NAMES marks the encoders,
MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES and a configuration whose is_encoder_decoder is set
the encoder-decoders; a configuration class with a text_config sub-configuration is a wrapper
whose language model specsheet reads from text_config. It then writes the docs table as well.

The second step (also run by the first) classifies each model_type with specsheet's own tables:
supported (specsheet.sources.hf_config.families.FAMILIES, with the configs of tests/data whose
figures tests/golden pins against transformers), encoder-only or encoder-decoder, or not
supported with the feature specsheet.sources.hf_config.unsupported.UNSUPPORTED names.
"""

from __future__ import annotations

import datetime
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
CENSUS = DATA / "census" / "census.json"
GOLDEN = ROOT / "tests" / "golden"
DOCS = ROOT / "docs" / "models.md"
SECTION = re.compile(r"(<!-- census -->\n).*?(<!-- /census -->)", re.DOTALL)
sys.path.insert(0, str(ROOT))

from specsheet.sources.hf_config.families import FAMILIES  # noqa: E402
from specsheet.sources.hf_config.unsupported import (  # noqa: E402
    ENCODER_DECODER,
    ENCODER_ONLY,
    UNSUPPORTED,
)
from specsheet.sources.hf_config.vision import WRAPPER_ENCODERS  # noqa: E402


def refresh() -> dict[str, Any]:
    """The raw list, from the transformers installed beside this script."""
    import transformers

    # the module itself, not the lazy package attribute (which wants torch)
    import transformers.models.auto.modeling_auto as auto
    from transformers import CONFIG_MAPPING

    causal = auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    image = auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    masked = auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES
    seq2seq = auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES
    types: dict[str, Any] = {}
    for model_type in sorted(set(causal) | set(image)):
        config = CONFIG_MAPPING[model_type]
        try:
            built = config()
            encoder_decoder = bool(getattr(built, "is_encoder_decoder", False))
            text = getattr(built, "text_config", None)
            text_type = getattr(text, "model_type", None) if text is not None else None
        except Exception:  # a configuration class that needs arguments
            encoder_decoder, text_type = False, None
        types[model_type] = {
            "causal_lm": causal.get(model_type),
            "image_text_to_text": image.get(model_type),
            "config_class": config.__name__,
            "masked_lm": model_type in masked,
            "encoder_decoder": model_type in seq2seq or encoder_decoder,
            "text_config": "text_config" in getattr(config, "sub_configs", {}),
            "text_config_default": text_type,
        }
    return {"transformers": transformers.__version__,
            "date": datetime.date.today().isoformat(), "model_types": types}


def goldens() -> dict[str, list[str]]:
    """The configs of tests/data with a golden, by the model_type of their language model."""
    found: dict[str, list[str]] = {}
    for path in sorted(DATA.glob("*.json")):
        if not (GOLDEN / path.name).exists():
            continue
        data = json.loads(path.read_text())
        for config in (data, data.get("text_config")):
            if isinstance(config, dict) and isinstance(config.get("model_type"), str):
                found.setdefault(config["model_type"], []).append(path.stem)
    return found


def _multimodal_goldens() -> dict[str, list[str]]:
    """The wrappers' goldens of tests/golden/multimodal, by their model_type."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests" / "golden" / "multimodal").glob("*.json")):
        config = json.loads((ROOT / "tests" / "data" / json.loads(path.read_text())["config"])
                            .read_text())
        found.setdefault(config["model_type"], []).append(path.stem)
    return found


def classify(model_type: str, entry: dict[str, Any],
             pinned: dict[str, list[str]]) -> tuple[str, str]:
    """(status, what backs it): supported, language model only, encoder-only,
    encoder-decoder or not supported."""
    if model_type in FAMILIES:
        names = pinned.get(model_type, [])
        return "supported", f"golden: {', '.join(names)}" if names else "no golden"
    if model_type in ENCODER_DECODER or entry["encoder_decoder"]:
        return "encoder-decoder", "not a decoder-only model"
    if model_type in ENCODER_ONLY or entry["masked_lm"]:
        return "encoder-only", "a bidirectional encoder (its causal-LM head aside)"
    if model_type in UNSUPPORTED:
        reason = UNSUPPORTED[model_type]
        if reason.same or reason.identical:
            return "not supported", (f"{reason.feature}: relabelled as {reason.closest}, the "
                                     "same model and figures")
        closest = f" (closest: {reason.closest})" if reason.closest else ""
        return "not supported", reason.feature + closest
    if model_type in WRAPPER_ENCODERS:
        golden = ", ".join(sorted(_multimodal_goldens().get(model_type, []))) or "no golden"
        encoders = ", ".join(WRAPPER_ENCODERS[model_type])
        return "whole checkpoint", (f"language model, vision tower ({encoders}) and projector "
                                    f"counted; golden: {golden}")
    if entry["text_config"]:
        text = entry["text_config_default"]
        golden = f"; golden: {', '.join(pinned[model_type])}" if model_type in pinned else ""
        if text is not None and text not in FAMILIES:
            why = UNSUPPORTED[text].feature if text in UNSUPPORTED else "its own layers"
            return "not supported", (f"its language model ({text}: {why}), and the vision "
                                     "tower and projector")
        lm = f"default {text}" if text else "its text_config"
        return "language model only", (f"text_config read ({lm}); vision tower and "
                                       f"projector not counted{golden}")
    return "unclassified", ""


def rows(census: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(model_type, decoder class, status, what backs it), in model_type order."""
    pinned = goldens()
    out = []
    for model_type, entry in census["model_types"].items():
        cls = entry["causal_lm"] or entry["image_text_to_text"]
        out.append((model_type, cls, *classify(model_type, entry, pinned)))
    return out


def table(census: dict[str, Any]) -> str:
    listed = rows(census)
    counts: dict[str, int] = {}
    for row in listed:
        counts[row[2]] = counts.get(row[2], 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items(),
                                                               key=lambda kv: -kv[1]))
    lines = [f"transformers {census['transformers']}, listed {census['date']} by "
             f"`scripts/census.py`: {len(listed)} model_types with a causal-LM or "
             f"image-text-to-text class ({summary}).", "",
             "| model_type | transformers class | status | golden, or what is missing |",
             "|---|---|---|---|"]
    lines += [f"| {t} | {cls} | {status} | {why} |" for t, cls, status, why in listed]
    return "\n".join(lines) + "\n"


def write_docs(census: dict[str, Any]) -> None:
    text = DOCS.read_text()
    if not SECTION.search(text):
        raise SystemExit("docs/models.md has no <!-- census --> section")
    DOCS.write_text(SECTION.sub(lambda m: m.group(1) + table(census) + m.group(2), text))


def main() -> None:
    if sys.argv[1:] == ["--refresh"]:
        census = refresh()
        CENSUS.write_text(json.dumps(census, indent=1, sort_keys=True) + "\n")
    else:
        census = json.loads(CENSUS.read_text())
    write_docs(census)


if __name__ == "__main__":
    main()
