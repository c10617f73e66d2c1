"""Calibration from a real run (``specsheet serve --vllm-log FILE``): a vLLM start-up log's
figures beside specsheet's, then the plan with the log's measured terms in place of the
estimates (docs/serving.md, "Calibration")."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from specsheet.errors import SpecError

if TYPE_CHECKING:
    from specsheet.figures import Report
    from specsheet.sources.logs.vllm import VllmLog

# api/serve.py's ServeRequest and Serving (typed Any here: serve imports this module)
ServeRequest = Any
Serving = Any


def _settings(request: ServeRequest, log: VllmLog) -> ServeRequest:
    """Settings the options leave open, taken from the log: tp, max_model_len, utilization."""
    from specsheet.plan.serving import DEFAULT_MEMORY_UTILIZATION as DEFAULT_UTILIZATION

    changes: dict[str, object] = {"vllm_log": None}
    if log.tp is not None and request.tp is None and request.gpus is None:
        changes["tp"] = log.tp
    length = log.max_model_len or log.concurrency_tokens
    if length is not None and request.max_model_len is None:
        changes["max_model_len"] = length
    if log.utilization is not None and request.memory_utilization == DEFAULT_UTILIZATION:
        changes["memory_utilization"] = log.utilization
    return request._replace(**changes)


def calibrated(report: Report, request: ServeRequest, group_size: int | None,
               plan_serve: Callable[..., Serving]) -> Serving:
    """The plan of ``report`` under ``request`` calibrated against ``request.vllm_log``;
    ``plan_serve(report, request, group_size, measured)`` plans without a log."""
    from specsheet.plan.serving import Measured
    from specsheet.sources.logs.vllm import read_vllm_log

    assert request.vllm_log is not None
    log = read_vllm_log(request.vllm_log)
    if log.max_model_len and log.concurrency_tokens and \
            log.max_model_len != log.concurrency_tokens:
        raise SpecError(f"the log's lines contradict each other: max_model_len is "
                        f"{log.max_model_len:,} and concurrency is for "
                        f"{log.concurrency_tokens:,} tokens", source=request.vllm_log)
    settings = _settings(request, log)
    predicted = plan_serve(report, settings, group_size).plan
    measured = Measured(log.activation_bytes, log.non_torch_bytes, log.total_bytes)
    if settings.kv_memory is None and log.kv_memory_bytes is not None:
        settings = settings._replace(kv_memory=max(0, log.kv_memory_bytes))
    served = plan_serve(report, settings, group_size, measured)
    plan, p, s = served.plan, predicted.binding, served.plan.binding
    figures: list[tuple[str, float, float]] = []

    def add(name: str, logged: float | None, ours: float) -> None:
        if logged is not None:
            figures.append((name, logged, ours))

    # "Model loading took" counts what the load allocates: the weights and the rotary cache
    add("weights_bytes", log.weights_bytes, p.weights_bytes + p.buffers_bytes)
    add("activation_bytes", log.activation_bytes, p.activation_bytes)
    add("non_torch_bytes", log.non_torch_bytes, p.overhead_bytes)
    add("capacity_bytes", log.total_bytes, p.capacity_bytes)
    add("kv_pool_bytes", log.kv_memory_bytes, p.kv_pool_bytes)
    add("num_blocks", log.gpu_blocks, s.num_blocks)
    add("kv_tokens", log.kv_tokens, s.vllm_kv_tokens)
    add("max_concurrency", log.concurrency, round(plan.vllm_max_concurrency, 2))
    plan = plan._replace(calibration=tuple(figures), calibration_source=request.vllm_log,
                         calibration_unreadable=log.unreadable)
    return served._replace(plan=plan)
