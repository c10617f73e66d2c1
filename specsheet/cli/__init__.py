"""The command line: argv, streams and exit codes live here and nowhere else."""
