"""findings.json's verdicts as data for paper/numbers.tex: per verdict, one ``\\newif``
per outcome (exactly one true; all false where the verdict was not taken: no variant
study, no EP probe) and the numbers and lists its words read, each formatted by the
filters the rest of numbers.tex uses. The words themselves, every branch, are written in
paper/ms.tex (its ``\\newcommand{\\headlineverdict}`` …), where a writer edits them; no
word is written here.

Naming: a verdict's macro in ms.tex is ``\\<stem>verdict``; its outcome flags
``\\if<stem><outcome>`` (the outcome without underscores: ``\\ifgoalnotreached``); its
data macros ``\\<stem><Field>`` (``\\goalRecipe``, ``\\epNSettled``); a flag for a
plural ``\\if<stem><field>plural`` (the count is not one) and any other switch of the
words ``\\if<stem><what>`` (``\\ifheadlinedeparts``). An outcome the findings hold that
has no flag here stops the render, naming the verdict and the outcome.
"""

from __future__ import annotations

from credit_assign.infra import results
from credit_assign.reporting.render import (
    NOT_RUN,
    seeds,
    tex_gap,
    tex_int,
    tex_norm,
)
from credit_assign.reporting.tex_chars import tex_escape


def declared_outcomes() -> dict[str, tuple[str, ...]]:
    """Each verdict's outcomes, declared once: the result schema's enums (the variant
    study's verdicts in ``findings``, EP's in ``ep_verdict``), by the verdict's stem.
    ms.tex has a branch for each (a test reads it)."""
    defs = results.schema("result")["$defs"]
    named = {**defs["findings"]["properties"]["verdicts"]["properties"],
             "epverdict": defs["ep_verdict"]}

    def enum(d: dict) -> tuple[str, ...]:
        for part in (d, *d.get("allOf", [])):
            if "enum" in part.get("properties", {}).get("outcome", {}):
                return tuple(part["properties"]["outcome"]["enum"])
        raise ValueError(f"the result schema declares no outcome enum for {d}")

    return {name.removesuffix("verdict"): enum(d) for name, d in named.items()}


OUTCOMES = declared_outcomes()


class UnknownOutcome(ValueError):
    """A finding's outcome that the paper's words have no branch (no flag) for."""


def outcome_flags(stem: str, outcome: str | None) -> dict[str, bool]:
    """``<stem><outcome>`` → whether it is the finding's outcome, for every outcome of
    the verdict (None: the verdict was not taken, every flag false)."""
    known = OUTCOMES[stem]
    if outcome is not None and outcome not in known:
        raise UnknownOutcome(
            f"{stem}verdict: outcome {outcome!r} has no flag in numbers.tex and no words "
            f"in paper/ms.tex (known: {', '.join(known)}); add it to the result schema's "
            f"enum and its branch to ms.tex's \\{stem}verdict")
    return {stem + o.replace("_", ""): o == outcome for o in known}


def plural(n: int) -> bool:
    return n != 1


def headline(f: dict | None) -> tuple[dict, dict]:
    """The columns within tolerance on the headline norm, each as
    ``\\headlinecolumn{recipe}{kind}{gap}`` (ms.tex writes one), or the closest."""
    flags = outcome_flags("headline", f and f["outcome"])
    flags["headlinedeparts"] = bool(f and f["outcome"] == "within" and f["departs"])
    columns = ", ".join(f"\\headlinecolumn{{{tex_escape(c['recipe'])}}}"
                        f"{{{tex_escape(c['kind'])}}}{{{tex_gap(c['gap'])}}}"
                        for c in (f or {}).get("columns", []))
    closest = (f or {}).get("closest")
    macros = {"headlineColumns": columns or NOT_RUN,
              "headlineClosestRecipe": tex_escape(closest["recipe"]) if closest else NOT_RUN,
              "headlineClosestKind": tex_escape(closest["kind"]) if closest else NOT_RUN,
              "headlineClosestGap": tex_gap(closest["gap"]) if closest else NOT_RUN}
    return flags, macros


def goal(f: dict | None) -> tuple[dict, dict]:
    """The study's goal (study.goal's result): not set, reached or not, the best column's
    count and, where held out, its count on the held-out seed."""
    r = f["result"] if f is not None else None
    flags = outcome_flags("goal", f and f["outcome"])
    held = r is not None and "held_out_within" in r
    flags["goalheldout"] = held
    flags["goalheldoutseedsplural"] = held and plural(r["held_out_seeds"])
    macros = dict.fromkeys(("goalGoal", "goalRecipe", "goalWithin", "goalCompared",
                            "goalCandidates", "goalHeldOutWithin", "goalHeldOutCompared",
                            "goalHeldOutSeeds"), NOT_RUN)
    if r is not None:
        macros |= {"goalGoal": tex_int(r["goal"]), "goalRecipe": tex_escape(r["recipe"]),
                   "goalWithin": tex_int(r["within"]), "goalCompared": tex_int(r["compared"]),
                   "goalCandidates": tex_int(r["candidates"])}
    if held:
        macros |= {"goalHeldOutWithin": f"${r['held_out_within']:.1f}$",
                   "goalHeldOutCompared": f"${float(format(r['held_out_compared'], '.1f')):g}$",
                   "goalHeldOutSeeds": tex_int(r["held_out_seeds"])}
    return flags, macros


