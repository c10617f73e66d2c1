"""Every document validates against the published JSON Schema, which is what the build script
writes; and the schema rejects documents that break it."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.sources.presets import preset_index

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def run_json(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code in (0, 1), result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("name", sorted(preset_index()))
def test_every_preset_document_validates(name: str,
                                         validator: jsonschema.Draft202012Validator) -> None:
    validator.validate(run_json("count", name))
    validator.validate(run_json("compare", name, "gpt2-small"))
    validator.validate(run_json("check", name, "--max-params", "8B", "--max-kv", "1GB"))


def test_list_documents_validate(validator: jsonschema.Draft202012Validator) -> None:
    validator.validate(run_json("presets"))
    validator.validate(run_json("compare", *preset_index()))
    validator.validate(run_json("check", "llama3-8b", "tiny", "--max-weights", "16GB"))


@pytest.mark.parametrize("breakage", ["drop params.total", "add params.extra",
                                      "float kv_cache.bytes_per_request", "schema_version 2"])
def test_the_schema_rejects_broken_documents(breakage: str,
                                             validator: jsonschema.Draft202012Validator) -> None:
    doc = copy.deepcopy(run_json("count", "gpt2-small"))
    if breakage == "drop params.total":
        del doc["params"]["total"]
    elif breakage == "add params.extra":
        doc["params"]["extra"] = 1
    elif breakage == "float kv_cache.bytes_per_request":
        doc["kv_cache"]["bytes_per_request"] = 37748736.5
    else:
        doc["schema_version"] = 2
    assert not validator.is_valid(doc)


def test_committed_schema_is_what_the_script_writes() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_schema.py"),
                             "--check"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("argv", [
    ["fit", "llama3-8b", "--gpu", "rtx-4090", "--ctx", "8192"],
    ["fit", "qwen3-30b-a3b", "--gpu", "rtx-4090,rtx-3090", "--n-cpu-moe", "4", "-ctk", "q8_0",
     "-ctv", "q8_0", "--ctx", "auto"],
    ["fit", "llama3.1-8b", "--engine", "ollama", "--gpu", "l4", "--host-memory", "32GiB"],
    ["fit", "llama3-8b", "--ctx", "4096"],
    ["check", "llama3.1-8b", "--engine", "llama.cpp", "--gpu", "rtx-3090", "--min-ctx", "128k"],
], ids=["fit", "fit-moe", "fit-ollama", "fit-host", "check-engine"])
def test_fit_documents_validate(argv: list[str],
                                validator: jsonschema.Draft202012Validator) -> None:
    validator.validate(run_json(*argv))


IMAGES = str(ROOT / "tests" / "data" / "multimodal" / "mistral-small-3.1-24b.json")


@pytest.mark.parametrize("argv", [
    ["count", IMAGES, "--images", "2", "--image-size", "1024x768"],
    ["serve", IMAGES, "--gpu", "h100-sxm", "--images", "2"],
], ids=["count", "serve"])
def test_documents_with_images_validate(argv: list[str],
                                        validator: jsonschema.Draft202012Validator) -> None:
    document = run_json(*argv)
    validator.validate(document)
    broken = copy.deepcopy(document)
    del broken["images"]["tokens_per_image"]
    assert not validator.is_valid(broken)
