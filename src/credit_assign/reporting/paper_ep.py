"""The paper's numbers of the EP stack probe, as TeX macros for paper/numbers.tex: EP's
cosine to BPTT per parameter group over the settled seeds, each seed's block-0 cosine
and residual with its settled flag (lists of entries whose words ms.tex writes:
``\\epseedcosine{seed}{cosine}`` …, see seed_cosines) and the settling criterion. No
verdict: its seeds were seen and its criterion chosen after seeing them (the EP
questions judge, studies/ep_question2)."""

from __future__ import annotations

import pandas as pd

from credit_assign.analysis import findings
from credit_assign.reporting.render import NOT_RUN, tex_cosine, tex_int, tex_sci
from credit_assign.reporting.render import tex_spread as spread


def ep_numbers(by_seed: pd.DataFrame | None, precision: str) -> dict[str, str]:
    """EP's cosine to BPTT per parameter group at the shortest and longest free phase:
    mean ± std over the *settled* seeds (each seed the mean over its probe batches; the
    macro says "settled seeds" beside n), the count of unsettled seeds at each, the
    settling criterion, each seed's free-phase residual (the largest over its batches),
    and each seed's block-0 cosine with its settled flag at both lengths (a mean over
    settled seeds may hide a bimodal outcome)."""
    keys = ("epBlockZeroShort", "epBlockZeroLong", "epBlockZeroSeedsShort",
            "epBlockZeroSeedsLong", "epAllShort", "epAllLong",
            "epEmbShort", "epEmbLong", "epFreeShort", "epFreeLong", "epResidualLong",
            "epUnsettledShort", "epUnsettledLong", "epSettleResidual", "epSettleTBest")
    if by_seed is None or by_seed.empty:
        return dict.fromkeys(keys, NOT_RUN)
    findings.ep_block0(by_seed, precision)  # checks the table's settled column
    d = by_seed[by_seed.precision == precision].assign(
        settled=lambda t: t.settled.astype(bool))
    steps = sorted(d.free_steps.unique())
    short, long_ = steps[0], steps[-1]

    def cos(group, t):
        rows = d[(d.group == group) & (d.free_steps == t)]
        if len(rows) and not rows.settled.any():  # ms.tex: not defined, no seed settled
            return f"\\epnonesettled{{{tex_int(len(rows))}}}"
        settled = rows[rows.settled].cosine
        # n is the settled seeds, which the sentence before states (\epUnsettled...)
        return spread(settled, "cosine", full=len(settled))

    def unsettled(t):
        rows = d[(d.group == "all") & (d.free_steps == t)]
        return f"{tex_int((~rows.settled).sum())} of {tex_int(len(rows))}"

    def seeds_b0(t):
        rows = d[(d.group == "block0") & (d.free_steps == t)].sort_values("seed")
        # a mean over settled seeds may hide a bimodal outcome: each seed, with its flag
        # and, when unsettled, the value that failed the criterion
        return seed_cosines(rows.to_dict("records")) if len(rows) else NOT_RUN

    res = d[(d.group == "all") & (d.free_steps == long_)].sort_values("seed")
    return {"epBlockZeroShort": cos("block0", short), "epBlockZeroLong": cos("block0", long_),
            "epBlockZeroSeedsShort": seeds_b0(short), "epBlockZeroSeedsLong": seeds_b0(long_),
            "epAllShort": cos("all", short), "epAllLong": cos("all", long_),
            "epEmbShort": cos("embeddings", short), "epEmbLong": cos("embeddings", long_),
            "epFreeShort": tex_int(short), "epFreeLong": tex_int(long_),
            "epResidualLong": seed_residuals(res.to_dict("records")) if len(res) else NOT_RUN,
            "epUnsettledShort": unsettled(short), "epUnsettledLong": unsettled(long_),
            "epSettleResidual": tex_sci(float(d.max_residual.iloc[0])),
            "epSettleTBest": tex_int(d.t_best_after.iloc[0])}


def seed_cosines(rows: list[dict]) -> str:
    """Each seed's block-0 cosine (its mean over its probe batches), ``; ``-separated:
    ``\\epseedcosine{seed}{cosine}`` for a settled seed,
    ``\\epseedunsettled{seed}{cosine}{why}`` for one that did not settle, ``why`` the
    criteria it failed (``, ``-separated): ``\\epwhyresidual{largest residual}``,
    ``\\epwhytbest{earliest hindsight step}``. ms.tex writes each entry's words."""
    out = []
    for r in rows:
        head = f"{{{int(r['seed'])}}}{{{tex_cosine(r['cosine'])}}}"
        if r["settled"]:
            out.append("\\epseedcosine" + head)
            continue
        why = ([f"\\epwhyresidual{{{tex_sci(r['residual_max'])}}}"] if not r["residual_ok"]
               else []) + ([f"\\epwhytbest{{{tex_int(r['t_best_min'])}}}"] if not r["t_best_ok"]
                           else [])
        if not why:
            raise ValueError(f"EP seed {r['seed']}: not settled, yet its residual and its "
                             "hindsight step both pass: the by-seed table's settled column "
                             "disagrees with residual_ok and t_best_ok (rerun ep_stack_summary)")
        out.append("\\epseedunsettled" + head + "{" + ", ".join(why) + "}")
    return "; ".join(out)


def seed_residuals(rows: list[dict]) -> str:
    """Each seed's free-phase residual (the largest over its probe batches),
    ``, ``-separated: ``\\epseedresidual{seed}{residual}``, or
    ``\\epseedresidualunsettled{seed}{residual}`` for a seed that did not settle; ms.tex
    writes their words."""
    return ", ".join(("\\epseedresidual" if r["settled"] else "\\epseedresidualunsettled")
                     + f"{{{int(r['seed'])}}}{{{tex_sci(r['residual_max'])}}}" for r in rows)
