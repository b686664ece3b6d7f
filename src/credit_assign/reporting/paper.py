"""The manuscript's numbers: summary tables → ``paper/numbers.tex``, and the build.

``paper/ms.tex`` types no result. Every number it states is a macro defined here
from a table the pipeline wrote (runs, nulls, the reproduction table, the gap map,
the EP stack probe's per-seed table, the primer check). A sentence whose claim depends
on the numbers is a finding here (an outcome and the seeds it rests on:
``verdict_findings``) and words in a template (templates/verdicts.tex.j2 writes
``\\rescueverdict`` … from them); the verdicts not yet moved there are still chosen
here. A
number a config did not produce (FA in the quick config, say) is spelled "not run",
and the section that needs it is switched off by a flag (``\\ifhasfa`` …).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from credit_assign.infra import paths
from credit_assign.infra.files import atomic_write_text
from credit_assign.reporting import findings, labels, render
from credit_assign.reporting import study as variant_study
from credit_assign.reporting import tables as table_io
from credit_assign.reporting.aggregate import select_runs
from credit_assign.reporting.comparison import MEASUREMENT_SEP
from credit_assign.reporting.findings import diverged_seeds, null_test
from credit_assign.reporting.render import (
    tex_escape,
    tex_lam,
    tex_norm,
    tex_sci,
    tex_tiny,
    tex_value,
)

NOT_RUN = "not run"
DATASET_NAMES = labels.names(labels.DATASETS, "tex")
METRIC_NAMES = labels.names(labels.METRICS, "tex")


# ---- formatting ----------------------------------------------------------------------
def spread(values, kind: str = "plain", over: str = "", diverged: list | None = None,
           full: int | None = None) -> str:
    """mean ± std over seeds (ddof = 1) and n, in TeX: "not run" when there are no
    values, "n/a" when the runs exist but the number is not defined for them. ``over``
    names what n counts where that is not plain seeds ("settled seeds"). ``diverged``:
    the seeds whose run recorded a non-finite epoch — said after n, never hidden (a
    non-finite value is left out of the mean, and counted there). ``full``: the seeds
    the config runs; n is left out where it is all of them (the methods say so once)."""
    values, diverged = list(values), list(diverged or [])
    v = np.asarray([x for x in values if x is not None and not pd.isna(x)], dtype=float)
    finite = v[np.isfinite(v)]
    note = (f"; diverged: seed{'s' if len(diverged) > 1 else ''} "
            + ", ".join(f"${s}$" for s in diverged) if diverged else "")
    if len(finite) < len(v) and not diverged:
        note = f"; ${len(v) - len(finite)}$ not finite"
    if len(finite) == 0:
        if diverged or len(v):
            return f"diverged ($n{{=}}0$ of ${len(values)}$" + note + ")"
        return "n/a" if values else NOT_RUN
    v = finite
    mean = float(v.mean())
    std = float(v.std(ddof=1)) if len(v) > 1 else None
    if kind == "norm":
        text = tex_norm(mean)
        if std is not None:
            text += " (s.d. " + tex_norm(std) + ")"
    else:
        fmt = "{:+.3f}" if kind == "cosine" else "{:.3f}"
        text = "$" + fmt.format(mean) + (f" \\pm {std:.3f}" if std is not None else "") + "$"
    if full is not None and len(v) == full and not over and not note:
        return text
    return f"{text} ($n{{=}}{len(v)}$" + (f" {over}" if over else "") + note + ")"


# ---- the numbers -------------------------------------------------------------------
def run_numbers(runs: pd.DataFrame, penalty: float, full: int | None = None
                ) -> dict[str, str]:
    """Accuracy, ‖h_L‖ and deep cosine at the final epoch, per role: {Bp,Dfa}{Zero,Pen},
    Frozen, Fa — the cells the prose names (mean ± std over seeds; ``full``: see
    spread)."""
    out = {}
    roles = {"BpZero": ("bp", 0.0), "BpPen": ("bp", penalty), "DfaZero": ("dfa", 0.0),
             "DfaPen": ("dfa", penalty), "Frozen": ("frozen", 0.0), "Fa": ("fa", 0.0)}
    for role, (method, lam) in roles.items():
        sel = select_runs(runs, method, lam)
        bad = diverged_seeds(sel)
        out["acc" + role] = spread(sel.test_acc, diverged=bad, full=full)
        out["hL" + role] = spread(sel.h_L_norm_median, "norm", diverged=bad, full=full)
        out["deepcos" + role] = spread(sel.deep_cosine, "cosine", diverged=bad, full=full)
    # the smallest nonzero DFA λ below the penalty (1e-4 in the paper), if swept
    small = sorted({float(x) for x in runs[runs.method == "dfa"].lam if 0 < float(x) < penalty})
    sel = select_runs(runs, "dfa", small[0]) if small else runs.iloc[0:0]
    out["lamSmall"] = tex_lam(small[0]) if small else NOT_RUN
    bad = diverged_seeds(sel)
    out["hLDfaSmall"] = spread(sel.h_L_norm_median, "norm", diverged=bad, full=full)
    out["deepcosDfaSmall"] = spread(sel.deep_cosine, "cosine", diverged=bad, full=full)
    out["accDfaSmall"] = spread(sel.test_acc, diverged=bad, full=full)
    return out


def null_numbers(nulls: pd.DataFrame, penalty: float, full: int | None = None
                 ) -> dict[str, str]:
    """Deep cosine with the trained-with B vs fresh draws, DFA at the penalty λ and at
    λ = 0, each tested the same way (null_test); the fresh draws' n counts draws."""
    trained, fresh, _ = null_test(nulls, penalty)
    sel = select_runs(nulls, "dfa", penalty)
    out = {"nullTrained": spread(trained, "cosine", full=full),
           "nullFresh": spread(fresh, "cosine", over="draws over the seeds"),
           "nullDraws": str(int(sel[sel.feedback == "fresh"].groupby("seed").size().max()))
           if len(fresh) else NOT_RUN}
    trained0, fresh0, _ = null_test(nulls, 0.0)
    out["nullTrainedZero"] = spread(trained0, "cosine", full=full)
    out["nullFreshZero"] = spread(fresh0, "cosine", over="draws over the seeds")
    return out


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
        metric = METRIC_NAMES.get(r.metric, tex_escape(r.metric))
        if isinstance(r.layer, (int, float)) and not pd.isna(r.layer):
            metric += f" $l_{int(r.layer)}$"
        if not pd.isna(r.paper):
            paper = tex_value(r.metric, r.paper)
        else:
            lo, hi = json.loads(r.paper_range) if isinstance(r.paper_range, str) else (None, None)
            paper = f"$[{lo:+.2f}, {hi:+.2f}]$" if lo is not None else "—"
        ours = NOT_RUN if pd.isna(r.ours_mean) else tex_value(r.metric, r.ours_mean)
        gap = "—" if pd.isna(r.gap) else f"${r.gap:+.1f}$"
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
                "rankingrule", "hLDfaZeroDefault", "hLDfaZeroBest", "gapHLDfaZeroDefault",
                "gapHLDfaZeroBest", "largestRecipe", "hLDfaZeroLargest",
                "gapHLDfaZeroLargest", "hLDfaZeroOneBatch", "gapHLDfaZeroOneBatch",
                "curseverdict", "goalverdict", "normspreadverdict", "largestKind",
                "headlineverdict")


