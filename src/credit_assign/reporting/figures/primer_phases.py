"""The primer schematic: free phase = inference, nudged phase, the update as a
difference of two settled states. A drawing (no data); text stays text in the SVG."""

from __future__ import annotations

from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from credit_assign.reporting.figures import style

INK, MUTED = "0.15", "0.45"


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
        self.text(x, ys[0] - 9, r"$\mathrm{emb}(x)$", 8)
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
    cv.text(fx, 103, "Free phase (= inference)", 9, weight="bold", color=c["free"])
    cv.text(fx, 99, r"each layer holds a state $z_l$; settle the energy", 7, MUTED)
    cv.text(fx, 94, r"$E(z) = \sum_l \frac{1}{2}\,\| z_l - f_l(z_{l-1}) \|^2$", 8)
    cv.stack(fx - 7, ys, [r"$z_1 = f_1(\mathrm{emb})$", r"$z_2 = f_2(z_1)$",
                          r"$z_3 = f_3(z_2)$"], c["free"], light["free"],
             notes=["term = 0"] * 3)
    cv.text(fx, 43, r"The minimum is exact: $E = 0$ at the", 7)
    cv.text(fx, 39.5, "forward activations, reached by one", 7)
    cv.text(fx, 36, "bottom-up pass. Nothing changes at inference.", 7, MUTED)

    # nudged phase
    nx = 73
    cv.text(nx, 103, "Nudged phase (training only)", 9, weight="bold", color=c["nudged"])
    cv.text(nx, 99, r"add the loss at strength $\beta \ll 1$, settle again", 7, MUTED)
    cv.text(nx, 94, r"$E(z) + \beta\,\mathrm{CE}(\mathrm{logits}(z_3), y)$", 8)
    cv.stack(nx - 9, ys, [r"$z_1^\beta = z_1 + d_1$", r"$z_2^\beta = z_2 + d_2$",
                          r"$z_3^\beta = z_3 + d_3$"], c["nudged"], light["nudged"])
    cv.arrow(nx + 9, 89.5, nx + 2, 86.2, color=c["pull"], lw=1.4)
    cv.text(nx + 9.8, 89.5, r"pull $-\beta\,\nabla \mathrm{CE}$", 7, c["pull"], ha="left")
    cv.text(nx + 9.8, 86.3, "(the label enters", 7, c["pull"], ha="left")
    cv.text(nx + 9.8, 83.1, "only here)", 7, c["pull"], ha="left")
    for top, bottom, label in ((80.2, 72.8, r"$d_2 = J_3^\top d_3$"),
                               (67.2, 59.8, r"$d_1 = J_2^\top d_2$")):
        cv.arrow(nx + 3, top, nx + 3, bottom, color=c["nudged"], lw=1.4)
        cv.text(nx + 4.5, (top + bottom) / 2, label, 7.5, c["nudged"], ha="left")
    cv.text(nx, 43, r"The top state moves toward lower loss; each", 7)
    cv.text(nx, 39.5, r"mismatch $d_l$ travels down through the same", 7)
    cv.text(nx, 36, r"weights ($J^\top$: the transpose a physical", 7, MUTED)
    cv.text(nx, 32.5, "bidirectional system provides).", 7, MUTED)

    # the update
    cv.box(2, 13.5, 96, 14.5, c["update"], light["update"])
    cv.text(4, 25.4, "The update: a difference between the two settled states", 8,
            weight="bold", ha="left", color=c["update"])
    cv.text(50, 21.6, r"$\hat g = [\,\partial_\theta E(z^\beta) - \partial_\theta E(z^0)\,]"
            r"\,/\,\beta \;\to\; \partial \mathrm{CE}/\partial\theta$ as $\beta \to 0$"
            r"$\quad (\partial_\theta E(z^0) = 0$ since $E = 0)$", 7.5)
    cv.text(50, 18.2, r"per layer: $\Delta\theta_l \propto \langle d_l,\ \partial f_l(z_{l-1})/"
            r"\partial\theta_l \rangle / \beta$;  error $O(\beta)$, or $O(\beta^2)$ with "
            r"$\pm\beta$ (below)", 7)
    cv.text(50, 15, "Each layer learns from its own mismatch: no global backward graph, "
            "no tape.", 7, MUTED)
    return fig


def make(outputs) -> None:
    style.save(plot(), outputs)
