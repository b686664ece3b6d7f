"""Measurement variants on a trained model: the same quantity measured the ways a paper
might have measured it, with no retraining.

A published number can differ from ours because it was measured differently. For ‖h_L‖
and the deep cosine, on the saved final model:

* ``stratified`` — what the pipeline reports: per-sample median ‖h_L‖ and the mean
  per-sample cosine on the fixed, class-stratified diagnostic set (``diagnostics``);
* ``first_n`` — the same statistics on the first ``n_samples`` test images in the
  source's order (class-sorted for an image folder, mixed for the official archive);
* ``one_batch`` — ‖h_L‖ as the Frobenius norm of one ``batch`` × d matrix (the first
  ``batch`` test images), as a training script printing ``h.norm()`` would report it,
  and the deep cosine on that batch.
"""

from __future__ import annotations

from typing import Any

import torch

from credit_assign import data as datasets
from credit_assign.diagnostics import alignment
from credit_assign.results import read_result
from credit_assign.runtime import atomic_write_text


def _normalised(data: dict, idx: torch.Tensor, device) -> tuple[torch.Tensor, torch.Tensor]:
    x = datasets.Normalizer(data["info"], device)(data["test_x"][idx].to(device))
    return x, data["test_y"][idx].to(device)


@torch.no_grad()
def _h_last(model, x) -> torch.Tensor:
    return model(x).h[-1]


def measurements(model, rule, data: dict, n_samples: int, seed: int, batch: int,
                 device) -> dict[str, dict[str, Any]]:
    """{variant: {"h_L_norm": value, "h_L_norm_statistic": how, "deep_cosine": value,
    "n": images}} for the three variants of the module docstring."""
    model.eval()
    n = min(n_samples, len(data["test_y"]))
    sets = {
        "stratified": datasets.diagnostic_indices(data["test_y"], n_samples, seed),
        "first_n": torch.arange(n),
        "one_batch": torch.arange(min(batch, len(data["test_y"]))),
    }
    out = {}
    for name, idx in sets.items():
        x, y = _normalised(data, idx, device)
        report = alignment(rule, model, x, y)
        h = _h_last(model, x).double()
        if name == "one_batch":
            norm, how = torch.linalg.matrix_norm(h).item(), "Frobenius norm of the batch"
        else:
            norm = torch.linalg.vector_norm(h, dim=1).median().item()
            how = "median over samples"
        out[name] = {"h_L_norm": norm, "h_L_norm_statistic": how,
                     "deep_cosine": report["deep_cosine"], "cosine": report["cosine"],
                     "n": len(idx)}
    return out


def table(results: list[dict]):
    """One row per (run, variant): the tidy table the reproduction compares against."""
    import pandas as pd

    rows = []
    for r in results:
        for variant, m in r["variants"].items():
            rows.append({**r["run"], "variant": variant, "h_L_norm": m["h_L_norm"],
                         "h_L_norm_statistic": m["h_L_norm_statistic"],
                         "deep_cosine": m["deep_cosine"], "n": m["n"]})
    return pd.DataFrame(rows, columns=["dataset", "method", "lam", "seed", "variant",
                                       "h_L_norm", "h_L_norm_statistic", "deep_cosine", "n"])


def write_table(result_paths, out) -> None:
    frame = table([read_result(p, "measure") for p in result_paths])
    atomic_write_text(out, frame.to_csv(index=False, float_format="%.6g"))
