from dbio.stats.counters import delta, get, rate, ratio


def test_delta_of_nested_counters():
    begin = {"t": 10.0, "data": {"reads": 100, "hits": 5}, "by_backend": {"a": {"reads": 1}}}
    end = {"t": 12.5, "data": {"reads": 160, "hits": 9}, "by_backend": {"a": {"reads": 3}, "b": {"reads": 7}}}
    d = delta(begin, end)
    assert d == {"t": 2.5, "data": {"reads": 60, "hits": 4}, "by_backend": {"a": {"reads": 2}, "b": {"reads": 7}}}


def test_delta_keeps_missing_counters_missing_and_refuses_resets():
    assert delta({"x": None}, {"x": None}) == {"x": None}
    assert delta({"x": 10}, {"x": 3}) == {"x": None}  # counter reset inside the window
    assert delta(None, {"x": 4}) == {"x": 4}


def test_rate_ratio_get():
    assert rate(100, 4) == 25
    assert rate(None, 4) is None and rate(5, 0) is None
    assert ratio(1, 0) is None and ratio(3, 4) == 0.75
    assert get({"a": {"b": 2}}, "a", "b") == 2 and get({"a": 1}, "a", "b") is None
