"""Write the damaged weight files of the bad-input corpus (files/st-*, files/gguf-*, and the
folders index-missing-shard/, no-weights/ and st-no-config/). Each is a few hundred bytes at most.

    python tests/bad_inputs/make_weights.py
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

FILES = Path(__file__).resolve().parent / "files"


def st(header: object, data: int = 0, length: int | None = None, raw: bytes | None = None
       ) -> bytes:
    """A safetensors file: the 8-byte length, the header, ``data`` zero bytes."""
    text = raw if raw is not None else json.dumps(header).encode()
    size = len(text) if length is None else length
    return struct.pack("<Q", size) + text + bytes(data)


def tensor(dtype: str, shape: object, begin: int, end: int) -> dict[str, object]:
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def gguf_string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf(version: int = 3, tensors: list[bytes] | None = None, kv: list[bytes] | None = None,
         n_tensors: int | None = None, n_kv: int | None = None, data: int = 0,
         magic: bytes = b"GGUF") -> bytes:
    tensors, kv = tensors or [], kv or []
    head = magic + struct.pack("<IQQ", version, len(tensors) if n_tensors is None else n_tensors,
                               len(kv) if n_kv is None else n_kv)
    body = head + b"".join(kv) + b"".join(tensors)
    body += bytes(-len(body) % 32)
    return body + bytes(data)


def info(name: str, dims: list[int], type_id: int, offset: int) -> bytes:
    return (gguf_string(name) + struct.pack("<I", len(dims))
            + b"".join(struct.pack("<Q", n) for n in dims) + struct.pack("<IQ", type_id, offset))


def main() -> None:
    w = tensor("F32", [4], 0, 16)
    files = {
        "st-short.safetensors": b"\x01\x02\x03",
        "st-header-past-end.safetensors": st({"a": w}, length=1000),
        "st-header-huge.safetensors": struct.pack("<Q", 2**62) + b"{}",
        "st-not-json.safetensors": st(None, raw=b"{this is not json}"),
        "st-not-utf8.safetensors": st(None, raw=b'{"\xff": 1}'),
        "st-not-mapping.safetensors": st([1, 2, 3]),
        "st-overlap.safetensors": st({"a": tensor("F32", [4], 0, 16),
                                      "b": tensor("F32", [4], 8, 24)}, data=24),
        "st-past-data.safetensors": st({"a": tensor("F32", [4], 0, 16)}, data=8),
        "st-unknown-dtype.safetensors": st({"a": tensor("F12", [4], 0, 16)}, data=16),
        "st-negative-shape.safetensors": st({"a": tensor("F32", [-4], 0, 16)}, data=16),
        "st-float-shape.safetensors": st({"a": tensor("F32", [4.0], 0, 16)}, data=16),
        "st-offsets-disagree.safetensors": st({"a": tensor("F32", [4], 0, 12)}, data=16),
        "st-bad-metadata.safetensors": st({"__metadata__": [1], "a": w}, data=16),
        "gguf-bad-magic.gguf": gguf(magic=b"GGML"),
        "gguf-version-1.gguf": gguf(version=1),
        "gguf-big-endian.gguf": b"GGUF" + struct.pack(">IQQ", 3, 0, 0),
        "gguf-too-many-tensors.gguf": gguf(n_tensors=2**40),
        "gguf-too-many-kv.gguf": gguf(n_kv=2**60),
        "gguf-huge-string.gguf": gguf(kv=[struct.pack("<Q", 2**50) + b"key"]),
        "gguf-huge-array.gguf": gguf(kv=[gguf_string("tokenizer.ggml.tokens")
                                         + struct.pack("<IIQ", 9, 8, 2**40)]),
        "gguf-truncated.gguf": gguf(kv=[gguf_string("general.name") + struct.pack("<I", 8)
                                        + struct.pack("<Q", 40) + b"cut"])[:60],
        "gguf-cut-in-tensor-info.gguf": gguf(tensors=[info("a.weight", [32], 0, 0)])[:48],
        "gguf-unknown-type.gguf": gguf(tensors=[info("a.weight", [32], 99, 0)], data=128),
        "gguf-unknown-value-type.gguf": gguf(kv=[gguf_string("a") + struct.pack("<I", 77)]),
        "gguf-data-past-end.gguf": gguf(tensors=[info("a.weight", [64, 64], 0, 0)], data=64),
        "gguf-overlap.gguf": gguf(tensors=[info("a.weight", [32], 0, 0),
                                           info("b.weight", [32], 0, 64)], data=256),
        "gguf-too-many-dims.gguf": gguf(tensors=[info("a.weight", [1] * 5, 0, 0)], data=32),
        "gguf-duplicate-key.gguf": gguf(kv=[gguf_string("k") + struct.pack("<II", 4, 1)] * 2),
        "gguf-bert.gguf": gguf(kv=[gguf_string("general.architecture") + struct.pack("<I", 8)
                                   + gguf_string("bert")]),
    }
    for name, content in files.items():
        (FILES / name).write_bytes(content)
    missing = FILES / "index-missing-shard"
    missing.mkdir(exist_ok=True)
    (missing / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": {"a.weight": "model-00001-of-00002.safetensors"}}))
    empty = FILES / "no-weights"
    empty.mkdir(exist_ok=True)
    (empty / "README.md").write_text("A folder without weights.\n")
    # whole checkpoints with no config.json beside them: a model source needs one
    alone = FILES / "st-no-config"
    alone.mkdir(exist_ok=True)
    (alone / "model.safetensors").write_bytes(st({"a.weight": tensor("F32", [4], 0, 16)}, 16))
    (alone / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": {"a.weight": "model.safetensors"}}))


if __name__ == "__main__":
    main()
