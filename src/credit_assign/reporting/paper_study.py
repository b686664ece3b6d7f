"""The paper's numbers of the comparison with the paper (its table and counts) and of
the recipe-variant study (the ranking's winners, their counts, the headline norm under
each, the ranking's settings), as TeX macros and flags for paper/numbers.tex; the words
around them (the ranking in words, an inherited norm's note) are paper/ms.tex's."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from credit_assign.analysis import study as variant_study
from credit_assign.analysis.aggregate import select_runs
from credit_assign.analysis.comparison import MEASUREMENT_SEP
from credit_assign.infra.paths import DEFAULT_RECIPE
from credit_assign.reporting import labels
from credit_assign.reporting.render import (
    NOT_RUN,
    tex_gap,
    tex_int,
    tex_lam,
    tex_norm,
    tex_value,
)
from credit_assign.reporting.tex_chars import tex_escape

METRIC_NAMES = labels.names(labels.METRICS, "tex")


def reproduction_numbers(rep: pd.DataFrame | None, labels: dict | None = None
                         ) -> dict[str, str]:
    """The paper-vs-ours table and its counts; ``labels``: each rule's label (the
    registry's, as the workflow passes them: name → label)."""
    labels = labels or {}
    if rep is None or rep.empty:
        return {"nCompared": "0", "nWithin": "0", "nComparedVerified": "0",
                "nWithinVerified": "0", "nUnverified": "0", "reproductiontable": "",
                "paperHLDfaZero": NOT_RUN, "paperAccDfaZero": NOT_RUN, "paperAccFa": NOT_RUN}
    compared = rep[rep.gap.notna()]
    verified = compared[compared.verified.astype(bool)]
    rows = []
    for r in rep.itertuples():
        name = tex_escape(labels.get(r.method, r.method))
        run = f"{name}, $\\lambda$ = {tex_lam(float(r.lam))}"
        if not pd.isna(getattr(r, "seed", None)):  # one seed's number: said so
            run += f", seed {int(r.seed)}"
        metric = METRIC_NAMES.get(r.metric, tex_escape(r.metric))
        if isinstance(r.layer, (int, float)) and not pd.isna(r.layer):
            metric += f" $l_{int(r.layer)}$"
        if not pd.isna(r.paper):
            paper = tex_value(r.metric, r.paper)
        else:
            lo, hi = json.loads(r.paper_range) if isinstance(r.paper_range, str) else (None, None)
            paper = f"$[{lo:+.2f}, {hi:+.2f}]$" if lo is not None else "—"
        ours = NOT_RUN if pd.isna(r.ours_mean) else tex_value(r.metric, r.ours_mean)
        gap = "—" if pd.isna(r.gap) else tex_gap(r.gap)
        mark = "" if pd.isna(r.gap) else ("\\checkmark" if bool(r.within_tolerance) else "")
        if not bool(r.verified):
            mark += "$^\\ast$"
        rows.append(f"{run} & {metric} & {paper} & {ours} & {gap} & {mark} \\\\")
    def paper_of(method, lam, metric):
        row = select_runs(rep, method, lam)
        row = row[row.metric == metric]
        if row.empty or pd.isna(row.iloc[0].paper):
            return NOT_RUN
        v = float(row.iloc[0].paper)
        return tex_norm(v) if metric == "h_L_norm_median" else f"${v:.3f}$"

    return {"paperHLDfaZero": paper_of("dfa", 0.0, "h_L_norm_median"),
            "paperAccDfaZero": paper_of("dfa", 0.0, "test_acc"),
            "paperAccFa": paper_of("fa", 0.0, "test_acc"),
            "nCompared": str(len(compared)),
            "nWithin": str(int(compared.within_tolerance.astype(bool).sum())),
            "nComparedVerified": str(len(verified)),
            "nWithinVerified": str(int(verified.within_tolerance.astype(bool).sum())),
            "nUnverified": str(len(compared) - len(verified)),
            "reproductiontable": "\n".join(rows)}


VARIANT_KEYS = ("nVariants", "nOpen", "nDeparts", "bestVariant", "bestVariantWithin",
                "bestVariantWithinAll", "bestVariantWithinVerified", "bestDeparts",
                "bestDepartsWithin", "defaultWithin", "defaultWithinAll",
                "defaultWithinVerified", "nGapNumbers", "nGapNumbersVerified",
                "hLDfaZeroDefault", "hLDfaZeroBest", "gapHLDfaZeroDefault",
                "gapHLDfaZeroBest", "largestRecipe", "hLDfaZeroLargest",
                "gapHLDfaZeroLargest", "hLDfaZeroOneBatch", "gapHLDfaZeroOneBatch",
                "largestKind")


# the headline norms that may be another recipe's runs: \if<name>Inherited each
INHERITABLE = ("hLDfaZeroBest", "hLDfaZeroOneBatch")


