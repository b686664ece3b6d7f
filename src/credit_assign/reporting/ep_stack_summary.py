"""The EP stack probes as tables and a report (rule ep_stack_summary): long tables of every
probe's cosines, hindsight increments, pretraining and timings, the per-seed table with
the settling flags, and report.md. Reads result files only: no torch (the rule runs in
the figures environment).
"""

from __future__ import annotations

from credit_assign.infra import paths
from credit_assign.infra.files import atomic_write_text
from credit_assign.infra.results import read_result
from credit_assign.reporting import ep_stack_settle as settling
from credit_assign.reporting import tables as table_io


def summary_tables(results: list[dict], timings: list[dict], settle: dict | None = None):
    """Long tables of every probe: cosines, hindsight increments, pretraining, timings.
    Each cosine row carries its estimate's settling flags under the criterion ``settle``
    (config ``ep_stack.settle``; :mod:`.ep_stack_settle`) and the thresholds they were taken at."""
    import pandas as pd

    cos, inc, pre, tim = [], [], [], []
    for r in results:
        key = {"corpus": r["corpus"], "precision": r["settings"]["pretrain"]["precision"],
               "seed": r["seed"]}
        limits = settling.thresholds(r["settings"]["probe"], settle)
        for step, loss in enumerate(r["pretrain"]["loss"], 1):
            pre.append({**key, "step": step, "loss": loss, "val_loss": r["pretrain"]["val_loss"]})
        for probe in r["probes"]:
            for ep in probe["ep"]:
                row = {**key, "batch": probe["batch"], "free_steps": ep["free_steps"]}
                flags = settling.flags(ep["residual"], ep["t_best"], limits)
                for group, value in ep["cosine"].items():
                    cos.append({**row, "group": group, "cosine": value,
                                "residual": ep["residual"], "t_best": ep["t_best"],
                                **flags, **limits})
                for point in ep["increments"]:
                    inc.append({**row, **point, "is_best": point["t"] == ep["t_best"]})
    for t in timings:
        key = {"corpus": t["corpus"], "precision": t["precision"], "seed": t["seed"],
               "peak_rss_mb": t["peak_rss_mb"]}
        tim.append({**key, "phase": "pretrain", "batch": None, "free_steps": None,
                    "seconds": t["pretrain"]})
        for probe in t["probes"]:
            tim.append({**key, "phase": "reference", "batch": probe["batch"],
                        "free_steps": None, "seconds": probe["reference"]})
            for ep in probe["ep"]:
                for phase in ("free", "nudged", "grads"):
                    tim.append({**key, "phase": f"ep_{phase}", "batch": probe["batch"],
                                "free_steps": ep["free_steps"], "seconds": ep[phase]})
    return pd.DataFrame(cos), pd.DataFrame(inc), pd.DataFrame(pre), pd.DataFrame(tim)


def by_seed(cos):
    """One row per (corpus, precision, seed, T1, group): the cosine, free-phase residual
    and t_best averaged over that seed's probe batches — the unit the spread across
    seeds is taken over — and whether the seed settled there: ``settled`` when every one
    of its batches did (``batches_settled`` of ``batches``), with the reasons
    (``residual_ok``: every batch's residual below ``max_residual``, the largest being
    ``residual_max``; ``t_best_ok``: every t_best beyond ``t_best_after``, the smallest
    being ``t_best_min``)."""
    keys = ["corpus", "precision", "seed", "free_steps", "group"]
    out = (cos.groupby(keys, sort=True)
           .agg(cosine=("cosine", "mean"), cosine_min=("cosine", "min"),
                cosine_max=("cosine", "max"), residual=("residual", "mean"),
                t_best=("t_best", "mean"), batches=("batch", "nunique"),
                residual_max=("residual", "max"), t_best_min=("t_best", "min"),
                batches_settled=("settled", "sum"), residual_ok=("residual_ok", "all"),
                t_best_ok=("t_best_ok", "all"), max_residual=("max_residual", "first"),
                t_best_after=("t_best_after", "first"))
           .reset_index())
    out["settled"] = out["batches_settled"] == out["batches"]
    return out


def write_summary(result_paths, timing_paths, outputs, settle: dict | None = None) -> None:
    """The summary tables and report.md; ``settle`` is the settling criterion (config
    ``ep_stack.settle``), applied here only, so changing it reruns no probe."""
    results = [read_result(p, "ep_stack") for p in result_paths]
    timings = [read_result(p, "ep_stack_timings") for p in timing_paths]
    tables = summary_tables(results, timings, settle)
    tables = (*tables, by_seed(tables[0]))
    inputs = [*result_paths, *timing_paths]
    for table, out, kind in zip(tables, (outputs.cosines, outputs.increments,
                                         outputs.pretrain, outputs.timings, outputs.by_seed),
                                ("ep_cosines", "ep_increments", "ep_pretrain", "ep_timings",
                                 "ep_by_seed"), strict=True):
        table_io.write(table, out, kind, inputs, float_format="%.6g")
    atomic_write_text(outputs.report, report(results, tables[4], tables[2], tables[3],
                                             tables[0]))


