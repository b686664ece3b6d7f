"""The manuscript's numbers: summary tables → ``paper/numbers.tex``.

``paper/ms.tex`` types no result. Every number it states is a macro defined here (the
runs, the nulls, the setup, the primer check) or in paper_study (the comparison with
the paper, the variant study) and paper_ep (the EP probe), from a table the pipeline
wrote. A sentence whose claim depends on a finding is written by hand in ms.tex for the
outcome of record and guarded: paper/findings.tex holds each finding's outcome
(``\\findingguard{<name>}{<outcome>}`` stops the build where it flipped) and values
(``\\fv{<name>}{<field>}``); numbers.tex holds no sentence. A
number a config did not produce (FA in the quick config, say) is spelled "not run", and
the section that needs it is switched off by a flag (``\\ifhasfa`` …).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from credit_assign.analysis import findings
from credit_assign.analysis import study as variant_study
from credit_assign.analysis import tables as table_io
from credit_assign.analysis import verdicts as registry
from credit_assign.analysis.aggregate import select_runs
from credit_assign.analysis.findings import diverged_seeds, null_cosines
from credit_assign.infra import paths
from credit_assign.infra.files import atomic_write_text
from credit_assign.planning.matrix import figure_lam, same_lam
from credit_assign.reporting import labels, render
from credit_assign.reporting.paper_ep import ep_numbers
from credit_assign.reporting.paper_study import (
    reproduction_numbers,
    variant_numbers,
)
from credit_assign.reporting.render import (
    NOT_RUN,
    tex_gap,
    tex_int,
    tex_lam,
    tex_norm,
    tex_sci,
    tex_seeds,
    tex_tiny,
)
from credit_assign.reporting.render import tex_spread as spread
from credit_assign.reporting.tex_chars import tex_escape

DATASET_NAMES = labels.names(labels.DATASETS, "tex")
METRIC_NAMES = labels.names(labels.METRICS, "tex")


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
    small = sorted({float(x) for x in runs[runs.method == "dfa"].lam
                    if 0 < float(x) < penalty and not same_lam(x, penalty)})
    sel = select_runs(runs, "dfa", small[0]) if small else runs.iloc[0:0]
    out["lamSmall"] = tex_lam(small[0]) if small else NOT_RUN
    bad = diverged_seeds(sel)
    out["hLDfaSmall"] = spread(sel.h_L_norm_median, "norm", diverged=bad, full=full)
    out["deepcosDfaSmall"] = spread(sel.deep_cosine, "cosine", diverged=bad, full=full)
    out["accDfaSmall"] = spread(sel.test_acc, diverged=bad, full=full)
    return out


def null_numbers(nulls: pd.DataFrame, penalty: float, full: int | None = None
                 ) -> tuple[dict[str, str], dict[str, bool]]:
    """Deep cosine with the trained-with B vs fresh draws, DFA at the penalty λ and at
    λ = 0 (null_cosines; the claims judge them): (macros, flags). The fresh draws are
    given apart (fresh_draws): ms.tex says what their n counts."""
    trained, fresh = null_cosines(nulls, penalty)
    sel = select_runs(nulls, "dfa", penalty)
    out = {"nullTrained": spread(trained, "cosine", full=full),
           "nullDraws": str(int(sel[sel.feedback == "fresh"].groupby("seed").size().max()))
           if len(fresh) else NOT_RUN}
    trained0, fresh0 = null_cosines(nulls, 0.0)
    out["nullTrainedZero"] = spread(trained0, "cosine", full=full)
    macros, flags = fresh_draws("nullFresh", fresh)
    macros0, flags0 = fresh_draws("nullFreshZero", fresh0)
    return out | macros | macros0, flags | flags0


def fresh_draws(name: str, values: pd.Series) -> tuple[dict[str, str], dict[str, bool]]:
    """A null's fresh draws: ``\\<name>`` their mean ± std (tex_spread; with its own n and
    note where one is not finite, or "not run", "n/a"), ``\\<name>N`` how many draws the
    mean is over, and ``\\if<name>Drawn`` where the value is that plain mean, beside which
    ms.tex writes what n counts (draws over the seeds)."""
    kept = [x for x in values if x is not None and not pd.isna(x)]
    n = int(np.isfinite(np.asarray(kept, dtype=float)).sum())
    return ({name: spread(values, "cosine", full=n), name + "N": str(n)},
            {name + "Drawn": 0 < n == len(kept)})


def primer_numbers(check: dict | None) -> dict[str, str]:
    """The primer's EP → BP check on the residual layered energy."""
    keys = ("primerBetaMin", "primerMisalignOneSided", "primerMisalignSymmetric",
            "primerSlopeOneSided", "primerSlopeSymmetric", "primerFreeEnergy",
            "primerPlainSlopeOneSided", "primerPlainSlopeSymmetric")
    if check is None:
        return dict.fromkeys(keys, NOT_RUN)
    m = check["models"]["residual"]
    g = m["groups"]["all"]
    return {"primerBetaMin": tex_sci(m["beta"][0]),
            "primerMisalignOneSided": tex_sci(1 - g["one_sided"]["cosine"][0]),
            "primerMisalignSymmetric": tex_tiny(1 - g["symmetric"]["cosine"][0]),
            "primerSlopeOneSided": f"${m['slopes']['all']['one_sided']:.2f}$",
            "primerSlopeSymmetric": f"${m['slopes']['all']['symmetric']:.2f}$",
            "primerFreeEnergy": tex_tiny(m["free_energy"]),
            **{f"primerPlainSlope{k}": f"${check['models']['plain']['slopes']['all'][v]:.2f}$"
               if "plain" in check["models"] else NOT_RUN
               for k, v in (("OneSided", "one_sided"), ("Symmetric", "symmetric"))}}


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
        "ntrain": tex_int(info["n_train"]), "ntest": tex_int(info["n_test"]),
        "width": tex_int(m["width"]), "depth": tex_int(m["depth"]),
        "epochs": tex_int(tr["epochs"]), "faepochs": tex_int(fa_epochs),
        "batchsize": tex_int(tr["batch_size"]), "lr": f"${tr['lr']:g}$",
        "weightdecay": f"${tr['weight_decay']:g}$",
        "augmentation": tex_escape(tr.get("augmentation", "none").replace("_", " + ")),
        "nseeds": tex_int(len(sweep["seeds"])),
        "seeds": tex_seeds(sweep["seeds"]),
        "penaltylam": tex_lam(figure_lam(cfg)),
        "diagn": tex_int(cfg["diagnostics"]["n_samples"]),
        "epcorpus": tex_escape(", ".join(ep["corpora"])) or NOT_RUN,
        "epnseeds": tex_int(len(ep["seeds"])),
        "epblocks": tex_int(ep["model"]["blocks"]), "epwidth": tex_int(ep["model"]["width"]),
        "eppretrainsteps": tex_int(ep["pretrain"]["steps"]),
        "eprelaxsteps": tex_int(ep["pretrain"]["relax_steps"]),
    }