def variant_numbers(gaps: pd.DataFrame | None, study: dict | None = None) -> dict[str, str]:
    """The gap map's ranking, by the study's ranking rule (config ``study``,
    study.ranking, the one ordering): the best ``open`` variant is the headline,
    the best ``departs`` variant is named apart; counts with and without unverified
    numbers; the winner's curse (study.holdout)."""
    if gaps is None or gaps.empty:
        return dict.fromkeys(VARIANT_KEYS, NOT_RUN) | {"nVariants": "0", "nGapNumbers": "0"}
    rank = variant_study.ranking(gaps, study)
    by = rank.set_index("recipe")
    best = variant_study.best(rank, "open") or "default"
    departs = variant_study.best(rank, "departs")
    counted = gaps[gaps.gap.notna()]
    n_numbers = counted[counted.recipe == "default"].shape[0]
    headline = variant_study.headline_rows(gaps)

    def norm_of(recipe):
        row = headline[headline.recipe == recipe]
        if row.empty:
            return NOT_RUN, NOT_RUN
        r = row.iloc[0]
        text = tex_norm(float(r.ours_mean)) + f" ($n{{=}}{int(r.ours_n)}$)"
        if bool(r.inherited):  # the variant does not rerun DFA: the stated recipe's runs
            text += " (the stated recipe's runs: it does not rerun DFA)"
        return text, f"${r.gap:+.1f}$"

    def count(recipe, which=""):
        if recipe not in by.index:
            return NOT_RUN
        return f"${int(by.loc[recipe, 'within' + which])}$ of " \
               f"${int(by.loc[recipe, 'compared' + which])}$"

    (hl_default, gap_default), (hl_best, gap_best) = norm_of("default"), norm_of(best)
    # the recipes' own runs (not another recipe's inherited, nor a measurement column)
    own = headline[~headline.inherited.astype(bool)
                   & ~headline.recipe.str.contains(MEASUREMENT_SEP, regex=False)]
    largest = own.loc[own.ours_mean.idxmax()].recipe if len(own) else None
    (hl_largest, gap_largest), (hl_batch, gap_batch) = (
        norm_of(largest) if largest else (NOT_RUN, NOT_RUN), norm_of("default/one_batch"))
    kind_of = dict(zip(rank.recipe, rank.kind, strict=True))
    kinds = rank.kind.value_counts()
    return {"nVariants": str(int(kinds.get("open", 0) + kinds.get("departs", 0))),
            "nOpen": str(int(kinds.get("open", 0))),
            "nDeparts": str(int(kinds.get("departs", 0))),
            "bestVariant": tex_escape(best), "bestVariantWithin": count(best),
            "bestVariantWithinAll": count(best, "_all"),
            "bestVariantWithinVerified": count(best, "_verified"),
            "bestDeparts": tex_escape(departs) if departs else NOT_RUN,
            "bestDepartsWithin": count(departs) if departs else NOT_RUN,
            "defaultWithin": count("default"), "defaultWithinAll": count("default", "_all"),
            "defaultWithinVerified": count("default", "_verified"),
            "nGapNumbers": str(n_numbers),
            "nGapNumbersVerified": str(int(counted[(counted.recipe == "default")
                                                   & counted.verified.astype(bool)].shape[0])),
            "rankingrule": tex_escape(variant_study.ranking_text(study)),
            "hLDfaZeroDefault": hl_default, "hLDfaZeroBest": hl_best,
            "gapHLDfaZeroDefault": gap_default, "gapHLDfaZeroBest": gap_best,
            "largestRecipe": tex_escape(largest) if largest else NOT_RUN,
            "hLDfaZeroLargest": hl_largest, "gapHLDfaZeroLargest": gap_largest,
            "largestKind": tex_escape(kind_of.get(largest, "")) if largest else NOT_RUN,
            "hLDfaZeroOneBatch": hl_batch, "gapHLDfaZeroOneBatch": gap_batch}


