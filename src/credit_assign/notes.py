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

from credit_assign import tables as table_io
from credit_assign.aggregate import select_runs
from credit_assign.reproduction import md_table
from credit_assign.runtime import atomic_write_text

DATASET_NAMES = {"cifar10": "CIFAR-10", "digits": "the digits data (a quick run)"}


def _f(x: float, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if abs(x) >= 1e3 or (0 < abs(x) < 1e-3):
        return f"{x:.2e}"
    return f"{x:.{digits}f}"


def _g(x: float) -> str:
    """A norm: three significant figures."""
    return "—" if x is None or math.isnan(x) else f"{x:.3g}"


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _runs_section(runs: pd.DataFrame, epochs: pd.DataFrame, variant_runs: dict, info: dict
                  ) -> str:
    all_runs = pd.concat([runs, *variant_runs.values()], ignore_index=True)
    commits = sorted(set(all_runs.git_commit.astype(str).str[:7]))
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
        f"Code: commit(s) {', '.join(f'`{c}`' for c in commits)} (each "
        "metrics.json records its own).\n"
        f"- Data: `{info['source']}` ({info['n_train']} training, {info['n_test']} test "
        f"images; order: {info.get('order', '?')}).\n"
        f"- Compute (1 thread per job, two jobs sharing 2 cores): {jobs}; an epoch takes "
        f"{_f(per_epoch, 2)} s (median training + diagnostics). All training jobs together: "
        f"{_f(core_h, 2)} core-hours.\n")


def _matches_section(gaps: pd.DataFrame) -> str:
    default = gaps[gaps.recipe == "default"]
    ok = default[default.gap.abs() <= 1]
    lines = [f"- {r.run}: {r.metric} {_f(r.ours_mean)} (paper {r.paper})"
             for r in ok.itertuples()]
    return (f"## What matches under the default recipe: {len(ok)} of "
            f"{int(default.gap.notna().sum())}\n\n" + "\n".join(lines) + "\n")


def _misses_section(gaps: pd.DataFrame) -> str:
    """Each number the default misses, and the recipe that moves it closest."""
    default = gaps[gaps.recipe == "default"].reset_index(drop=True)
    rows = []
    for _, d in default.iterrows():
        if pd.isna(d.gap) or abs(d.gap) <= 1:
            continue
        others = gaps[(gaps.recipe != "default") & ~gaps.inherited]
        others = others[(others.run == d.run) & (others.metric == d.metric)]
        others = others[others.gap.notna()]
        within = sorted(others[others.gap.abs() <= 1].recipe)
        if others.empty:
            best = ["—", "—", "—"]
        else:
            b = others.loc[others.gap.abs().idxmin()]
            best = [f"`{b.recipe}`", _f(b.ours_mean), f"{b.gap:+.1f}"]
        rows.append([d.run, d.metric, d.paper, _f(d.ours_mean), f"{d.gap:+.1f}", *best,
                     ", ".join(f"`{w}`" for w in within) or "none"])
    table = md_table(["run", "metric", "paper", "default", "gap", "closest recipe", "its value",
                    "its gap", "recipes within tolerance"], rows)
    return ("## What the default misses, and which recipe moves it\n\n"
            "Gap = (ours − paper) / tolerance (log10 units for norms); |gap| ≤ 1 is within. "
            "\"Closest recipe\" is the variant (or measurement variant) whose own runs come "
            "nearest the paper on that number; variants ran seed 42 unless their seeds "
            "say otherwise (docs/reproduction.md lists them).\n\n" + table + "\n")


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
    rows = []
    base = select_runs(runs, "dfa", 0.0, 42)
    base_h = float(base.h_L_norm_median.iloc[0]) if len(base) else math.nan
    for name, vr in [("default", runs), *variant_runs.items()]:
        r = select_runs(vr, "dfa", 0.0, 42)
        if len(r):
            h = float(r.h_L_norm_median.iloc[0])
            rows.append([f"`{name}`", _g(h), _f(h / base_h, 2), _f(float(r.test_acc.iloc[0]))])
    recipes = md_table(["recipe", "median ‖h_L‖", "× default", "test accuracy"], rows)
    text = (
        "## ‖h_L‖ at λ = 0: where the norm lives and what moves it\n\n"
        "The paper reports ≈ 4e8. Where ours lives at the final epoch (dfa, λ = 0, median "
        "over seeds, `layers.csv`):\n\n" + where + "\n\n"
        f"Block {int(biggest)}'s residual branch carries the largest norm. Each branch sees "
        "a LayerNorm'd input, so ‖f_l‖ grows only through W1, W2 and their biases. Growth "
        f"of the median ‖h_L‖ (median over seeds, `epochs.csv`): {growth}.\n\n"
        "Each recipe's DFA run at λ = 0, seed 42 (its `runs.csv`):\n\n" + recipes + "\n")
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
    row = gaps[(gaps.run == "dfa, λ=0") & (gaps.metric == "median ‖h_L‖") & gaps.gap.notna()
               & ~gaps.inherited]
    if len(row):
        best = row.loc[row.ours_mean.idxmax()]
        text += (f"\nThe largest λ = 0 norm of any recipe (mean over its seeds) is "
                 f"`{best.recipe}`'s {_g(best.ours_mean)}, {_f(-best.gap, 2)} decades below "
                 f"the paper's {best.paper}; "
                 + ("it is within tolerance." if abs(best.gap) <= 1 else
                    "no recipe tried here reaches the paper's number. The table above shows "
                    "which recipes move it, and by how much; the remaining factor is not "
                    "shown by any run here. Hypothesis, untested: the authors' DFA script "
                    "differed in a way none of these variants covers (e.g. a longer run or "
                    "a still larger lr).") + "\n")
    return text


