"""One module per subcommand, imported only when that command runs (or a help lists it)."""
