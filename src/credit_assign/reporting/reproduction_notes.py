"""docs/reproduction-notes.md, generated: what matches the paper, what does not, and
which run shows why. Every number on the page is read from a table the pipeline wrote
(the default recipe's summary tables, every variant's runs.csv, the gap map, the
measurement variants); the prose around them is fixed, and where a sentence's claim
depends on the numbers, the sentence is chosen by the numbers.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from credit_assign.infra import paths
from credit_assign.infra.files import atomic_write_text
from credit_assign.reporting import labels, render
from credit_assign.reporting import study as variant_study
from credit_assign.reporting import tables as table_io
from credit_assign.reporting.aggregate import select_runs
from credit_assign.reporting.comparison import MEASUREMENT_SEP
from credit_assign.reporting.paper import null_finding
from credit_assign.reporting.render import md_table

DATASET_NAMES = labels.names(labels.DATASETS, "md")


_f = render.short


def _g(x: float) -> str:
    """A norm: three significant figures."""
    return "—" if x is None or math.isnan(x) else f"{x:.3g}"


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _runs_section(runs: pd.DataFrame, epochs: pd.DataFrame, variant_runs: dict, info: dict,
                  compute: str = "") -> str:
    all_runs = pd.concat([runs, *variant_runs.values()], ignore_index=True)
    commits = sorted(set(all_runs.git_commit.dropna().astype(str).str[:7]))
    no_git = int(all_runs.git_commit.isna().sum())
    code = (f"Code: commit(s) {', '.join(f'`{c}`' for c in commits)} (each metrics.json "
            "records its own" + (f"; {no_git} runs ran outside a git checkout"
                                 if no_git else "") + ")."
            if commits else "Code: outside a git checkout (each metrics.json records the "
            "library's sha256 instead).")
    by_len = runs.groupby("epochs").total_s
    jobs = "; ".join(f"{n} runs of {e} epochs, median {_f(t.median(), 0)} s per job "
                     f"({_f(t.min(), 0)}–{_f(t.max(), 0)} s)" for e, t in by_len
                     for n in [len(t)])
    per_epoch = epochs.train_s.median() + epochs.diagnostics_s.median()
    core_h = all_runs.total_s.sum() / 3600
    return (
        "## The runs\n\n"
        f"- Default recipe: {len(runs)} training runs ({', '.join(sorted(set(runs.method)))}); "
        f"{sum(len(v) for v in variant_runs.values())} more in {len(variant_runs)} recipe "
        f"variants ({', '.join(f'`{k}`: {len(v)}' for k, v in variant_runs.items())}). "
        f"{code}\n"
        f"- Data: `{info['source']}` ({info['n_train']} training, {info['n_test']} test "
        f"images; order: {info.get('order', '?')}).\n"
        f"- Compute (1 thread per job, two jobs sharing 2 cores), the default recipe: {jobs}; "
        f"an epoch takes {_f(per_epoch, 2)} s (median training + diagnostics). All "
        f"{len(all_runs)} training jobs of every recipe together, "
        f"as their timings recorded them (an epoch during which a process was stopped "
        f"included; docs/rebuild_estimate.md counts such epochs at their run's median): "
        f"{_f(core_h, 2)} core-hours.\n"
        + (f"- The study's compute as `python -m credit_assign.pipeline.compute` estimates it "
           f"from the config: {compute}\n" if compute else ""))


def _verified(gaps: pd.DataFrame) -> pd.Series:
    return gaps.verified.astype(str).str.lower() == "true" if "verified" in gaps else \
        pd.Series(True, gaps.index)


def _matches_section(gaps: pd.DataFrame) -> str:
    default = gaps[gaps.recipe == "default"]
    ok = default[default.gap.abs() <= 1]
    ver = _verified(default)
    lines = [f"- {r.run}: {r.metric} {_f(r.ours_mean)} (paper {r.paper})"
             + ("" if v else f" — an unverified target: {r.note}")
             for r, v in zip(ok.itertuples(), _verified(ok), strict=True)]
    return (f"## What matches under the default recipe: {len(ok)} of "
            f"{int(default.gap.notna().sum())} ({int((default.gap.abs() <= 1)[ver].sum())} "
            f"of {int(default.gap.notna()[ver].sum())} verified targets)\n\n"
            + "\n".join(lines) + "\n")


def _ranking_section(gaps: pd.DataFrame, study: dict | None) -> str:
    """The study's ranking, by its ranking rule (study.ranking, the one
    ordering), each kind apart; and the winner's curse, held one seed out."""
    rank = variant_study.ranking(gaps, study)
    rows = [[r.kind, str(r.rank), f"`{r.recipe}`", f"{r.within} of {r.compared}",
             f"{r.within_all} of {r.compared_all}",
             f"{r.within_verified} of {r.compared_verified}", f"{r.clipped_gap_sum:.1f}"]
            for r in rank.itertuples() if not variant_study.is_measurement(r.kind)]
    best = variant_study.best(rank, "open")
    departs = variant_study.best(rank, "departs")
    text = ("## The ranking, by the study's rule (`study.ranking`)\n\n"
            "Every recipe ran on the same seeds; recipes are ranked "
            f"{variant_study.ranking_text(study)} "
            "(config/variants.yaml, `study`), `open` variants (a detail the paper leaves "
            "open) apart from `departs` ones (a departure from what it states). Best open "
            f"variant: {f'`{best}`' if best else 'none'}; best departing one: "
            f"{f'`{departs}`' if departs else 'none'}. Each recipe's measurement columns are "
            "ranked apart, by the recipe's kind, in reproduction.md. "
            + (variant_study.goal_text(variant_study.goal(rank, study, gaps)) + "\n\n")
            + md_table(["kind", "rank", "recipe", "within (ranked)", "within (every number)",
                        "within (verified only)", "Σ clipped ∣gap∣ (ranked)"], rows) + "\n\n")
    return text + variant_study.holdout_markdown(
        variant_study.holdout(gaps, study)).replace("## ", "### ")


