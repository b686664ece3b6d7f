"""The step ep_question2 (issue #55; the plan config/claims_ep2.yaml, pre-registered):
one fresh seed of EP's second question, and only what its verdict needs.

The stack is pretrained as the first question's (probe.pretrained, the same seeded
pretraining and settings). On each probe batch: the free phase run to convergence in
float32 and J's leading eigenvalues at its end state (a stable fixed point, as the first
question reads it); where it converged, the state refined in float64 and the implicit
gradient solved there (precision.reference), then EP's estimate in each of the plan's
cells — the judged one first, then those shown beside it — compared per parameter group
with that gradient. A stack whose pretraining ends in a state that is not finite is an
outcome (``diverged``), not a crash. Resumable after pretraining and after every batch;
one result file per seed, the same bytes for a rerun on the CPU (wall times go to the
log).
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import jsonschema
import torch

from credit_assign.ep_stack import precision as prec
from credit_assign.ep_stack.corpus import CharCorpus
from credit_assign.ep_stack.implicit import leading_eigenvalues, relax_to_convergence
from credit_assign.ep_stack.probe import pretrained, probe_batches
from credit_assign.infra.device import provenance
from credit_assign.infra.files import atomic_write_text, dumps, sanitize
from credit_assign.infra.hardware import set_threads
from credit_assign.infra.provenance import code_version, library_digest, run_record
from credit_assign.infra.resume import ResumeState
from credit_assign.studies.ep_question2.results import CELL, SCHEMA

log = logging.getLogger(__name__)


def cells(estimator: dict) -> list[dict]:
    """The plan's cells in the order they run: the judged one, then those beside it."""
    keys = CELL["required"]
    return [{k: c[k] for k in keys} for c in [estimator["judged"], *estimator["beside"]]]


def batch(stack, idx, y, s: dict, estimator: dict) -> dict:
    """One probe batch (module docstring): plain data."""
    fp = s["fixed_point"]
    x = stack.embed(idx).detach()
    relaxed = relax_to_convergence(stack, x, s["eps"], fp["tol"], fp["cap"],
                                   fp["check_every"])
    out: dict[str, Any] = {"free": {"converged": relaxed.converged, "steps": relaxed.steps,
                                    "residual": relaxed.residual}, "eigenvalues": []}
    if not math.isfinite(relaxed.residual):  # no spectrum of a state that is not finite
        return out
    vals = leading_eigenvalues(stack, relaxed.z, x, k=fp["eigenvalues"])
    out["eigenvalues"] = [{"real": float(v.real), "imag": float(v.imag)} for v in vals]
    if not relaxed.converged:  # no fixed point to estimate the gradient of: named
        return out
    ref = prec.reference(stack, idx, y, relaxed.z, s["eps"], **estimator["reference"])
    out["reference"] = {"residual": ref.residual, "converged": ref.converged,
                        "steps": ref.steps, "adjoint_residual": ref.adjoint_residual,
                        "adjoint_iterations": ref.adjoint_iterations}
    out["estimates"] = []
    for c in cells(estimator):
        st, z = (stack, relaxed.z) if c["precision"] == "float32" else (ref.stack, ref.z)
        a = prec.response(st, z, st.embed(idx).detach(), y, c["r"], c["nudged_steps_max"],
                          s["eps"])
        g = {k: v.double() for k, v in prec.grads_from(st, idx, z, a).items()}
        out["estimates"].append({**c, "cosine": prec.cosines(ref.stack, g, ref.grads),
                                 "nudge_ulps_block0": prec.nudge_in_ulps(a, z, c["r"])})
    return out


def ep_question2(corpus_path, corpus_name: str, seed: int, settings: dict, estimator: dict,
                 out, resume=None, threads: int | None = None) -> dict:
    """Step ep_question2: one seed → its result file (its wall times in the log)."""
    t0, code = time.perf_counter(), code_version()
    if threads:
        set_threads(threads)
    corpus = CharCorpus.load(corpus_path)
    s, n = settings, settings["fixed_point"]["batches"]
    state_of = ResumeState(resume, {"settings": s, "estimator": estimator, "seed": seed,
                                    "code": library_digest()}, log)
    stack, state, save = pretrained(corpus, s, seed, state_of, progress=False)
    diverged = None
    if not math.isfinite(state["val_loss"]):
        diverged = (f"the pretrained stack's validation loss is {state['val_loss']} (the "
                    "job log's pretraining losses say when it left the finite numbers)")
        log.warning("%s seed %d: %s", corpus_name, seed, diverged)
    else:
        batches = probe_batches(corpus, s, state, n)
        for b in range(len(state["probes"]), n):
            t1 = time.perf_counter()
            body = batch(stack, *batches[b], s, estimator)
            state["probes"].append({"batch": b, **body})
            lead = body["eigenvalues"][0]["real"] if body["eigenvalues"] else math.nan
            log.info("batch %d/%d: free phase converged %s (%d steps), leading Re λ %.3g, "
                     "%.0f s", b + 1, n, body["free"]["converged"], body["free"]["steps"],
                     lead, time.perf_counter() - t1)
            save()
    result = {"kind": "ep_question2", "corpus": corpus_name, "seed": seed, "settings": s,
              "estimator": estimator, "pretrain": {"val_loss": state["val_loss"],
                                                   "final_loss": state["losses"][-1]},
              "batches": state["probes"], "diverged": diverged,
              "provenance": provenance(torch.device("cpu"), threads, code)}
    log.info("done in %.0f s (%s)", time.perf_counter() - t0, run_record()["host"])
    result, flags = sanitize(result)
    result["nonfinite"] = flags
    jsonschema.validate(result, SCHEMA)
    atomic_write_text(out, dumps(result))
    state_of.done()
    return result
