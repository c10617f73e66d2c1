"""``specsheet plan``: the cheapest hardware, the fewest GPUs, the best format or the longest
context that serves a model under constraints (docs/plan.md)."""

from typing import TYPE_CHECKING, Any

import typer

from specsheet.cli.model_source import NO_SOURCE, ModelSource, model_options
from specsheet.cli.options import (
    FORMAT_OPT,
    JSON_OPT,
    MODEL_ARG,
    OPTION_NAMES,
    emit,
    output_format,
    reports,
)
from specsheet.cli.serving import (
    DRAFT_OPT,
    MAX_MODEL_LEN_OPT,
    MBU_OPT,
    OUTPUT_OPT,
    PROMPT_OPT,
    SPECULATIVE_METHOD_OPT,
    SPECULATIVE_TOKENS_OPT,
    UTILIZATION_OPT,
)
from specsheet.errors import ExitCode

if TYPE_CHECKING:
    from specsheet.views.table import TableView

SETTINGS: dict[str, Any] = {
    "epilog": "Every candidate is a 'specsheet serve' run (with --train, a 'specsheet train' "
              "run; its command reproduces it): the memory exact as serve computes it, the "
              "times and costs serve's roofline estimates. Exit codes: 0 a candidate meets "
              "every constraint, 1 none does (the closest and what it misses on stderr), 2 "
              "bad input."}
SPACE = "Search space"
LIMITS = "Constraints (a candidate that misses one is listed, not chosen)"

PLAN_GPU_OPT: str = typer.Option(
    "all", "--gpu", help="Accelerators to search: a name, a comma list, or all (the catalog but "
    "Apple's, which vLLM does not run on).", rich_help_panel=SPACE)
PLAN_GPUS_OPT: str | None = typer.Option(
    None, "--gpus", metavar="N|LOW..HIGH", help="GPU counts to search [default: 1..8 x nodes].",
    show_default=False, rich_help_panel=SPACE)
NODES_OPT: int = typer.Option(
    1, "--nodes", min=1, help="Nodes of 8 GPUs: the default top of the counts searched.",
    rich_help_panel=SPACE)
PLAN_QUANT_OPT: str | None = typer.Option(
    None, "--quant", help="Weight formats: a comma list, or any (the model's own plus fp8, w8a8, "
    "w4a16, awq-int4 and nvfp4) [default: the model's own].", show_default=False,
    rich_help_panel=SPACE)
PLAN_KV_OPT: str = typer.Option(
    "bf16", "--kv-dtype", help="KV-cache element types: one or a comma list (bf16,fp8).",
    rich_help_panel=SPACE)
ENGINE_OPT: str = typer.Option(
    "vllm", "--engine", help="The engine whose layouts are searched: vllm.", rich_help_panel=SPACE)
PLAN_CONCURRENCY_OPT: int | None = typer.Option(
    None, "--concurrency", help="Requests decoded at once, over all replicas [default: as many as "
    "the KV pool holds].", show_default=False, rich_help_panel=LIMITS)
RATE_OPT: float | None = typer.Option(
    None, "--requests-per-s", help="Requests of prompt + output tokens a second to serve (the "
    "concurrency is then the fewest that reach it).", show_default=False,
    rich_help_panel=LIMITS)
TTFT_OPT: str | None = typer.Option(
    None, "--max-ttft", help="Seconds to the first token at most (estimate), e.g. 1 or 500ms.",
    show_default=False, rich_help_panel=LIMITS)
TPOT_OPT: str | None = typer.Option(
    None, "--max-tpot", help="Seconds per output token at most (estimate), e.g. 0.05 or 50ms.",
    show_default=False, rich_help_panel=LIMITS)
MIN_TOKENS_OPT: float | None = typer.Option(
    None, "--min-tokens-per-s", help="Output tokens a second at least, all replicas (estimate).",
    show_default=False, rich_help_panel=LIMITS)
