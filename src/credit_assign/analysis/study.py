"""The recipe-variant study: which group each column of the gap map is ranked in, the
study's ranking (config ``study``), its goal, and the winner's-curse check that holds
one seed out. The words are studies/variants/variants.md.j2 (the curse check's:
templates/holdout.md.j2) and the verdicts goal and curse
(analysis/verdicts/<name>.py); the gap map itself is
credit_assign.analysis.gap_table, the study's page studies.variants.page.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from credit_assign.analysis.cells import flag
from credit_assign.analysis.comparison import MEASUREMENT_SEP, same_number
from credit_assign.infra.paths import DEFAULT_RECIPE


def split_recipe(name: str) -> tuple[str, str]:
    """``dfa_no_aug/eps_cos_b128`` → (dfa_no_aug, eps_cos_b128); a recipe's own column → (name,
    "reported")."""
    base, _, measurement = name.partition(MEASUREMENT_SEP)
    return base, measurement or "reported"


STATED, MEASUREMENT = "stated", "measurement"
# The groups recipes are ranked in, each on its own: the stated recipe (``default``),
# the variants that fill a detail the paper leaves open, those that depart from what it
# states, and each of those recipes' models measured another way (``<kind>+measurement``:
# a measurement column keeps its recipe's kind, so a departing recipe's measurement never
# ranks with the open ones).
KINDS = (STATED, "open", "departs", f"{STATED}+{MEASUREMENT}", f"open+{MEASUREMENT}",
         f"departs+{MEASUREMENT}", "unlabelled", f"unlabelled+{MEASUREMENT}")
# the study's goal is a count under a recipe that departs from nothing the paper states,
# with any measurement: the stated recipe, the open variants, and their measurements
GOAL_KINDS = (STATED, "open", f"{STATED}+{MEASUREMENT}", f"open+{MEASUREMENT}")


def is_measurement(kind: str) -> bool:
    return kind.endswith(f"+{MEASUREMENT}")


def recipe_kind(name: str, kinds: dict[str, str] | None = None) -> str:
    """A gap-map column's group: ``stated`` (default), a variant's ``kind`` (``open``
    or ``departs``, config/variants.yaml), ``<that kind>+measurement`` for
    ``<recipe>/<measurement>``; a variant whose kind is not given is ``unlabelled``."""
    if name == DEFAULT_RECIPE:
        return STATED
    if MEASUREMENT_SEP in name:
        return f"{recipe_kind(split_recipe(name)[0], kinds)}+{MEASUREMENT}"
    return (kinds or {}).get(name, "unlabelled")


def has_measured(gaps: pd.DataFrame | None) -> bool:
    """Whether the gap table holds a number some measurement remeasured (what
    fig_variants_measured draws and the paper's \\ifhasmeasured switches on)."""
    if gaps is None or gaps.empty or not {"measurement", "remeasured"} <= set(gaps):
        return False
    return bool(((gaps.measurement != "reported") & gaps.remeasured.map(flag)).any())


# the study's headline number: DFA's unpenalised ‖h_L‖ (comparison.number_key's fields)
HEADLINE = {"method": "dfa", "lam": 0.0, "metric": "h_L_norm_median"}


def headline_rows(gaps: pd.DataFrame) -> pd.DataFrame:
    """The gap map's rows of the headline number (HEADLINE), where a gap was computed
    (every column: recipes, inherited ones, measurements)."""
    return gaps[same_number(gaps, HEADLINE) & gaps.gap.notna()]


DEFAULT_STUDY = {"seeds": None, "exclude_unverified": True, "goal": None,
                 "ranking": {"primary": "within_count", "tiebreak": "clipped_gap_sum",
                             "clip": 5.0}}
# a ranking key: its column in ranking()'s table, and whether smaller is better
RANK_KEYS = {"within_count": ("within", False), "clipped_gap_sum": ("clipped_gap_sum", True)}


def ranking_settings(study: dict | None = None) -> dict:
    """config ``study`` with its defaults (workflow/schemas/config.schema.yaml)."""
    study = study or {}
    return {**DEFAULT_STUDY, **study,
            "ranking": {**DEFAULT_STUDY["ranking"], **(study.get("ranking") or {})}}


def verified_numbers(gaps: pd.DataFrame) -> pd.Series:
    """Whether each row's paper number is verified (the reference's flag, as a table
    read back holds it); a table without the column: every number."""
    return gaps.verified.map(flag) if "verified" in gaps else pd.Series(True, gaps.index)


def ranking(gaps: pd.DataFrame, study: dict | None = None) -> pd.DataFrame:
    """The recipes in the order of the study's ranking (config ``study``,
    ranking_settings): ranked within their kind (KINDS: the stated recipe, ``open``
    variants, ``departs`` variants, measurement columns), by ``ranking.primary`` then
    ``ranking.tiebreak`` then name; ``exclude_unverified`` leaves the reference's
    unverified numbers out of ``within``, ``compared`` and ``clipped_gap_sum``. Every
    count is also given both ways: ``within_all``/``compared_all`` (every number) and
    ``within_verified``/``compared_verified``. ``rank``: 1 for the best of its kind.
    The one ordering of recipes: the markdown, the notes and the paper take the
    winner from here (best)."""
    settings = ranking_settings(study)
    r = settings["ranking"]
    verified = verified_numbers(gaps)
    scored = gaps.gap.notna()
    counted = scored & verified if settings["exclude_unverified"] else scored
    within = gaps.gap.abs() <= 1
    kind = gaps.kind if "kind" in gaps else gaps.recipe.map(recipe_kind)
    g = gaps.assign(
        kind=kind, counted=counted, within_c=within & counted,
        clipped=gaps.gap.abs().clip(upper=r["clip"]).where(counted, 0.0),
        rerun=counted & ~gaps.inherited.map(flag),
        w_all=within & scored, c_all=scored, w_ver=within & scored & verified,
        c_ver=scored & verified)
    out = g.groupby("recipe", sort=False).agg(
        kind=("kind", "first"), within=("within_c", "sum"), compared=("counted", "sum"),
        rerun=("rerun", "sum"), clipped_gap_sum=("clipped", "sum"),
        within_all=("w_all", "sum"), compared_all=("c_all", "sum"),
        within_verified=("w_ver", "sum"), compared_verified=("c_ver", "sum")).reset_index()
    out["kind_order"] = out.kind.map(lambda k: KINDS.index(k) if k in KINDS else len(KINDS))
    out = _ordered(out, study, ["kind_order"])
    out["rank"] = out.groupby("kind", sort=False).cumcount() + 1
    return out.drop(columns="kind_order")


def _ordered(table: pd.DataFrame, study: dict | None, first: list[str] = ()) -> pd.DataFrame:
    """``table`` (ranking's columns) in the study's order: ``first`` columns ascending,
    then the ranking's keys, then the recipe's name."""
    r = ranking_settings(study)["ranking"]
    keys, ascending = list(first), [True] * len(first)
    for name in dict.fromkeys([r["primary"], r["tiebreak"]]):
        if name in RANK_KEYS:
            column, smaller = RANK_KEYS[name]
            keys.append(column)
            ascending.append(smaller)
    return table.sort_values([*keys, "recipe"], ascending=[*ascending, True],
                             kind="stable").reset_index(drop=True)


def goal(rank: pd.DataFrame, study: dict | None = None, gaps: pd.DataFrame | None = None
         ) -> dict | None:
    """The study's goal (config ``study.goal``: a count within tolerance) checked on the
    recipes that depart from nothing the paper states, with any measurement (GOAL_KINDS),
    ordered by the same ranking: {goal, recipe, within, compared, within_all, compared_all,
    reached}; None without a goal or such a recipe."""
    target = ranking_settings(study).get("goal")
    rows = rank[rank.kind.isin(GOAL_KINDS)]
    if target is None or rows.empty:
        return None
    r = rows[rows.recipe == _pick(rows, GOAL_KINDS, study)].iloc[0]
    out = {"goal": int(target), "recipe": r.recipe, "kind": r.kind,
           "within": int(r.within), "compared": int(r.compared),
           "within_all": int(r.within_all), "compared_all": int(r.compared_all),
           "reached": bool(r.within >= target), "candidates": len(rows)}
    # the same pick, made on all seeds but one and counted on that one (holdout): the
    # best of k columns is an optimistic count, and this says by how much on these runs
    held = holdout(gaps, study, GOAL_KINDS) if gaps is not None else pd.DataFrame()
    if len(held):
        out |= {"held_out_within": float(held.within_held_out.mean()),
                "held_out_compared": float(held.compared_held_out.mean()),
                "held_out_seeds": len(held)}
    return out


def best(rank: pd.DataFrame, kind: str = "open") -> str | None:
    """The winner of a kind under the ranking (None if the study has none of that kind):
    the headline "best recipe" is the best ``open`` one."""
    rows = rank[rank.kind == kind]
    return rows.recipe.iloc[0] if len(rows) else None


def _pick(rank: pd.DataFrame, kinds, study: dict | None) -> str | None:
    """The first recipe of ``kinds`` pooled, in the study's order across them (what
    goal() picks; for one kind it is best()): None if there is none."""
    pool = rank[rank.kind.isin(kinds)]
    return _ordered(pool, study).recipe.iloc[0] if len(pool) else None


def seed_map(cell) -> dict[str, float]:
    """A per-seed cell of the gap map (``gap_seed``, ``gap_without_seed``: JSON, seed →
    gap) as a dict, a null gap NaN; {} for an empty cell."""
    if not isinstance(cell, str) or not cell.strip():
        return {}
    return {k: (math.nan if v is None else float(v)) for k, v in json.loads(cell).items()}


def holdout(gaps: pd.DataFrame, study: dict | None = None,
            kind: str | tuple[str, ...] = "open"
            ) -> pd.DataFrame:
    """The winner's curse, estimated by holding one seed out: for each seed s, rank the
    recipes of ``kind`` by the study's ranking on the other seeds' mean (``gap_without_seed``)
    and count the winner's numbers within tolerance on seed s alone (``gap_seed``).
    Columns: held_out, winner, within_selected (on the seeds it was picked on),
    compared_selected, within_held_out, compared_held_out, and mean_drop_of_kind: the
    drop from the ranking seeds to the held-out seed averaged over every recipe of the
    kind (part of any drop is only one seed being noisier than a mean of two; the
    winner's drop beyond it is the selection's inflation). Empty without per-seed gaps."""
    kinds = [kind] if isinstance(kind, str) else list(kind)
    seeds = sorted({s for cell in gaps.gap_seed for s in seed_map(cell)}, key=int) \
        if "gap_seed" in gaps else []
    rows = []
    for s in seeds:
        def on(column, s=s):
            g = gaps.assign(gap=[seed_map(c).get(s, math.nan) for c in gaps[column]])
            return g.assign(within=g.gap.abs() <= 1)
        picked, held = ranking(on("gap_without_seed"), study), ranking(on("gap_seed"), study)
        winner = _pick(picked, kinds, study)
        if winner is None:
            continue
        p, h = picked.set_index("recipe"), held.set_index("recipe")
        of_kind = p.index[p.kind.isin(kinds)]
        drop = (p.loc[of_kind, "within"] - h.loc[of_kind, "within"]).mean()
        rows.append({"held_out": int(s), "winner": winner,
                     "within_selected": int(p.loc[winner, "within"]),
                     "compared_selected": int(p.loc[winner, "compared"]),
                     "within_held_out": int(h.loc[winner, "within"]),
                     "compared_held_out": int(h.loc[winner, "compared"]),
                     "mean_drop_of_kind": float(drop)})
    return pd.DataFrame(rows, columns=["held_out", "winner", "within_selected",
                                       "compared_selected", "within_held_out",
                                       "compared_held_out", "mean_drop_of_kind"])


def holdout_data(table: pd.DataFrame, kind: str = "open") -> dict:
    """The hold-one-seed-out table (holdout) as the words want it: its rows, the change of
    the winner's count on each, the finding (curse_finding), and whether both counts of
    every fold cover the same numbers."""
    rows = [{**r, "change": r["within_held_out"] - r["within_selected"]}
            for r in table.to_dict("records")]
    return {"kind": kind, "rows": rows, "finding": curse_finding(table, kind),
            "same": bool((table.compared_selected == table.compared_held_out).all())}


def goal_finding(result: dict | None) -> dict:
    """The study's goal (study.goal's result): not set, reached or not reached."""
    outcome = ("not_set" if result is None else "reached" if result["reached"]
               else "not_reached")
    return {"outcome": outcome, "result": result}


def curse_finding(table: pd.DataFrame, kind: str = "open") -> dict:
    """What the hold-one-seed-out table says: the winner's fall from the seeds it was
    picked on to the held-out seed (``drop``), a typical recipe's of the kind
    (``typical``), and the winner's extra fall (``extra``), which estimates the
    selection's inflation (``inflation``: detected when positive). Each is rounded as
    printed, so a sign never rests on float noise (2.2e-16 is 0.00). Outcome
    ``missing`` without per-seed gaps."""
    if table.empty:
        return {"outcome": "missing", "kind": kind}
    drop = round(float((table.within_selected - table.within_held_out).mean()), 2)
    typical = round(float(table.mean_drop_of_kind.mean()), 2)
    extra = round(drop - typical, 2)
    return {"outcome": "estimated", "kind": kind, "held_out": len(table), "drop": drop,
            "typical": typical, "extra": extra,
            # the same changes as the table's: held-out seed less the seeds ranked on
            "winner_change": -drop, "typical_change": -typical,
            "inflation": "detected" if extra > 0 else "not_detected"}