def _misses_section(gaps: pd.DataFrame) -> str:
    """Each number the default misses, and the column that moves it closest — among
    those that depart from nothing the paper states (the stated recipe measured another
    way, the open variants and their measurements) and, apart, among the departing ones:
    a departure never reads as the explanation of a miss unmarked."""
    default = gaps[gaps.recipe == "default"].reset_index(drop=True)
    others = gaps[(gaps.recipe != "default") & ~gaps.inherited.astype(bool)
                  & gaps.gap.notna()]
    groups = {"open": others[others.kind.isin(variant_study.GOAL_KINDS)],
              "departs": others[~others.kind.isin(variant_study.GOAL_KINDS)]}
    rows = []
    for _, d in default.iterrows():
        if pd.isna(d.gap) or abs(d.gap) <= 1:
            continue
        flag = "" if str(d.get("verified", True)).lower() == "true" else " (unverified)"
        row = [d.run, d.metric + flag, d.paper, _f(d.ours_mean), f"{d.gap:+.1f}",
               render.gap_sd(d.get("gap_sd", math.nan), d.get("tolerance_below_sd", False))]
        for group in groups.values():
            same = group[(group.run == d.run) & (group.metric == d.metric)]
            if same.empty:
                row += ["—", "none"]
                continue
            b = same.loc[same.gap.abs().idxmin()]
            within = sorted(same[same.gap.abs() <= 1].recipe)
            nearest = f"`{b.recipe}` {_f(b.ours_mean)} ({b.gap:+.1f})"
            # a column is "closest" only where it comes nearer the paper than the default
            row += [nearest if abs(b.gap) < abs(d.gap)
                    else f"none nearer than the default (nearest: {nearest})",
                    ", ".join(f"`{w}`" for w in within) or "none"]
        rows.append(row)
    table = md_table(["run", "metric", "paper", "default", "gap", "gap (our sd)",
                      "closest open column: value (gap)", "open columns within tolerance",
                      "closest departing column: value (gap)",
                      "departing columns within tolerance"], rows)
    return ("## What the default misses, and which recipe moves it\n\n"
            "Gap = (ours − paper) / tolerance (log10 units for norms); |gap| ≤ 1 is within. "
            "Gap (our sd) = (ours − paper) / our seed-to-seed sd; † where the tolerance is "
            "tighter than that sd. \"Closest\" is the column (a recipe's own runs, or its "
            "models measured another way) whose value comes nearest the paper on that one "
            "number: among the columns that depart from nothing the paper states (the "
            "stated recipe measured another way, the open variants and their measurements) "
            "and, apart, among the departing ones — a per-number look, not a ranking of "
            "recipes (that is the section above); every recipe ran on the same seeds.\n\n"
            + table + "\n")


