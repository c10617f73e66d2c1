"""Entry point for ``python -m specsheet``."""

from specsheet.cli.app import main

main()
