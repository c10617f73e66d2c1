"""``specsheet explore --web`` in headless Chromium: the page and its assets come from
127.0.0.1 alone, a key pressed in the page steps layers, and the page receives the new total.

Chromium is driven through its DevTools protocol (aiohttp, which textual-serve brings, as the
client): the test types into the page as a person would; the page's websocket traffic (the
screen textual-serve streams to xterm.js) is recorded by a script added to the page, and the
total is read from it. .ci/run installs Chromium; without it the test fails saying "not run"
and why (never a silent skip)."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from commands import clean_env

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# every frame the page's websockets receive, as text, kept in window.__screen
RECORD = """
window.__screen = "";
const Native = window.WebSocket;
window.WebSocket = function (...args) {
  const socket = new Native(...args);
  socket.addEventListener("message", async (event) => {
    const data = event.data;
    window.__screen += typeof data === "string" ? data
      : new TextDecoder().decode(data instanceof Blob ? await data.arrayBuffer() : data);
  });
  return socket;
};
window.WebSocket.prototype = Native.prototype;
Object.assign(window.WebSocket, Native);
"""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for(url: str, seconds: float = 30) -> bytes:
    end = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:  # 127.0.0.1 only
                body: bytes = response.read()
                return body
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.2)


async def drive(devtools: int, page_url: str) -> tuple[str, str]:
    """Open ``page_url`` in the browser, wait for the first total, press right: the screen
    text received before and after the key."""
    import aiohttp

    targets = json.loads(wait_for(f"http://127.0.0.1:{devtools}/json/list"))
    target = next(t for t in targets if t["type"] == "page")
    async with aiohttp.ClientSession() as session, \
            session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
        ids = iter(range(1, 10**6))

        async def call(method: str, **params: Any) -> dict[str, Any]:
            n = next(ids)
            await ws.send_json({"id": n, "method": method, "params": params})
            while True:
                message = await ws.receive_json(timeout=60)
                if message.get("id") == n:
                    result: dict[str, Any] = message.get("result", {})
                    return result

        async def screen() -> str:
            result = await call("Runtime.evaluate", expression="window.__screen || ''")
            return ANSI.sub("", str(result["result"].get("value", "")))

        async def until(text: str) -> str:
            for _ in range(300):
                seen = await screen()
                if text in seen:
                    return seen
                await asyncio.sleep(0.1)
            raise AssertionError(f"no {text!r} in the page after 30 s:\n{seen[-2000:]}")

        await call("Page.enable")
        await call("Page.addScriptToEvaluateOnNewDocument", source=RECORD)
        await call("Page.navigate", url=page_url)
        before = await until("total 124,439,808 parameters")
        # a person clicks into the page: the terminal gets the keyboard, the app its focus
        # back (Textual keeps the focused field, layers, while the page has no focus)
        await call("Emulation.setFocusEmulationEnabled", enabled=True)
        await call("Runtime.evaluate",
                   expression="document.querySelector('.xterm-helper-textarea').focus()")
        for kind in ("mousePressed", "mouseReleased"):  # on the header: nothing to focus
            await call("Input.dispatchMouseEvent", type=kind, x=700, y=6, button="left",
                       clickCount=1)
        await until("step up")  # the footer lists the focused field's keys
        for kind in ("rawKeyDown", "keyUp"):
            await call("Input.dispatchKeyEvent", type=kind, key="ArrowRight",
                       code="ArrowRight", windowsVirtualKeyCode=39, nativeVirtualKeyCode=39)
        after = await until("131,527,680")
        return before, after


def test_explore_web_in_headless_chromium(tmp_path: Path) -> None:
    if CHROMIUM is None:
        pytest.fail("not run: headless Chromium is needed (apt-get install chromium; "
                    ".ci/run installs it)")
    port, devtools = free_port(), free_port()
    server = subprocess.Popen([sys.executable, "-m", "specsheet", "explore", "gpt2-small",
                               "--web", "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=clean_env(), start_new_session=True)
    browser = None
    try:
        page = wait_for(f"http://127.0.0.1:{port}/").decode()
        for url in re.findall(r"(?:href|src)=\"([^\"]+)\"|url\(\"?([^\")]+)", page):
            link = next(u for u in url if u)
            assert link.startswith(f"http://127.0.0.1:{port}/"), link  # nothing from elsewhere
            wait_for(link)  # and every asset is served
        assert "googleapis" not in page
        browser = subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                                    f"--remote-debugging-port={devtools}",
                                    f"--user-data-dir={tmp_path / 'profile'}",
                                    "--window-size=1400,1000", "about:blank"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True)
        before, after = asyncio.run(drive(devtools, f"http://127.0.0.1:{port}/"))
        assert "131,527,680" not in before
        # 13 layers: 124,439,808 + one layer of 7,087,872 (count's "One layer")
        assert 124_439_808 + 7_087_872 == 131_527_680
        assert "131,527,680" in after
    finally:
        for process in (browser, server):
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
