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


def tmux(session: str) -> list[str]:
    """tmux on a server of the session's own: a test's last session ending takes no other
    test's server with it."""
    return [TMUX or "tmux", "-L", session]


def in_terminal(args: list[str], width: int) -> str:
    """The screen after running specsheet ARGS in a terminal ``width`` columns wide."""
    if TMUX is None:
        pytest.fail("tmux is needed for the terminal tests (apt-get install tmux)")
    session = f"specsheet-{uuid.uuid4().hex[:8]}"
    command = " ".join([*SPECSHEET, *args]) + "; echo EXIT=$?; sleep 30"
    env = clean_env(TERM="xterm-256color")
    subprocess.run([*tmux(session), "new-session", "-d", "-s", session, "-x", str(width),
                    "-y", "200", command], env=env, check=True)
    try:
        for _ in range(100):
            screen = subprocess.run([*tmux(session), "capture-pane", "-p", "-e", "-t", session],
                                    capture_output=True, text=True, check=True).stdout
            if "EXIT=" in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"no exit after 10 s:\n{screen}")
    finally:
        subprocess.run([*tmux(session), "kill-session", "-t", session], check=False)


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
    subprocess.run([*tmux(session), "new-session", "-d", "-s", session, "-x", "132", "-y", "44",
                    command], env=clean_env(TERM="xterm-256color"), check=True)

    def screen_with(text: str) -> str:
        screen = ""
        for _ in range(300):
            screen = subprocess.run([*tmux(session), "capture-pane", "-p", "-t", session],
                                    capture_output=True, text=True, check=True).stdout
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} after 30 s:\n{screen}")

    try:
        screen_with("Save preset")  # the footer lists the keys
        assert "gpt2-small: where the 124,439,808 parameters live" in screen_with(
            "total 124,439,808 parameters")
        subprocess.run([*tmux(session), "send-keys", "-t", session, "C-q"], check=True)
        assert "EXIT=0" in screen_with("EXIT=")
    finally:
        subprocess.run([*tmux(session), "kill-session", "-t", session], check=False)


@pytest.mark.parametrize("width", [80, 40])
def test_fit_in_a_real_terminal(width: int) -> None:
    screen = in_terminal(["fit", "llama3-8b", "--gpu", "rtx-4090", "--ctx", "8192"], width)
    plain = subprocess.run(["sed", "s/\x1b\\[[0-9;]*m//g"], input=screen, capture_output=True,
                           text=True, check=True).stdout
    assert "EXIT=0" in plain
    for figure in ("4,403.49", "281.81", "1,024.00", "33/33 layers"):
        assert figure in plain
    assert "…" not in plain


# the explorer's breakdown bar: a part's fill character, by the name count's JSON gives it
FILLS = {"█": ("token_embedding", "position_embedding", "embedding_projections"),
         "▓": ("attention",), "▚": ("ssm",), "▒": ("mlp",), "┃": ("norms",),
         "░": ("output_head",)}


class Explorer:
    """specsheet explore in a tmux terminal: keys in, the screen out."""

    def __init__(self, args: list[str], width: int, height: int = 50) -> None:
        import sys

        if TMUX is None:
            pytest.fail("tmux is needed for the terminal tests (apt-get install tmux)")
        self.session = f"specsheet-{uuid.uuid4().hex[:8]}"
        command = " ".join([sys.executable, "-m", "specsheet", "explore", *args]) \
            + "; echo EXIT=$?; sleep 30"
        subprocess.run([*tmux(self.session), "new-session", "-d", "-s", self.session, "-x",
                        str(width), "-y", str(height), command],
                       env=clean_env(TERM="xterm-256color"), check=True)

    def screen_with(self, text: str) -> str:
        screen = ""
        for _ in range(300):
            screen = subprocess.run([*tmux(self.session), "capture-pane", "-p", "-t", self.session],
                                    capture_output=True, text=True, check=True).stdout
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} after 30 s:\n{screen}")

    def keys(self, *keys: str) -> None:
        subprocess.run([*tmux(self.session), "send-keys", "-t", self.session, *keys], check=True)

    def close(self) -> None:
        subprocess.run([*tmux(self.session), "kill-session", "-t", self.session], check=False)


def count_json(*args: str) -> dict[str, object]:
    import json

    result = subprocess.run([*SPECSHEET, "count", *args, "--json"], capture_output=True,
                            text=True, check=True, env=clean_env())
    document: dict[str, object] = json.loads(result.stdout)
    return document


def figures_pane(screen: str) -> list[str]:
    """The lines right of the form's border (the figures pane)."""
    return [line.split("│", 1)[1] for line in screen.splitlines() if "│" in line]


@pytest.mark.parametrize("width", [80, 160])
def test_explore_steps_layers_with_the_arrow_keys_and_the_bar_matches_count(width: int) -> None:
    """Focus starts on layers; right, right and shift+left make 12 + 2 - 10 = 4 layers, then
    right twice more 6; the total and the bar on the screen are count's for --layers 6."""
    import re

    explorer = Explorer(["gpt2-small"], width)
    try:
        explorer.screen_with("step up")  # the footer lists the keys of the focused field
        screen = explorer.screen_with("total 124,439,808 parameters")
        label = "> layers L    " if width < 100 else "> layers L      "  # a narrow form
        assert label + "12 " in screen  # focus on the first model field, marked
        explorer.keys("Right")
        explorer.keys("Right")
        explorer.screen_with(label + "14 ")
        explorer.keys("S-Left")
        explorer.screen_with(label + "4 ")
        explorer.keys("Right")
        explorer.keys("Right")
        document = count_json("gpt2-small", "--layers", "6")
        params = document["params"]
        assert isinstance(params, dict)
        total = params["total"]
        assert total == 124_439_808 - 6 * 7_087_872  # six blocks of count's "One layer"
        screen = explorer.screen_with(f"total {total:,} parameters")
        assert label + "6 " in screen
        pane = figures_pane(screen)
        runs = [re.match(f"[{''.join(FILLS)}]*", line.strip()) for line in pane]
        (bar,) = [m.group() for m in runs if m and len(m.group()) >= 10]  # a scrollbar may
        # follow the bar on its line
        components = params["components"]
        width_of_bar = len(bar)
        assert width_of_bar >= 10
        for fill, names in FILLS.items():
            value = sum(components[n] for n in names)
            cells = bar.count(fill)
            if value:  # every part with parameters is seen, within a cell of its share
                assert cells >= 1
                assert abs(cells - value * width_of_bar / total) <= 1.5, (fill, cells, bar)
            else:
                assert cells == 0
        shares = {m.group(1): m.group(2) for line in pane
                  if (m := re.match(r"\s*. (embeddings|attention|MLP|norms)\s+(\S+%)", line))}
        assert shares == {
            "embeddings": f"{100 * (39_383_808 / total):.1f}%",
            "attention": f"{100 * components['attention'] / total:.1f}%",
            "MLP": f"{100 * components['mlp'] / total:.1f}%",
            "norms": "<0.1%",  # 36,480 of 81 million: not zero, under 0.05%
        }
        assert 0 < components["norms"] * 2000 < total
        explorer.keys("C-q")
        assert "EXIT=0" in explorer.screen_with("EXIT=")
    finally:
        explorer.close()
