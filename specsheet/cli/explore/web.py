"""``specsheet explore --web``: the same app served to a browser on 127.0.0.1 (textual-serve, an
optional extra), every asset from the installed packages and nothing from the network.

textual-serve runs the command it is given once per browser tab, with Textual's web driver, and
streams the screen over a websocket to its page (xterm.js, from textual-serve's own package).
Its page also links a web font from a CDN: the page is served from a copy of its template
without that link (the terminal's font is then textual-serve's own Roboto Mono, from its
package, or the browser's monospace font)."""

from __future__ import annotations

import re
import shlex
import sys
import tempfile
from pathlib import Path

from specsheet.errors import SpecError

HOST = "127.0.0.1"  # this machine only
DEFAULT_PORT = 8770
INSTALL = "pip install 'specsheet[web]'"
WEB_DRIVER = "textual.drivers.web_driver:WebDriver"  # what textual-serve sets TEXTUAL_DRIVER to
_EXTERNAL = re.compile(r"<link[^>]*href=\"https?://[^\"]*\"[^>]*/?>", re.DOTALL)


def local_template(source: Path, folder: Path) -> Path:
    """A copy of textual-serve's templates in ``folder`` without links to other hosts."""
    for template in source.glob("*.html"):
        text = _EXTERNAL.sub("", template.read_text(encoding="utf-8"))
        (folder / template.name).write_text(text, encoding="utf-8")
    return folder


def app_command(argv: list[str]) -> str:
    """The command each tab runs: this explore command without --web and --port."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == "--web":
            continue
        if arg == "--port":
            skip = True
            continue
        if arg.startswith("--port="):
            continue
        kept.append(arg)
    return shlex.join([sys.executable, "-m", "specsheet", *kept])


def serve(argv: list[str], port: int) -> None:
    """Serve ``specsheet explore`` (``argv``: its arguments) on http://127.0.0.1:PORT."""
    try:
        import textual_serve
        from textual_serve.server import Server
    except ModuleNotFoundError:
        raise SpecError(f"explore --web needs textual-serve, an optional extra: {INSTALL}"
                        ) from None
    base = Path(textual_serve.__file__).parent
    with tempfile.TemporaryDirectory(prefix="specsheet-web-") as folder:
        templates = local_template(base / "templates", Path(folder))
        server = Server(app_command(argv), host=HOST, port=port, title="specsheet explore",
                        statics_path=base / "static", templates_path=templates)
        server.serve()
