"""Sweeps: one model's figures along one or two axes (the tokens, the batch, dtypes,
quantization formats, any spec field), and with a GPU, serve's plan at every point
(``specsheet sweep``; docs/sweep.md).

    >>> import specsheet as s
    >>> sweep = s.sweep("gpt2-small", tokens=[256, 512, 1024])
    >>> [p.report.kv.bytes_per_request for p in sweep.points]
    [9437184, 18874368, 37748736]
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError
from specsheet.figures import Axis, Point
from specsheet.plan import sweep as sweep_grid
from specsheet.sources import DEFAULT_TIMEOUT
from specsheet.sources.fields import SPEC_FIELDS, Given, Overrides
from specsheet.units import MAX_POINTS

if TYPE_CHECKING:
    from specsheet.api.serve import ServeRequest, Serving
    from specsheet.hardware.catalog import Accelerator
    from specsheet.model.spec import Model
    from specsheet.plan.serving import ServePlan

# where an axis comes first when axes are as long: the chart's horizontal axis
ORDER = ("tokens", "batch", *SPEC_FIELDS, "dtype", "quant", "kv_dtype")
DEFAULT_KV_DTYPE = "bf16"
# the spec fields that ``specsheet sweep`` takes as options of their own (the rest: --set)
NAMED_FIELDS = ("layers", "d_model", "heads", "vocab", "context", "kv_heads", "head_dim", "d_ff",
                "mlp", "norm", "positions")


def axis_option(name: str, set_fields: Collection[str] = ()) -> str:
    """How the CLI names the option of axis ``name``: --tokens, --d-model, --set experts (a
    spec field without an option of its own, or one of ``set_fields``, given by --set)."""
    if name in SPEC_FIELDS and (name not in NAMED_FIELDS or name in set_fields):
        return f"--set {name}"
    return f"--{name.replace('_', '-')}"


class Sweep(NamedTuple):
    """The points of a sweep along ``axes`` (the first varying fastest), and with a GPU the
    serving plan at each."""

    axes: list[Axis]
    points: list[Point]
    batch: int | None  # the requests at once when the batch is not an axis, else None
    gpu: Accelerator | None
    served: list[Serving] | None
    set_fields: frozenset[str] = frozenset()  # spec fields given by --set (axis_option)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``specsheet sweep --json`` writes for the same inputs."""
        from specsheet.views.sweep import sweep_document

        served = None if self.served is None else [tuple(s) for s in self.served]
        return sweep_document(self.axes, self.points, self.batch, self.gpu,
                              served,  # type: ignore[arg-type]
                              options={a.name: axis_option(a.name, self.set_fields)
                                       for a in self.axes})


def order_axes(candidates: Sequence[Axis], set_fields: Collection[str] = ()) -> list[Axis]:
    """The axes of more than one value, longest first (then in ORDER); at most two, and at most
    MAX_POINTS points in all."""
    axes = [a for a in candidates if len(a.values) > 1]
    if not axes:
        raise SpecError("nothing to sweep: give a range or a list of values to --tokens, "
                        "--batch, --dtype, --quant, --kv-dtype or a spec field "
                        "(e.g. --tokens 1k:128k:x2, --layers 12,24,48)")
    if len(axes) > 2:
        given = ", ".join(axis_option(a.name, set_fields) for a in axes)
        raise SpecError(f"a sweep takes two axes at most, got {len(axes)}: {given}; give one "
                        "value to the others")
    axes.sort(key=lambda a: (-len(a.values), ORDER.index(a.name)))
    count = 1
    for axis in axes:
        count *= len(axis.values)
    if count > MAX_POINTS:
        sizes = " × ".join(f"{len(a.values):,} of {axis_option(a.name, set_fields)}"
                           for a in axes)
        raise SpecError(f"a sweep of {count:,} points ({sizes}) is more than {MAX_POINTS:,}; "
                        "take a larger step or factor, or fewer values")
    return axes


def grid(ref: str | Model | None, axes: list[Axis], single: Mapping[str, Any],
         fixed: Overrides, group_size: int | None = None, timeout: float = DEFAULT_TIMEOUT,
         notes: list[str] | None = None, set_fields: Collection[str] = ()) -> list[Point]:
    """Every point, the first axis varying fastest (plan/sweep.py: a model read once per value
    of the spec fields that are axes, a report built once per model and formats, then moved
    along the tokens)."""
    field_axes = [a for a in axes if a.name in SPEC_FIELDS]

    def model_of(at: Mapping[str, Any]) -> Model:
        return _model(ref, _with(fixed, field_axes, at, single, set_fields), notes, timeout)

    return sweep_grid.grid(axes, single, model_of, group_size)


def _model(ref: str | Model | None, given: Overrides, notes: list[str] | None,
           timeout: float) -> Model:
    """``ref`` read with ``given`` applied; a Model is taken as it is, or rebuilt from its
    preset fields with ``given``."""
    from specsheet.sources.resolve import resolve

    if ref is None or isinstance(ref, str):
        return resolve(ref, given, notes, timeout)
    if not given:
        return ref
    from specsheet.sources.convert import preset_mapping
    from specsheet.sources.fields import model_from_mapping

    return model_from_mapping(preset_mapping(ref), ref.origin, given)