def _spread(values) -> str:
    """mean ± sd (min–max, n) of per-seed values."""
    import numpy as np

    v = np.asarray(values, float)
    if len(v) == 0:
        return "— (no settled seed)"
    if len(v) == 1:
        return f"{v[0]:.3f} (n = 1)"
    return f"{v.mean():.3f} ± {v.std(ddof=1):.3f} ({v.min():.3f}–{v.max():.3f}, n = {len(v)})"


def _unsettled(sub) -> str:
    """'seed 1 (fails on residual, t_best; largest residual 1.1e-03, smallest t_best 20)'
    for each unsettled seed of a by-seed slice (one group's rows), or '—'."""
    rows = sub[~sub["settled"].astype(bool)]
    if rows.empty:
        return "—"
    return "; ".join(f"seed {r['seed']} (fails on {settling.reasons(r)}; largest residual "
                     f"{r['residual_max']:.1e}, smallest t_best {r['t_best_min']:.0f})"
                     for _, r in rows.iterrows())


# |Spearman ρ| below this is called no clear monotone relation. 0.3 is the conventional
# floor of a "moderate" correlation (Cohen 1988: 0.1 small, 0.3 medium, 0.5 large); the
# estimates share seeds and probe batches, so they are not independent draws and no
# p-value is attached: the wording only says which way the ranks go, and how clearly.
RHO_CLEAR = 0.3


def rank_relation(rho: float) -> str:
    """How block 0's cosine moves with the free-phase residual, worded from the sign and
    size of their Spearman ρ (``RHO_CLEAR``); NaN (either one constant) is no relation."""
    if rho <= -RHO_CLEAR:
        return "falls as the free-phase residual rises"
    if rho >= RHO_CLEAR:
        return "rises as the free-phase residual rises"
    return "shows no clear monotone relation to the free-phase residual"


def block0_beside_residual(cos) -> list[str]:
    """Block 0's cosine beside the free-phase residual: their rank correlation over every
    estimate (a correlation, not a cause), and the cosine's range among settled and
    among unsettled estimates."""
    b0 = cos[cos["group"] == "block0"].dropna(subset=["cosine"])
    if len(b0) < 3:
        return []
    rho = b0["residual"].rank().corr(b0["cosine"].rank())
    rho_text = f"{rho:+.2f}" if rho == rho else "undefined (one of the two is constant)"
    lines = ["", "## Block 0's cosine beside the free-phase residual", "",
             f"Over all {len(b0)} EP estimates (every precision, seed, probe batch and T1), "
             f"block 0's cosine {rank_relation(rho)}: Spearman ρ = {rho_text} (|ρ| below "
             f"{RHO_CLEAR} is read as no clear relation). This is a rank correlation over "
             "the estimates, which share seeds and batches: it describes how the two are "
             "ordered together, not whether the residual sets the cosine."]
    settled = b0["settled"].astype(bool)
    for label, part in (("settled", b0[settled]), ("did not settle", b0[~settled])):
        if len(part):
            lines[-1] += (f" Estimates whose free phase {label}: block 0 cosine "
                          f"{part['cosine'].min():.3f}–{part['cosine'].max():.3f} (min–max; "
                          f"{len(part)} estimates, "
                          f"{part.groupby(['precision', 'seed']).ngroups} seed runs).")
    by_prec = b0.groupby("precision")
    lines[-1] += (" Settled estimates, per pretraining precision: "
                  + ", ".join(f"{p} {int(g['settled'].astype(bool).sum())} of {len(g)}"
                              for p, g in by_prec) + ".")
    return lines


