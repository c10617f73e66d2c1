"""The ``specsheet`` group: lazy subcommands, and the one boundary where failures become exit codes.

Every subcommand lives in ``specsheet.cli.commands.<name>`` and is imported and built by typer
only when it runs (or when a help lists it), so one invocation does not pay for the options of
every other command. ``main`` owns the streams (see ``specsheet.cli.streams``).
"""

from __future__ import annotations

import errno
import inspect
import os
import sys
from collections.abc import Sequence
from functools import cache
from importlib import import_module
from typing import Any

import typer
from typer.core import TyperGroup

from specsheet import __version__
from specsheet.cli import streams
from specsheet.cli.options import CONVENTIONS, BadValue
from specsheet.errors import ExitCode, SpecError, did_you_mean, quoted, shortened

# name -> one-line help, in the order ``specsheet --help`` lists them
COMMANDS = {
    "count": "Where one model's parameters live, its memory, KV cache and FLOPs.",
    "compare": "Models side by side, with ratios to the first.",
    "sweep": "One model's memory and compute along one or two axes, with a chart.",
    "check": "Check models against budgets: exit 0 within every limit, 1 over one.",
    "serve": "Does a model fit on these GPUs, how many requests at once, how fast, at what cost.",
    "fit": "Will a GGUF run here with llama.cpp: layers, KV and compute per GPU and host.",
    "plan": "The cheapest hardware, fewest GPUs, best format or longest context under limits.",
    "train": "Training FLOPs, GPU-hours and cost, and memory per GPU.",
    "convert": "Write a model as a preset YAML file, to keep and edit.",
    "explore": "Design a model in the terminal; its figures follow every keystroke.",
    "inspect": "A checkpoint's real tensors by component, checked against its config.",
    "presets": "List the built-in presets.",
    "hardware": "List the built-in accelerators, or show one with every figure and its source.",
    "schema": "Print the JSON Schema of the documents --json writes.",
}


@cache
def build_command(name: str) -> Any:
    """The click command of subcommand ``name``, built by typer once per process.

    typer reads a command's signature up to three times while it builds it (the parameters,
    the callback, completion), each time evaluating its annotations from their text and
    walking them again with ``typing.get_type_hints``: 2 ms of ``sweep``'s 35 options. The
    signature is resolved here once, and typer takes every type from it (the hints it would
    read from ``__annotations__`` are the signature's own). typer then reads the parameters
    from it twice (``get_params_from_function``: for the options, then for the callback's
    names), copying every option's ``OptionInfo`` each time: a quarter of building
    ``serve``'s 61 options (10.1 million instructions, 7.4 read once). While it builds, each
    function's parameters are read once and the reading served again (neither reader changes
    it; typer 0.26 to 0.28 alike)."""
    module = import_module(f"specsheet.cli.commands.{name}")
    command = _resolved(getattr(module, name))
    single = typer.Typer(add_completion=False, pretty_exceptions_enable=False,
                         rich_markup_mode=None)
    single.command(name=name, short_help=COMMANDS[name], **module.SETTINGS)(command)
    names = vars(typer.main)
    read = names["get_params_from_function"]
    names["get_params_from_function"] = cache(read)
    try:
        return typer.main.get_command(single)
    finally:
        names["get_params_from_function"] = read


def _resolved(function: Any) -> Any:
    """``function`` with its signature resolved once (``inspect.signature(eval_str=True)``)
    and its annotations left empty, so that typer takes every type from the signature and
    evaluates no annotation text again."""
    function.__signature__ = inspect.signature(function, eval_str=True)
    function.__annotations__ = {}
    return function


