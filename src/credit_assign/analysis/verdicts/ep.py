"""EP's verdict on the EP probe's seeds: what block 0's cosine to BPTT says about the
tension reaching the bottom block, one row per seed (``cosine``, ``settled``, ``seed``)
at the probe's longest free phase. Only settled seeds count: a seed whose free phase did
not settle failed before depth could matter.

Rule: a screen, block 0's cosine above HIGH in every settled seed. Outcome
``none_settled``, ``reaches`` (above HIGH in every settled seed), ``partly`` or ``no``
(at most zero in every settled seed), with the seeds each way."""

from __future__ import annotations

import pandas as pd

from credit_assign.analysis.verdicts import Verdict

HIGH = 0.9  # block 0's cosine above this: the tension reached the bottom block


def finding(block0: pd.DataFrame) -> dict:
    settled = block0.settled.astype(bool)
    ok, bad = block0[settled], block0[~settled]

    def seeds(rows):
        return sorted(int(x) for x in rows.seed)

    out = {"high": HIGH, "settled": seeds(ok), "unsettled": seeds(bad),
           "low_settled": seeds(ok[ok.cosine <= HIGH]),
           "low_unsettled": seeds(bad[bad.cosine <= HIGH])}
    outcome = ("none_settled" if ok.empty else "reaches" if not out["low_settled"]
               else "no" if (ok.cosine <= 0).all() else "partly")
    return {**out, "outcome": outcome}


SEEDS = {"type": "array", "items": {"type": "integer"}}
VERDICT = Verdict(
    name="ep", reads="ep_probe", outcomes=("none_settled", "reaches", "partly", "no"),
    rule="screen", finding=finding, order=5,
    schema={"required": ["high", "settled", "unsettled", "low_settled", "low_unsettled"],
            "properties": {"high": {"type": "number"}, "settled": SEEDS, "unsettled": SEEDS,
                           "low_settled": SEEDS, "low_unsettled": SEEDS}})
