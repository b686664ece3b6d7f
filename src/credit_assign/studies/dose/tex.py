"""The dose study's findings as TeX for the paper (paper/dose.tex, step paper_dose).

The paper's section on the dose is prose a person wrote for the outcome the data show.
Its numbers are read with ``\\dosev{<key>}{<field>}`` and every outcome a sentence
asserts is guarded with ``\\doseguard{<part>}{<verdict>}``: a finding whose verdict is
not the one the sentence says stops the build at that sentence's file and line (pdflatex
runs with -file-line-error). A key or field this file does not hold stops it too.

Keys: each judged part's id (fields mean, low, high, p, verdict, n);
``med_<arm>_<λ>`` for the mediation (share, low, high, rescue); ``lam_<λ>`` for each
dose λ, ``<recipe>_<λ>`` for an arm's runs (cap50_0, redraw1_0p01) and ``frozen`` for
the frozen baseline (fields acc, sd, norm: median ‖h_L‖ over runs; lognorm, logh0 (the
embedding's) and logbranch (the largest branch's), each a mean of log₁₀; cos, gap:
minus fresh B, n, tex: the λ); ``best`` (the λ of highest mean accuracy: lam, acc) and
``normmin`` (the λ of least ‖h_L‖: lam, norm); ``tables`` (dose, arms: judged or
waiting); ``reg`` (the dose's regression of accuracy on log ‖h_L‖ and the deep cosine:
norm, cos, r, n). A λ in a key is written without dots or minus signs (1e-05 → 1em05,
0.0001 → 0p0001), so a key is never read as a typed number.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from credit_assign.planning.matrix import lam_str


def key(lam: float) -> str:
    """A λ as a TeX key part (no dot, no minus sign)."""
    return lam_str(float(lam)).replace(".", "p").replace("-", "m")


def lam_tex(lam: float) -> str:
    """λ in TeX: 0 → 0, 1e-4 → $10^{-4}$, 3e-5 → $3\\times10^{-5}$."""
    lam = float(lam)
    if lam == 0:
        return "0"
    exp = math.floor(math.log10(lam) + 1e-9)
    mant = round(lam / 10**exp, 6)
    head = "" if mant == 1 else f"{mant:g}\\times"
    return f"${head}10^{{{exp}}}$"


def num(x, digits: int = 3) -> str:
    """A number in TeX (a minus sign in math mode; – where there is none)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "--"
    text = f"{float(x):.{digits}f}"
    return f"${text}$" if text.startswith("-") else text


def _p(x) -> str:
    if x is None or not math.isfinite(x):
        return "--"
    mant, _, exp = f"{x:.1e}".partition("e")
    return f"{x:.2g}" if x >= 1e-3 else f"${mant}\\times10^{{{int(exp)}}}$"


def _int(x) -> str:
    """A large number in TeX, thousands grouped: 486{,}339."""
    return f"{x:,.0f}".replace(",", "{,}") if math.isfinite(x) else "--"


def _def(k: str, field: str, value: str) -> str:
    return f"\\expandafter\\def\\csname dose@{k}@{field}\\endcsname{{{value}}}"


HEADER = r"""% The dose study's findings (step paper_dose, from dose_findings.json and
% dose_runs.csv: credit_assign.studies.dose.tex). Generated: do not edit.
\makeatletter
\@ifundefined{ifdose}{\newif\ifdose}{}\@ifundefined{ifdosedose}{\newif\ifdosedose}{}
\providecommand{\dosev}[2]{\ifcsname dose@#1@#2\endcsname\csname dose@#1@#2\endcsname
  \else\errmessage{dose.tex holds no #2 for #1 (step paper_dose writes it)}\fi}
\providecommand{\doseguard}[2]{\ifcsname dose@#1@verdict\endcsname
  \edef\dose@is{\csname dose@#1@verdict\endcsname}\def\dose@says{#2}%
  \ifx\dose@is\dose@says\else\errmessage{guard: says #1 #2, findings say \dose@is}\fi
  \else\errmessage{guard: dose.tex has no verdict for #1}\fi}
\makeatother"""


def macros(findings: dict, runs: pd.DataFrame) -> str:
    """paper/dose.tex's text from the study's findings and its per-run table."""
    lines = [HEADER]
    tables = findings["tables"]
    if tables.get("arms", {}).get("judged"):
        lines.append("\\dosetrue")  # ms.tex prints the section (\newif\ifdose)
    if tables.get("dose", {}).get("judged"):
        lines.append("\\dosedosetrue")  # and the dose's part (\newif\ifdosedose)
    for v in findings["verdicts"]:
        for field, value in (("mean", num(v["mean"])), ("low", num(v["low"])),
                             ("high", num(v["high"])), ("p", _p(v["p_holm"])),
                             ("n", str(v["n"])), ("verdict", v["verdict"])):
            lines.append(_def(v["id"], field, value))
    for m in findings["mediation"] or []:
        k = f"med_{m['arm']}_{key(m['lam'])}"
        for field, value in (("share", num(m["share"], 2)), ("low", num(m["low"], 2)),
                             ("high", num(m["high"], 2)), ("rescue", num(m["rescue_mean"]))):
            lines.append(_def(k, field, value))
    if r := findings.get("regression"):
        lines += [_def("reg", "norm", num(r["per_sd_log10_h_L_norm"])),
                  _def("reg", "cos", num(r["per_sd_deep_cosine"])),
                  _def("reg", "r", num(r["r_norm_alignment"], 2)),
                  _def("reg", "n", str(r["n_runs"]))]
    for name, t in findings["tables"].items():
        lines.append(_def("tables", name, "judged" if t["judged"] else "waiting"))
        lines.append(_def("tables", f"{name}have", str(t["have"])))
        lines.append(_def("tables", f"{name}need", str(t["need"])))
    if runs.empty:
        return "\n".join(lines) + "\n"
    runs = runs.assign(log10_h_0=np.log10(runs.h_0_norm.astype(float)),
                       log10_branch=np.log10(runs.branch_norm_max.astype(float)))
    means = runs.groupby(["recipe", "method", "lam"]).agg(
        acc=("test_acc", "mean"), sd=("test_acc", "std"), norm=("h_L_norm", "median"),
        lognorm=("log10_h_L_norm", "mean"), logh0=("log10_h_0", "mean"),
        logbranch=("log10_branch", "mean"), cos=("deep_cosine", "mean"),
        gap=("null_deep_gap", "mean"), n=("seed", "count"))
    for (recipe, method, lam), r in means.iterrows():
        k = ("frozen" if method == "frozen" else f"lam_{key(lam)}" if method == "dfa"
             and recipe == "default" else f"{recipe}_{key(lam)}")
        lines += [_def(k, "tex", lam_tex(lam)), _def(k, "acc", num(r.acc)),
                  _def(k, "sd", num(r.sd)), _def(k, "norm", _int(r.norm)),
                  _def(k, "lognorm", num(r.lognorm, 2)), _def(k, "logh0", num(r.logh0, 2)),
                  _def(k, "logbranch", num(r.logbranch, 2)), _def(k, "cos", num(r.cos)),
                  _def(k, "gap", num(r.gap)), _def(k, "n", str(int(r.n)))]
    means = means.xs(("default", "dfa"), level=("recipe", "method")) if len(means) else means
    if len(means):
        best, low = means.acc.idxmax(), means.norm.idxmin()
        lines += [_def("best", "lam", lam_tex(best)), _def("best", "acc", num(means.acc[best])),
                  _def("normmin", "lam", lam_tex(low)),
                  _def("normmin", "norm", _int(means.norm[low]))]
    return "\n".join(lines) + "\n"