def _block0_per_seed(rows: pd.DataFrame) -> str:
    """Each seed's block-0 cosine (its mean over its probe batches) with its settling flag
    and, when unsettled, the value that failed the criterion: "seed 0: $+0.977$
    (settled); seed 1: $+0.160$ (unsettled: largest residual $7.70 \\times 10^{-4}$)".
    ``rows``: one block-0 row per seed of the by-seed table, at one free-phase length."""
    def flag(r) -> str:
        if r.settled:
            return "settled"
        why = ([f"largest residual {tex_sci(float(r.residual_max))}"] if not r.residual_ok
               else []) + ([f"earliest hindsight step ${int(r.t_best_min)}$"]
                           if not r.t_best_ok else [])
        return "unsettled" + (": " + ", ".join(why) if why else "")

    def cosine(x: float) -> str:
        return tex_value("cosine", x) if math.isfinite(x) else tex_sci(x)

    return ("each seed's mean over its probe batches: "
            + "; ".join(f"seed {int(r.seed)}: {cosine(float(r.cosine))} ({flag(r)})"
                        for r in rows.itertuples()))


def ep_numbers(by_seed: pd.DataFrame | None, precision: str) -> dict[str, str]:
    """EP's cosine to BPTT per parameter group at the shortest and longest free phase:
    mean ± std over the *settled* seeds (each seed the mean over its probe batches; the
    macro says "settled seeds" beside n), the count of unsettled seeds at each, the
    settling criterion, each seed's free-phase residual (the largest over its batches),
    and each seed's block-0 cosine with its settled flag at both lengths (a mean over
    settled seeds may hide a bimodal outcome). The verdict is taken at the longest free
    phase."""
    keys = ("epBlockZeroShort", "epBlockZeroLong", "epBlockZeroSeedsShort",
            "epBlockZeroSeedsLong", "epAllShort", "epAllLong",
            "epEmbShort", "epEmbLong", "epFreeShort", "epFreeLong", "epResidualLong",
            "epUnsettledShort", "epUnsettledLong", "epSettleResidual", "epSettleTBest")
    if by_seed is None or by_seed.empty:
        return dict.fromkeys(keys, NOT_RUN) | {"epverdict": "was not run"}
    block0 = findings.ep_block0(by_seed, precision)  # checks the table's settled column
    d = by_seed[by_seed.precision == precision].assign(
        settled=lambda t: t.settled.astype(bool))
    steps = sorted(d.free_steps.unique())
    short, long_ = steps[0], steps[-1]

    def cos(group, t):
        rows = d[(d.group == group) & (d.free_steps == t)]
        if len(rows) and not rows.settled.any():
            return f"not defined (no seed of ${len(rows)}$ settled)"
        settled = rows[rows.settled].cosine
        # n is the settled seeds, which the sentence before states (\epUnsettled...)
        return spread(settled, "cosine", full=len(settled))

    def unsettled(t):
        rows = d[(d.group == "all") & (d.free_steps == t)]
        return f"${int((~rows.settled).sum())}$ of ${len(rows)}$"

    def seeds_b0(t):
        rows = d[(d.group == "block0") & (d.free_steps == t)].sort_values("seed")
        return _block0_per_seed(rows) if len(rows) else NOT_RUN

    res = d[(d.group == "all") & (d.free_steps == long_)].sort_values("seed")
    residuals = ", ".join(
        f"{tex_sci(float(r.residual_max))} (seed {int(r.seed)}"
        + ("" if r.settled else ", unsettled") + ")" for r in res.itertuples())
    out = {"epBlockZeroShort": cos("block0", short), "epBlockZeroLong": cos("block0", long_),
           "epBlockZeroSeedsShort": seeds_b0(short), "epBlockZeroSeedsLong": seeds_b0(long_),
           "epAllShort": cos("all", short), "epAllLong": cos("all", long_),
           "epEmbShort": cos("embeddings", short), "epEmbLong": cos("embeddings", long_),
           "epFreeShort": f"${int(short)}$", "epFreeLong": f"${int(long_)}$",
           "epResidualLong": ("each seed's largest over its probe batches: " + residuals)
           if len(res) else NOT_RUN,
           "epUnsettledShort": unsettled(short), "epUnsettledLong": unsettled(long_),
           "epSettleResidual": tex_sci(float(d.max_residual.iloc[0])),
           "epSettleTBest": f"${int(d.t_best_after.iloc[0])}$"}
    out.update(render.phrases("verdicts.tex.j2", {
        "epverdict": findings.ep_finding(block0)}))
    return out


