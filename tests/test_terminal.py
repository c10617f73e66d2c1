"""specsheet in a real terminal (tmux): the width comes from the terminal, styles are on, and no
figure is cut at 80 or 40 columns. .ci/run installs tmux where it is missing."""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid

import pytest
from commands import SPECSHEET, clean_env

TMUX = shutil.which("tmux")


def in_terminal(args: list[str], width: int) -> str:
    """The screen after running specsheet ARGS in a terminal ``width`` columns wide."""
    if TMUX is None:
        pytest.fail("tmux is needed for the terminal tests (apt-get install tmux)")
    session = f"specsheet-{uuid.uuid4().hex[:8]}"
    command = " ".join([*SPECSHEET, *args]) + "; echo EXIT=$?; sleep 30"
    env = clean_env(TERM="xterm-256color")
    subprocess.run([TMUX, "new-session", "-d", "-s", session, "-x", str(width), "-y", "200",
                    command], env=env, check=True)
    try:
        for _ in range(100):
            screen = subprocess.run([TMUX, "capture-pane", "-p", "-e", "-t", session],
                                    capture_output=True, text=True, check=True).stdout
            if "EXIT=" in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"no exit after 10 s:\n{screen}")
    finally:
        subprocess.run([TMUX, "kill-session", "-t", session], check=False)


@pytest.mark.parametrize("width", [80, 40])
def test_check_in_a_real_terminal(width: int) -> None:
    screen = in_terminal(["check", "llama3-8b", "--max-weights", "16GB", "--max-kv", "1GiB",
                          "--max-params", "8B", "--max-flops", "20G"], width)
    plain = subprocess.run(["sed", "s/\x1b\\[[0-9;]*m//g"], input=screen, capture_output=True,
                           text=True, check=True).stdout
    assert "EXIT=1" in plain
    for figure in ("8,030,261,248", "16,060,522,496", "1,073,741,824", "19,304,284,160"):
        assert figure in plain
    assert "…" not in plain
    assert "\x1b[" in screen  # a terminal gets styles


def test_explore_in_a_real_terminal_shows_the_figures_and_quits_on_ctrl_q() -> None:
    """The explorer's real start: the terminal's streams, Textual's driver, and the exit."""
    import sys

    if TMUX is None:
        pytest.fail("tmux is needed for the terminal tests (apt-get install tmux)")
    session = f"specsheet-{uuid.uuid4().hex[:8]}"
    command = f"{sys.executable} -m specsheet explore gpt2-small; echo EXIT=$?; sleep 30"
    subprocess.run([TMUX, "new-session", "-d", "-s", session, "-x", "132", "-y", "44", command],
                   env=clean_env(TERM="xterm-256color"), check=True)

    def screen_with(text: str) -> str:
        screen = ""
        for _ in range(300):
            screen = subprocess.run([TMUX, "capture-pane", "-p", "-t", session],
                                    capture_output=True, text=True, check=True).stdout
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} after 30 s:\n{screen}")

    try:
        screen_with("Save preset")  # the footer lists the keys
        assert "gpt2-small: where the 124,439,808 parameters live" in screen_with("Total")
        subprocess.run([TMUX, "send-keys", "-t", session, "C-q"], check=True)
        assert "EXIT=0" in screen_with("EXIT=")
    finally:
        subprocess.run([TMUX, "kill-session", "-t", session], check=False)


@pytest.mark.parametrize("width", [80, 40])
def test_fit_in_a_real_terminal(width: int) -> None:
    screen = in_terminal(["fit", "llama3-8b", "--gpu", "rtx-4090", "--ctx", "8192"], width)
    plain = subprocess.run(["sed", "s/\x1b\\[[0-9;]*m//g"], input=screen, capture_output=True,
                           text=True, check=True).stdout
    assert "EXIT=0" in plain
    for figure in ("4,403.49", "281.81", "1,024.00", "33/33 layers"):
        assert figure in plain
    assert "…" not in plain
