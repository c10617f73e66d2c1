"""A Model written back as a preset: the mapping, and its YAML text."""

from dataclasses import fields
from typing import Any

from specsheet.errors import SpecError
from specsheet.model.params import count_params
from specsheet.model.spec import REQUIRED_FIELDS, Model, ModelSpec


def minimal_fields(spec: ModelSpec) -> dict[str, Any]:
    """The spec fields that ``ModelSpec.create`` needs to rebuild ``spec``: the five numbers and
    every field whose value differs from what would be derived without it."""
    kept = spec.as_dict()
    for f in fields(spec):
        if f.name in REQUIRED_FIELDS:
            continue
        trial = {k: v for k, v in kept.items() if k != f.name}
        try:
            same = ModelSpec.create(**trial) == spec
        except SpecError:  # a field others depend on: keep it
            same = False
        if same:
            kept = trial
    return kept


def preset_mapping(model: Model) -> dict[str, Any]:
    """The preset of ``model``: name, description, source, published total, then its fields."""
    mapping: dict[str, Any] = {"name": model.name}
    if model.description:
        mapping["description"] = model.description
    mapping["source"] = model.reference or model.origin
    if model.published_total is not None:
        mapping["published_total"] = model.published_total
    mapping.update(minimal_fields(model.spec))
    return mapping


def to_yaml(model: Model, by: str = "specsheet convert") -> str:
    """The preset of ``model`` as YAML: a header comment (naming the command ``by`` that wrote
    it), then the fields in order."""
    import yaml

    total = count_params(model.spec).total
    header = f"# {model.name}: written by {by} from {model.origin}\n"
    header += f"# specsheet counts {total:,} parameters"
    header += "\n" if model.published_total is not None else (
        "; add published_total: with the publisher's count to have it checked\n")
    class Dumper(yaml.SafeDumper):
        """Block style for the preset, flow style ([0, 2, 4]) for layer lists."""

    def flow_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
        return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)

    Dumper.add_representer(list, flow_list)
    body: str = yaml.dump(preset_mapping(model), Dumper=Dumper, sort_keys=False, width=100)
    return header + body
