"""The primer schematic: free phase = inference, nudged phase, the update as a
difference of two settled states. A drawing (no data); text stays text in the SVG, its
words in primer_phases.yaml beside it (labels.figure_text)."""

from __future__ import annotations

from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from credit_assign.figures import style
from credit_assign.reporting import labels

INK, MUTED = "0.15", "0.45"
TEXT = labels.figure_text(__name__)  # every word of the drawing


def _lines(name: str) -> list[str]:
    """A text drawn line by line (a box, an arrow or a row each)."""
    return TEXT[name].splitlines()


def _palette():
    p = style.PALETTE
    return {"free": p[0], "nudged": p[1], "pull": p[3], "update": p[2]}


class Canvas:
    """Drawing helpers on an axis with 0–100 coordinates."""

    def __init__(self, ax):
        self.ax = ax

    def text(self, x, y, s, size=9, color=INK, ha="center", weight="normal"):
        self.ax.text(x, y, s, fontsize=size, color=color, ha=ha, va="center",
                     fontweight=weight)

    def box(self, x, y, w, h, edge, face, lw=1.2):
        self.ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.3,rounding_size=0.8",
                                         fc=face, ec=edge, lw=lw))

    def arrow(self, x0, y0, x1, y1, color=INK, lw=1.2):
        self.ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>",
                                          mutation_scale=11, color=color, lw=lw,
                                          shrinkA=0, shrinkB=0))

    def stack(self, x, ys, labels, edge, face, notes=None):
        """States z_1..z_3 bottom-up, fed by emb(x), arrows between them."""
        for i, (y, label) in enumerate(zip(ys, labels, strict=True)):
            self.box(x - 11, y - 3, 22, 6, edge, face)
            self.text(x, y, label, 8)
            if notes:
                self.text(x + 12.5, y, notes[i], 7, MUTED, ha="left")
        for lower, upper in zip(ys[:-1], ys[1:], strict=True):
            self.arrow(x, lower + 3.4, x, upper - 3.4)
        self.text(x, ys[0] - 9, TEXT["input"], 8)
        self.arrow(x, ys[0] - 7.2, x, ys[0] - 3.2)


def plot():
    """Drawn at the paper's text width (style.TEXT_WIDTH_IN), every text ≥ 7 pt."""
    import matplotlib.pyplot as plt

    style.apply()
    c = _palette()
    fig = plt.figure(figsize=(style.TEXT_WIDTH_IN - 0.1, 4.5))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 100), ax.set_ylim(12, 106), ax.axis("off")
    cv = Canvas(ax)
    ys = [57, 70, 83]
    light = {k: (*v, 0.12) for k, v in c.items()}

    # free phase
    fx = 25
    cv.text(fx, 103, TEXT["free_title"], 9, weight="bold", color=c["free"])
    cv.text(fx, 99, TEXT["free_subtitle"], 7, MUTED)
    cv.text(fx, 94, TEXT["free_energy"], 8)
    cv.stack(fx - 7, ys, _lines("free_states"), c["free"], light["free"],
             notes=[TEXT["free_state_note"]] * 3)
    for y, line, color in zip((43, 39.5, 36), _lines("free_note"), (INK, INK, MUTED),
                              strict=True):
        cv.text(fx, y, line, 7, color)

    # nudged phase
    nx = 73
    cv.text(nx, 103, TEXT["nudged_title"], 9, weight="bold", color=c["nudged"])
    cv.text(nx, 99, TEXT["nudged_subtitle"], 7, MUTED)
    cv.text(nx, 94, TEXT["nudged_energy"], 8)
    cv.stack(nx - 9, ys, _lines("nudged_states"), c["nudged"], light["nudged"])
    cv.arrow(nx + 9, 89.5, nx + 2, 86.2, color=c["pull"], lw=1.4)
    for y, line in zip((89.5, 86.3, 83.1), _lines("pull"), strict=True):
        cv.text(nx + 9.8, y, line, 7, c["pull"], ha="left")
    for top, bottom, label in zip((80.2, 67.2), (72.8, 59.8), _lines("mismatches"),
                                  strict=True):
        cv.arrow(nx + 3, top, nx + 3, bottom, color=c["nudged"], lw=1.4)
        cv.text(nx + 4.5, (top + bottom) / 2, label, 7.5, c["nudged"], ha="left")
    for y, line, color in zip((43, 39.5, 36, 32.5), _lines("nudged_note"),
                              (INK, INK, MUTED, MUTED), strict=True):
        cv.text(nx, y, line, 7, color)

    # the update
    cv.box(2, 13.5, 96, 14.5, c["update"], light["update"])
    cv.text(4, 25.4, TEXT["update_title"], 8, weight="bold", ha="left", color=c["update"])
    cv.text(50, 21.6, TEXT["update_estimate"], 7.5)
    cv.text(50, 18.2, TEXT["update_per_layer"], 7)
    cv.text(50, 15, TEXT["update_note"], 7, MUTED)
    return fig


def make(outputs) -> None:
    style.save(plot(), outputs)


def from_job(job) -> None:
    """Step fig_primer_phases (scripts/figure.py hands it the Snakemake job): the inputs,
    outputs and params its rule names."""
    make(job.output)
