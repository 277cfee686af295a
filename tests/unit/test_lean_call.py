"""The lean call's pure parts (engines/postgres/lean_call.py): placeholders numbered, parameters as text."""

from __future__ import annotations

import math

import pytest

from dbio.engines.postgres import lean_call, sqlfiles


def test_placeholders_are_numbered_in_order_and_a_repeated_name_is_one():
    query, names = lean_call.numbered("SELECT %(a)s::int, %(b)s::text, %(a)s::int + %(c)s::int")
    assert query == b"SELECT $1::int, $2::text, $1::int + $3::int" and names == ["a", "b", "c"]


def test_the_slice_call_numbers_its_nine_parameters():
    query, names = lean_call.numbered(sqlfiles.text("slice_call.sql"))
    assert names == ["run_id", "session", "barrier", "iterations_before", "selects_before", "max_iterations",
                     "think_left", "due", "control"]
    assert b"%" not in query and b"$9::jsonb" in query


def test_a_placeholder_without_a_cast_is_refused():
    with pytest.raises(ValueError):
        lean_call.numbered("SELECT array_fill(%(n)s, ARRAY[3]), %(a)s::int")


def test_a_percent_that_is_no_placeholder_is_refused():
    with pytest.raises(ValueError):
        lean_call.numbered("SELECT 5 %% 2, %(a)s::int")


@pytest.mark.parametrize("value, text", [(None, None), (True, b"t"), (False, b"f"), (0, b"0"), (-7, b"-7"),
                                         (2 ** 63 - 1, b"9223372036854775807"), (0.1, b"0.1"), (-0.0, b"-0.0"),
                                         (1e-300, b"1e-300"), (math.inf, b"Infinity"), (-math.inf, b"-Infinity"),
                                         (math.nan, b"NaN"), ('{"a": "é"}', '{"a": "é"}'.encode())])
def test_values_as_postgresql_reads_them(value, text):
    assert lean_call.text_value(value) == text


def test_a_float_reads_back_to_the_same_double():
    for value in (1796225596.3134119, 2.0 / 3.0, 5e-324, 1.7976931348623157e308):
        assert float(lean_call.text_value(value)) == value


def test_another_type_is_refused():
    with pytest.raises(TypeError):
        lean_call.text_value(b"bytes")
