"""Many sessions on a tiny data set: all connect (settings in the startup packet), wait at the
barrier, start together and each runs its work loop to the end. No timing is asserted: the
time to start is measured by bench/bench_sessions.py."""

from tests.integration.conftest import SMALL, dbio, load_result, over, result_dir

SESSIONS = 300


def test_hundreds_of_sessions_all_start_and_all_run(instance, loaded_db):
    done = dbio("run", *instance.args(loaded_db, *over(SMALL, "--run-time", "0", "--warmup", "0"), "--label", "many",
                                      "-t", str(SESSIONS), "--work-loop", "3"), timeout=600)
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    assert doc["status"] == "complete"
    sessions = doc["sessions"]
    assert len(sessions) == SESSIONS
    assert [s["iterations"] for s in sessions] == [3] * SESSIONS  # every session ran, and only its loop
    assert len({s["pid"] for s in sessions}) == SESSIONS and all(s["pid"] for s in sessions)
    assert doc["timeline"]["start_seconds"] >= doc["timeline"]["connect_seconds"] > 0
    # the sessions' settings arrived with their connections: the loop's table is named unqualified,
    # so a session without its search_path would have failed; the plan is the pinned one
    assert doc["plans"]["select"]["nodes"]