def _layer_number(metric: str) -> int:
    return int(metric.rsplit("l", 1)[1])


def _per_seed_gaps(rows: pd.DataFrame, metrics: list[str], k: int) -> str:
    """The named column's gaps seed by seed (a mean over seeds can hide one seed's miss),
    and the caveat that it was picked as the best of k columns."""
    by_metric = {r.metric: variant_study.seed_map(r.gap_seed) for r in rows.itertuples()}
    seeds = sorted({s for m in by_metric.values() for s in m}, key=int)
    if not seeds:
        return ""
    per_seed = "; ".join(
        f"seed {seed}: " + ", ".join(f"{m.rsplit(' ', 1)[1]} {by_metric[m][seed]:+.1f}"
                                     for m in metrics if seed in by_metric.get(m, {})
                                     and not pd.isna(by_metric[m][seed]))
        for seed in seeds)
    return (f"Its gaps seed by seed: {per_seed}. It is picked as the nearest of {k} columns "
            "on these same numbers, so its fit is optimistic. ")


def _own_headline(gaps: pd.DataFrame) -> pd.DataFrame:
    """The headline ‖h_L‖ rows of the recipes' own runs (not an inherited column, nor a
    measurement of them)."""
    row = variant_study.headline_rows(gaps)
    return row[~row.inherited.astype(bool)
               & ~row.recipe.str.contains(MEASUREMENT_SEP, regex=False)]


# the runs whose layer cosines the paper gives (the hypothesis section scores both)
LAYER_RUNS = ("dfa, λ=0", "dfa, λ=0.01")


