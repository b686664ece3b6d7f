"""The step ep_estimator (issue #55, the precision study; exploratory): a seed's stack
remade by the EP question's seeded pretraining, each probe batch's free phase run to
convergence in float32 (as the EP question's judged cell), then EP's estimate there at
every nudge r of the study's grid, with the nudged phases in float32 and in float64,
against the implicit gradient at the state refined in float64 (ep_stack.precision).

Richardson's stencil needs a(r) and a(2r): the grid doubles, so it is (4 g(r) − g(2r))/3
of the centred estimates already made (EP's gradient is linear in a). One result file
per seed (the same bytes for a rerun on the CPU: wall times go to the log), resumable
after pretraining and after every batch; its own schema (SCHEMA).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import jsonschema
import torch

from credit_assign.ep_stack import precision as prec
from credit_assign.ep_stack.corpus import CharCorpus
from credit_assign.ep_stack.implicit import relax_to_convergence
from credit_assign.ep_stack.probe import pretrained, probe_batches
from credit_assign.infra.device import provenance
from credit_assign.infra.files import atomic_write_text, dumps, sanitize
from credit_assign.infra.hardware import set_threads
from credit_assign.infra.provenance import code_version, library_digest, run_record
from credit_assign.infra.resume import ResumeState

log = logging.getLogger(__name__)

_COS = {"type": "object", "additionalProperties": {"type": ["number", "null"]}}
SCHEMA = {
    "type": "object",
    "required": ["kind", "corpus", "seed", "settings", "study", "pretrain", "batches",
                 "provenance", "nonfinite"],
    "properties": {
        "kind": {"const": "ep_estimator"},
        "seed": {"type": "integer"},
        "batches": {"type": "array", "items": {
            "type": "object", "required": ["batch", "free"],
            "properties": {
                "free": {"type": "object", "required": ["converged", "steps", "residual"]},
                "reference": {"type": "object", "required": [
                    "residual", "converged", "steps", "adjoint_residual"]},
                "estimates": {"type": "array", "items": {
                    "type": "object",
                    "required": ["precision", "stencil", "r", "cosine", "nudge_ulps_block0"],
                    "properties": {"precision": {"enum": ["float32", "float64"]},
                                   "stencil": {"enum": sorted(prec.STENCILS)},
                                   "cosine": _COS}}}}}},
    },
}


def batch_estimates(stack, idx, y, s: dict, study: dict) -> dict:
    """One probe batch: the float32 free phase to convergence; where it converges, the
    float64 reference and every (precision, stencil, r) estimate."""
    fp = s["fixed_point"]
    x = stack.embed(idx).detach()
    relaxed = relax_to_convergence(stack, x, s["eps"], fp["tol"], fp["cap"],
                                   fp["check_every"])
    out: dict[str, Any] = {"free": {"converged": relaxed.converged, "steps": relaxed.steps,
                                    "residual": relaxed.residual}}
    if not relaxed.converged:  # no fixed point to estimate the gradient of: named
        return out
    ref = prec.reference(stack, idx, y, relaxed.z, s["eps"], **study["reference"])
    out["reference"] = {"residual": ref.residual, "converged": ref.converged,
                        "steps": ref.steps, "adjoint_residual": ref.adjoint_residual,
                        "adjoint_iterations": ref.adjoint_iterations}
    out["estimates"] = []
    rs = sorted(study["r"])
    for precision in study["precisions"]:
        st, z = (stack, relaxed.z) if precision == "float32" else (ref.stack, ref.z)
        xs = st.embed(idx).detach()
        grads, ulps = {}, {}
        for r in rs:
            a = prec.response(st, z, xs, y, r, study["nudged_steps_max"], s["eps"])
            grads[r] = {k: v.double() for k, v in prec.grads_from(st, idx, z, a).items()}
            ulps[r] = prec.nudge_in_ulps(a, z, r)
        for r in rs:
            cells = [("central", grads[r])]
            if "richardson" in study["stencils"] and 2 * r in grads:
                cells.append(("richardson", {k: (4 * grads[r][k] - grads[2 * r][k]) / 3
                                             for k in grads[r]}))
            for stencil, g in cells:
                out["estimates"].append({
                    "precision": precision, "stencil": stencil, "r": r,
                    "cosine": prec.cosines(ref.stack, g, ref.grads),
                    "nudge_ulps_block0": ulps[r]})
    return out


def ep_estimator(corpus_path, corpus_name: str, seed: int, settings: dict, study: dict,
                 out, resume=None, threads: int | None = None) -> dict:
    """Step ep_estimator: one seed → its result file (and its wall times inside it)."""
    t0, code = time.perf_counter(), code_version()
    if threads:
        set_threads(threads)
    corpus = CharCorpus.load(corpus_path)
    s, n = settings, settings["fixed_point"]["batches"]
    state_of = ResumeState(resume, {"settings": s, "study": study, "seed": seed,
                                    "code": library_digest()}, log)
    stack, state, save = pretrained(corpus, s, seed, state_of, progress=False)
    batches = probe_batches(corpus, s, state, n)
    for b in range(len(state["probes"]), n):
        t1 = time.perf_counter()
        body = batch_estimates(stack, *batches[b], s, study)
        state["probes"].append({"batch": b, **body})
        log.info("batch %d/%d: free phase converged %s (%d steps), %.0f s", b + 1, n,
                 body["free"]["converged"], body["free"]["steps"], time.perf_counter() - t1)
        save()
    result = {"kind": "ep_estimator", "corpus": corpus_name, "seed": seed, "settings": s,
              "study": study, "pretrain": {"val_loss": state["val_loss"],
                                           "final_loss": state["losses"][-1]},
              "batches": state["probes"],
              "provenance": provenance(torch.device("cpu"), threads, code)}
    # deterministic on the CPU for a config: the wall time and host go to the log only
    log.info("done in %.0f s (%s)", time.perf_counter() - t0, run_record()["host"])
    result, flags = sanitize(result)
    result["nonfinite"] = flags
    jsonschema.validate(result, SCHEMA)
    atomic_write_text(out, dumps(result))
    state_of.done()
    return result


def read(path: str | Path) -> dict:
    """A result of this step, checked against SCHEMA (a wrong file is named)."""
    import json

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    try:
        jsonschema.validate(data, SCHEMA)
    except jsonschema.ValidationError as err:
        raise ValueError(f"{path}: not an ep_estimator result ({err.message})") from None
    return data
