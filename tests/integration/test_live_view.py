"""The live view of a real run: on a terminal of its own (a pty), the status line with the interval's figures
and the time left; without a terminal, plain lines every few seconds with the same figures."""

from __future__ import annotations

import re
import sys

from tests import forked_dbio
from tests.integration.conftest import SMALL, Done, load_result, result_dir
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
    done = forked_dbio.completed(["run", *instance.args(loaded_db, *SMALL[:4]), *WINDOW, "--label", "plain"],
                                 timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    figures = [ln for ln in done.stdout.splitlines() if re.match(r"\d+ s: measuring · \d+ s left · [\d,]+ reads/s", ln)]
    assert figures, done.stdout
    assert "\r" not in done.stdout and "\x1b" not in done.stdout  # a log gets no live line


def _bytes(text: str) -> float:
    number, unit = text.split()
    return float(number.replace(",", "")) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]


def test_a_scan_run_says_no_other_work_its_window_does_not_show(instance, loaded_db):
    """Scans (--scan-pct 100) read the scan table through a ring buffer, from the device each time. The devices
    are read as they move, the sessions' I/O counters reach pg_stat_io as each slice ends: each sample's devices
    are ahead of its engine counters by the work in progress (dbio said "other work shares the device" here,
    27,181 more than 80,634 reads, while over the window the device read 0.99 of the engine's bytes). Whatever
    the live view says of other work must be no more than the window's own devices show (this host may be shared:
    another process's reads are then there to be said)."""
    done = forked_dbio.completed(["run", *instance.args(loaded_db, *SMALL[:4]), "--scan-pct", "100", "--warmup", "0",
                                  "--run-time", "8s", "-t", "2", "--label", "live-scan"], timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    said = [ln for ln in done.stderr.splitlines() if "other work shares the device" in ln]
    result = load_result(result_dir(Done(done.returncode, done.stdout, done.stderr)))
    validity = result["figures"]["validity"]
    assert validity["db_read_bytes"] / validity["db_reads"] > 1.5 * 8192  # multi-block reads: bytes are judged
    for line in said:
        stated = re.search(r"at least ([\d.,]+ [KMG]?i?B) more", line)
        assert stated, line  # in bytes, as a lower bound
        assert _bytes(stated.group(1)) <= validity["device_read_bytes"] - validity["db_read_bytes"], (line, validity)
