"""EP's two questions for the paper (paper/ep2.tex, step paper_ep2): the precision
study's facts and the second question's verdict as ``\\eptwov{<key>}{<field>}``, and
``\\eptwoguard{<key>}{<outcome>}``, which stops the build at the sentence's file and
line where a finding's outcome is not the one the sentence says (facts.py names them:
float32_rounding, float64_flat, richardson_worse, remade_same, question2). Generated."""

from __future__ import annotations

from credit_assign.studies.ep_question2.facts import GRID, fmt
from credit_assign.studies.ep_question2.page import float64_per_seed, seed_range

HEADER = r"""% EP's two questions (step paper_ep2: credit_assign.studies.ep_question2.tex).
% Generated: do not edit.
\makeatletter
\providecommand{\eptwov}[2]{\ifcsname eptwo@#1@#2\endcsname\csname eptwo@#1@#2\endcsname
  \else\errmessage{ep2.tex holds no #2 for #1 (step paper_ep2 writes it)}\fi}
\providecommand{\eptwoguard}[2]{\ifcsname eptwo@#1@outcome\endcsname
  \edef\eptwo@is{\csname eptwo@#1@outcome\endcsname}\def\eptwo@says{#2}%
  \ifx\eptwo@is\eptwo@says\else\errmessage{guard: says #1 #2, findings say \eptwo@is}\fi
  \else\errmessage{guard: ep2.tex has no outcome for #1}\fi}
\makeatother"""


def _def(key: str, field: str, value: str) -> str:
    return f"\\expandafter\\def\\csname eptwo@{key}@{field}\\endcsname{{{value}}}"


def _r(r: float) -> str:
    return f"{r:g}".replace(".", "p").replace("-", "m")


def macros(pf: dict, q2: dict) -> str:
    """paper/ep2.tex from facts.precision and facts.question2."""
    lines = [HEADER]
    for key, outcome in {**pf["outcomes"], **q2["outcomes"]}.items():
        lines.append(_def(key, "outcome", outcome.replace("_", "-")))
    lines.append(_def("prec", "seeds", ", ".join(str(s) for s in pf["seeds"])))
    lines.append(_def("prec", "n", str(pf["n"])))
    # the nudges the sentences name (settings, not results: still never typed)
    lines += [_def("r", "small", f"{GRID[0]:g}"), _def("r", "judged", f"{GRID[1]:g}"),
              _def("r", "own", f"{GRID[2]:g}"), _def("r", "min", f"{pf['r_min']:g}"),
              _def("r", "max", f"{pf['r_max']:g}"), _def("q2", "t2max", str(q2["t2max"])),
              _def("q2", "r", f"{q2['r']:g}")]
    for p in ("float32", "float64"):
        for r in (0.00125, 0.005, 0.02):
            digits = 4 if p == "float64" else 3
            lines += [_def(p, _r(r), fmt(pf[f"{p}_{r}"], digits)),
                      _def(p, _r(r) + "seeds", seed_range(pf, f"{p}_{r}", digits))]
    if pf["outcomes"]["float64_flat"] != "no":  # a seed that moves with r has no words
        lines.append(_def("float64", "perseed", float64_per_seed(pf, tex=True)))
    spread = pf["float64_spread"]
    lines += [_def("float64", "err", f"{pf['float64_err_min']:.3g}"),
              _def("float64", "spread", f"{spread:.1e}".replace("e-0", "e-")),
              _def("float32", "richardson", fmt(pf["richardson32"])),
              _def("float32", "richardsonseeds", seed_range(pf, "richardson32", inside=True)),
              _def("float32", "ulps", f"{pf['ulps_0.005']:.1f}")]
    if pf["remade"]:
        first = pf["remade"][0]
        lines += [_def("remade", "seed", str(first["seed"])),
                  _def("remade", "val", f"{first['remade_val_loss']:.3f}"),
                  _def("remade", "recval", f"{first['recorded_val_loss']:.3f}")]
        # the seed whose judged cosine moved most between its recorded and remade stack
        far = max(pf["remade"], key=lambda r: abs(r["remade_cosine"] - r["recorded_cosine"]))
        lines += [_def("remade", "farseed", str(far["seed"])),
                  _def("remade", "farcos", fmt(far["remade_cosine"])),
                  _def("remade", "farreccos", fmt(far["recorded_cosine"]))]
    for field in ("mean", "low", "high"):
        lines.append(_def("q2", field, fmt(q2[field], 4)))
    per_seed = "; ".join(f"{r['seed']}: " + (fmt(r["effect"], 4) if r["effect"] is not None
                                             else r["reason"].replace("_", " "))
                         for r in q2["per_seed"])
    lines.append(_def("q2", "perseed", per_seed or "–"))
    lines += [_def("q2", "verdict", q2["verdict"]), _def("q2", "run", str(q2["run"])),
              _def("q2", "fresh", str(q2["n_fresh"])),
              _def("q2", "judged", str(q2["n_judged"])),
              _def("q2", "threshold", f"{q2['threshold']:g}"),
              _def("q2", "confidence", f"{q2['confidence'] * 100:.0f}\\,\\%"),
              _def("q2", "float32", fmt(q2["float32_mean"]))]
    return "\n".join(lines) + "\n"