def primer_numbers(check: dict | None) -> dict[str, str]:
    """The primer's EP → BP check on the residual layered energy."""
    keys = ("primerBetaMin", "primerMisalignOneSided", "primerMisalignSymmetric",
            "primerSlopeOneSided", "primerSlopeSymmetric", "primerFreeEnergy")
    if check is None:
        return dict.fromkeys(keys, NOT_RUN)
    m = check["models"]["residual"]
    g = m["groups"]["all"]
    return {"primerBetaMin": tex_sci(m["beta"][0]),
            "primerMisalignOneSided": tex_sci(1 - g["one_sided"]["cosine"][0]),
            "primerMisalignSymmetric": tex_tiny(1 - g["symmetric"]["cosine"][0]),
            "primerSlopeOneSided": f"${m['slopes']['all']['one_sided']:.2f}$",
            "primerSlopeSymmetric": f"${m['slopes']['all']['symmetric']:.2f}$",
            "primerFreeEnergy": tex_tiny(m["free_energy"])}


def _short_source(source: str) -> str:
    """``name (sha256 <64 hex>)`` → ``name (sha256 <first 16>…)``: fits a line."""
    return re.sub(r"(sha256 [0-9a-f]{16})[0-9a-f]{48}", r"\1…", source)


def setup_numbers(cfg: dict, info: dict) -> dict[str, str]:
    tr, m, sweep = cfg["training"], cfg["model"], cfg["sweep"]
    fa_epochs = tr.get("per_method", {}).get("fa", {}).get("epochs", tr["epochs"])
    ep = cfg["ep_stack"]
    return {
        "datasetname": DATASET_NAMES.get(cfg["dataset"], tex_escape(cfg["dataset"])),
        "datasource": tex_escape(_short_source(info.get("source", cfg["dataset"]))),
        "ntrain": f"${info['n_train']}$", "ntest": f"${info['n_test']}$",
        "width": f"${m['width']}$", "depth": f"${m['depth']}$",
        "epochs": f"${tr['epochs']}$", "faepochs": f"${fa_epochs}$",
        "batchsize": f"${tr['batch_size']}$", "lr": f"${tr['lr']:g}$",
        "weightdecay": f"${tr['weight_decay']:g}$",
        "augmentation": tex_escape(tr.get("augmentation", "none").replace("_", " + ")),
        "nseeds": f"${len(sweep['seeds'])}$",
        "seeds": ", ".join(f"${s}$" for s in sweep["seeds"]),
        "penaltylam": tex_lam(cfg["figures"]["penalty_lambda"]),
        "diagn": f"${cfg['diagnostics']['n_samples']}$",
        "epcorpus": tex_escape(", ".join(ep["corpora"])) or NOT_RUN,
        "epnseeds": f"${len(ep['seeds'])}$",
        "epblocks": f"${ep['model']['blocks']}$", "epwidth": f"${ep['model']['width']}$",
        "eppretrainsteps": f"${ep['pretrain']['steps']}$",
        "eprelaxsteps": f"${ep['pretrain']['relax_steps']}$",
    }


