"""The EP stack probe as a pipeline job (docs/method.md): pretrain a spring-coupled stack by
BPTT to a realistic operating point, then compare EP's gradient with BPTT's on a few
batches, per parameter group.

Writes two files: the result (deterministic for a config on the CPU: the same
settings give the same bytes) and, beside it, the wall-clock record (seconds per
phase, peak resident memory, host). A killed job resumes from ``resume`` (saved
every ``resume_every`` pretraining steps and after every probe batch).
"""

from __future__ import annotations

import logging
import resource
import time
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from credit_assign.ep_stack import dynamics as eps
from credit_assign.ep_stack.corpus import CharCorpus
from credit_assign.infra.provenance import library_digest
from credit_assign.infra.resume import ResumeState

log = logging.getLogger(__name__)


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_stack(vocab: int, settings: dict, seed: int, internal: str = "transformer"):
    m = settings["model"]
    gen = torch.Generator().manual_seed(seed)
    return eps.SpringStack(vocab, m["blocks"], m["width"], m["heads"], m["context"],
                           m["gamma"], m["leak"], internal=internal, generator=gen)


def pretrain_step(stack, opt, idx, y, p: dict, step) -> float:
    """One AdamW step on the BPTT gradient through ``p['relax_steps']`` relaxation steps
    (``step``: the relaxation step, :func:`ep_stack.make_step`)."""
    params = list(stack.parameters())
    grads, loss = eps.bptt_grads(stack, idx, y, p["relax_steps"], None, params,
                                 p["checkpoint_every"], return_loss=True, step=step)
    for q, g in zip(params, grads, strict=True):
        q.grad = g
    torch.nn.utils.clip_grad_norm_(params, p["grad_clip"])
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.item()


def probe_batch(stack, idx, y, s: dict) -> tuple[dict, dict]:
    """BPTT reference and EP at every free-phase length on one batch: (result, seconds)."""
    pr = s["probe"]
    t0 = time.perf_counter()
    params = stack.field_params()
    step = eps.make_step(stack, s["eps"], "float32", pr["compile"])
    ref, ref_loss = eps.bptt_grads(stack, idx, y, pr["reference_steps"], s["eps"], params,
                                   pr["checkpoint_every"], return_loss=True, step=step)
    ref = eps.as_dict(params, ref)
    seconds: dict[str, Any] = {"reference": time.perf_counter() - t0, "ep": []}
    out: dict[str, Any] = {"reference_loss": ref_loss.item(), "ep": []}
    for free_steps in pr["free_steps"]:
        t1 = time.perf_counter()
        grads, info = eps.ep_grads(stack, idx, y, free_steps, s["eps"], pr["r"],
                                   pr["nudged_steps_max"], pr["check_every"], pr["exit_mult"],
                                   aep=pr["aep"], compile=pr["compile"])
        cosines = eps.group_cosines(stack, eps.as_dict(params, grads), ref)
        out["ep"].append({"free_steps": free_steps, "residual": info["residual"],
                          "t_best": info["t_best"], "cosine": cosines,
                          "increments": [{"t": t, "increment": inc}
                                         for t, inc in info["increments"]]})
        seconds["ep"].append({"free_steps": free_steps, **info["seconds"],
                              "total": time.perf_counter() - t1})
        log.info("  T1=%d: residual %.1e, t_best %d, cosines %s", free_steps,
                 info["residual"], info["t_best"],
                 " ".join(f"{k} {v:.3f}" if v is not None else f"{k} -"
                          for k, v in cosines.items()))
    return out, seconds