def _measured_cosines_section(gaps: pd.DataFrame, study: dict | None = None) -> str:
    """Which measurement comes nearest the paper's λ = 0 layer cosines — a hypothesis the
    measurement columns test, each column scored on the λ = 0 and λ = 1e-2 layer cosines
    together (one way of measuring must fit both): DFA's λ = 0 layer cosines (the
    paper: l0 survives, the deeper layers ≈ 0) under each measurement, for the
    default's models and for the recipe whose own λ = 0 ‖h_L‖ comes nearest the
    paper's; then every column that puts all of them within tolerance, or the nearest
    one (most within, then the study's clipped gap sum) with its seeds."""
    layer = gaps[(gaps.run == "dfa, λ=0") & gaps.metric.str.fullmatch(r"cosine l\d+")
                 & gaps.gap.notna()]
    if layer.empty or not variant_study.has_measured(gaps):
        return ""
    metrics = sorted(layer.metric.unique(), key=_layer_number)
    head = variant_study.headline_rows(gaps)
    own = _own_headline(gaps)
    recipes = ["default"]
    if len(own) and (near := own.loc[own.gap.abs().idxmin()].recipe) != "default":
        recipes.append(near)
    norm = head.set_index("recipe").ours_mean
    first = layer[layer.recipe == "default"].set_index("metric")
    rows = [["paper", "", "", *[str(first.paper.get(m, "—")) for m in metrics], ""]]
    for recipe in recipes:
        cols = [recipe] + sorted(layer[(layer.base_recipe == recipe)
                                       & (layer.recipe != recipe)].recipe.unique())
        for col in cols:
            r = layer[layer.recipe == col].set_index("metric")
            rows.append([f"`{col}`", str(r.kind.iloc[0]), _g(norm.get(col, math.nan)),
                         *[f"{_f(r.ours_mean[m])} ({r.gap[m]:+.1f})" if m in r.index else "—"
                           for m in metrics],
                         f"{int((r.gap.abs() <= 1).sum())} of {len(r)}"])
    table = md_table(["column", "kind", "‖h_L‖ (λ = 0)", *metrics, "within"], rows)
    # scored on both λ the paper gives layer cosines for (one measurement must fit both),
    # over the columns that measured these numbers themselves (an inherited column is a
    # copy of another's and would only repeat it)
    scored = gaps[gaps.run.isin(LAYER_RUNS) & gaps.metric.str.fullmatch(r"cosine l\d+")
                  & gaps.gap.notna() & ~gaps.inherited.astype(bool)]
    own_cols = scored[scored.run == LAYER_RUNS[0]]
    clip = variant_study.ranking_settings(study)["ranking"]["clip"]
    counts = scored.assign(ok=scored.gap.abs() <= 1).groupby("recipe").agg(
        ok=("ok", "sum"), n=("ok", "size"), kind=("kind", "first"),
        spread=("gap", lambda g: g.abs().clip(upper=clip).sum()))
    full = counts[counts.ok == counts.n]
    order = counts.sort_values(["ok", "spread"], ascending=[False, True])
    n_scored = int(counts.n.max())
    if len(full):
        verdict = (f"All {n_scored} layer cosines (λ = 0 and λ = 1e-2) fall within "
                   "tolerance under "
                   + ", ".join(f"`{c}` ({r.kind})" for c, r in full.iterrows()) + ". ")
        name = order.index[0]
    else:
        best, name = order.iloc[0], order.index[0]
        misses = scored[(scored.recipe == name) & (scored.gap.abs() > 1)]
        verdict = (f"No column puts all {n_scored} layer cosines (λ = 0 and λ = 1e-2) within "
                   f"tolerance; the nearest (most within, then the smallest "
                   f"Σ min(|gap|, {clip:g})) is `{name}` "
                   f"({best.kind}) with {int(best.ok)} of {int(best.n)}, missing "
                   + ", ".join(f"{m.run} {m.metric} {_f(m.ours_mean)} (gap {m.gap:+.1f})"
                               for m in misses.itertuples()) + ". ")
    verdict += _per_seed_gaps(own_cols[own_cols.recipe == name], metrics, len(counts))
    return (
        "## Which measurement comes nearest the paper's λ = 0 layer cosines — a hypothesis\n\n"
        "DFA's layer cosines at λ = 0, each a mean over the seeds with its gap in "
        "parentheses: the headline measurement (epsilon-free) and the same models measured "
        "the other ways (`measurements.csv`, no retraining), for the stated recipe and for "
        "the recipe whose own λ = 0 ‖h_L‖ comes nearest the paper's (‖h_L‖: the recipe's "
        "per-sample median, or for `one_batch` the Frobenius norm of one batch). An epsilon "
        "cosine reads ≈ 0 where the norms it divides by are small next to its epsilon "
        "(each norm for the clamped form, their product for the epsilon in the "
        "denominator), whatever the directions; the gradients' norms scale with the batch "
        "the loss is averaged over, and, in the deep layers, fall as ‖h_L‖ grows. A "
        "column is scored on the λ = 0 and the λ = 1e-2 layer cosines together: one way of "
        "measuring has to fit both.\n\n"
        + table + "\n\n" + verdict
        + "A column that gives the paper's pattern makes that way of measuring a plausible "
        "account of how the paper's numbers were made; it does not show that the authors "
        "measured so, and a departing recipe among them does not show that they ran it.\n")


