"""The text of a generated Python module holding one mapping (the built-in presets, the
accelerator catalog), for scripts/build_presets.py and scripts/build_hardware.py.

A module, not a JSON file: a run unmarshals its bytecode, which Python caches as it caches every
module's (pip compiles it at install, an editable install's build hook too), instead of
importing the json package (whose decoder compiles six regular expressions as it loads) and
parsing text. See docs/performance.md.
"""

from __future__ import annotations

from typing import Any


def data_module(docstring: str, name: str, value: dict[str, Any]) -> str:
    """``name: dict[str, dict[str, Any]] = value`` under ``docstring``, an entry of ``value``
    to a line (its repr: a changed preset is a changed line), the same value read back,
    exact."""
    entries = "".join(f"    {key!r}: {entry!r},\n" for key, entry in value.items())
    text = (f'"""{docstring}"""\n\nfrom typing import Any\n\n'
            f"{name}: dict[str, dict[str, Any]] = {{\n{entries}}}\n")
    namespace: dict[str, Any] = {}
    exec(compile(text, "<data module>", "exec"), namespace)  # our own text, read back
    if namespace[name] != value or _kinds(namespace[name]) != _kinds(value):
        raise SystemExit(f"{name}: the module does not read back as the value it was made of")
    return text


def _kinds(value: Any) -> Any:
    """The value's shape with each leaf's type, so that 1 and 1.0 and True differ."""
    if isinstance(value, dict):
        return {key: _kinds(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_kinds(item) for item in value]
    return type(value).__name__