def _invariance_section(runs, variant_runs: dict) -> str:
    base = select_runs(runs, "dfa", 0.0, 42)
    rows = []
    for name in ("e_sum", "b_fan_in"):
        if name not in variant_runs or not len(base):
            continue
        for lam in sorted(set(variant_runs[name].lam)):
            v = select_runs(variant_runs[name], "dfa", lam, 42)
            d = select_runs(runs, "dfa", lam, 42)
            if len(v) and len(d):
                rows.append([f"`{name}`", f"{lam:g}", _f(float(d.test_acc.iloc[0])),
                             _f(float(v.test_acc.iloc[0])),
                             _g(float(d.h_L_norm_median.iloc[0])),
                             _g(float(v.h_L_norm_median.iloc[0])),
                             _f(float(v.h_L_norm_median.iloc[0])
                                / float(d.h_L_norm_median.iloc[0]), 3)])
    if not rows:
        return ""
    return (
        "## The scale of the teaching signal, tested\n\n"
        "AdamW divides each tensor's step by the running RMS of its gradient, so its update "
        "is invariant to the scale of that gradient (up to ε). The scale of B (`b_fan_in`: "
        "entries N(0, 1/C)) and the reduction of e (`e_sum`: summed over the batch, not "
        "averaged) rescale every DFA signal by one constant: at λ = 0 they should leave the "
        "run unchanged up to ε and rounding; with a penalty they change the ratio of the "
        "signal to the penalty term λ‖f‖² in the same local loss, which is the only way "
        "they can act. An earlier version of these notes argued that a larger effective "
        "a_0 = e B_0ᵀ grows the embedding at λ = 0; that argument ignored this invariance. "
        "It also argued that AdamW moves a weight by at most ≈ lr per step; that is not a "
        "bound: Adam's step m̂/(√v̂ + ε) exceeds lr whenever gradients keep growing from step "
        "to step (v̂ lags m̂), as on a runaway branch.\n\n"
        "Seed 42, default vs variant (`runs.csv`):\n\n"
        + md_table(["variant", "λ", "accuracy, default", "accuracy, variant",
                  "‖h_L‖, default", "‖h_L‖, variant", "‖h_L‖ ratio"], rows) + "\n")


def _accuracy_section(runs, epochs, variant_runs: dict) -> str:
    lines = ["## Accuracies: DFA's peak, the frozen baseline, FA\n"]
    traj = select_runs(epochs, "dfa", 0.0)
    if len(traj):
        peak = traj.loc[traj.groupby("seed").test_acc.idxmax()]
        final = select_runs(runs, "dfa", 0.0)
        lines.append(
            f"- DFA at λ = 0 peaks at {_f(peak.test_acc.median())} (median over seeds, "
            f"epochs {', '.join(str(int(e)) for e in sorted(peak.epoch))}) and ends at "
            f"{_f(final.test_acc.median())}: the accuracy falls as ‖h_L‖ grows.")
    fz = select_runs(runs, "frozen", 0.0)
    shallow = variant_runs.get("dfa_shallow")
    if len(fz):
        text = (f"- Frozen baseline (embedding, LN_out and head trained by BP through frozen "
                f"random blocks): {_f(fz.test_acc.mean())} over {_n(len(fz), 'seed')}")
        if shallow is not None and len(select_runs(shallow, "frozen", 0.0)):
            s = select_runs(shallow, "frozen", 0.0)
            text += (f"; with the embedding taught by its DFA signal (`dfa_shallow`, the "
                     f"\"DFA-shallow\" reading of the authors' record): {_f(s.test_acc.mean())} "
                     f"over {_n(len(s), 'seed')}")
        lines.append(text + ". Its blocks receive no teaching signal, so its deep cosine is "
                     "reported as not applicable.")
    fa = select_runs(runs, "fa", 0.0)
    if len(fa):
        std = f" ± {_f(fa.test_acc.std(ddof=1))}" if len(fa) > 1 else ""
        lines.append(f"- FA ({int(fa.epochs.max())} epochs, {_n(len(fa), 'seed')}): accuracy "
                     f"{_f(fa.test_acc.mean())}{std}, deep cosine {_f(fa.deep_cosine.mean())}, "
                     f"median ‖h_L‖ {_g(fa.h_L_norm_median.mean())}. " + _fa_variants(variant_runs))
    return "\n".join(lines) + "\n"


