"""Hugging Face config.json files: the reader (absent, null and default keys) and the families."""
