"""Tokens per word of a text, measured with a model's own tokenizer (tokenizer.json, read with
Hugging Face's ``tokenizers``, an optional extra: ``pip install 'specsheet[tokenizers]'``).

Imported only when a text is given. The tokenizer is found beside the model's config.json (a
model folder, or its snapshot in the Hugging Face cache, downloaded from the Hub into that
snapshot when it is not there yet), or given by its path. Where none is found, NoTokenizer says
what would give one; the CLI names its options.
"""

from __future__ import annotations

from pathlib import Path

from specsheet.compiled import NamedTuple
from specsheet.errors import NoTokenizer, SpecError
from specsheet.model.spec import Model
from specsheet.sources import DEFAULT_TIMEOUT

MAX_TEXT_BYTES = 256 * 2**20


class TextCount(NamedTuple):
    """A text's tokens under one tokenizer, and its words (runs of non-white-space)."""

    path: str
    tokenizer: str
    tokens: int
    words: int

    @property
    def tokens_per_word(self) -> float:
        return self.tokens / self.words


def find_tokenizer(model: Model, given: str | None = None,
                   timeout: float = DEFAULT_TIMEOUT) -> Path:
    """``given`` (a tokenizer.json, or a folder holding one), else the tokenizer.json beside
    ``model``'s config.json; for a config in the Hugging Face cache, the same commit's
    tokenizer.json, downloaded into its snapshot unless HF_HUB_OFFLINE is set (waiting at most
    ``timeout`` seconds); else SpecError saying where to get one."""
    if given is not None:
        path = Path(given)
        if path.is_dir():
            path = path / "tokenizer.json"
        if not path.is_file():
            raise SpecError(f"{path}: no such file; expected a tokenizer.json or a "
                            "folder holding one", field="tokenizer")
        return path
    origin = Path(model.origin)
    if model.origin.endswith(".json") and origin.is_file():
        beside = origin.parent / "tokenizer.json"
        if beside.is_file():
            return beside
        if "snapshots" in origin.parts:
            at = origin.parts.index("snapshots")
            repo = origin.parts[at - 1]
            name = repo.removeprefix("models--").replace("--", "/", 1)
            from specsheet.sources.hub_settings import offline

            if not offline() and at + 1 < len(origin.parts):
                from specsheet.sources.hub_download import download_json

                return download_json(name, origin.parts[at + 1], "tokenizer.json", timeout)
            raise SpecError(f"{beside}: not in the Hugging Face cache; download it with: "
                            f"hf download {name} tokenizer.json (HF_HUB_OFFLINE is set)",
                            field="text")
        raise NoTokenizer(f"{beside}: no such file; put the model's tokenizer.json beside its "
                          "config.json", wants=("tokenizer",))
    raise NoTokenizer(f"{model.name} ({model.origin}) has no tokenizer.json beside it",
                      wants=("tokenizer", "tokens_per_word"))


def count_text(text_path: str, tokenizer_path: Path) -> TextCount:
    """Tokens (no special tokens added) and words of the UTF-8 text at ``text_path``."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise NoTokenizer("measuring tokens per word needs Hugging Face's tokenizers package: "
                          "pip install 'specsheet[tokenizers]'",
                          wants=("tokens_per_word",)) from None
    path = Path(text_path)
    if not path.is_file():
        raise SpecError(f"{path}: no such file", field="text")
    try:
        if path.stat().st_size > MAX_TEXT_BYTES:
            raise SpecError(f"{path}: larger than {MAX_TEXT_BYTES // 2**20} MiB; a sample "
                            "of the text gives the same ratio", field="text")
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as e:
        raise SpecError(f"{path}: cannot read: {e.strerror}", field="text") from None
    except UnicodeDecodeError as e:
        raise SpecError(f"{path}: not UTF-8 text (byte {e.start})", field="text") from None
    words = len(text.split())
    if not words:
        raise SpecError(f"{path}: no words to count", field="text")
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
    except Exception as e:  # the Rust side raises its own Exception subclass
        raise SpecError(f"{tokenizer_path}: not a tokenizer.json that the "
                        f"tokenizers package reads ({' '.join(str(e).split())[:200]})",
                        field="tokenizer") from None
    tokens = len(tokenizer.encode(text, add_special_tokens=False).ids)
    return TextCount(str(path), str(tokenizer_path), tokens, words)