def numbers(cfg: dict, info: dict, runs: pd.DataFrame, nulls: pd.DataFrame, verdicts: dict,
            reproduction: pd.DataFrame | None = None, gaps: pd.DataFrame | None = None,
            ep_by_seed: pd.DataFrame | None = None, primer: dict | None = None,
            ) -> tuple[dict[str, str], dict[str, bool]]:
    """(macros, flags) for numbers.tex; ``verdicts``: findings.json's, each written by
    its macro in templates/verdicts.tex.j2."""
    penalty = float(cfg["figures"]["penalty_lambda"])
    full = len(cfg["sweep"]["seeds"])  # n goes unsaid where it is every seed run
    macros = {**setup_numbers(cfg, info), **run_numbers(runs, penalty, full),
              **null_numbers(nulls, penalty, full),
              **reproduction_numbers(reproduction, cfg.get("labels")),
              **variant_numbers(gaps, cfg.get("study")),
              **ep_numbers(ep_by_seed, cfg["ep_stack"]["pretrain"]["precision"]),
              **primer_numbers(primer)}
    macros.update(render.phrases("verdicts.tex.j2", verdicts))
    flags = {"hasreference": reproduction is not None and not reproduction.empty,
             "hasvariants": gaps is not None and not gaps.empty,
             "hasmeasured": variant_study.has_measured(gaps),
             "hasfa": bool(len(select_runs(runs, "fa", 0.0))),
             "hasep": ep_by_seed is not None and not ep_by_seed.empty,
             "hasprobes": bool(cfg["probes"]["epochs"])}
    return macros, flags


def numbers_tex(macros: dict[str, str], flags: dict[str, bool], source: str) -> str:
    lines = [f"% Generated by the pipeline (rule paper_numbers) from {source}.",
             f"% Do not edit: rerun `snakemake {paths.PAPER_PDF}`."]
    for flag, value in flags.items():
        lines += [f"\\newif\\if{flag}", f"\\{flag}{'true' if value else 'false'}"]
    for name, value in macros.items():
        if not re.fullmatch(r"[A-Za-z]+", name):
            raise ValueError(f"not a TeX command name: {name!r}")
        lines.append(f"\\newcommand{{\\{name}}}{{{value}}}")
    return "\n".join(lines) + "\n"


def write_numbers(cfg: dict, info_path, runs_csv, nulls_csv, findings_json, out,
                  reproduction_csv=None, gaps_csv=None, ep_by_seed_csv=None, primer_json=None,
                  expect: dict | None = None) -> dict[str, str]:
    """numbers.tex from the tables, each checked first (``expect``: the runs the config
    asks for, ``runs`` and the DFA ``nulls``), and the verdicts of findings.json."""
    expect = expect or {}
    info = json.loads(Path(info_path).read_text())
    primer = json.loads(Path(primer_json).read_text()) if primer_json else None
    macros, flags = numbers(cfg, info, table_io.read(runs_csv, "runs", expect.get("runs")),
                            table_io.read(nulls_csv, "nulls", expect.get("nulls")),
                            findings.read(findings_json)["verdicts"],
                            table_io.read_optional(reproduction_csv, "reproduction"),
                            table_io.read_optional(gaps_csv, "variants_gap"),
                            table_io.read_optional(ep_by_seed_csv, "ep_by_seed"), primer)
    source = f"{paths.fill(paths.SUMMARY, dataset=cfg['dataset'])} and the EP and primer results"
    atomic_write_text(out, numbers_tex(macros, flags, source))
    return macros
