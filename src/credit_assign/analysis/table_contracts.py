"""Each summary table's contract: the columns its readers rely on, their dtypes (a pandera
schema), the columns that identify a row, and whether a row is a training run (for the
coverage check of analysis.tables). Pure pandas and pandera: no torch.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandera.pandas as pa

# a claim's verdicts, and why one is undecided (declared once: the claims table's
# contract checks them, analysis.claims counts them, the templates word them)
VERDICTS = ("holds", "contradicted", "undecided")
REASONS = ("diverged", "too_few", "straddles")

RUN = ("method", "lam", "seed")  # what a training run is, in every table that has runs


class TableError(ValueError):
    """A summary table that cannot be trusted; the message names it and what to do."""


def _num(nullable: bool = True) -> pa.Column:
    return pa.Column(float, nullable=nullable, coerce=True)


def _int(nullable: bool = False) -> pa.Column:
    return pa.Column("Int64" if nullable else int, nullable=nullable, coerce=True)


def _str(nullable: bool = False) -> pa.Column:
    return pa.Column(str, nullable=nullable, coerce=nullable)


def _bool(nullable: bool = False) -> pa.Column:
    return pa.Column(bool, nullable=nullable, coerce=True)


def _runs_columns() -> dict[str, pa.Column]:
    return {"dataset": _str(), "method": _str(), "lam": _num(False), "seed": _int()}


def _schema(columns: dict[str, pa.Column], unique: tuple[str, ...] | None,
            checks: list[pa.Check] | None = None) -> pa.DataFrameSchema:
    # strict=False: a table may carry more columns than its readers need
    return pa.DataFrameSchema(columns, strict=False, unique=list(unique) if unique else None,
                              checks=checks)


# a run's final numbers that are never undefined for a run that stayed finite (the deep
# cosine is: the frozen baseline has none)
FINITE_UNLESS_DIVERGED = ("test_acc", "train_loss", "test_loss", "h_L_norm_median")


def _nan_only_where_diverged(frame: pd.DataFrame) -> pd.Series:
    """A run's row may hold a missing or non-finite number only where the run's own
    record says it diverged (n_nonfinite > 0)."""
    values = frame[list(FINITE_UNLESS_DIVERGED)].apply(pd.to_numeric, errors="coerce")
    bad = ~np.isfinite(values.to_numpy(dtype=float)).all(axis=1)
    return pd.Series(~bad | (frame.n_nonfinite.to_numpy() > 0), index=frame.index)


# One contract per kind of table: the columns its readers rely on, their dtypes, and the
# columns that identify a row (unique), and whether a row is a run (RUN) for coverage.
CONTRACTS: dict[str, tuple[pa.DataFrameSchema, bool]] = {
    "runs": (_schema({**_runs_columns(), "epochs": _int(), "final_epoch": _int(),
                      "test_acc": _num(), "train_loss": _num(), "test_loss": _num(),
                      "h_L_norm_median": _num(), "deep_cosine": _num(),
                      "first_nonfinite_epoch": _int(True), "stopped_early": _bool(),
                      "n_nonfinite": _int(), "total_s": _num(), "device": _str()},
                     ("dataset", *RUN),
                     [pa.Check(_nan_only_where_diverged, error="a missing or non-finite "
                               f"{'/'.join(FINITE_UNLESS_DIVERGED)} in a run whose record "
                               "says it stayed finite (n_nonfinite = 0)")]), True),
    "epochs": (_schema({**_runs_columns(), "epoch": _int(), "lr": _num(),
                        "train_loss": _num(), "test_acc": _num(), "test_loss": _num(),
                        "h_L_norm_median": _num(), "deep_cosine": _num(),
                        "train_s": _num(), "diagnostics_s": _num()},
                       ("dataset", *RUN, "epoch")), True),
    "layers": (_schema({**_runs_columns(), "epoch": _int(), "layer": _int(),
                        "cosine": _num(), "h_norm_median": _num(),
                        "grad_norm_median": _num(), "signal_norm_median": _num(),
                        "branch_norm_median": _num()},
                       ("dataset", *RUN, "epoch", "layer")), True),
    "nulls": (_schema({**_runs_columns(),
                       "feedback": pa.Column(str, pa.Check.isin(["trained", "fresh"])),
                       "draw": _int(True), "deep_cosine": _num()},
                      ("dataset", *RUN, "feedback", "draw")), True),
    "null_layers": (_schema({**_runs_columns(),
                             "feedback": pa.Column(str, pa.Check.isin(["trained", "fresh"])),
                             "draw": _int(True), "layer": _str(), "cosine": _num()},
                            ("dataset", *RUN, "feedback", "draw", "layer")), True),
    # the claims (credit_assign.analysis.claims): a verdict never without its reason
    "claims": (_schema({"claim": _str(), "part": _str(True), "seed_set": _str(),
                        "verdict_set": _bool(), "n": _int(), "n_seeds": _int(),
                        "mean": _num(), "low": _num(), "high": _num(),
                        "interval": _str(),
                        "verdict": pa.Column(str, pa.Check.isin(list(VERDICTS))),
                        "reason": pa.Column(str, pa.Check.isin(list(REASONS)),
                                            nullable=True)},
                       ("claim", "part", "seed_set")), False),
    "claims_by_seed": (_schema({"claim": _str(), "part": _str(True), "seed_set": _str(),
                                "seed": _int(), "effect": _num(),
                                "status": pa.Column(str, pa.Check.isin(
                                    ["ok", "diverged", "unsettled"]))},
                               ("claim", "part", "seed_set", "seed")), False),
    "probe_alignment": (_schema({**_runs_columns(), "epoch": _int(), "rule": _str(),
                                 "trained_with": _bool(), "layer": _int(),
                                 "cosine": _num(), "signal_norm_median": _num(),
                                 "grad_norm_median": _num()},
                                ("dataset", *RUN, "epoch", "rule", "layer")), True),
    "probe_ratios": (_schema({**_runs_columns(), "epoch": _int(), "rule": _str(),
                              "ratio": _num(), "decrease_rule": _num(),
                              "decrease_sgd": _num(), "loss_before": _num()},
                             ("dataset", *RUN, "epoch", "rule")), True),
    "measurements": (_schema({**_runs_columns(), "measurement": _str(),
                              "h_L_norm": _num(), "deep_cosine": _num(), "n": _int()},
                             ("dataset", *RUN, "measurement")), True),
    "reproduction": (_schema({"method": _str(), "lam": _num(False), "metric": _str(),
                              "layer": _num(), "seed": _num(), "paper": _num(),
                              "paper_range": pa.Column(nullable=True),
                              "ours_mean": _num(), "ours_std": _num(), "ours_n": _int(),
                              "tolerance_kind": _str(True), "tolerance": _num(),
                              "gap": _num(), "within_tolerance": _bool(True),
                              "gap_sd": _num(), "tolerance_below_sd": _bool(),
                              "verified": _bool(), "gap_seed": _str(),
                              "gap_without_seed": _str(), "source": _str()},
                             ("method", "lam", "metric", "layer", "seed")), False),
    # a paper number by its keys (reproduction's) and the published number as data; the
    # pages and figures label it (render.run_label, metric_label, paper_text)
    "variants_gap": (_schema({"method": _str(), "lam": _num(False), "seed": _int(True),
                              "metric": _str(), "layer": _int(True), "paper": _num(),
                              "paper_std": _num(), "paper_range": pa.Column(nullable=True),
                              "recipe": _str(),
                              "ours_mean": _num(), "ours_n": _int(), "gap": _num(),
                              "inherited": _bool(), "kind": _str(), "verified": _bool(),
                              "gap_sd": _num(), "tolerance_below_sd": _bool(),
                              "gap_seed": _str(), "gap_without_seed": _str(),
                              "base_recipe": _str(), "measurement": _str(),
                              "remeasured": _bool()},
                             ("method", "lam", "seed", "metric", "layer", "recipe")), False),
    "ep_cosines": (_schema({"corpus": _str(), "precision": _str(), "seed": _int(),
                            "batch": _int(), "free_steps": _int(), "group": _str(),
                            "cosine": _num(), "residual": _num(), "t_best": _num(),
                            "settled": _bool(), "max_residual": _num()},
                           ("corpus", "precision", "seed", "batch", "free_steps", "group")),
                   False),
    "ep_increments": (_schema({"corpus": _str(), "precision": _str(), "seed": _int(),
                               "batch": _int(), "free_steps": _int()}, None), False),
    "ep_pretrain": (_schema({"corpus": _str(), "precision": _str(), "seed": _int(),
                             "step": _int(), "loss": _num()},
                            ("corpus", "precision", "seed", "step")), False),
    "ep_timings": (_schema({"corpus": _str(), "precision": _str(), "seed": _int(),
                            "phase": _str(), "seconds": _num()}, None), False),
    # the EP question (analysis.ep_question): per probe batch, per EP cosine, per seed
    "ep_fp_batches": (_schema({"seed": _int(), "batch": _int(), "converged": _bool(),
                               "steps": _int(), "residual": _num(),
                               "leading_real": _num(), "leading_imag": _num(),
                               "adjoint_residual": _num()}, ("seed", "batch")), False),
    "ep_fp_cosines": (_schema({"seed": _int(), "batch": _int(), "free_steps": _str(),
                               "nudged_steps_max": _int(), "r": _num(False),
                               "residual": _num(), "t_best": _num(), "reference": _str(),
                               "group": _str(), "cosine": _num()},
                              ("seed", "batch", "free_steps", "nudged_steps_max", "r",
                               "reference", "group")), False),
    # what made each result the claims read (the order check): git_dirty unknown as <NA>
    "claims_provenance": (_schema({"kind": _str(), "seed": _int(), "git_commit": _str(True),
                                   "git_dirty": pa.Column("boolean", nullable=True,
                                                          coerce=True),
                                   "library_sha256": _str(True), "finished_at": _str(True),
                                   "path": _str()}, ("path",)), False),
    "ep_by_seed": (_schema({"corpus": _str(), "precision": _str(), "seed": _int(),
                            "free_steps": _int(), "group": _str(), "cosine": _num(),
                            "residual": _num(), "t_best": _num(), "settled": _bool(),
                            "residual_max": _num(), "max_residual": _num(),
                            "t_best_after": _num()},
                           ("corpus", "precision", "seed", "free_steps", "group")), False),
}
