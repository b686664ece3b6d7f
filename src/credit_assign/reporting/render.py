"""Findings → pages: one Jinja2 environment over the templates in ``templates/`` and
beside each study's page (``studies/<study>/``), found by name. A
template reads named findings and fails loudly on a missing one (StrictUndefined); the
filters here are the only number formats the templates use. md_table is
templates/markdown.j2's table for the pages still written in Python.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from credit_assign.analysis.cells import field, flag
from credit_assign.analysis.cells import missing as _missing
from credit_assign.reporting import labels
from credit_assign.reporting.tex_chars import tex_escape

TEMPLATES = Path(__file__).resolve().parent / "templates"
# each verdict's words, beside its module
VERDICTS = Path(__file__).resolve().parents[1] / "analysis" / "verdicts"
# the study rooms (credit_assign/studies/<study>/) whose pages' templates sit beside them
STUDY_FOLDERS = tuple(sorted({p.parent for p in (Path(__file__).resolve().parents[1]
                                                 / "studies").glob("*/*.j2")}))


def num(x, digits: int = 3) -> str:
    """A number to ``digits`` decimals; a missing or undefined one is an em dash."""
    if _missing(x):
        return "—"
    return f"{x:.{digits}f}"


def short(x, digits: int = 3) -> str:
    """A number to ``digits`` decimals, in scientific notation outside [1e-3, 1e3)
    (0.085, 4.10e+05, 2.00e-04); a missing or undefined one is an em dash."""
    if _missing(x):
        return "—"
    if abs(x) >= 1e3 or (0 < abs(x) < 1e-3):
        return f"{x:.2e}"
    return f"{x:.{digits}f}"


def signed(x, digits: int = 3) -> str:
    """A difference, with its sign: +0.059, −0.053 (a true minus sign)."""
    text = num(x, digits)
    if text == "—":
        return text
    return text.replace("-", "−") if x < 0 else "+" + text


def sci(x, digits: int = 2) -> str:
    """A number that may span decades: 0.123, 4.1e+05."""
    if _missing(x):
        return "—"
    return f"{x:.{digits}e}" if x != 0 and (abs(x) >= 1e3 or abs(x) < 1e-3) else f"{x:.3g}"


def sig(x, digits: int = 3) -> str:
    """A number to ``digits`` significant figures (a norm: 143, 4.06e+03); a missing one
    is an em dash."""
    if _missing(x):
        return "—"
    return f"{x:.{digits}g}"


def lam(x) -> str:
    """λ as the pages write it: 0, 1e-4, 1e-2."""
    x = float(x)
    if x == 0:
        return "0"
    mant, exp = f"{x:.0e}".split("e")
    return f"{mant}e{int(exp)}" if float(mant) * 10 ** int(exp) == x else f"{x:g}"


def cell(text) -> str:
    """Any text as one Markdown table cell: a '|' escaped, line breaks as spaces."""
    return " ".join(str(text).split()).replace("|", "\\|")


def seeds(values) -> str:
    """Seeds as a list: 1001, 1002 and 1005."""
    values = [str(v) for v in values]
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


# ---- the comparison with the paper (reproduction.md, the variant study) --------------
def estimate(x, std=None, digits: int = 3) -> str:
    """One of our numbers beside the paper's: signed to ``digits`` decimals, in scientific
    notation outside [1e-3, 1e3) (+0.412, 4.10e+05), then ± its sd where one is given; a
    missing one is an em dash."""
    if _missing(x):
        return "—"
    text = f"{x:.2e}" if abs(x) >= 1e3 or (0 < abs(x) < 1e-3) else f"{x:+.{digits}f}"
    if not _missing(std):
        text += f" ± {std:.2e}" if abs(x) >= 1e3 else f" ± {std:.{digits}f}"
    return text


def tolerance(row) -> str:
    """A paper number's tolerance as the pages write it (comparison's kind and width):
    ±0.02, ±0.02 of range, ×10^0.5; none: an em dash."""
    kind, width = field(row, "tolerance_kind"), field(row, "tolerance")
    if not kind or width is None:
        return "—"
    text = {"abs": "±{:g}", "range_abs": "±{:g} of range", "log10": "×10^{:g}"}[kind]
    return text.format(float(width))


def gap(x, inherited=False, plain: bool = False) -> str:
    """A gap in units of the tolerance: +0.3, with ✓ where within (|gap| ≤ 1; not when
    ``plain``), in parentheses where the number is ``inherited``; missing: an em dash."""
    text = "—" if _missing(x) else f"{x:+.1f}" + (" ✓" if abs(x) <= 1 and not plain else "")
    return f"({text})" if inherited and text != "—" else text


def gap_sd(x, tighter=False) -> str:
    """A gap in units of our own sd, † where the tolerance is tighter than that sd
    (``tighter``: a boolean cell, see flag)."""
    text = "—" if _missing(x) else f"{x:+.1f}"
    return text + (" †" if flag(tighter) else "")


# ---- a paper number's row: its labels (reproduction.md, the gap map, the notes, figures)
# A row holds the comparison's keys (comparison.KEY: method, lam, seed, metric, layer)
# and the paper's number as data (paper, paper_std, paper_range); its run, its metric and
# the paper's number are written here only, for the pages (the filters of the same names)
# and the figures.
METRIC_NAMES = labels.names(labels.METRICS, "md")


def run_label(row) -> str:
    """A row's run as the pages name it: "dfa, λ=0.01" (", seed 42": one seed's number)."""
    seed = field(row, "seed")
    return f"{field(row, 'method')}, λ={float(field(row, 'lam')):g}" + (
        f", seed {int(seed)}" if seed is not None else "")


def metric_label(row) -> str:
    """A row's metric as the pages name it (labels.METRICS, md): "median ‖h_L‖", and
    " l1" for one layer's number ("cosine l1")."""
    metric, layer = field(row, "metric"), field(row, "layer")
    return METRIC_NAMES.get(metric, metric) + (f" l{int(layer)}" if layer is not None else "")