def _norm_section(runs, layers, epochs, variant_runs: dict, measurements, gaps) -> str:
    dfa0 = select_runs(runs, "dfa", 0.0)
    final = select_runs(layers, "dfa", 0.0).merge(dfa0[["seed", "final_epoch"]], on="seed")
    final = final[final.epoch == final.final_epoch]
    per_layer = final.groupby("layer")[["h_norm_median", "branch_norm_median"]].median()
    rows = [[str(int(layer)), _g(r.h_norm_median),
             _g(r.branch_norm_median) if pd.notna(r.branch_norm_median) else "—"]
            for layer, r in per_layer.iterrows()]
    where = md_table(["layer l", "median ‖h_l‖", "median ‖f_l‖ (block l's branch)"], rows)
    biggest = per_layer.branch_norm_median.idxmax()
    traj = select_runs(epochs, "dfa", 0.0).groupby("epoch").h_L_norm_median.median()
    marks = [e for e in (1, 5, 10, 20, int(traj.index.max())) if e in traj.index]
    growth = ", ".join(f"epoch {e}: {_g(traj[e])}" for e in marks)
    # per seed (the config's seeds, as the runs tables hold them), never a mean that
    # could hide a bimodal outcome: ‖h_L‖, its ratio to the default's run of the same
    # seed, and the test accuracy
    seeds = sorted(int(s) for s in dfa0.seed.unique())
    base = {int(r.seed): float(r.h_L_norm_median) for r in dfa0.itertuples()}
    rows = []
    for name, vr in [("default", runs), *variant_runs.items()]:
        r = select_runs(vr, "dfa", 0.0)
        if len(r):
            by_seed = {int(x.seed): x for x in r.itertuples()}
            rows.append([f"`{name}`"] + [
                f"{_g(float(by_seed[s].h_L_norm_median))} "
                f"(× {_f(float(by_seed[s].h_L_norm_median) / base.get(s, math.nan), 2)}), "
                f"acc {_f(float(by_seed[s].test_acc))}" if s in by_seed else "—"
                for s in seeds])
    recipes = md_table(["recipe", *[f"seed {s}: ‖h_L‖ (× default), test acc." for s in seeds]],
                       rows)
    text = (
        "## ‖h_L‖ at λ = 0: where the norm lives and what moves it\n\n"
        + _paper_norm_sentence(gaps)
        + "Where ours lives at the final epoch (dfa, λ = 0, median "
        "over seeds, `layers.csv`):\n\n" + where + "\n\n"
        f"Block {int(biggest)}'s residual branch carries the largest norm. Each branch sees "
        "a LayerNorm'd input, so ‖f_l‖ grows only through W1, W2 and their biases. Growth "
        f"of the median ‖h_L‖ (median over seeds, `epochs.csv`): {growth}.\n\n"
        "Each recipe's DFA runs at λ = 0, per seed (its `runs.csv`):\n\n" + recipes + "\n")
    if measurements is not None and len(measurements):
        m = select_runs(measurements, "dfa", 0.0).pivot_table(index="seed",
                                                              columns="measurement",
                                                              values="h_L_norm")
        if {"stratified", "one_batch"} <= set(m.columns):
            ratio = (m.one_batch / m.stratified).median()
            mixed = (m.mixed_n / m.stratified).median() if "mixed_n" in m else math.nan
            text += (
                "\nMeasured differently on the same default models (`measurements.csv`, "
                "median over seeds of the ratio to the reported per-sample median): the "
                f"Frobenius norm of one class-mixed batch is {_f(ratio, 1)}×, a seeded "
                f"class-mixed draw instead of the class-stratified set {_f(mixed, 2)}×. A "
                "batch's Frobenius norm is √batch times the RMS of the per-sample norms, "
                "which exceeds their median wherever a few samples carry most of the norm: "
                f"a measurement choice worth {_f(math.log10(ratio), 2)} decades.\n")
    row = _own_headline(gaps)
    if len(row):
        best = row.loc[row.ours_mean.idxmax()]
        decades = math.log10(float(best.paper) / float(best.ours_mean))
        text += (f"\nThe largest λ = 0 norm of any recipe's own runs (mean over its seeds) "
                 f"is `{best.recipe}`'s ({best.kind}) {_g(best.ours_mean)}, "
                 f"{_f(abs(decades), 2)} decades {'below' if decades > 0 else 'above'} the "
                 f"paper's {_g(float(best.paper))}; "
                 + ("it is within tolerance." if abs(best.gap) <= 1 else
                    "no recipe's own runs come within tolerance of the paper's number "
                    + ("(the largest one falls short). " if decades > 0 else
                       "(the largest one overshoots it). ") + "The table above shows "
                    "which recipes move it, and by how much, seed by seed; the remaining "
                    "factor is not shown by any run here.") + "\n")
    return text


def _paper_norm_sentence(gaps: pd.DataFrame) -> str:
    row = variant_study.headline_rows(gaps)
    row = row[row.recipe == "default"]
    return (f"The paper reports {_g(float(row.paper.iloc[0]))}. " if len(row)
            and pd.notna(row.paper.iloc[0]) else "")