class SpecsheetGroup(TyperGroup):
    """The ``specsheet`` group: builds subcommands lazily; turns usage errors into SpecError."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands and their one-line help, from COMMANDS: ``specsheet --help`` builds
        none of them (each command's short help is its COMMANDS line, so the text is what
        building them would give)."""
        with formatter.section("Commands"):
            formatter.write_dl(list(COMMANDS.items()))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            raise SpecError("unknown command "
                            f"{quoted(cmd_name)}{did_you_mean(cmd_name, COMMANDS)}; "
                            f"the commands are {', '.join(COMMANDS)}")
        return build_command(cmd_name)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Parse the group's own options. typer's ``--install-completion`` and
        ``--show-completion`` are built here, and only for a line that does not start with a
        command (the root's options, its help, a bare ``specsheet``, a mistyped command):
        after a command they cannot be given, and building them is about 0.5 ms of every run.
        They follow ``--version`` as typer's ``add_completion`` places them."""
        if not (args and args[0] in COMMANDS):
            self._add_completion_options()
        return super().parse_args(ctx, args)

    _completion = False  # the completion options are among the params

    def _add_completion_options(self) -> None:
        """typer's completion options, once (building them registers typer's shells)."""
        if not self._completion:
            self._completion = True
            self.params.extend(typer.main.get_install_completion_arguments())

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        """Parse the group's own options; its --help and --version write here, so a reader that
        went away leaves as ReaderGone (click would exit 1)."""
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except BrokenPipeError:
            raise streams.ReaderGone() from None

    def invoke(self, ctx: Any) -> Any:
        """Run the subcommand. A reader that went away leaves as ReaderGone: click would turn
        the BrokenPipeError into exit 1, the "over budget" code."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise streams.ReaderGone() from None

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             windows_expand_args: bool = True, **extra: Any) -> Any:
        """Run the command; every way it can end becomes an exit code here (see ExitCode).

        With ``standalone_mode`` (the console script, CliRunner) the code is raised as
        SystemExit; without it, returned.
        """
        code = self._run(args, prog_name, complete_var, windows_expand_args, **extra)
        if standalone_mode:
            sys.exit(code)
        return code

    def _run(self, args: Sequence[str] | None, prog_name: str | None, complete_var: str | None,
             windows_expand_args: bool, **extra: Any) -> int:
        prog_name = prog_name or "specsheet"
        if (complete_var or f"_{prog_name}_COMPLETE".replace("-", "_").upper()) in os.environ:
            self._add_completion_options()  # a shell asks for completions: typer's shells
        try:
            code = super().main(args=args, prog_name=prog_name,
                                complete_var=complete_var, standalone_mode=False,
                                windows_expand_args=windows_expand_args, **extra)
            streams.flush()
        except SpecError as e:
            return _fail(str(e))
        except typer.Abort:
            return _fail("aborted")
        except (BrokenPipeError, streams.ReaderGone):  # specsheet ... | head: stop quietly
            streams.silence_stdout()
            return ExitCode.OK
        except streams.OutputFailed as e:
            return _fail(f"cannot write the output: {e}", ExitCode.OUTPUT_FAILED)
        except OSError as e:  # a write by click itself (help, usage) or by print
            if e.errno in _PATH_ERRORS and e.filename is not None:  # a path the user gave
                return _fail(f"{_shown_path(e.filename)}: {e.strerror}")
            if not streams.is_write_failure(e):
                return _internal_error(e)
            return _fail(f"cannot write the output: {e.strerror}", ExitCode.OUTPUT_FAILED)
        except OverflowError as e:  # an integer past a float's 1.8e308: only an absurd shape
            return _fail(f"a figure is beyond what a floating-point number holds ({e}): the "
                         "inputs describe a model far past any real one; give smaller sizes")
        except Exception as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # bare 'specsheet': the help, on stderr
                streams.say(e.format_message())  # type: ignore[attr-defined]
                return ExitCode.BAD_INPUT
            if hasattr(e, "format_message") and hasattr(e, "exit_code"):  # click usage errors
                ctx = getattr(e, "ctx", None)
                hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
                # click's own messages say a value back whole ('...' is not a valid integer):
                # cut at the line's boundary; specsheet's own (BadValue) say it short already
                message = e.format_message()
                if not isinstance(e, BadValue):
                    message = shortened(message, head=120, tail=60)
                return _fail(f"{message}{hint}", int(e.exit_code))
            return _internal_error(e)
        return code if isinstance(code, int) else ExitCode.OK


# what the system says of a path that cannot be one (too long, a loop of links, a folder where a
# file belongs, a device): bad input, whichever reader met it
_PATH_ERRORS = frozenset({errno.ENAMETOOLONG, errno.ELOOP, errno.ENOTDIR, errno.EISDIR,
                          errno.ENXIO, errno.ENODEV, errno.ESPIPE, errno.EACCES, errno.EPERM,
                          errno.EROFS, errno.ENOENT})


def _shown_path(path: object) -> str:
    """A path for the error line: a long one shortened, its length said."""
    return shortened(os.fsdecode(path) if isinstance(path, (str, bytes)) else str(path))


def _fail(message: str, code: int = ExitCode.BAD_INPUT) -> int:
    """Print ``message`` as one line on stderr (white space folded) and return ``code``."""
    streams.say(f"specsheet: error: {' '.join(message.split())}")
    return code


def _internal_error(error: Exception) -> int:
    """A failure specsheet did not foresee: one line asking for a report, the traceback only
    under SPECSHEET_DEBUG=1."""

    if os.environ.get("SPECSHEET_DEBUG") == "1":
        import traceback  # lazy: only on an internal error

        try:
            traceback.print_exception(error, file=sys.stderr)
        except (OSError, ValueError):
            pass
    summary = " ".join(f"{type(error).__name__}: {error}".split())[:300]
    streams.say(f"specsheet: internal error: {summary}; please report it with the command you "
                "ran (SPECSHEET_DEBUG=1 shows the traceback)")
    return ExitCode.INTERNAL_ERROR

app = typer.Typer(
    cls=SpecsheetGroup,
    help="Exact parameter, memory, KV-cache and FLOP spec sheets for decoder-only transformers.",
    epilog=CONVENTIONS,
    no_args_is_help=True,
    add_completion=False,  # SpecsheetGroup.parse_args adds typer's completion options
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        streams.write(f"specsheet {__version__}\n")
        raise typer.Exit()


@app.callback()
@_resolved
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Exact spec sheets for decoder-only transformer language models."""


def main() -> None:
    """Console-script entry point (``specsheet`` and ``python -m specsheet``).

    It leaves with ``os._exit`` once the streams are flushed: a short-lived command gains
    nothing from tearing the interpreter down (about 10 ms once typer is loaded), and a
    reader that went away cannot make the interpreter's own final flush complain.
    Nothing here registers atexit handlers or leaves files open for writing.
    """

    streams.prepare()
    try:
        code = app(standalone_mode=False)
    except SystemExit as e:  # typer's shell-completion path exits on its own
        code = e.code if isinstance(e.code, int) else int(e.code is not None)
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code if isinstance(code, int) else ExitCode.OK)