def paper_text(row) -> str:
    """A row's published number: its range ("[+0.15, +0.17]"; a list, or the text a CSV
    read back holds) or its value ± std (estimate); — where the row has none."""
    rng = field(row, "paper_range")
    if isinstance(rng, str):
        rng = yaml.safe_load(rng)
    if isinstance(rng, (list, tuple)):
        return f"[{rng[0]:+.2f}, {rng[1]:+.2f}]"
    return estimate(field(row, "paper"), field(row, "paper_std"))


# ---- TeX (a string as text: tex_chars.tex_escape) -----------------------------------
def tex_num(x, digits: int = 3) -> str:
    """A number in TeX math: $+0.059$, $-0.053$ (signed), an undefined one as ---."""
    text = signed(x, digits)
    return "---" if text == "—" else "$" + text.replace("−", "-") + "$"


# ---- TeX numbers (paper/numbers.tex): math mode
NOT_RUN = "not run"  # a number the config did not produce


def tex_int(x) -> str:
    """An integer (a count, a seed, a step) in TeX math: $3$."""
    return f"${int(x)}$"


def tex_seeds(values) -> str:
    """Seeds as TeX: $5$, $6$."""
    return ", ".join(tex_int(s) for s in values)


def tex_gap(x: float) -> str:
    """A gap in units of the tolerance, signed to one decimal: $+0.3$."""
    return f"${x:+.1f}$"


