"""Entry point for ``python -m specsheet``."""

from specsheet.cli.entry import main

main()