def variant_numbers(gaps: pd.DataFrame | None, study: dict | None = None
                    ) -> tuple[dict[str, str], dict[str, bool]]:
    """The gap map's ranking, by the study's ranking (config ``study``,
    study.ranking, the one ordering): the best ``open`` variant is the headline,
    the best ``departs`` variant is named apart; counts with and without unverified
    numbers; the winner's curse (study.holdout). (macros, flags): a headline norm of
    INHERITABLE is flagged ``\\if<name>Inherited`` where it is the stated recipe's runs
    (the variant does not rerun DFA; ms.tex says so beside it)."""
    no_flags = {name + "Inherited": False for name in INHERITABLE}
    if gaps is None or gaps.empty:
        return (dict.fromkeys(VARIANT_KEYS, NOT_RUN) | {"nVariants": "0", "nGapNumbers": "0"},
                no_flags)
    rank = variant_study.ranking(gaps, study)
    by = rank.set_index("recipe")
    best = variant_study.best(rank, "open") or DEFAULT_RECIPE
    departs = variant_study.best(rank, "departs")
    counted = gaps[gaps.gap.notna()]
    n_numbers = counted[counted.recipe == DEFAULT_RECIPE].shape[0]
    headline = variant_study.headline_rows(gaps)

    inherited = {}

    def norm_of(recipe, name):
        """``recipe``'s headline norm ($n$ said) and gap; whether it is inherited (the
        variant does not rerun DFA: the stated recipe's runs) goes to
        ``inherited[name]``."""
        row = headline[headline.recipe == recipe]
        inherited[name] = False
        if row.empty:
            return NOT_RUN, NOT_RUN
        r = row.iloc[0]
        inherited[name] = bool(r.inherited)
        return f"{tex_norm(float(r.ours_mean))} ($n{{=}}{int(r.ours_n)}$)", tex_gap(r.gap)

    def count(recipe, which=""):
        if recipe not in by.index:
            return NOT_RUN
        return f"{tex_int(by.loc[recipe, 'within' + which])} of " \
               f"{tex_int(by.loc[recipe, 'compared' + which])}"

    (hl_default, gap_default) = norm_of(DEFAULT_RECIPE, "hLDfaZeroDefault")
    (hl_best, gap_best) = norm_of(best, "hLDfaZeroBest")
    # the recipes' own runs (not another recipe's inherited, nor a measurement column)
    own = headline[~headline.inherited.astype(bool)
                   & ~headline.recipe.str.contains(MEASUREMENT_SEP, regex=False)]
    own = own[np.isfinite(own.ours_mean.astype(float))]  # a diverged recipe is not compared
    largest = own.loc[own.ours_mean.idxmax()].recipe if len(own) else None
    (hl_largest, gap_largest) = (norm_of(largest, "hLDfaZeroLargest") if largest
                                 else (NOT_RUN, NOT_RUN))
    (hl_batch, gap_batch) = norm_of("default/one_batch", "hLDfaZeroOneBatch")
    if said := [k for k, v in inherited.items() if v and k not in INHERITABLE]:
        # the stated recipe and the largest of the recipes' own runs are never inherited
        raise ValueError(f"an inherited headline norm the paper does not flag: {said}")
    kind_of = dict(zip(rank.recipe, rank.kind, strict=True))
    kinds = rank.kind.value_counts()
    macros = {"nVariants": str(int(kinds.get("open", 0) + kinds.get("departs", 0))),
              "nOpen": str(int(kinds.get("open", 0))),
              "nDeparts": str(int(kinds.get("departs", 0))),
              "bestVariant": tex_escape(best), "bestVariantWithin": count(best),
              "bestVariantWithinAll": count(best, "_all"),
              "bestVariantWithinVerified": count(best, "_verified"),
              "bestDeparts": tex_escape(departs) if departs else NOT_RUN,
              "bestDepartsWithin": count(departs) if departs else NOT_RUN,
              "defaultWithin": count(DEFAULT_RECIPE),
              "defaultWithinAll": count(DEFAULT_RECIPE, "_all"),
              "defaultWithinVerified": count(DEFAULT_RECIPE, "_verified"),
              "nGapNumbers": str(n_numbers),
              "nGapNumbersVerified": str(int(counted[(counted.recipe == DEFAULT_RECIPE)
                                                     & counted.verified.astype(bool)].shape[0])),
              "hLDfaZeroDefault": hl_default, "hLDfaZeroBest": hl_best,
              "gapHLDfaZeroDefault": gap_default, "gapHLDfaZeroBest": gap_best,
              "largestRecipe": tex_escape(largest) if largest else NOT_RUN,
              "hLDfaZeroLargest": hl_largest, "gapHLDfaZeroLargest": gap_largest,
              "largestKind": tex_escape(kind_of.get(largest, "")) if largest else NOT_RUN,
              "hLDfaZeroOneBatch": hl_batch, "gapHLDfaZeroOneBatch": gap_batch}
    return macros, {name + "Inherited": inherited[name] for name in INHERITABLE}