BUDGET_OPT: float | None = typer.Option(
    None, "--budget", help="US dollars an hour at most, every GPU (needs --price).",
    show_default=False, rich_help_panel=LIMITS)
MAX_GPUS_OPT: int | None = typer.Option(
    None, "--max-gpus", help="GPUs at most, all replicas.", show_default=False,
    rich_help_panel=LIMITS)
OBJECTIVE_OPT: str = typer.Option(
    "cost", "--objective", help="Rank by cost (per million output tokens; fewest GPUs without a "
    "price), gpus, latency or throughput.")
PLAN_PRICE_OPT: str | None = typer.Option(
    None, "--price", help="US dollars per GPU-hour: one for every GPU, or NAME=USD,NAME=USD.",
    show_default=False)
TRAIN = "Training (a run of --tokens-total tokens in --days days)"
TRAIN_OPT: bool = typer.Option(
    False, "--train",
    help="Search training runs (train's plans): the fewest GPUs, or the cheapest, "
    "whose step fits and that finish in --days.", rich_help_panel=TRAIN)
TOKENS_TOTAL_OPT: str | None = typer.Option(
    None, "--tokens-total", "-D", help="Tokens to train on: 300B, 15.6T, 2e12.", show_default=False,
    rich_help_panel=TRAIN)
DAYS_OPT: float | None = typer.Option(
    None, "--days", help="Days the run may take at most (an estimate at the MFU).",
    show_default=False, rich_help_panel=TRAIN)
PLAN_MFU_OPT: float | None = typer.Option(
    None, "--mfu", help="Share of the peak FLOP/s reached (estimates) [default: 0.5 serving, 0.4 "
    "training, as serve and train].", show_default=False)
SOLVE_OPT: str | None = typer.Option(
    None, "--solve", help="One answer: max-context (the longest --tokens at the concurrency), "
    "max-concurrency, best-quant (the most bits per weight that meets every constraint) or "
    "min-gpus.", show_default=False)


