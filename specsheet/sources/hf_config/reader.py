"""The one reader of a config.json mapping: absent, null and default keys, by one set of rules.

- A key that is absent takes the default of the family's transformers configuration class
  (defaults.py), as transformers does.
- A key given as null stays null, as in transformers (a null sliding_window means no window;
  a null q_lora_rank means a direct query projection).
- Integers must be ints: a float, even 4096.0, is refused, as torch's layers refuse it.
"""

from collections.abc import Mapping
from typing import Any

from specsheet.errors import SpecError, quoted
from specsheet.model.spec import MAX_DIGITS
from specsheet.sources.fields import FieldError


def key_error(key: str, message: str, *, source: str, value: object = None) -> FieldError:
    """An error about key ``key`` of the config.json at ``source``: ``source: key 'KEY': ...``."""
    return FieldError(message, field=key, value=value, source=source, label=f"key '{key}'")


class HFConfig:
    """A config.json mapping over its family's defaults, with typed, key-naming access.

    A key that is absent takes the default of the family's transformers configuration class; a
    key given as null stays null, as in transformers (a null sliding_window means no window).
    """

    def __init__(self, data: Mapping[str, Any], origin: str, defaults: Mapping[str, Any]) -> None:
        self.data = {**defaults, **data}
        self.given = data
        self.origin = origin
        self.model_type = str(data.get("model_type"))

    def _find(self, keys: str | tuple[str, ...]) -> tuple[str, Any] | None:
        for key in (keys,) if isinstance(keys, str) else keys:
            if key in self.given and self.given[key] is not None:
                return key, self.given[key]
        for key in (keys,) if isinstance(keys, str) else keys:
            if key in self.given:  # given as null
                return None
            if self.data.get(key) is not None:
                return key, self.data[key]
        return None

    def integer(self, keys: str | tuple[str, ...], default: int | None = None,
            minimum: int = 1) -> int:
        """The integer under the first of ``keys`` present (null counts as absent)."""
        found = self._find(keys)
        name = keys if isinstance(keys, str) else keys[0]
        if found is None:
            if default is None:
                raise SpecError(f"missing key '{name}' (needed for model_type "
                                f"{self.model_type})", source=self.origin)
            return default
        key, value = found  # a float, even 4096.0, is refused: torch's layers take integers
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            expected = "a positive integer" if minimum > 0 else "an integer of 0 or more"
            raise key_error(key, f"expected {expected}, got {quoted(value)}",
                            source=self.origin)
        if value >= 10**MAX_DIGITS:
            raise key_error(key, f"an integer of more than {MAX_DIGITS} "
                            "digits is beyond any model", source=self.origin)
        return value

    def optional_integer(self, keys: str | tuple[str, ...], minimum: int = 1) -> int | None:
        """The integer under ``keys``, or None when absent or null."""
        return None if self._find(keys) is None else self.integer(keys, minimum=minimum)

    def flag(self, key: str, default: bool = False) -> bool:
        """A boolean key; absent or null gives the family default, else ``default``."""
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise key_error(key, f"expected true or false, got {quoted(value)}",
                            source=self.origin)
        return value

    def integers(self, key: str) -> list[int]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) for i in value):
            raise key_error(key, f"expected a list of integers, "
                            f"got {quoted(value)}", source=self.origin)
        return value

    def layer_types(self, layers: int, kinds: tuple[str, ...] = (
            "sliding_attention", "full_attention")) -> list[str] | None:
        """An explicit ``layer_types`` list, checked against the layer count and the kinds of
        layer the family has."""
        value = self.data.get("layer_types")
        if value is None:
            return None
        if not isinstance(value, list) or len(value) != layers or not all(
                v in kinds for v in value):
            raise key_error("layer_types", f"expected {layers} entries of "
                            f"{' or '.join(kinds)}", source=self.origin)
        return value