def tex_spread(values, kind: str = "plain", diverged: list | None = None,
               full: int | None = None) -> str:
    """mean ± std over seeds (ddof = 1) and n, in TeX: "not run" when there are no
    values, "n/a" when the runs exist but the number is not defined for them (where n
    counts something else than seeds, paper/ms.tex says so beside it). ``diverged``:
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
    if full is not None and len(v) == full and not note:
        return text
    return f"{text} ($n{{=}}{len(v)}$" + note + ")"


def tex_sci(x: float, digits: int = 2) -> str:
    """A number in math mode: 0.123, or 1.23 \\times 10^{5} when large or tiny."""
    if x is None or not math.isfinite(x):
        return "—" if x is None or math.isnan(x) else ("$\\infty$" if x > 0 else "$-\\infty$")
    if x != 0 and (abs(x) >= 1e3 or abs(x) < 1e-3):
        mant, exp = f"{x:.{digits}e}".split("e")
        return f"${mant} \\times 10^{{{int(exp)}}}$"
    return f"${x:.3f}$"


def tex_tiny(x: float) -> str:
    """A quantity that may be zero to float64 rounding: below 1e-15 it says so."""
    return "$< 10^{-15}$" if abs(x) < 1e-15 else tex_sci(x)


def tex_value(metric: str, x: float) -> str:
    """One number of the paper's table: a norm in scientific form, a cosine signed, an
    accuracy to three decimals."""
    if "norm" in metric:
        return tex_norm(x)
    return f"${x:+.3f}$" if "cosine" in metric else f"${x:.3f}$"


def tex_cosine(x: float) -> str:
    """A cosine signed to three decimals in math mode; a non-finite one as tex_sci has it."""
    return tex_value("cosine", x) if x is not None and math.isfinite(x) else tex_sci(x)


def tex_lam(lam: float) -> str:
    """λ as TeX: 0, 10^{-4}, 3 \\times 10^{-3}."""
    if lam == 0:
        return "$0$"
    mant, exp = f"{lam:.0e}".split("e")
    return f"$10^{{{int(exp)}}}$" if mant == "1" else f"${mant} \\times 10^{{{int(exp)}}}$"


def tex_norm(x: float) -> str:
    """A norm to three significant figures: 143, 4.06 \\times 10^{3}."""
    if x is None or not math.isfinite(x):
        return tex_sci(x)
    return f"${x:.3g}$" if 1 <= abs(x) < 1e3 else tex_sci(x)


@functools.cache
def environment():
    """The one environment (built once: every page and phrase shares its compiled
    templates)."""
    import jinja2

    from credit_assign import effects

    # the pages' templates, each study's beside its page (a name of its own: a test
    # checks none is taken twice), and each effect kind's words beside its module
    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader([TEMPLATES, *STUDY_FOLDERS]),
                                  jinja2.PrefixLoader(
                                      {"effects": jinja2.FileSystemLoader(effects.FOLDER),
                                       "verdicts": jinja2.FileSystemLoader(VERDICTS)})])
    env = jinja2.Environment(loader=loader,
                             undefined=jinja2.StrictUndefined, autoescape=False,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    filters = dict(num=num, short=short, signed=signed, sci=sci, sig=sig, lam=lam,
                   cell=cell, seeds=seeds, lstrip=lambda text: str(text).lstrip("\n"),
                   estimate=estimate, gap=gap, gap_sd=gap_sd, tolerance=tolerance,
                   run_label=run_label, metric_label=metric_label, paper_text=paper_text,
                   tex=tex_escape, tex_num=tex_num, tex_sci=tex_sci, tex_norm=tex_norm,
                   tex_lam=tex_lam, tex_cosine=tex_cosine)
    env.filters.update({name: _defined(f) for name, f in filters.items()})
    # a verdict's words (analysis/verdicts/<name>.md.j2), one line
    env.globals["verdict"] = lambda name, finding: " ".join(str(
        env.get_template(f"verdicts/{name}.md.j2").make_module().words(finding)).split())
    return env


def _defined(f):
    """A filter that refuses a missing finding by its name (jinja2.UndefinedError: "'dict
    object' has no attribute 'key'"), as a template that prints it does, before the
    filter formats it (a format or abs() of an undefined value would say only
    TypeError)."""
    import jinja2

    @functools.wraps(f)
    def checked(*args, **kwargs):
        for value in (*args, *kwargs.values()):
            if isinstance(value, jinja2.Undefined):
                value._fail_with_undefined_error()
        return f(*args, **kwargs)

    return checked


def render(template: str, **findings) -> str:
    """Template ``template`` (by name: templates/ or a study's room) filled with
    ``findings``; a name it uses that the findings lack raises jinja2.UndefinedError
    naming it."""
    return environment().get_template(template).render(**findings)


def phrases(template: str, findings: dict[str, dict]) -> dict[str, str]:
    """name → the phrase template ``template``'s macro ``name`` writes from
    ``findings[name]`` (one line: the template's line breaks are spaces). A macro that
    reads a field the finding lacks raises jinja2.UndefinedError naming it."""
    return {name: " ".join(macro(template, name)(finding).split())
            for name, finding in findings.items()}


def macro(template: str, name: str):
    """Template ``template``'s macro ``name``, as a function returning its text."""
    module = environment().get_template(template).make_module()
    return lambda *args: str(getattr(module, name)(*args))


def md_table(header: list, rows: list[list]) -> str:
    """A Markdown table (templates/markdown.j2): every cell through cell (a '|' escaped, a
    line break a space), so that text from a config (a variant's description) cannot
    shift a column."""
    return macro("markdown.j2", "table")(header, rows)
