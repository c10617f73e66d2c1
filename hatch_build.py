"""Build hook: an editable install byte-compiles the package, as installing a wheel does.

pip compiles a wheel's modules when it installs them; an editable install points at the
checkout and compiles nothing, so under PYTHONDONTWRITEBYTECODE=1 (common in containers) every
run compiled specsheet's modules from source (about 50 ms on the table path). Compiling them once
here gives both kinds of install the same start-up; a module edited later is compiled on import
as usual. It also writes the compiled methods of the package's dataclasses
(specsheet/compiled.py), which bytecode does not hold.

A wheel ships those compiled methods (for the Python that builds it, as ``pip install .``
builds the wheel it installs): Python writes that file beside the package on a first run, but
not under PYTHONDONTWRITEBYTECODE nor where it may not write (a system install run by another
user), where each run compiled them again, about 2 ms of a count. See docs/performance.md.
"""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    _folder: str | None = None

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        if version == "editable":
            compileall.compile_dir(str(Path(self.root) / "specsheet"), quiet=1)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            subprocess.run([sys.executable, "-m", "specsheet.compiled"], cwd=self.root,
                           env=env, check=False, stdout=subprocess.DEVNULL)
            return
        # the wheel's copy, written apart (the checkout's own is ignored by git and by hatch),
        # with no bytecode left in the checkout by the imports that build the classes; in
        # pip's isolated build, typer is not there: the command line's few classes are left
        # to the first run, as before
        self._folder = tempfile.mkdtemp(prefix="specsheet-compiled-")
        made = subprocess.run([sys.executable, "-m", "specsheet.compiled", self._folder],
                              cwd=self.root, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
                              check=False, capture_output=True, text=True)
        cache = Path(made.stdout.strip()) if made.returncode == 0 else None
        if cache is not None and cache.is_file():
            build_data["force_include"][str(cache)] = f"specsheet/{cache.name}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
