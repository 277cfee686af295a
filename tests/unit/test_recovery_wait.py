"""When a command waits for a server that recovers from a crash (no server needed)."""

import pytest

from dbio.engines.postgres import server


@pytest.mark.parametrize("refused_now, waited, since_refused, step", [
    (False, 0.0, None, "fail"),      # any other error, at the first attempt: at once, as before
    (True, 0.0, 0.0, "wait"),        # SQLSTATE 57P03: crash recovery (or start-up, or shutdown)
    (True, 299.9, 0.0, "wait"),
    (True, 300.0, 0.0, "give up"),   # the time limit
    (False, 4.6, 0.5, "wait"),       # the connection broke as the server reset, just after a refusal
    (False, 310.0, 0.5, "give up"),
    (False, 9.0, 2.5, "fail"),       # no refusal for a while: the server is down, or refuses us
])
def test_recovery_step(refused_now, waited, since_refused, step):
    assert server.recovery_step(refused_now, waited, since_refused, 300.0) == step


def test_no_server_at_all_fails_at_once(tmp_path):
    notes = []
    with pytest.raises(Exception, match="cannot connect"):
        server.connect(f"host={tmp_path} port=1", application_name="dbio:test", notify=notes.append)
    assert notes == []