def _accuracy_section(runs, epochs, variant_runs: dict) -> str:
    lines = ["## Accuracies: DFA's peak, the frozen baseline, FA\n"]
    traj = select_runs(epochs, "dfa", 0.0)
    if len(traj):
        peak = traj.loc[traj.groupby("seed").test_acc.idxmax()].set_index("seed")
        final = select_runs(runs, "dfa", 0.0).set_index("seed")
        per_seed = "; ".join(
            f"seed {int(seed)}: peak {_f(float(p.test_acc))} at epoch {int(p.epoch)}, final "
            f"{_f(float(final.test_acc[seed]))} (‖h_L‖ {_g(float(final.h_L_norm_median[seed]))})"
            for seed, p in peak.iterrows() if seed in final.index)
        lines.append(f"- DFA at λ = 0, per seed (`epochs.csv`, `runs.csv`): {per_seed}.")
    fz = select_runs(runs, "frozen", 0.0)
    shallow = variant_runs.get("dfa_shallow")
    if len(fz):
        text = (f"- Frozen baseline (embedding, LN_out and head trained by BP through frozen "
                f"random blocks): mean {_f(fz.test_acc.mean())} over {_n(len(fz), 'seed')} "
                f"({_per_seed(fz)})")
        if shallow is not None and len(select_runs(shallow, "frozen", 0.0)):
            s = select_runs(shallow, "frozen", 0.0)
            text += (f"; with the embedding taught by its DFA signal (`dfa_shallow`, the "
                     f"\"DFA-shallow\" reading of the authors' record): mean "
                     f"{_f(s.test_acc.mean())} over {_n(len(s), 'seed')} ({_per_seed(s)})")
        lines.append(text + ". Its blocks receive no teaching signal, so its deep cosine is "
                     "reported as not applicable.")
    fa = select_runs(runs, "fa", 0.0)
    if len(fa):
        std = f" ± {_f(fa.test_acc.std(ddof=1))}" if len(fa) > 1 else ""
        lines.append(f"- FA ({int(fa.epochs.max())} epochs, {_n(len(fa), 'seed')}; means over "
                     f"the seeds): accuracy {_f(fa.test_acc.mean())}{std} ({_per_seed(fa)}), "
                     f"deep cosine {_f(fa.deep_cosine.mean())}, ‖h_L‖ (each run's median over "
                     f"images) {_g(fa.h_L_norm_median.mean())}. " + _fa_variants(variant_runs))
    return "\n".join(lines) + "\n"


def _fa_variants(variant_runs: dict) -> str:
    found = {name: select_runs(v, "fa", 0.0) for name, v in variant_runs.items()}
    found = {name: v for name, v in found.items() if len(v)}
    if not found:
        return "No variant here touches FA, so its gaps stay unexplained by this study."
    return "Its variants (means over the seeds): " + "; ".join(
        f"`{name}` accuracy {_f(v.test_acc.mean())} ({_per_seed(v)}), deep cosine "
        f"{_f(v.deep_cosine.mean())} ({_n(len(v), 'seed')})" for name, v in found.items()) + "."


def _per_seed(runs: pd.DataFrame, column: str = "test_acc") -> str:
    """A column's value on each seed ("seed 42: 0.515, …"): a mean beside it hides no
    outlier."""
    return ", ".join(f"seed {int(r.seed)}: {_f(float(getattr(r, column)))}"
                     for r in runs.sort_values("seed").itertuples())


def _null_section(nulls: pd.DataFrame | None, penalty: float | None) -> str:
    """DFA's deep cosine against its own fresh-B null, at λ = 0 and at the penalty, each
    by the same screen: paper.null_finding's findings in templates/notes_null.md.j2."""
    if nulls is None or penalty is None:
        return ""
    screens = [null_finding(nulls, lam) for lam in (0.0, penalty)]
    return render.render("notes_null.md.j2", screens=screens)


