"""The serving defaults the CLI's commands show in their signatures, in a module of their own
so that a command that serves nothing (``compare`` and ``sweep`` without ``--gpu``) does not
import ``specsheet.api.serve`` to read them. ``specsheet.api.serve`` re-exports them."""

DEFAULT_MFU = 0.5  # share of the peak FLOP/s the estimates assume
DEFAULT_MBU = 0.8  # share of the memory bandwidth the estimates assume
DEFAULT_PROMPT = 1024  # prompt tokens of a request, for the estimates
DEFAULT_OUTPUT = 256  # output tokens of a request, for the estimates
DEFAULT_UTILIZATION = "0.9"  # vLLM's gpu_memory_utilization (plan.serving's, kept exact as text)
