"""The fresh-B null job: is a trained DFA model's deep cosine above chance?"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from credit_assign import data as datasets
from credit_assign.diagnostics import fresh_b_null
from credit_assign.results import write_result
from credit_assign.runs import load_trained
from credit_assign.runtime import provenance, set_threads

log = logging.getLogger("credit_assign.nulls")


def fresh_b_null_job(model_path: str | Path, data_path: str | Path, draws: int,
                     out: str | Path, device: str = "auto", threads: int | None = None) -> dict:
    """Recompute the deep cosine of a trained checkpoint with ``draws`` fresh feedback sets."""
    t0 = time.perf_counter()
    if threads:
        set_threads(threads)
    run, model, rule, dev = load_trained(model_path, device)
    if run["method"] not in ("dfa", "fa"):
        raise ValueError(
            f"{model_path}: the fresh-B null needs a dfa/fa model, got {run['method']}"
        )
    data = datasets.load(data_path)
    x, y = datasets.diagnostic_batch(data, run["diagnostics"]["n_samples"],
                                     run["diagnostics"]["seed"], dev)
    report = fresh_b_null(rule, model, x, y, draws, run["seed"], run["method"])
    log.info("%s λ=%g seed=%d: trained-B deep cosine %+.4f, fresh-B %+.4f ± %.4f (%d draws)",
             run["method"], run["lam"], run["seed"], report["trained"]["deep_cosine"],
             report["fresh"]["deep_cosine_mean"], report["fresh"]["deep_cosine_std"], draws)
    result = {
        "schema_version": 1, "kind": "fresh_b_null",
        "run": {k: run[k] for k in ("dataset", "method", "lam", "seed")},
        "config": run, "draws": draws, **report,
        "timings": {"total_s": time.perf_counter() - t0},
        "provenance": provenance(dev, threads),
    }
    return write_result(result, "fresh_b_null", out)