def checks_finding(gaps: pd.DataFrame) -> dict:
    """What the default recipe misses, by method, and how BP fares on its numbers."""
    default = gaps[gaps.recipe == "default"]
    bp = default[default.run.str.startswith("bp") & default.gap.notna()]
    return {"missed": sorted({run.split(",")[0] for run in default[default.gap.abs() > 1].run}),
            "bp": len(bp), "bp_missed": int((bp.gap.abs() > 1).sum())}


def _tail(name: str, *finding) -> str:
    """One section of templates/notes_tail.md.j2 (its leading blank line dropped)."""
    return render.macro("notes_tail.md.j2", name)(*finding).lstrip("\n")


def notes(summary: dict[str, pd.DataFrame], variant_runs: dict[str, pd.DataFrame],
          gaps: pd.DataFrame, measurements: pd.DataFrame | None, info: dict,
          study: dict | None = None, penalty: float | None = None, compute: str = "",
          history: list[dict] | None = None) -> str:
    """The page. ``summary``: the default recipe's runs, epochs and layers tables (and
    ``nulls``, for the fresh-B section); ``variant_runs``: each variant's runs.csv;
    ``gaps``: variants_gap.csv; ``study``: config ``study`` (the ranking rule);
    ``penalty``: figures.penalty_lambda; ``compute``: compute.statement's sentence;
    ``history``: what was fixed when (reporting.history.events), its section last."""
    runs, epochs, layers = summary["runs"], summary["epochs"], summary["layers"]
    head = (
        f"# Reproduction on {DATASET_NAMES.get(info['name'], info['name'])}: what matches, "
        "what does not, and why\n\n"
        "Generated by the pipeline (rule `reproduction_notes`, target `variants`) from the "
        "default recipe's `"
        + paths.braced([paths.RUNS, paths.EPOCHS, paths.LAYERS, paths.MEASUREMENTS],
                       dataset="<dataset>")
        + "`"
        ", every variant's `runs.csv` and the gap map "
        "`variants_gap.csv`: no number on this page is typed. The full tables, the default "
        "recipe beside the best open variant, and the gap map: [reproduction.md](reproduction.md); "
        + ("the figures: [fig_variants.png](fig_variants.png), "
           "[fig_variants_measured.png](fig_variants_measured.png) and "
           "[fig_variants_measured_eps.png](fig_variants_measured_eps.png). "
           if variant_study.has_measured(gaps)
           else "the figure: [fig_variants.png](fig_variants.png). ")
        + "Each number is formatted once, from the unrounded value in its table. The "
        "paper's claims are judged as effects with intervals on fresh seeds on their own "
        "page, [claims.md](claims.md); this page compares numbers.\n")
    parts = [head, _runs_section(runs, epochs, variant_runs, info, compute),
             _matches_section(gaps), _ranking_section(gaps, study), _misses_section(gaps),
             _measured_cosines_section(gaps, study),
             _null_section(summary.get("nulls"), penalty),
             _norm_section(runs, layers, epochs, variant_runs, measurements, gaps),
             _tail("scale"),
             _accuracy_section(runs, epochs, variant_runs), _tail("checks", checks_finding(gaps)),
             render.render("notes_history.md.j2", history=history) if history else ""]
    return "\n".join(p for p in parts if p)


def write_notes(default: dict[str, str | Path], variant_runs: dict[str, str | Path],
                gaps: str | Path, measurements: str | Path | None, info: dict,
                out: str | Path, expect: dict | None = None, study: dict | None = None,
                penalty: float | None = None, compute: str = "",
                history: list[dict] | None = None) -> str:
    """The notes from the tables, each checked first. ``expect``: the runs the config
    asks for: ``runs`` (the default recipe's), ``nulls`` (its DFA runs) and
    ``variants`` (name → its runs)."""
    expect = expect or {}
    summary = {k: table_io.read(v, k, expect.get("nulls" if k == "nulls" else "runs"))
               for k, v in default.items()}
    variants = {k: table_io.read(v, "runs", expect.get("variants", {}).get(k))
                for k, v in variant_runs.items()}
    text = notes(summary, variants, table_io.read(gaps, "variants_gap"),
                 table_io.read(measurements, "measurements", expect.get("runs"))
                 if measurements else None, info, study, penalty, compute, history)
    atomic_write_text(out, text)
    return text