def numbers(cfg: dict, info: dict, runs: pd.DataFrame, nulls: pd.DataFrame,
            reproduction: pd.DataFrame | None = None, gaps: pd.DataFrame | None = None,
            ep_by_seed: pd.DataFrame | None = None, primer: dict | None = None,
            has_ep_question: bool = False) -> tuple[dict[str, str], dict[str, bool]]:
    """(macros, flags) for numbers.tex. The numbers' own flags (a null's plain mean, an
    inherited headline norm) switch ms.tex's words beside them; ``has_ep_question``:
    whether this build has the EP question's findings (its section is switched on)."""
    penalty = figure_lam(cfg)  # the λ sweep.dfa marks {fig4: λ}
    precision = cfg["ep_stack"]["pretrain"]["precision"]
    full = len(cfg["sweep"]["seeds"])  # n goes unsaid where it is every seed run
    null_macros, null_flags = null_numbers(nulls, penalty, full)
    variant_macros, variant_flags = variant_numbers(gaps, cfg.get("study"))
    macros = {**setup_numbers(cfg, info), **run_numbers(runs, penalty, full), **null_macros,
              **reproduction_numbers(reproduction, cfg.get("labels")), **variant_macros,
              **ep_numbers(ep_by_seed, precision), **primer_numbers(primer)}
    flags = {"hasreference": reproduction is not None and not reproduction.empty,
             "hasvariants": gaps is not None and not gaps.empty,
             "hasmeasured": variant_study.has_measured(gaps),
             "hasfa": bool(len(select_runs(runs, "fa", 0.0))),
             "hasep": ep_by_seed is not None and not ep_by_seed.empty,
             "hasprobes": bool(cfg["probes"]["epochs"]),
             "hasepquestion": has_ep_question,
             "asksepquestion": bool(cfg.get("ep_question"))}
    for more in (null_flags, variant_flags):
        if clash := (set(more) & set(flags)):
            raise ValueError(f"a flag is named twice: {sorted(clash)}")
        flags |= more
    return macros, flags