def pretrained(corpus: CharCorpus, settings: dict, seed: int, resume: ResumeState,
               progress: bool = True):
    """The stack pretrained by BPTT as the probe's (resumable through ``resume``), with
    the job's state (``step``, ``losses``, ``val_loss``, ``probe_gen``, ``probes``,
    ``seconds``) and a function that saves both to ``resume``."""
    s, p = settings, settings["pretrain"]
    torch.manual_seed(seed)
    stack = build_stack(len(corpus.vocab), s, seed)
    opt = torch.optim.AdamW(stack.parameters(), lr=p["lr"], weight_decay=p["weight_decay"])
    gen = torch.Generator().manual_seed(seed + 1)
    state: dict[str, Any] = {"step": 0, "losses": [], "probes": [], "seconds": {
        "pretrain": 0.0, "probes": []}}
    saved = resume.load()
    if saved is not None:
        stack.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        gen.set_state(saved["gen"])
        state = saved["state"]
        log.info("resumed from %s at pretraining step %d, %d probe batches done", resume.path,
                 state["step"], len(state["probes"]))

    def save():
        resume.save({"model": stack.state_dict(), "opt": opt.state_dict(),
                     "gen": gen.get_state(), "state": state})

    step = eps.make_step(stack, s["eps"], p["precision"], p["compile"])
    bar = tqdm(total=p["steps"], initial=state["step"], desc="pretrain (BPTT)",
               disable=not progress, mininterval=30)
    while state["step"] < p["steps"]:
        t0 = time.perf_counter()
        idx, y = corpus.get_batch("train", s["batch_size"], s["model"]["context"], gen)
        state["losses"].append(pretrain_step(stack, opt, idx, y, p, step))
        state["step"] += 1
        state["seconds"]["pretrain"] += time.perf_counter() - t0
        bar.update()
        if state["step"] % s["resume_every"] == 0 or state["step"] == p["steps"]:
            log.info("pretrain step %d/%d: loss %.4f (%.1f s)", state["step"], p["steps"],
                     state["losses"][-1], state["seconds"]["pretrain"])
            save()
    bar.close()

    if "val_loss" not in state:
        with torch.no_grad():
            vidx, vy = corpus.get_batch("val", s["batch_size"], s["model"]["context"],
                                        torch.Generator().manual_seed(seed + 2))
            _, z, _ = eps.free_phase(stack, vidx, p["relax_steps"], s["eps"])
            state["val_loss"] = stack.loss(z, vy).item()
        # probe batches come from their own stream: resuming mid-probe draws the same ones
        state["probe_gen"] = torch.Generator().manual_seed(seed + 3).get_state()
    return stack, state, save


def probe_batches(corpus: CharCorpus, settings: dict, state: dict, n: int) -> list:
    """The ``n`` probe batches of a pretrained stack's state (the same on a resume)."""
    probe_gen = torch.Generator()
    probe_gen.set_state(state["probe_gen"])
    return [corpus.get_batch("train", settings["batch_size"], settings["model"]["context"],
                             probe_gen) for _ in range(n)]


def run_probe(corpus: CharCorpus, settings: dict, seed: int, resume: str | Path | None = None,
              progress: bool = True) -> tuple[dict, dict]:
    """Pretrain, then probe; returns (result body, timings). Resumable through ``resume``."""
    s, pr = settings, settings["probe"]
    resume = ResumeState(resume, {"settings": s, "seed": seed, "code": library_digest()}, log)
    stack, state, save = pretrained(corpus, s, seed, resume, progress)
    batches = probe_batches(corpus, s, state, pr["batches"])
    for b in range(len(state["probes"]), pr["batches"]):
        log.info("probe batch %d/%d", b + 1, pr["batches"])
        out, seconds = probe_batch(stack, *batches[b], s)
        state["probes"].append({"batch": b, **out})
        state["seconds"]["probes"].append({"batch": b, **seconds})
        save()

    body = {"pretrain": {"loss": state["losses"], "val_loss": state["val_loss"]},
            "probes": state["probes"]}
    return body, state["seconds"]


def run_fixed_point(corpus: CharCorpus, settings: dict, seed: int,
                    resume: str | Path | None = None, progress: bool = True
                    ) -> tuple[dict, dict]:
    """Pretrain as the probe, then EP against the fixed-point gradient and BPTT on each
    probe batch (ep_stack.implicit.fixed_point_batch); returns (result body, timings).
    Resumable through ``resume`` (after pretraining and after every batch)."""
    from credit_assign.ep_stack.implicit import fixed_point_batch

    s, n = settings, settings["fixed_point"]["batches"]
    resume = ResumeState(resume, {"settings": s, "seed": seed, "code": library_digest()}, log)
    stack, state, save = pretrained(corpus, s, seed, resume, progress)
    for b in range(len(state["probes"]), n):
        log.info("fixed-point batch %d/%d", b + 1, n)
        t0 = time.perf_counter()
        out = fixed_point_batch(stack, *probe_batches(corpus, s, state, n)[b], s)
        state["probes"].append({"batch": b, **out})
        state["seconds"]["probes"].append({"batch": b, "total": time.perf_counter() - t0})
        log.info("  converged %s after %d steps (residual %.1e), leading Re λ %.3g",
                 out["converged"], out["steps"], out["residual"],
                 out["eigenvalues"][0]["real"])
        save()
    body = {"pretrain": {"loss": state["losses"], "val_loss": state["val_loss"]},
            "batches": state["probes"]}
    return body, state["seconds"]
