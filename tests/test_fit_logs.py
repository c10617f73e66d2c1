"""The table of every real llama.cpp / Ollama log (tests/data/local_logs.yaml) with both
numbers: the MiB the log printed and the MiB specsheet fit gives for the same settings, one
line per log. docs/local.md shows it; this test keeps the two the same.

    python tests/test_fit_logs.py      # prints the table
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

import specsheet
from specsheet.api.fit import FitRequest, cache_layers, fit
from specsheet.plan.local import ComputeShape, Device, LayerKV, LocalSetup, Placement, place

HERE = Path(__file__).parent
LOGS: list[dict[str, Any]] = yaml.safe_load((HERE / "data" / "local_logs.yaml")
                                            .read_text("utf-8"))
DOC = HERE.parent / "docs" / "local.md"
MIB = 1 << 20
BEGIN = "<!-- the logs table: python tests/test_fit_logs.py -->"
END = "<!-- end of the logs table -->"


def _mib(n: float) -> str:
    return f"{n / MIB:.2f}"


def log_request(log: dict[str, Any]) -> FitRequest:
    """The fit request a log row describes (its GPUs, format, context, -ngl, cache types...)."""
    return FitRequest(
        gpu=tuple(log["gpus"]), quant=log["quant"], ctx=log["ctx"],
        parallel=log.get("parallel", 1), cache_type_k=log.get("cache_type_k", "f16"),
        cache_type_v=log.get("cache_type_v", "f16"), flash_attn=log.get("flash_attn", "auto"),
        tensor_split=tuple(log.get("tensor_split", ())), n_gpu_layers=log["ngl"],
        n_cpu_moe=log.get("n_cpu_moe", 0), output_rule=log.get("output_rule", "output-first"),
        kv_unified=log.get("kv_unified", False), mmap=log.get("mmap", True))


def _placed(log: dict[str, Any]) -> tuple[list[str], list[str]]:
    model = specsheet.load(log["model"], **log.get("set", {}))
    p = fit(model, log_request(log)).placement
    buffers = {b.name: b for b in (*p.devices, p.host)}
    attr = {"model": "model_bytes", "kv": "kv_bytes", "compute": "compute_bytes_estimate"}
    logged, ours = [], []
    for kind in ("model", "kv", "compute"):
        given = log["printed"].get(kind, {})
        if not given:
            continue
        label = "KV" if kind == "kv" else f"{kind} (estimate)" if kind == "compute" else kind
        logged.append(f"{label} " + ", ".join(f"{n} {v:.2f}" for n, v in given.items()))
        ours.append(f"{label} " + ", ".join(
            f"{n} {_mib(getattr(buffers[n], attr[kind]))}" for n in given))
    return logged, ours


def sliding_placements(log: dict[str, Any]) -> dict[bool, Placement]:
    """A sliding-window log's placement of its windowed caches alone (True) and of its global
    ones alone (False): Gemma 4's pattern, 5 windowed layers, then a global one."""
    s = log["synthetic"]
    kv = [LayerKV(s["global_width"], s["global_width"]) if i % 6 == 5 else
          LayerKV(s["swa_width"], s["swa_width"], swa=True)
          for i in range(s["global_layers"] + s["swa_layers"])]
    setup = LocalSetup(ctx=log["ctx"], n_gpu_layers=len(kv) + 1, parallel=log["parallel"],
                       cache_type_k=log["cache_type_k"], cache_type_v=log["cache_type_v"],
                       flash_attn=log["flash_attn"])

    def alone(keep: bool) -> Placement:
        only = [k if k.swa is keep else LayerKV(0, 0) for k in kv]
        return place([], len(kv), only, s["n_swa"], ComputeShape(3840, 16, 262144),
                     [Device("Metal", "Metal", 64 << 30)], setup)

    return {keep: alone(keep) for keep in (False, True)}


def _sliding(log: dict[str, Any]) -> tuple[list[str], list[str]]:
    p = sliding_placements(log)
    got = log["printed"]
    return ([f"KV non-SWA {got['kv_global']:.2f}, SWA {got['kv_swa']:.2f}"],
            [f"KV non-SWA {_mib(p[False].devices[0].kv_bytes)}, "
             f"SWA {_mib(p[True].devices[0].kv_bytes)}"])


def hybrid_spec(log: dict[str, Any]) -> Any:
    h = log["hybrid"]
    every, layers = h["attention_every"], h["set"]["layers"]
    kinds = ["attention" if i % every == every - 1 else "linear_attention" for i in range(layers)]
    return specsheet.load(h["model"], **h["set"], layer_types=kinds).spec


def hybrid_placement(log: dict[str, Any]) -> tuple[Placement, list[LayerKV]]:
    """A hybrid log's placement of its recurrent state alone on one GPU, and the layers'
    caches."""
    spec = hybrid_spec(log)
    kv, _ = cache_layers(spec)
    recurrent = [LayerKV(0, 0, False, k.r_width, k.s_width) for k in kv]
    setup = LocalSetup(ctx=log["ctx"], n_gpu_layers=spec.layers + 1, parallel=log["parallel"])
    p = place([], spec.layers, recurrent, 0, ComputeShape(spec.d_model, spec.heads, spec.vocab),
              [Device("CUDA0", "CUDA", 16 << 30)], setup)
    return p, kv


def _hybrid(log: dict[str, Any]) -> tuple[list[str], list[str]]:
    p, kv = hybrid_placement(log)
    got = log["printed"]
    r = sum(k.r_width for k in kv) * 4 * log["parallel"]
    s = sum(k.s_width for k in kv) * 4 * log["parallel"]
    return ([f"RS CUDA0 {got['rs']['CUDA0']:.2f} (R {got['r']:.2f}, S {got['s']:.2f})"],
            [f"RS CUDA0 {_mib(p.devices[0].kv_bytes)} (R {_mib(r)}, S {_mib(s)})"])


def rows() -> list[tuple[str, ...]]:
    """(id, model, quant, devices, the log's MiB, specsheet's MiB) for every log."""
    out = []
    for log in LOGS:
        if "synthetic" in log:
            logged, ours = _sliding(log)
        elif "hybrid" in log:
            logged, ours = _hybrid(log)
        else:
            logged, ours = _placed(log)
        devices = ", ".join(log.get("gpus", ())) or "(the cache alone)"
        out.append((log["id"], log["name"], log.get("quant", "-"), devices, "; ".join(logged),
                    "; ".join(ours)))
    return out


def table() -> str:
    lines = ["| log | model | quant | devices | printed MiB | specsheet MiB |",
             "|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows()]
    return "\n".join(lines)


def test_every_log_is_in_the_table_with_both_numbers() -> None:
    got = rows()
    assert [r[0] for r in got] == [log["id"] for log in LOGS] and len(got) >= 15
    for row in got:
        assert row[4] and row[5], row


def test_docs_show_the_table() -> None:
    text = DOC.read_text("utf-8")
    shown = text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip()
    assert shown == table(), "run: python tests/test_fit_logs.py and paste into docs/local.md"


if __name__ == "__main__":
    sys.stdout.write(table() + "\n")