def paper_findings(cfg: dict, verdicts: dict, claims: dict | None = None
                   ) -> dict[str, dict | None]:
    """Each finding ms.tex's sentences assert, by name (None: not taken):
    findings.json's verdicts (``<name>verdict``: taken only with the variant study), the
    claims' sizes (``sizes``: analysis.claims.magnitude) and the ranking's settings
    (``ranking``)."""
    found: dict[str, dict | None] = dict.fromkeys(registry.of("study"))
    found |= {name.removesuffix(registry.SUFFIX): f for name, f in verdicts.items()}
    settings = variant_study.ranking_settings(cfg.get("study")) if verdicts else None
    found["ranking"] = settings and {**settings["ranking"],
                                     "exclude_unverified": settings["exclude_unverified"]}
    found["sizes"] = claims["magnitude"] if claims else None
    return found


GUARDABLE = re.compile(r"[A-Za-z0-9_+-]+")  # a string a guard can compare


def tex_number(x: float, signed: bool = False) -> str:
    """A finding's number in TeX: three significant figures, a power of ten outside
    [1e-3, 1e4); ``signed``: a change, its sign written (+0.67)."""
    if x != 0 and not (1e-3 <= abs(x) < 1e4):
        return tex_norm(x)
    return f"${x:+.3g}$" if signed else f"${x:.3g}$"


def flatten(name: str, f, values: dict[str, str], guards: dict[str, str]) -> None:
    """``f``'s fields into ``values`` (``<name>/<field>``: a number or a name, as TeX;
    a ``*_change`` with its sign) and ``guards`` (its ``outcome`` as ``<name>``; a word
    or a boolean as ``<name>/<field>``); a list of columns (recipe, kind, gap) is one
    value, other lists none."""
    for key, x in f.items():
        path = f"{name}/{key}"
        if isinstance(x, dict):
            flatten(path, x, values, guards)
        elif isinstance(x, bool):
            guards[path] = str(x).lower()
        elif isinstance(x, int | float):
            values[path] = (str(x) if isinstance(x, int)
                            else tex_number(float(x), signed=key.endswith("_change")))
        elif isinstance(x, str):
            values[path] = tex_escape(x)
            if GUARDABLE.fullmatch(x):
                guards[name if key == "outcome" else path] = x
        elif isinstance(x, list) and x and all(isinstance(c, dict) and {"recipe", "kind", "gap"}
                                               <= set(c) for c in x):
            values[path] = ", ".join(f"\\texttt{{{tex_escape(c['recipe'])}}} "
                                     f"({tex_escape(c['kind'])}, gap {tex_gap(c['gap'])})"
                                     for c in x)


