"""Entry point for ``python -m specsheet``."""

from specsheet.cli import main

main()
