"""The precision study's table and figure (issue #55) on a result with known numbers."""

import math

import pytest

from credit_assign.studies.ep_estimator import table


def _result(seed=6):
    def est(precision, stencil, r):
        err = (1e-7 / r if precision == "float32" else 0.0) + r ** (2 if stencil ==
                                                                     "central" else 4)
        return {"precision": precision, "stencil": stencil, "r": r,
                "cosine": {"all": 1 - err / 10, "block0": 1 - err, "block1": None},
                "nudge_ulps_block0": r * 1e3}
    ok = {"batch": 0, "free": {"converged": True, "steps": 300, "residual": 1e-7},
          "reference": {"residual": 1e-13, "converged": True, "steps": 40,
                        "adjoint_residual": 1e-11},
          "estimates": [est(p, s, r) for p in ("float32", "float64")
                        for s in ("central", "richardson") for r in (0.01, 0.02, 0.04)]}
    stuck = {"batch": 1, "free": {"converged": False, "steps": 5000, "residual": 1e-3}}
    return {"seed": seed, "batches": [ok, stuck]}


def test_rows_hold_every_cell_and_a_stuck_batch_none():
    r = _result()
    frame = table.table([r, _result(7)])
    assert len(frame) == 2 * 2 * 2 * 3 * 3  # seeds, precisions, stencils, r, groups
    assert table.unconverged(r) == 1
    b0 = frame[(frame.group == "block0") & (frame.seed == 6) & (frame.precision ==
                                                                  "float64")]
    central = b0[b0.stencil == "central"].set_index("r").one_minus_cos
    assert central[0.02] == pytest.approx(0.02 ** 2)
    assert math.isnan(frame[frame.group == "block1"].cosine.iloc[0])
    seeds = table.per_seed(frame)
    assert set(seeds.batches) == {1} and len(seeds) == 2 * 2 * 2 * 3


@pytest.mark.figure
def test_the_figure_draws_at_text_width(tmp_path):
    from credit_assign.figures import style
    from credit_assign.studies.ep_estimator import fig_ep_estimator as figure

    fig = figure.draw(table.table([_result(6), _result(7)]))
    assert fig.get_size_inches()[0] == pytest.approx(style.TEXT_WIDTH_IN)
    assert [ax.get_title(loc="left") for ax in fig.axes] == [
        "A  block 0's estimate", "B  the nudge against rounding"]
