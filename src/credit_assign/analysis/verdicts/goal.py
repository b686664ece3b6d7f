"""The goal (config/variants.yaml, ``study.goal``): at least that many numbers within
tolerance under a recipe that departs from nothing the paper states
(analysis.study.goal: the best such column, with the winner's-curse check on it).

Rule: a count against the goal. Outcome ``not_set`` (no goal configured: no result),
``reached`` or ``not_reached`` (the result says which)."""

from __future__ import annotations

from credit_assign.analysis import study as variant_study
from credit_assign.analysis.verdicts import Study, Verdict


def finding(data: Study) -> dict:
    return variant_study.goal_finding(variant_study.goal(data.rank, data.study, data.gaps))


VERDICT = Verdict(
    name="goal", reads="study", outcomes=("not_set", "reached", "not_reached"), rule="count",
    finding=finding, order=3,
    schema={"required": ["result"],
            "if": {"properties": {"outcome": {"const": "not_set"}}},
            "then": {"properties": {"result": {"type": "null"}}},
            "else": {"properties": {"result": {
                "type": "object",
                "required": ["goal", "recipe", "kind", "within", "compared", "reached",
                             "candidates"],
                "properties": {"goal": {"type": "integer"}, "within": {"type": "integer"},
                               "compared": {"type": "integer"},
                               "candidates": {"type": "integer"},
                               "reached": {"type": "boolean"}}}}}})