def findings_tex(found: dict[str, dict | None], source: str,
                 outcomes: dict[str, dict | None] | None = None) -> str:
    """paper/findings.tex (templates/findings.tex.j2): every taken finding's outcome and
    values (flatten), and the outcome of each of ``outcomes`` (the EP question's verdict
    and reason, ``undecided_straddles``: outcome_key)."""
    values: dict[str, str] = {}
    guards: dict[str, str] = {}
    for name, f in sorted(found.items()):
        if f is not None:
            flatten(name, f, values, guards)
    for name, f in sorted((outcomes or {}).items()):
        if name in found:
            raise KeyError(f"a finding given again as an outcome: {name}")
        if key := outcome_key(f):
            guards[name] = key
    return render.macro("findings.tex.j2", "file")(source, values, guards)


def outcome_key(finding: dict | None) -> str | None:
    """The EP question's verdict and its reason as one word (``undecided_straddles``), as
    ms.tex's ``\\findingguard{ep_question}{...}`` names it; None without one."""
    if not isinstance(finding, dict):
        return None
    verdict = finding.get("verdict")
    if isinstance(verdict, dict) and "verdict" in verdict:
        return "_".join(str(x) for x in (verdict["verdict"], verdict.get("reason")) if x)
    return None


def numbers_tex(macros: dict[str, str], flags: dict[str, bool], source: str) -> str:
    """paper/numbers.tex: one \\newif per flag and one \\newcommand per macro
    (templates/numbers.tex.j2)."""
    for name in [*macros, *flags]:
        if not re.fullmatch(r"[A-Za-z]+", name):
            raise ValueError(f"not a TeX command name: {name!r}")
    return render.macro("numbers.tex.j2", "file")(source, paths.PAPER_PDF, flags, macros)


def ep_question_numbers(question: dict | None) -> dict[str, str]:
    """The EP question's verdict, block 0's mean cosine with its interval, the threshold
    and the seeds judged, for ms.tex's sentences on it (each guarded by its outcome)."""
    keys = ("epqVerdict", "epqMean", "epqLow", "epqHigh", "epqThreshold", "epqJudged")
    if question is None:
        return dict.fromkeys(keys, NOT_RUN)
    v = question["verdict"]

    def num(x):
        return NOT_RUN if x is None else f"{x:.3f}"

    return {"epqVerdict": v["verdict"], "epqMean": num(v.get("mean")),
            "epqLow": num(v.get("low")), "epqHigh": num(v.get("high")),
            "epqThreshold": f"{question['claim']['threshold']:g}",
            "epqJudged": str(v.get("n_judged", 0))}


def write_numbers(cfg: dict, info_path, runs_csv, nulls_csv, findings_json, out,
                  findings_out, reproduction_csv=None, gaps_csv=None, ep_by_seed_csv=None,
                  primer_json=None, ep_question_json=None, claims_json=None,
                  expect: dict | None = None) -> dict[str, str]:
    """numbers.tex from the tables, each checked first (``expect``: the runs the config
    asks for, ``runs`` and the DFA ``nulls``), and findings.tex from the findings
    (findings.json's verdicts, the EP probe's, the EP question's and the claims')."""
    expect = expect or {}
    info = json.loads(Path(info_path).read_text())
    primer = json.loads(Path(primer_json).read_text()) if primer_json else None
    ep_by_seed = table_io.read_optional(ep_by_seed_csv, "ep_by_seed")
    question = json.loads(Path(ep_question_json).read_text()) if ep_question_json else None
    macros, flags = numbers(cfg, info, table_io.read(runs_csv, "runs", expect.get("runs")),
                            table_io.read(nulls_csv, "nulls", expect.get("nulls")),
                            table_io.read_optional(reproduction_csv, "reproduction"),
                            table_io.read_optional(gaps_csv, "variants_gap"),
                            ep_by_seed, primer, question is not None)
    macros |= ep_question_numbers(question)
    source = render.macro("numbers.tex.j2", "source")(
        paths.fill(paths.SUMMARY, dataset=cfg["dataset"], recipe=paths.DEFAULT_RECIPE))
    claims = json.loads(Path(claims_json).read_text()) if claims_json else None
    found = paper_findings(cfg, findings.read(findings_json)["verdicts"], claims)
    atomic_write_text(out, numbers_tex(macros, flags, source))
    atomic_write_text(findings_out, findings_tex(found, source, {"ep_question": question}))
    return macros
