"""The winner's curse: held out one seed at a time, does the winner of the open recipes
(ranked on the other seeds) lose more on the held-out seed than a typical recipe does
(analysis.study.holdout, curse_finding)?

Rule: an estimate, the winner's change against a typical recipe's. Outcome ``estimated``
(``inflation``: detected where the winner falls further than a typical recipe) or
``missing`` (fewer than two seeds to hold out)."""

from __future__ import annotations

from credit_assign.analysis import study as variant_study
from credit_assign.analysis.verdicts import Study, Verdict


def finding(data: Study) -> dict:
    return variant_study.curse_finding(variant_study.holdout(data.gaps, data.study))


VERDICT = Verdict(
    name="curse", reads="study", outcomes=("estimated", "missing"), rule="estimate",
    finding=finding, order=4,
    schema={"if": {"properties": {"outcome": {"const": "estimated"}}},
            "then": {"required": ["kind", "held_out", "drop", "typical", "extra",
                                      "inflation"],
                     "properties": {"held_out": {"type": "integer", "minimum": 1},
                                    "drop": {"type": "number"},
                                    "typical": {"type": "number"},
                                    "extra": {"type": "number"},
                                    "inflation": {"enum": ["detected", "not_detected"]}}}})
