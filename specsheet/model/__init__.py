"""The model and its arithmetic: the spec and pure, exact functions over it (no I/O)."""
