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
            self.box(x - 10, y - 2.2, 20, 4.4, edge, face)
            self.text(x, y, label, 10)
            if notes:
                self.text(x + 11.5, y, notes[i], 8, MUTED, ha="left")
        for lower, upper in zip(ys[:-1], ys[1:], strict=True):
            self.arrow(x, lower + 2.6, x, upper - 2.6)
        self.text(x, ys[0] - 9, r"$\mathrm{emb}(x)$", 10)
        self.arrow(x, ys[0] - 7.2, x, ys[0] - 2.6)


def plot():
    import matplotlib.pyplot as plt

    style.apply()
    c = _palette()
    fig = plt.figure(figsize=(11, 9.2))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 100), ax.set_ylim(14, 106), ax.axis("off")
    cv = Canvas(ax)
    ys = [61, 73, 85]
    light = {k: (*v, 0.12) for k, v in c.items()}

    # free phase
    fx = 25
    cv.text(fx, 102.5, "Free phase (= inference)", 12, weight="bold", color=c["free"])
    cv.text(fx, 99, r"each layer holds a state $z_l$; settle the layered energy", 8.5, MUTED)
    cv.text(fx, 94.5, r"$E(z) = \sum_l \frac{1}{2}\,\| z_l - f_l(z_{l-1}) \|^2$", 12)
    cv.stack(fx - 5, ys, [r"$z_1 = f_1(\mathrm{emb})$", r"$z_2 = f_2(z_1)$",
                          r"$z_3 = f_3(z_2)$"], c["free"], light["free"],
             notes=["term = 0"] * 3)
    cv.text(fx, 44, r"The minimum is exact: $E = 0$ at the forward activations,", 9)
    cv.text(fx, 41, "reached by one bottom-up pass.", 9)
    cv.text(fx, 37.5, "Nothing changes at inference.", 8.5, MUTED)

    # nudged phase
    nx = 72
    cv.text(nx, 102.5, "Nudged phase (training only)", 12, weight="bold", color=c["nudged"])
    cv.text(nx, 99, r"add the loss at strength $\beta \ll 1$ and settle again", 8.5, MUTED)
    cv.text(nx, 94.5, r"$E(z) + \beta\,\mathrm{CE}(\mathrm{logits}(z_3), y)$", 12)
    cv.stack(nx - 5, ys, [r"$z_1^\beta = z_1 + d_1$", r"$z_2^\beta = z_2 + d_2$",
                          r"$z_3^\beta = z_3 + d_3$"], c["nudged"], light["nudged"])
    cv.arrow(nx + 12, 91.2, nx + 3, 87.6, color=c["pull"], lw=1.8)
    cv.text(nx + 12.8, 91.2, r"pull $-\beta\,\nabla \mathrm{CE}$", 9, c["pull"], ha="left")
    cv.text(nx + 12.8, 88.8, "(the only place the label enters)", 7.5, c["pull"], ha="left")
    for top, bottom, label in ((82.6, 75.4, r"$d_2 = J_3^\top d_3$"),
                               (70.6, 63.4, r"$d_1 = J_2^\top d_2$")):
        cv.arrow(nx + 7, top, nx + 7, bottom, color=c["nudged"], lw=1.8)
        cv.text(nx + 8.5, (top + bottom) / 2, label, 9.5, c["nudged"], ha="left")
    cv.text(nx, 44, r"The top state moves toward lower loss; each mismatch $d_l$", 9)
    cv.text(nx, 41, "travels down through the same weights, and the stack re-settles.", 9)
    cv.text(nx, 37.5, r"($J^\top$: the transpose a bidirectional physical system provides)",
            8.5, MUTED)

    # the update
    cv.box(2, 17, 96, 15.5, c["update"], light["update"])
    cv.text(4, 29.5, "The update: a difference between the two settled states", 11,
            weight="bold", ha="left", color=c["update"])
    cv.text(50, 25.5, r"$\hat g = [\,\partial_\theta E(z^\beta) - \partial_\theta E(z^0)\,]\,/\,"
            r"\beta \;\to\; \partial \mathrm{CE}/\partial\theta$ as $\beta \to 0$"
            r"$\qquad (\partial_\theta E(z^0) = 0$ since $E = 0)$", 11)
    cv.text(50, 22, r"per layer: $\Delta\theta_l \propto \langle d_l,\ \partial f_l(z_{l-1})/"
            r"\partial\theta_l \rangle / \beta$;  error $O(\beta)$, or $O(\beta^2)$ with "
            r"$\pm\beta$ (checked in fig_primer_check)", 9.5)
    cv.text(50, 19, "Each layer learns from its own mismatch: no global backward graph, no tape, "
            "no loss derivative but the top nudge.", 8.5, MUTED)
    return fig


def make(outputs) -> None:
    style.save(plot(), outputs)
