"""Look at the HTML reports' charts in a real browser: headless Chromium screenshots of results.

Usage (from the repository, after the README's setup command; needs Debian's `chromium` package):

    .venv/bin/python bench/look_at_charts.py [RESULT ...] [--out /tmp/dbio-charts]

Without RESULT, it takes the recorded fixtures (tests/fixtures/result_*.json): a fast-storage run
(direct I/O, reads of a few hundred microseconds), one through the page cache at 100% host CPU,
an interrupted one and a format-2 one. For each it writes the HTML report and a full-page PNG
beside it, and prints their paths: open the PNGs and check that every chart reads (latency lines
on their own scales, legends clear of the data, the histogram's tail visible).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from benchkit import REPO

FIXTURES = REPO / "tests" / "fixtures"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, default=Path("/tmp/dbio-charts"))
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=6000)
    args = parser.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("chromium is not installed: apt-get install chromium (Debian's package)")
    results = args.results or sorted(FIXTURES.glob("result_*.json"))
    args.out.mkdir(parents=True, exist_ok=True)
    for result in results:
        name = (result.parent.name if result.name == "result.json" else result.stem).replace("result_", "")
        html, png = args.out / f"{name}.html", args.out / f"{name}.png"
        subprocess.run([sys.executable, "-m", "dbio", "report", str(result), "--format", "html", "--out", str(html)],
                       check=True, cwd=REPO, capture_output=True)
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--window-size={args.width},{args.height}", f"--screenshot={png}", html.as_uri()],
                       check=True, capture_output=True, timeout=120)
        print(f"{result}: {png}")


if __name__ == "__main__":
    main()
