"""One look for every figure: seaborn theme, colour-blind-safe palette, fixed names.

A learning rule's label and colour are not here: each rule declares them
(src/credit_assign/science/learning_rules/), and the figure steps pass them in (``methods``: name →
{label, color}), so figures never import the science.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from credit_assign.infra.snakejob import ABOUT_KEY, job_about  # noqa: E402
from credit_assign.reporting import labels  # noqa: E402

PALETTE = sns.color_palette("colorblind")
# The paper's text width (paper/ms.tex: letter paper, 25 mm margins): a figure drawn at
# this width is printed at its own size, so its 7-pt text prints at 7 pt.
TEXT_WIDTH_IN = 6.5
MIN_FONT_PT = 7
NULL_COLOR = "0.6"
# The same quantity carries the same label on every axis: a metric's is its figure form
# in labels.METRICS.
LABELS = {
    "epoch": "epoch",
    "train_loss": "train loss",
    **{key: forms["figure"] for key, forms in labels.METRICS.items() if "figure" in forms},
}


def method_label(methods: dict, method: str) -> str:
    """A method's label from the rules' styles (its name where none is given)."""
    return methods.get(method, {}).get("label", method)


def method_color(methods: dict, method: str, default="0.5"):
    return methods.get(method, {}).get("color", default)


def apply() -> None:
    sns.set_theme(context="paper", style="ticks", palette=PALETTE, font="DejaVu Sans",
                  rc={"svg.fonttype": "none", "pdf.fonttype": 42, "axes.titleweight": "bold",
                      "axes.titlesize": 9, "axes.labelsize": 9, "legend.fontsize": 7,
                      "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.grid": True,
                      "grid.linestyle": ":", "grid.linewidth": 0.5})


def lam_label(lam: float) -> str:
    """λ as it reads on a figure: λ=0, λ=10⁻⁴, λ=0.003."""
    if lam == 0:
        return r"$\lambda=0$"
    exp = f"{lam:.0e}"
    mant, e = exp.split("e")
    if mant == "1":
        return rf"$\lambda=10^{{{int(e)}}}$"
    return rf"$\lambda={lam:g}$"


def lam_colors(lams) -> dict[float, tuple]:
    """A sequential ramp: darker = weaker penalty (λ=0 darkest)."""
    lams = sorted(lams)
    ramp = sns.color_palette("rocket", n_colors=max(len(lams), 1) + 1)
    return {lam: ramp[i] for i, lam in enumerate(lams)}


def save(fig, outputs, about: dict | None = None) -> None:
    """Write the figure to every output path (format from the suffix; PNG at 300 dpi).
    A PNG carries what it was drawn from (``about``; by default the running job's:
    infra.snakejob.about) as a text chunk, ABOUT_KEY, read back by
    infra.snakejob.drawn_from: make publish copies a figure only when it names the
    dataset it publishes."""
    about = job_about() if about is None else about
    # a fixed salt for the ids matplotlib puts in SVG (clip paths, glyphs): without it
    # they are random and a rebuilt SVG differs from the last in every id
    with plt.rc_context({"svg.hashsalt": "credit-assign"}):
        for out in outputs:
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(out, bbox_inches="tight", dpi=300, metadata=_metadata(out, about))
    plt.close(fig)


def _metadata(path, about: dict | None = None) -> dict:
    # Fixed metadata: the same data give the same file (no creation dates in SVG/PDF).
    suffix = Path(path).suffix
    if suffix == ".svg":
        return {"Date": None}
    if suffix == ".pdf":
        return {"CreationDate": None}
    if suffix == ".png" and about is not None:
        return {ABOUT_KEY: json.dumps(about, sort_keys=True)}
    return {}



# ---- a figure as printed: save() writes it, the paper scales it onto its page ------------
def saved_size_in(fig) -> tuple[float, float]:
    """The figure's size as save() writes it (bbox_inches="tight", matplotlib's 0.1 in
    pad), in inches: what \\includegraphics scales onto the page."""
    fig.canvas.draw()  # the constrained layout, as saving runs it
    bbox = fig.get_tightbbox(fig.canvas.get_renderer())
    return bbox.width + 0.2, bbox.height + 0.2


def printed_scale(fig, page) -> float:
    """How much the paper scales the saved figure to fit ``page`` (width, height in
    inches; ms.tex: width and height given, keepaspectratio)."""
    width, height = saved_size_in(fig)
    return min(page[0] / width, page[1] / height)


def printed_font_sizes(fig, page) -> list[float]:
    """Every text's size in points as printed on ``page`` (width, height in inches; e.g.
    gap_map.PAGE_IN, fig_variants on the rotated page): what a readability check reads."""
    scale = printed_scale(fig, page)
    texts = [t for t in fig.findobj(lambda a: hasattr(a, "get_fontsize")
                                    and hasattr(a, "get_text")) if t.get_text().strip()]
    return [t.get_fontsize() * scale for t in texts]