def curse(f: dict | None) -> tuple[dict, dict]:
    """The winner's curse (study.curse_finding): how the winner's count and a typical
    recipe's move on the held-out seed (falls, rises or neither), and whether the winner's
    moves less favourably (``inflated``)."""
    flags = outcome_flags("curse", f and f["outcome"])
    est = f is not None and f["outcome"] == "estimated"
    macros = dict.fromkeys(("curseDrop", "curseTypical", "curseExtra", "curseHeldOut",
                            "curseKind"), NOT_RUN)
    for name in ("drop", "typical"):
        x = f[name] if est else 0.0
        flags[f"curse{name}falls"], flags[f"curse{name}rises"] = x > 0, x < 0
        if est:
            macros["curse" + name.capitalize()] = f"${abs(x):.2f}$"
    flags["curseinflated"] = est and f["extra"] > 0
    flags["curseheldoutplural"] = est and plural(f["held_out"])
    if est:
        macros |= {"curseExtra": f"${f['extra']:.2f}$", "curseHeldOut": str(f["held_out"]),
                   "curseKind": tex_escape(f["kind"])}
    return flags, macros


def normspread(f: dict | None) -> tuple[dict, dict]:
    """How far the recipes move the unpenalised norm (findings.norm_spread_finding): the
    factor, the two recipes and their means, their per-seed gaps (where both have them)
    and whether those overlap, and the recipes not compared (not finite)."""
    flags = outcome_flags("normspread", f and f["outcome"])
    measured = f is not None and f["outcome"] == "measured"
    lo, hi = (f["low"], f["high"]) if measured else ({}, {})
    gaps = bool(lo.get("seed_gaps") and hi.get("seed_gaps"))
    not_finite = (f or {}).get("not_finite", [])
    flags |= {"normspreadseedgaps": gaps,
              "normspreadoverlap": gaps and max(lo["seed_gaps"]) >= min(hi["seed_gaps"]),
              "normspreadnotfinite": bool(not_finite)}
    macros = {"normspreadFactor": tex_norm(f["factor"]) if measured else NOT_RUN,
              "normspreadNotFinite": ", ".join(f"\\texttt{{{tex_escape(r)}}}"
                                               for r in not_finite) or NOT_RUN}
    for end, side in (("Low", lo), ("High", hi)):
        macros |= {f"normspread{end}": tex_norm(side["mean"]) if side else NOT_RUN,
                   f"normspread{end}Recipe": tex_escape(side["recipe"]) if side else NOT_RUN,
                   f"normspread{end}GapMin": tex_gap(min(side["seed_gaps"])) if gaps else NOT_RUN,
                   f"normspread{end}GapMax": tex_gap(max(side["seed_gaps"])) if gaps else NOT_RUN}
    return flags, macros


def ep(f: dict | None) -> tuple[dict, dict]:
    """EP's verdict (findings.ep_finding): the outcome, the settled and unsettled seeds'
    counts, the seeds below the threshold (settled, unsettled) and the threshold."""
    flags = outcome_flags("ep", f and f["outcome"])
    g = f or {"settled": [], "unsettled": [], "low_settled": [], "low_unsettled": []}
    flags |= {"epanyunsettled": bool(g["unsettled"]),
              "epanylowunsettled": bool(g["low_unsettled"]),
              "epsettledplural": plural(len(g["settled"])),
              "epunsettledplural": plural(len(g["unsettled"])),
              "eplowsettledplural": plural(len(g["low_settled"])),
              "eplowunsettledplural": plural(len(g["low_unsettled"]))}
    if f is None:
        return flags, dict.fromkeys(("epHigh", "epNSettled", "epNUnsettled", "epNLowSettled",
                                     "epLowSettled", "epLowUnsettled"), NOT_RUN)
    return flags, {"epHigh": str(f["high"]), "epNSettled": str(len(f["settled"])),
                   "epNUnsettled": str(len(f["unsettled"])),
                   "epNLowSettled": str(len(f["low_settled"])),
                   "epLowSettled": seeds(f["low_settled"]) if f["low_settled"] else NOT_RUN,
                   "epLowUnsettled": seeds(f["low_unsettled"]) if f["low_unsettled"]
                   else NOT_RUN}


WRITERS = {"headline": headline, "goal": goal, "curse": curse, "normspread": normspread,
           "ep": ep}


def verdict_data(verdicts: dict[str, dict]) -> tuple[dict[str, str], dict[str, bool]]:
    """(macros, flags) for numbers.tex from findings by their macro's name
    (``headlineverdict`` …: findings.json's ``verdicts`` and EP's); a verdict not among
    them gets every outcome flag false and its data "not run". A name the paper has no
    words for stops here."""
    unknown = [name for name in verdicts if name.removesuffix("verdict") not in WRITERS]
    if unknown:
        raise UnknownOutcome(f"verdicts the paper has no words for: {', '.join(unknown)}")
    macros, flags = {}, {}
    for stem, write in WRITERS.items():
        f, m = write(verdicts.get(stem + "verdict"))
        flags |= f
        macros |= m
    return macros, flags
