"""Result files → tidy tables (pandas). Every file is schema-validated on the way in."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from credit_assign.analysis import tables as table_io
from credit_assign.infra import paths
from credit_assign.infra.results import read_result
from credit_assign.planning import matrix

RUN_KEYS = ("dataset", "method", "lam", "seed")
EPOCH_SCALARS = ("lr", "train_loss", "test_acc", "test_loss", "h_L_norm_median", "deep_cosine")
LAYER_KEYS = ("cosine", "h_norm_median", "grad_norm_median", "signal_norm_median")


def same_lam(values, lam: float) -> np.ndarray:
    """The one equality of λ (planning.matrix.same_lam), over a table's column: matched
    to its spelling's precision (a table written with six digits still finds 1/3) and
    never absolutely: λ = 1e-9 is not λ = 0."""
    return np.isclose(np.asarray(values, dtype=float), float(lam), rtol=matrix.LAM_RTOL,
                      atol=0)


def select_runs(df: pd.DataFrame, method: str, lam: float, seed: int | None = None
                ) -> pd.DataFrame:
    """The rows of a summary table for one (method, λ) (same_lam), and one seed if given."""
    out = df[(df.method == method) & same_lam(df.lam, lam)]
    return out if seed is None else out[out.seed == seed]


def tables(train_paths: Iterable[str | Path], null_paths: Iterable[str | Path],
           timing_paths: Iterable[str | Path] | None = None) -> dict:
    """Four tidy DataFrames: ``runs`` (final values), ``epochs``, ``layers``, ``nulls``.

    ``timing_paths``: each training result's wall-clock record, in the same order (the
    workflow passes them; by default the timings record beside each result, paths.TIMINGS).
    """
    train_paths = list(train_paths)
    if timing_paths is None:
        timing_paths = [paths.beside(p, paths.TIMINGS) for p in train_paths]
    timing_paths = list(timing_paths)
    if len(timing_paths) != len(train_paths):
        raise ValueError(f"{len(train_paths)} training results but {len(timing_paths)} "
                         "timing records")
    runs, epochs, layers, nulls = [], [], [], []
    for path, timing_path in zip(train_paths, timing_paths, strict=True):
        r = read_result(path, "train")
        t = read_result(timing_path, "train_timings")
        key = r["run"]
        h, fin = r["history"], r["final"]
        runs.append({
            **key, "epochs": r["config"]["training"]["epochs"], "final_epoch": fin["epoch"],
            **{k: fin[k] for k in ("test_acc", "train_loss", "test_loss", "h_L_norm_median",
                                    "deep_cosine")},
            "first_nonfinite_epoch": r["divergence"]["first_nonfinite_epoch"],
            "stopped_early": r["divergence"]["stopped_early"],
            "n_nonfinite": len(r["nonfinite"]),
            "total_s": t["total_s"], "device": r["provenance"]["device"]["type"],
            "git_commit": r["provenance"]["code"]["git_commit"], "path": str(path),
            "finished_at": t.get("record", {}).get("finished_at"),
        })
        for i, epoch in enumerate(h["epoch"]):
            epochs.append({**key, "epoch": epoch, **{k: h[k][i] for k in EPOCH_SCALARS},
                           "train_s": t["epoch_train_s"][i],
                           "diagnostics_s": t["epoch_diagnostics_s"][i]})
            for layer in range(len(h["cosine"][i])):
                branch = h["branch_norm_median"][i]
                layers.append({**key, "epoch": epoch, "layer": layer,
                               **{k: h[k][i][layer] for k in LAYER_KEYS},
                               "branch_norm_median": branch[layer - 1] if layer else None})
    for path in null_paths:
        r = read_result(path, "fresh_b_null")
        key = r["run"]
        nulls.append({**key, "feedback": "trained", "draw": None,
                      "deep_cosine": r["trained"]["deep_cosine"]})
        nulls += [{**key, "feedback": "fresh", "draw": k, "deep_cosine": v}
                  for k, v in enumerate(r["fresh"]["deep_cosine"])]
    sort = list(RUN_KEYS)
    return {
        "runs": pd.DataFrame(runs).sort_values(sort, ignore_index=True),
        "epochs": pd.DataFrame(epochs).sort_values([*sort, "epoch"], ignore_index=True),
        "layers": pd.DataFrame(layers).sort_values([*sort, "epoch", "layer"], ignore_index=True),
        "nulls": pd.DataFrame(nulls, columns=[*RUN_KEYS, "feedback", "draw", "deep_cosine"])
        .astype({"draw": "Int64"}),
    }


PROVENANCE_COLUMNS = ["kind", "seed", "git_commit", "git_dirty", "library_sha256",
                      "finished_at", "path"]


def provenance_table(results: dict[str, Iterable[str | Path]],
                     finished: dict[str, Iterable[str | Path]]) -> pd.DataFrame:
    """What made each result: one row per result file of each kind (``results``: kind →
    paths: train, fresh_b_null, ep_stack), its code (commit, whether the tree had
    uncommitted changes, the library's digest) and, where a record beside it says so
    (``finished``: kind → the timing records, in the same order), when it finished."""
    rows = []
    for kind, result_paths in results.items():
        result_paths = list(result_paths)
        stamps = list(finished.get(kind, [None] * len(result_paths)))
        for path, stamp_path in zip(result_paths, stamps, strict=True):
            r = read_result(path, kind)
            code = r["provenance"]["code"]
            when = None
            if stamp_path is not None:
                when = read_result(stamp_path, f"{kind}_timings" if kind != "train"
                                   else "train_timings").get("record", {}).get("finished_at")
            seed = r["run"]["seed"] if "run" in r else r.get("seed")
            rows.append({"kind": kind, "seed": seed, "git_commit": code.get("git_commit"),
                         "git_dirty": code.get("git_dirty"),
                         "library_sha256": code.get("library_sha256"),
                         "finished_at": when, "path": str(path)})
    return pd.DataFrame(rows, columns=PROVENANCE_COLUMNS)


def null_layer_table(null_paths: Iterable[str | Path]) -> pd.DataFrame:
    """The fresh-B null per layer: one row per (run, feedback, draw, layer), ``layer``
    0 … L or ``deep`` (the mean of l1 … lL), the cosine with the trained-with feedback
    (``trained``, no draw) and with each fresh draw (``fresh``)."""
    rows = []
    for path in null_paths:
        r = read_result(path, "fresh_b_null")
        key = r["run"]
        sets = [("trained", None, r["trained"]["cosine"], r["trained"]["deep_cosine"])]
        sets += [("fresh", k, cos, deep) for k, (cos, deep) in
                 enumerate(zip(r["fresh"]["cosine"], r["fresh"]["deep_cosine"], strict=True))]
        for feedback, draw, cosines, deep in sets:
            layers = [(str(layer), c) for layer, c in enumerate(cosines)] + [("deep", deep)]
            rows += [{**key, "feedback": feedback, "draw": draw, "layer": layer, "cosine": c}
                     for layer, c in layers]
    return pd.DataFrame(rows, columns=[*RUN_KEYS, "feedback", "draw", "layer", "cosine"]
                        ).astype({"draw": "Int64"})


def write_tables(train_paths, null_paths, outputs: dict[str, str], timing_paths=None) -> dict:
    """Write each table to ``outputs[name]`` (atomically, with its record: the sha256 of
    the table and of every result it was made from)."""
    train_paths, null_paths = list(train_paths), list(null_paths)
    timing_paths = list(timing_paths) if timing_paths is not None else None
    frames = tables(train_paths, null_paths, timing_paths)
    inputs = train_paths + (timing_paths or []) + null_paths
    for name, frame in frames.items():
        table_io.write(frame, outputs[name], name, inputs)
    return frames


def probe_tables(probe_paths: Iterable[str | Path]) -> dict:
    """``alignment``: one row per (run, epoch, probed rule, layer); ``ratios``: one row
    per (run, epoch, rule) with the single-step loss-decrease ratio."""
    alignment, ratios = [], []
    for path in probe_paths:
        r = read_result(path, "probes")
        key = r["run"]
        for rep in r["epochs"]:
            for rule, res in rep["rules"].items():
                for layer, cos in enumerate(res["cosine"]):
                    alignment.append({**key, "epoch": rep["epoch"], "rule": rule,
                                      "trained_with": res["trained_with"], "layer": layer,
                                      "cosine": cos,
                                      "signal_norm_median": res["signal_norm_median"][layer],
                                      "grad_norm_median": rep["grad_norm_median"][layer]})
            for rule, res in rep["loss_decrease"].items():
                ratios.append({**key, "epoch": rep["epoch"], "rule": rule, **res})
    cols_a = [*RUN_KEYS, "epoch", "rule", "trained_with", "layer", "cosine",
              "signal_norm_median", "grad_norm_median"]
    cols_r = [*RUN_KEYS, "epoch", "rule", "ratio", "decrease_rule", "decrease_sgd", "loss_before"]
    return {"alignment": pd.DataFrame(alignment, columns=cols_a),
            "ratios": pd.DataFrame(ratios, columns=cols_r)}


def write_probe_tables(probe_paths, outputs: dict[str, str]) -> dict:
    probe_paths = list(probe_paths)
    frames = probe_tables(probe_paths)
    for name, frame in frames.items():
        table_io.write(frame, outputs[name], f"probe_{name}", probe_paths)
    return frames


# ---- the measurement variants (credit_assign.science.measurement's results) ----------------------
MEASUREMENT_COLUMNS = ["dataset", "method", "lam", "seed", "measurement", "set", "set_n",
                 "set_seed", "set_classes", "cosine_kind", "batch_size", "h_L_norm",
                 "h_L_norm_statistic", "deep_cosine", "n"]


def measurement_table(results: list[dict]) -> pd.DataFrame:
    """One row per (run, measurement), with the per-layer cosines as cosine_l0 … cosine_lL:
    the tidy table the reproduction and the gap map compare against (one recipe's: its
    summary folder names the recipe, ``dataset`` the data)."""
    rows, depth = [], 0
    for r in results:
        for name, m in r["variants"].items():
            s = r["sets"][m["set"]]
            row = {**r["run"], "measurement": name, "set": m["set"], "set_n": s["n"],
                   "set_seed": s["seed"], "set_classes": s["classes"],
                   "cosine_kind": m["cosine_kind"], "batch_size": m["batch_size"],
                   "h_L_norm": m["h_L_norm"], "h_L_norm_statistic": m["h_L_norm_statistic"],
                   "deep_cosine": m["deep_cosine"], "n": m["n"]}
            for layer, c in enumerate(m["cosine"]):
                row[f"cosine_l{layer}"] = c
            depth = max(depth, len(m["cosine"]))
            rows.append(row)
    return pd.DataFrame(rows, columns=MEASUREMENT_COLUMNS + [f"cosine_l{i}" for i in range(depth)])


def write_measurement_table(result_paths, out) -> None:
    """Step aggregate_measurements: every measure result → summary/measurements.csv."""
    result_paths = list(result_paths)
    frame = measurement_table([read_result(p, "measure") for p in result_paths])
    table_io.write(frame, out, "measurements", result_paths, float_format="%.6g")

