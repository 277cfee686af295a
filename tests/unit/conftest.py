import pytest

from dbio.run import agreed_start


@pytest.fixture
def short_start_lead(monkeypatch):
    """A start agreed in advance, chosen less far ahead: the fake engine's sessions reach their barriers
    in milliseconds, so seconds of lead (for real servers' connections) are only waiting. Barriers still
    open before the start (RELEASE_AHEAD < LEAD_SECONDS), as with the defaults."""
    monkeypatch.setattr(agreed_start, "LEAD_SECONDS", 0.8)
    monkeypatch.setattr(agreed_start, "RELEASE_AHEAD", 0.4)
