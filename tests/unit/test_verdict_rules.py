"""The verdict's rules are declared once, one row each (report/verdict_rules.py), and a result is judged once
into a Verdict: a new rule is one row, its caveat beside the headline figure it names comes with it, and
nothing in the verdict switches over the findings' codes (issue 35 item 3)."""

from __future__ import annotations

import copy
import inspect
from pathlib import Path

from dbio import result as results
from dbio.report import (access_findings, baseline_findings, cluster_findings, conduct_findings, cpu_findings,
                         disruption_section, limit_findings, model, stack_findings, storage_findings, verdict,
                         verdict_rules)
from dbio.report.finding import Finding
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"
BASE = results.read(FIXTURES / "result_complete.json")
JUDGES = (access_findings, baseline_findings, cluster_findings, conduct_findings, cpu_findings, disruption_section,
          limit_findings, stack_findings, storage_findings)


def test_every_judge_of_the_rule_modules_is_a_row_and_no_row_is_there_twice():
    """A public function of a rule module that returns a Finding is a judge: the table must hold it, once."""
    rows = [rule.judge for rule in verdict_rules.RULES]
    assert len(rows) == len(set(rows))
    for module in JUDGES:
        for name, function in inspect.getmembers(module, inspect.isfunction):
            returns = str(inspect.signature(function).return_annotation)
            if function.__module__ == module.__name__ and not name.startswith("_") and "Finding" in returns:
                assert function in rows, f"{module.__name__}.{name} returns a Finding but is no row of the table"


def test_each_code_s_caveat_is_declared_by_one_row():
    codes = [code for rule in verdict_rules.RULES for code in rule.caveats]
    assert len(codes) == len(set(codes)), sorted(c for c in codes if codes.count(c) > 1)
    for code in codes:  # each names a headline figure, or none, or is said beside the headline
        said = verdict_rules.caveat(code)
        assert said is not None and (said.beside or said.figure in {f.name for f in verdict.HEADLINE})


def test_the_verdict_has_no_switch_over_the_codes():
    source = inspect.getsource(verdict)
    assert "code ==" not in source and 'code in ("' not in source


def test_a_new_rule_is_one_row_with_its_caveat(monkeypatch):
    """One row added: its warning is among the findings, in the summary lines' order, and its words stand beside
    the figure it names in the headline; a code without a caveat is named at the line's end."""
    def noisy(r):
        return Finding("warning", "noisy_neighbour", "a neighbour was noisy")

    def odd(r):
        return Finding("warning", "odd_thing", "something odd")

    caveat = verdict_rules.Caveat(verdict_rules.LATENCY, lambda r, f: "a noisy neighbour")
    monkeypatch.setattr(verdict_rules, "RULES", (*verdict_rules.RULES, verdict_rules.Rule(
        noisy, caveats={"noisy_neighbour": caveat}), verdict_rules.Rule(odd)))
    judged = verdict.judge(of(copy.deepcopy(BASE)))
    assert [f.code for f in judged.findings if f.level == "warning"][-2:] == ["noisy_neighbour", "odd_thing"]
    assert "us avg read (a noisy neighbour)" in judged.headline
    assert judged.headline.endswith("(also: odd thing)")
    assert judged.summary["valid"]  # warnings leave it valid


def test_a_node_rule_is_judged_again_on_each_node_with_its_name(monkeypatch):
    doc = copy.deepcopy(BASE)
    doc["nodes"] = [{**copy.deepcopy(doc["nodes"][0]), "name": name} for name in ("n1", "n2")]

    def each(r):
        return Finding("warning", "each", f"judged on {r.label}")

    monkeypatch.setattr(verdict_rules, "RULES", (*verdict_rules.RULES, verdict_rules.Rule(each, verdict_rules.NODE)))
    codes = [f.code for f in verdict.findings(of(doc))]
    assert codes.count("each") == 1 and codes.count("node_each") == 2


def test_a_result_is_judged_once_by_its_report_and_its_summary(monkeypatch):
    """The report model asks for the findings, the summary, the headline and its caveats: one judging."""
    judged = []
    real = verdict._judged
    monkeypatch.setattr(verdict, "_judged", lambda r: judged.append(r) or real(r))
    result = results.read_result(FIXTURES / "result_complete.json")
    model.build(result)
    assert len(judged) == 1
    verdict.headline(result), verdict.summary(result), verdict.reads_caveats(result)
    assert len(judged) == 1  # the same Result: the same Verdict
