"""Time ``specsheet fit`` on a GGUF file whose tokenizer holds 150,000 tokens (issue #21: under
0.5 s).

The file is written with gguf.GGUFWriter (a test dependency): Qwen2.5-0.5B in Q8_0 with its
151,936-token vocabulary (tokens, scores, token types and 151,387 merges, the arrays a reader
must skip), every tensor's header, the data sparse. Prints, best of 5 in process, the answer:
reading the header, placing every tensor, the searches for the GPU layers and max_ctx, the JSON
document and the tables; then the whole ``specsheet fit FILE --gpu rtx-4090`` command as a
process (best of 3), start-up included (whose ratio to a bare interpreter is bench/startup.py's).

    python bench/fit.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# bench/ holds an inspect.py: take the folder off the path, or it shadows the standard library's
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
TARGET = 0.5


def main() -> int:
    from checkpoints import write_gguf

    import specsheet
    from specsheet.api.fit import FitRequest, fit
    from specsheet.quant.layouts import gguf_types
    from specsheet.views.fit import fit_views

    spec = specsheet.load("qwen2.5-0.5b").spec
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "qwen2.5-0.5b-q8_0.gguf"
        write_gguf(path, "qwen2", spec, gguf_types(spec, "q8_0"), vocab_tokens=spec.vocab,
                   merges=151_387, data=False)
        print(f"{path.name}: {path.stat().st_size:,} bytes, {spec.vocab:,} tokens, "
              "151,387 merges")

        def answer() -> None:
            got = fit(str(path), FitRequest(gpu=("rtx-4090",)))
            got.to_dict()
            fit_views(got)

        best = min(_time(answer) for _ in range(5))
        print(f"fit, in process (header, placement, -ngl auto, max_ctx, document, tables): "
              f"{best * 1000:.0f} ms (best of 5; target {TARGET * 1000:.0f} ms): "
              f"{best / TARGET:.2f}x the target")
        env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
        command = [sys.executable, "-m", "specsheet", "fit", str(path), "--gpu", "rtx-4090"]
        whole = min(_time(lambda: subprocess.run(command, capture_output=True, env=env,
                                                 check=True)) for _ in range(3))
        print(f"specsheet fit FILE --gpu rtx-4090, the whole process: {whole * 1000:.0f} ms "
              "(best of 3)")
    return 0


def _time(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


if __name__ == "__main__":
    raise SystemExit(main())