def _with(fixed: Overrides, field_axes: list[Axis], at: Mapping[str, Any],
          single: Mapping[str, Any], set_fields: Collection[str] = ()) -> Overrides:
    """The fixed overrides, the spec fields given one value, and this point's spec fields,
    each labelled with its option."""
    given = Overrides(fixed, fixed.origins, fixed.naming)
    for name, value in single.items():
        if name in SPEC_FIELDS:
            given[name] = value
            given.origins[name] = Given("option")
    for axis in field_axes:
        given[axis.name] = at[axis.name]
        by_set = axis_option(axis.name, set_fields).startswith("--set")
        given.origins[axis.name] = Given("setting" if by_set else "option", axis.name,
                                         str(at[axis.name]))
    return given


def serve_points(points: list[Point], request: ServeRequest,
                 group_size: int | None = None) -> list[Serving]:
    """Serve's plan at every point of a sweep: requests of the point's tokens
    (max_model_len), its batch decoded at once (concurrency). A point that lays out as the one
    before it takes that layout (the weights per GPU, the pool) and computes again only the
    blocks of a request, and the estimates once per layout and batch (plan/sweep.py)."""
    from specsheet.api.serve import (
        Serving,
        check_request,
        estimates_of,
        plan_serve,
        request_shape,
    )

    check_request(request)
    # the estimates by layout (the point that laid it out), batch, request shape and verdict:
    # they do not depend on the tokens a request may reach (the default request shortens
    # with them)
    estimates: dict[tuple[int, int, int, int, bool], tuple[Any, dict[str, float | None]]] = {}

    def at(point: Point) -> ServeRequest:
        return request._replace(max_model_len=point.report.kv.tokens, concurrency=point.batch)

    def plan_of(point: Point) -> Serving:
        served = plan_serve(point.report, at(point), group_size)
        first = served.plan.request
        estimates[(id(served), point.batch, first.prompt, first.output, served.plan.fits)] = (
            served.estimates, served.costs)
        return served

    def moved(start: Serving, plan: ServePlan, point: Point) -> Serving:
        prompt, output = request_shape(at(point), point.report.kv.tokens)
        plan = plan._replace(request=plan.request._replace(prompt=prompt, output=output))
        key = (id(start), point.batch, prompt, output, plan.fits)
        if key not in estimates:
            estimates[key] = estimates_of(plan, at(point))
        return Serving(plan, *estimates[key])

    return sweep_grid.serve_grid(points, plan_of, lambda s: s.plan, moved)


def sweep(model: str | Model | None = None, *, tokens: Sequence[int] | None = None,
          batch: Sequence[int] | None = None, dtype: Sequence[str] | None = None,
          quant: Sequence[str | None] | None = None, kv_dtype: Sequence[str] = (DEFAULT_KV_DTYPE,),
          fields: Mapping[str, Sequence[Any]] | None = None, group_size: int | None = None,
          gpu: str | None = None, timeout: float = DEFAULT_TIMEOUT, **serving: Any) -> Sweep:
    """``model`` (a Model, or a reference as ``load`` takes it) along the axes given: each a
    sequence of values (one value fixes it). ``fields`` sweeps spec fields
    (``{"layers": [12, 24, 48]}``); ``quant`` None is a plain dtype. With ``gpu``, each point
    is served (``serving``: ServeRequest's layout fields, e.g. ``gpus=8``)."""
    candidates = []
    if tokens is not None:
        candidates.append(Axis("tokens", tuple(tokens)))
    candidates.append(Axis("batch", tuple(batch) if batch else (1,)))
    for name, values in (fields or {}).items():
        if name not in SPEC_FIELDS:
            raise SpecError(f"not a spec field{_hint(name)}", field=name)
        candidates.append(Axis(name, tuple(values)))
    candidates.append(Axis("dtype", tuple(dtype) if dtype else (None,)))
    candidates.append(Axis("quant", tuple(quant) if quant else (None,)))
    candidates.append(Axis("kv_dtype", tuple(kv_dtype)))
    request = None
    if gpu is not None:
        from specsheet.api.serve import check_request, request_of

        request = request_of(gpu, serving)
        check_request(request)
    elif serving:
        raise SpecError("plans serving, which needs a gpu", field=sorted(serving)[0])
    axes = order_axes(candidates)
    single = {a.name: a.values[0] for a in candidates if len(a.values) == 1}
    points = grid(model, axes, single, Overrides(), group_size, timeout)
    return finish(axes, points, gpu, request, group_size)


def _hint(name: str) -> str:
    from specsheet.errors import did_you_mean

    return did_you_mean(name, SPEC_FIELDS)


def finish(axes: list[Axis], points: list[Point], gpu: str | None,
           request: ServeRequest | None, group_size: int | None = None,
           set_fields: Collection[str] = ()) -> Sweep:
    """The Sweep of ``points``: served on ``gpu`` under ``request`` when one is given."""
    accelerator = None
    if gpu is not None:
        from specsheet.api.hardware import load_gpu

        accelerator = load_gpu(gpu)
    served = None if request is None else serve_points(points, request, group_size)
    batch = None if "batch" in points[0].at else points[0].batch
    return Sweep(axes, points, batch, accelerator, served, frozenset(set_fields))