def _fa_variants(variant_runs: dict) -> str:
    found = {name: select_runs(v, "fa", 0.0) for name, v in variant_runs.items()}
    found = {name: v for name, v in found.items() if len(v)}
    if not found:
        return "No variant here touches FA, so its gaps stay unexplained by this study."
    return "Its variants: " + "; ".join(
        f"`{name}` accuracy {_f(v.test_acc.mean())}, deep cosine {_f(v.deep_cosine.mean())} "
        f"({_n(len(v), 'seed')})" for name, v in found.items()) + "."


CHECKS = """## What rules out an implementation error

BP reproduces the paper (above); the BP/DFA/FA updates and signals are tested against
autograd and against their exact special cases (`tests/test_rules.py`,
`tests/test_fa.py`); BP's cosine is
computed as 1; the fresh-B null sits at 0 as in the paper."""


def _checks(gaps: pd.DataFrame) -> str:
    default = gaps[gaps.recipe == "default"]
    missed = sorted({run.split(",")[0] for run in default[default.gap.abs() > 1].run})
    return (CHECKS + f" The numbers the default recipe misses are those of "
            f"{', '.join(missed) or 'no method'}; BP, which shares the model, data, "
            "optimiser and diagnostics code with them, matches.\n")


def notes(summary: dict[str, pd.DataFrame], variant_runs: dict[str, pd.DataFrame],
          gaps: pd.DataFrame, measurements: pd.DataFrame | None, info: dict) -> str:
    """The page. ``summary``: the default recipe's runs, epochs and layers tables;
    ``variant_runs``: each variant's runs.csv; ``gaps``: variants_gap.csv."""
    runs, epochs, layers = summary["runs"], summary["epochs"], summary["layers"]
    head = (
        f"# Reproduction on {DATASET_NAMES.get(info['name'], info['name'])}: what matches, "
        "what does not, and why\n\n"
        "Generated by the pipeline (rule `reproduction_notes`, target `variants`) from the "
        "default recipe's `results/<dataset>/summary/{runs,epochs,layers,measurements}.csv`"
        ", every variant's `runs.csv` and the gap map "
        "`variants_gap.csv`: no number on this page is typed. The full tables, the default "
        "recipe beside the best variant, and the gap map: [reproduction.md](reproduction.md); "
        "the figure: [fig_variants.png](fig_variants.png).\n")
    parts = [head, _runs_section(runs, epochs, variant_runs, info),
             _matches_section(gaps), _misses_section(gaps),
             _norm_section(runs, layers, epochs, variant_runs, measurements, gaps),
             _invariance_section(runs, variant_runs),
             _accuracy_section(runs, epochs, variant_runs), _checks(gaps)]
    return "\n".join(p for p in parts if p)


def write_notes(default: dict[str, str | Path], variant_runs: dict[str, str | Path],
                gaps: str | Path, measurements: str | Path | None, info: dict,
                out: str | Path, expect: dict | None = None) -> str:
    """The notes from the tables, each checked first. ``expect``: the runs the config
    asks for: ``runs`` (the default recipe's) and ``variants`` (name → its runs)."""
    expect = expect or {}
    summary = {k: table_io.read(v, k, expect.get("runs")) for k, v in default.items()}
    variants = {k: table_io.read(v, "runs", expect.get("variants", {}).get(k))
                for k, v in variant_runs.items()}
    text = notes(summary, variants, table_io.read(gaps, "variants_gap"),
                 table_io.read(measurements, "measurements", expect.get("runs"))
                 if measurements else None, info)
    atomic_write_text(out, text)
    return text
