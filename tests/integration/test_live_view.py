"""The live view of a real run: on a terminal of its own (a pty), the status line with the interval's figures
and the time left; without a terminal, plain lines every few seconds with the same figures."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.integration.conftest import SMALL
from tests.terminal import run_under_terminal

WINDOW = ["--warmup", "1s", "--run-time", "7s", "-t", "2"]


def test_on_a_terminal_the_status_line_shows_the_interval_s_figures_and_the_time_left(instance, loaded_db):
    argv = [sys.executable, "-m", "dbio", "run", *instance.args(loaded_db, *SMALL[:4]), *WINDOW, "--label", "live"]
    status, screen = run_under_terminal(argv, timeout=180)
    assert status == 0, screen
    shown = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", screen)  # the terminal's escape sequences aside
    # the last status shown (rich wraps it at the terminal's 80 columns)
    last = " ".join(shown[shown.rindex("measuring ·"):].split())
    assert re.match(r"measuring · \d+ s left · \d+ s · 2 sessions · [\d,]+ reads/s · [\d,]+ us/read · SELECT p99 "
                    r"[\d.,]+ (ms|us) · [\d,]+ writes/s · (\S+ \d+% busy · )?CPU \d+% \(steal \d+%\)", last), last[:400]


def test_without_a_terminal_plain_lines_carry_the_same_figures(instance, loaded_db):
    done = subprocess.run([sys.executable, "-m", "dbio", "run", *instance.args(loaded_db, *SMALL[:4]), *WINDOW,
                           "--label", "plain"], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    figures = [ln for ln in done.stdout.splitlines() if re.match(r"\d+ s: measuring · \d+ s left · [\d,]+ reads/s", ln)]
    assert figures, done.stdout
    assert "\r" not in done.stdout and "\x1b" not in done.stdout  # a log gets no live line
