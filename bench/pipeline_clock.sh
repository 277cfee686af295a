#!/bin/sh
# The run pipeline's unit tests, timed before and after a change (bench/RESULTS.md, 2026-11-27: virtual time):
# each tree's files in one pytest, -n 0, alternating the two trees ROUNDS times; prints each run's wall seconds.
# usage: bench/pipeline_clock.sh BEFORE_TREE AFTER_TREE [ROUNDS]   (the venv of the tree this script is in)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
python="$here/.venv/bin/python"
files="tests/unit/test_run_pipeline.py tests/unit/test_run_pipeline_nodes.py tests/unit/test_read_only_nodes.py
 tests/unit/test_counter_resets.py tests/unit/test_external_script.py tests/unit/test_repeat.py
 tests/unit/test_engine_spec.py"
for round in $(seq 1 "${3:-3}"); do
  for tree in "$1" "$2"; do
    began=$(date +%s.%N)
    (cd "$tree" && "$python" -m pytest -q -n 0 -p no:cacheprovider $files >/dev/null 2>&1) || echo "FAILED in $tree"
    echo "$round $tree $(echo "$(date +%s.%N) - $began" | bc)"
  done
done
