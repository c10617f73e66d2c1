"""Checkpoint headers read without loading weight data: safetensors (safetensors.py), GGUF
(gguf.py), a folder or a sharded index of them (files.py), and the tensors mapped to specsheet's
components (checkpoint.py)."""