def report(results: list[dict], seeds, pre, tim, cos=None) -> str:
    """docs/ep_stack.md: the probe over seeds and pretraining precisions, every number
    from the results (nothing typed). Spreads are over settled seeds only, beside the
    count of unsettled ones and why they did not settle."""
    first = results[0]
    s = first["settings"]
    precisions = [p for p in ("float32", "bfloat16") if p in set(seeds["precision"])]
    commits = sorted({str(r["provenance"]["code"]["git_commit"])[:7] for r in results
                      if r["provenance"]["code"]["git_commit"]}) or ["outside a git checkout"]
    m, p, pr = s["model"], s["pretrain"], s["probe"]
    limits = seeds.iloc[0]
    lines = [
        "# EP stack probe: EP's gradient against BPTT's, over pretraining seeds",
        "",
        f"Generated by the pipeline (rule `ep_stack_summary`, `{paths.EP_REPORT}`) from the "
        "probe results; tables: `"
        + paths.braced([paths.EP_COSINES, paths.EP_BY_SEED, paths.EP_PRETRAIN,
                        paths.EP_TIMINGS_TABLE])
        + f"`; figure: `{paths.figure('fig_ep_stack_cosines', '*')}`.",
        "",
        f"Settings: K = {m['blocks']} blocks, C = {m['width']}, H = {m['heads']}, "
        f"T = {m['context']}, γ = {m['gamma']:g}, c = {m['leak']:g}, batch {s['batch_size']}, "
        f"ε = {s['eps']:g}; pretraining {p['steps']} BPTT steps through {p['relax_steps']} "
        f"relaxation steps (AdamW {p['lr']:g}, wd {p['weight_decay']:g}, clip "
        f"{p['grad_clip']:g}); probe: {pr['batches']} batches, BPTT reference through "
        f"{pr['reference_steps']} steps, EP with ±r = {pr['r']:g}, T1 ∈ {pr['free_steps']}, "
        f"T2max = {pr['nudged_steps_max']}, AEP {'on' if pr['aep'] else 'off'}, hindsight "
        f"selection. Corpus: {', '.join(sorted({r['corpus'] for r in results}))}; seeds "
        f"{sorted({r['seed'] for r in results})}; pretraining precisions {precisions} "
        f"(the probe always runs in float32); code {', '.join(commits)}.",
        "",
        f"Settling criterion (config `ep_stack.settle`, docs/method.md): an estimate is "
        f"settled when its free-phase residual is below {limits['max_residual']:.1e} "
        f"(a drift of at most `max_drift` of ‖z*‖ over the T2max nudged steps) and its "
        f"hindsight-selected t_best lies beyond the first comparison point, step "
        f"{limits['t_best_after']:.0f}; a seed is settled at a T1 when all its probe "
        f"batches are. An unsettled seed says nothing about depth: its free phase had not "
        f"reached the fixed point EP's estimate is taken around.",
        "",
        "## Block 0: did the tension reach the bottom?",
        "",
        "Per-seed values are the mean over that seed's probe batches; the spread is over "
        "the settled seeds only (mean ± sd, min–max, n settled seeds); the unsettled "
        "seeds are counted and named beside it, with why they did not settle.",
        "",
        "| pretraining | T1 | seeds settled | block 0 cosine (settled seeds) | "
        "block 1 (settled) | all (settled) | embeddings (settled) | unsettled seeds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    blocks = sorted({g for g in seeds["group"] if g.startswith("block")},
                    key=lambda g: int(g[5:]))
    for prec in precisions:
        for t1 in sorted(seeds["free_steps"].unique()):
            sub = seeds[(seeds["precision"] == prec) & (seeds["free_steps"] == t1)]
            ok = sub[sub["settled"].astype(bool)]

            def col(g, ok=ok):
                return _spread(ok.loc[ok["group"] == g, "cosine"].dropna())

            one = sub[sub["group"] == "all"]
            lines.append(f"| {prec} | {t1} | {int(one['settled'].sum())} of {len(one)} | "
                         f"**{col('block0')}** | "
                         f"{col(blocks[1]) if len(blocks) > 1 else '—'} | {col('all')} | "
                         f"{col('embeddings')} | {_unsettled(one)} |")
    if cos is not None:
        lines += block0_beside_residual(cos)
    lines += ["", "## Every seed", "",
              "Cosines: mean over the seed's probe batches; residual: the largest over its "
              "batches; t_best: the smallest over its batches (the values the criterion is "
              "judged on).", "",
              "| pretraining | seed | T1 | settled (batches) | block 0 | all | embeddings | "
              "residual (max) | t_best (min) | val loss after pretraining |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    val = pre.groupby(["precision", "seed"])["val_loss"].first()
    wide = seeds.pivot_table(index=["precision", "seed", "free_steps"], columns="group",
                             values="cosine")
    extra = seeds[seeds["group"] == "all"].set_index(["precision", "seed", "free_steps"])
    for prec in precisions:
        for (pp, seed, t1), row in wide.loc[[prec]].iterrows():
            e = extra.loc[(pp, seed, t1)]
            state = "yes" if e["settled"] else f"**no** ({settling.reasons(e)})"
            lines.append(f"| {pp} | {seed} | {t1} | {state}, {int(e['batches_settled'])} of "
                         f"{int(e['batches'])} | {row.get('block0', float('nan')):.3f} | "
                         f"{row.get('all', float('nan')):.3f} | "
                         f"{row.get('embeddings', float('nan')):.3f} | "
                         f"{e['residual_max']:.1e} | {e['t_best_min']:.0f} | "
                         f"{val.loc[(pp, seed)]:.3f} |")
    lines += ["", "## Cost per job", "",
              "| pretraining | seeds | pretraining s (mean over seeds) | whole job s (mean "
              "over seeds) | peak RSS MB (max over seeds) |", "|---|---|---|---|---|"]
    for prec in precisions:
        t = tim[tim["precision"] == prec]
        per_job = t.groupby("seed")["seconds"].sum()
        pre_s = t[t["phase"] == "pretrain"]["seconds"]
        lines.append(f"| {prec} | {t['seed'].nunique()} | {pre_s.mean():.0f} | "
                     f"{per_job.mean():.0f} | {t['peak_rss_mb'].max():.0f} |")
    lines += ["", "Times are wall-clock on the machine that ran the jobs (see the timings "
              "table for the host), beside whatever else ran there; the cosines do not "
              "depend on them: the same settings give the same result file on the CPU."]
    return "\n".join(lines) + "\n"