@model_options
def plan(
    model: str | None = MODEL_ARG,
    gpu: str = PLAN_GPU_OPT,
    gpus: str | None = PLAN_GPUS_OPT,
    nodes: int = NODES_OPT,
    quant: str | None = PLAN_QUANT_OPT,
    kv_dtype: str = PLAN_KV_OPT,
    engine: str = ENGINE_OPT,
    max_model_len: int | None = MAX_MODEL_LEN_OPT,
    prompt: int | None = PROMPT_OPT,
    output: int | None = OUTPUT_OPT,
    concurrency: int | None = PLAN_CONCURRENCY_OPT,
    requests_per_s: float | None = RATE_OPT,
    max_ttft: str | None = TTFT_OPT,
    max_tpot: str | None = TPOT_OPT,
    min_tokens_per_s: float | None = MIN_TOKENS_OPT,
    budget: float | None = BUDGET_OPT,
    max_gpus: int | None = MAX_GPUS_OPT,
    objective: str = OBJECTIVE_OPT,
    price: str | None = PLAN_PRICE_OPT,
    solve: str | None = SOLVE_OPT,
    memory_utilization: str = UTILIZATION_OPT,
    mfu: float | None = PLAN_MFU_OPT,
    mbu: float = MBU_OPT,
    train: bool = TRAIN_OPT,
    tokens_total: str | None = TOKENS_TOTAL_OPT,
    days: float | None = DAYS_OPT,
    draft: str | None = DRAFT_OPT,
    speculative_tokens: int | None = SPECULATIVE_TOKENS_OPT,
    speculative_method: str | None = SPECULATIVE_METHOD_OPT,
    fmt: str | None = FORMAT_OPT,
    json_: bool = JSON_OPT,
    src: ModelSource = NO_SOURCE,
) -> None:
    """The cheapest hardware, fewest GPUs, best format or longest context that serves a model
    under constraints: every layout vLLM allows, ranked, with the serve line of each.

    Example: 'specsheet plan llama3-70b --gpu all --tokens 8k --requests-per-s 10 --max-ttft 1
    --price 2.50'.
    """
    from specsheet.api.plan import PlanRequest, TrainPlanning, check_plan_request, search
    from specsheet.cli.errors import as_options, option_of, option_seconds

    output_fmt = output_format(fmt, json_)
    request = PlanRequest(
        gpu=gpu, gpus=gpus, nodes=nodes, quant=quant, kv_dtype=kv_dtype, engine=engine,
        max_model_len=max_model_len, prompt=prompt, output=output, concurrency=concurrency,
        requests_per_s=requests_per_s, max_ttft=option_seconds(max_ttft, "--max-ttft"),
        max_tpot=option_seconds(max_tpot, "--max-tpot"),
        min_tokens_per_s=min_tokens_per_s, budget=budget, max_gpus=max_gpus,
        objective=objective, price=price, solve=solve, memory_utilization=memory_utilization,
        mfu=mfu, mbu=mbu, model_args=_model_args(model, src), train=train,
        tokens_total=tokens_total, days=days, draft=draft,
        speculative_tokens=speculative_tokens, speculative_method=speculative_method)
    with as_options({field: f"option {option_of(field)}" for field in _FIELDS}):
        check_plan_request(request)
        (report,) = reports([src.ref(model)], src.overrides(), None, None, "bf16",
                            "lower --tokens or raise the context with --set context=N",
                            None, None, src.timeout)
        planning = search(report.model, request)
    document = planning.to_dict()

    def views() -> "list[TableView]":
        from specsheet.views.plan import plan_train_views, plan_views

        if isinstance(planning, TrainPlanning):
            return plan_train_views(planning, OPTION_NAMES["price"])
        return plan_views(planning, OPTION_NAMES["price"])

    # a row a candidate, every field of it: the layout's tp, pp, ep, dp as columns of their own
    rows = [{**{k: v for k, v in c.items() if k != "layout"}, **c["layout"]}
            for c in document["candidates"]]
    emit(output_fmt, document, rows, views, inputs={"--mfu": mfu, "--mbu": mbu})
    if document["best"] is None:
        from specsheet.cli import streams

        streams.say(f"specsheet: {_missed(document)}")
        raise typer.Exit(ExitCode.CHECK_FAILED)


# plan's own fields, each given by --FIELD-WITH-DASHES
_FIELDS = ("objective", "requests_per_s", "max_gpus", "budget", "max_ttft", "max_tpot",
           "min_tokens_per_s", "solve", "nodes", "kv_dtype", "quant", "engine", "days",
           "tokens_total", "concurrency", "prompt", "output", "draft", "speculative_tokens",
           "speculative_method")


def _model_args(model: str | None, src: ModelSource) -> tuple[str, ...]:
    """The model as a serve line names it: MODEL (or --hf NAME) and each spec field given."""
    args: list[str] = [model] if model is not None else []
    if src.hf is not None:
        args += ["--hf", src.hf]
    for setting in src.settings:
        args += ["--set", setting]
    for name, value in src.spec:
        if value is not None:
            text = str(value).lower() if isinstance(value, bool) else str(value)
            args += ["--set", f"{name}={text}"]
    return tuple(args)


def _missed(document: dict[str, Any]) -> str:
    """The line on stderr when no candidate meets every constraint."""
    from specsheet.cli.errors import option_of
    from specsheet.units import significant

    near = document["closest"]
    if near is None:
        return f"no candidate: {document['reason']}"
    c = document["candidates"][near["candidate"]]
    layout = {"ep": 1, **c["layout"]}
    missed = "; ".join(
        f"{option_of(m['constraint'])} {m['limit']:g} (it has "
        f"{'none' if m['value'] is None else significant(m['value'])})"
        for m in near["misses"])
    return (f"no candidate meets every constraint; the closest, {c['gpus']} x {c['gpu']} "
            f"(tp {layout['tp']}, pp {layout['pp']}, dp {layout['dp']}, "
            f"{c.get('format', 'zero ' + str(layout.get('zero')))}), "
            f"misses {missed}")

