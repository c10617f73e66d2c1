"""Build hook: an editable install byte-compiles the package, as installing a wheel does.

pip compiles a wheel's modules when it installs them; an editable install points at the
checkout and compiles nothing, so under PYTHONDONTWRITEBYTECODE=1 (common in containers) every
run compiled specsheet's modules from source (about 50 ms on the table path). Compiling them once
here gives both kinds of install the same start-up; a module edited later is compiled on import
as usual. It also writes the compiled methods of the package's dataclasses
(specsheet/compiled.py), which bytecode does not hold. See docs/performance.md.
"""

from __future__ import annotations

import compileall
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel" and version == "editable":
            compileall.compile_dir(str(Path(self.root) / "specsheet"), quiet=1)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            subprocess.run([sys.executable, "-m", "specsheet.compiled"], cwd=self.root,
                           env=env, check=False, stdout=subprocess.DEVNULL)
