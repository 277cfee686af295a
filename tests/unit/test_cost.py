"""Prices (--price, [cost]) and the cost table from given prices and measured rates."""

import pytest

from dbio.jobs import capacity as capacity_command
from dbio.errors import UsageError
from dbio.stats import cost


def test_prices_from_flags_over_the_cost_table():
    prices = cost.prices(["instance=300/month", "iops=$0.065/provisioned-IOPS-month"],
                         {"instance": "250/month", "volume": 0.08})
    assert prices == cost.Prices(instance=300.0, volume=0.08, iops=0.065, currency="$")
    assert prices.given() == "instance $300/month, volume $0.08/GB-month, iops $0.065/provisioned-IOPS-month"
    assert cost.prices([], None) is None


@pytest.mark.parametrize("text, fragment", [
    ("instance", "NAME=AMOUNT/UNIT"), ("cpu=3/month", "NAME=AMOUNT/UNIT"), ("volume=cheap", "amount per GB-month"),
    ("volume=0.08/month", "per GB-month, not per month"), ("iops=-1/provisioned-IOPS-month", "amount"),
])
def test_a_malformed_price_is_one_line_naming_the_fix(text, fragment):
    with pytest.raises(UsageError) as caught:
        capacity_command.request(None, None, [text])
    message = str(caught.value)
    assert fragment in message and "\n" not in message and caught.value.exit_code == 2


def test_prices_in_two_currencies_are_refused():
    with pytest.raises(ValueError, match="more than one currency"):
        cost.prices(["instance=$300/month", "volume=€0.08/GB-month"])


def test_the_cost_table_from_given_prices():
    prices = cost.Prices(instance=300.0, volume=0.10, iops=0.05)
    rows = cost.rows([("01-t1", 1, 10_000.0), ("02-t2", 2, 20_000.0)], 100 * cost.GIB, prices)
    # month: 300 + 0.10 x 100 GB + 0.05 x IOPS
    assert [r.monthly for r in rows] == [pytest.approx(810.0), pytest.approx(1310.0)]
    assert [r.iops_per_gb for r in rows] == [pytest.approx(100.0), pytest.approx(200.0)]
    assert [r.per_1000_iops for r in rows] == [pytest.approx(81.0), pytest.approx(65.5)]
    unknown = cost.rows([("01-t1", 1, 10_000.0)], None, prices)
    assert unknown[0].iops_per_gb is None and unknown[0].monthly == pytest.approx(800.0)


@pytest.mark.parametrize("slo, fragment", [("p99<2", "STAT<LIMIT"), ("p95<2ms", "STAT<LIMIT"), ("p99<0ms",
                                                                                                "above zero"),
                                          ("fast", "STAT<LIMIT")])
def test_a_malformed_latency_objective_is_one_line(slo, fragment):
    with pytest.raises(UsageError) as caught:
        capacity_command.request(50_000, slo)
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_a_target_must_be_a_rate():
    with pytest.raises(UsageError, match="not a rate"):
        capacity_command.request(0.0, None)
    assert capacity_command.request(None, None) is None
    assert capacity_command.request(5e4, " p99 < 2ms ") == {"target_iops": 5e4, "latency_slo": "p99 < 2ms",
                                                           "prices": None}
