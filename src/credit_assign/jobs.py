"""Every pipeline job's shell, written once: the step's threads, the wall clock,
provenance, the result wrapper (schema version, kind, non-finite flags) and the
validated, atomic write. The science modules compute and return; the functions here
run them as the jobs the workflow's steps call (``scripts/*.py``).
"""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from credit_assign.ep_stack.corpus import CharCorpus
from credit_assign.ep_stack.probe import peak_rss_mb, run_fixed_point, run_probe
from credit_assign.infra import data as datasets
from credit_assign.infra.checkpoints import atomic_torch_save, load_checkpoint
from credit_assign.infra.device import provenance, resolve_device
from credit_assign.infra.files import atomic_write_text, dumps, sanitize
from credit_assign.infra.hardware import set_threads
from credit_assign.infra.provenance import code_version, run_record
from credit_assign.infra.results import validate_result, write_result
from credit_assign.infra.resume import ResumeState
from credit_assign.science import inputs
from credit_assign.science.alignment_probes import report as probe_report
from credit_assign.science.assemble import assemble, load_trained, load_weights
from credit_assign.science.diagnostics import COSINE_EPS, fresh_b_null_cosines
from credit_assign.science.measurement import measurements
from credit_assign.science.primer_check import check_primer
from credit_assign.science.training import fit

log = logging.getLogger("credit_assign.jobs")


class Job:
    """One job's shell: ``Job(kind, out, threads)`` sets the threads and starts the
    clock; :meth:`finish` wraps the computed body and writes it."""

    def __init__(self, kind: str, out: str | Path, threads: int | None = None):
        self.kind, self.out, self.threads = kind, out, threads
        self.t0 = time.perf_counter()
        # the code this job runs is the code it imported: its commit and whether the tree
        # had changes not committed are read now, not when it finishes hours later (a
        # commit made meanwhile is not the code that ran)
        self.code = code_version()
        if threads:
            set_threads(threads)

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def finish(self, body: dict[str, Any], device=None, timings: bool = True,
               provenance_extra: dict | None = None, before_write=None) -> dict[str, Any]:
        """``{schema_version, kind, **body, timings?, provenance}``: non-finite numbers
        stored as null and flagged, validated against the result schema, written
        atomically. ``timings=False`` keeps wall times out (training: metrics.json is
        byte-reproducible, its times go to timings.json); ``before_write`` runs after
        validation and before the write (the files that must exist before it does)."""
        result = {"schema_version": 1, "kind": self.kind, **body}
        if timings:
            result["timings"] = {"total_s": self.elapsed()}
        result["provenance"] = {**provenance(device, self.threads, self.code),
                                **(provenance_extra or {})}
        return write_result(result, self.kind, self.out, before_write)

    @staticmethod
    def side_record(kind: str, record: dict[str, Any], out: str | Path,
                    flags: bool = False) -> dict[str, Any]:
        """A record beside the result (wall times, host): validated, written atomically;
        ``flags``: with the non-finite flags a result carries (write_result)."""
        record = {"schema_version": 1, "kind": kind, **record}
        if flags:
            return write_result(record, kind, out)
        record, _ = sanitize(record)
        validate_result(record, kind, source=str(out))
        atomic_write_text(out, dumps(record))
        return record


def _run_key(run: dict) -> dict:
    return {k: run[k] for k in ("dataset", "method", "lam", "seed")}


def ensure_data(cache: str | Path) -> None:
    """A data cache the record's manifest describes, where it is missing (a fresh clone:
    the record keeps manifests, not data), built first from where this job's config says
    the data are (``data.<name>.source``; the download where it says nothing), never from
    a path the manifest names: a manifest names its source by file name and sha256, and
    another machine's folders are no part of the record. The job's own read then checks
    the data against the manifest's digest, and a source holding other data is named
    there (infra.data.load, ep_stack.corpus.CharCorpus.load)."""
    import json

    from credit_assign.infra import paths
    from credit_assign.infra.snakejob import job_config

    cache = Path(cache)
    if cache.exists() or not paths.manifest(cache).exists():
        return
    want = json.loads(paths.manifest(cache).read_text())
    name = want.get("name")
    source = ((job_config().get("data") or {}).get(name) or {}).get("source") or None
    log.info("%s is missing: building it from %s (config data.%s.source)", cache,
             source or "the download", name)
    with datasets.cache_lock(cache):
        if cache.exists():  # another job built it meanwhile
            return
        if "sha256" in want:  # a corpus (ep_stack.corpus): its text's sha256
            from credit_assign.ep_stack.corpus import prepare_corpus

            got = prepare_corpus(name, source or "download", Path("data"), cache)["sha256"]
            expected = want["sha256"]
        else:
            got = datasets.prepare(name, source, cache.parent, cache)["digest"]
            expected = want.get("digest")
        if got != expected:
            cache.unlink(missing_ok=True)  # not the record's data: never read as if it were
            raise datasets.DataFormatError(
                f"{cache}, built from {source or 'the download'} (config "
                f"data.{name}.source), holds other data (sha256 {got[:12]}…) than "
                f"{paths.manifest(cache)} records (sha256 {str(expected)[:12]}…, from "
                f"{want.get('source', 'its source')}): point data.{name}.source at that "
                "source, or train on these data: snakemake --forcerun prepare_data")


# ---- the CIFAR family -------------------------------------------------------------------
def train(run: dict[str, Any], data_path: str | Path, metrics_out: str | Path,
          model_out: str | Path, resume_path: str | Path | None = None,
          threads: int | None = None, timings_out: str | Path | None = None,
          snapshot_epochs: tuple[int, ...] = (), snapshots_out: str | Path | None = None,
          ) -> dict[str, Any]:
    """Step train: one run → ``metrics_out`` (JSON: nothing in it differs between
    identical runs, also after a kill and a resume), ``model_out`` (weights and
    feedback), ``timings_out`` (wall times, host) and ``snapshots_out`` (the model after
    each epoch in ``snapshot_epochs``: what the alignment probes measure)."""
    job = Job("train", metrics_out, threads)
    device = resolve_device(run["training"]["device"])
    ensure_data(data_path)
    body, state, info = fit(run, data_path, device, resume_path, snapshot_epochs)
    timings = state.timings
    timings["total_s"] = job.elapsed()
    timings["epochs_this_process"] = len(timings["epoch_train_s"]) - (
        timings["resumed_from_epoch"] or 0)

    def model_files():
        atomic_torch_save({"run": run, "info": info, "model": state.model.state_dict(),
                           "rule": state.rule.state_dict()}, model_out)
        if snapshots_out:
            atomic_torch_save({"run": run, "info": info, "snapshots": state.snapshots},
                              snapshots_out)
        if timings_out:
            Job.side_record("train_timings", {"run": body["run"], **timings,
                                              "record": run_record()}, timings_out)

    result = job.finish(body, device, timings=False, before_write=model_files)
    ResumeState(resume_path, {}).done()
    return result


def fresh_b_null(model_path: str | Path, data_path: str | Path, draws: int, out: str | Path,
                 device: str = "auto", threads: int | None = None) -> dict:
    """Step fresh_b_null: the deep cosine of a trained model with ``draws`` fresh
    feedback sets beside the trained-with one."""
    job = Job("fresh_b_null", out, threads)
    run, model, rule, dev = load_trained(model_path, device)
    if not rule.feedback:
        raise ValueError(f"{model_path}: the fresh-B null needs a model trained with random "
                         f"feedback matrices (dfa, fa, …); {run['method']} has none")
    ensure_data(data_path)
    data = datasets.load(data_path)
    x, y = inputs.diagnostic_batch(data, run["diagnostics"]["n_samples"],
                                     run["diagnostics"]["seed"], dev)
    report = fresh_b_null_cosines(rule, model, x, y, draws, run["seed"], run["method"])
    log.info("%s λ=%g seed=%d: trained-B deep cosine %+.4f, fresh-B %+.4f ± %.4f (%d draws)",
             run["method"], run["lam"], run["seed"], report["trained"]["deep_cosine"],
             report["fresh"]["deep_cosine_mean"], report["fresh"]["deep_cosine_std"], draws)
    return job.finish({"run": _run_key(run), "config": run, "draws": draws, **report}, dev)


def alignment_probe(snapshots_path, data_path, settings: dict, out,
                    threads: int | None = None) -> dict:
    """Step alignment_probe: every learning rule's alignment at each saved checkpoint of a run."""
    job = Job("probes", out, threads)
    saved = load_checkpoint(snapshots_path, "training snapshots", map_location="cpu")
    run, info = saved["run"], saved["info"]
    device = resolve_device(run["training"]["device"], cpu_fallback=True)
    ensure_data(data_path)
    data = datasets.load(data_path)
    x, y = inputs.diagnostic_batch(data, settings["n_samples"], run["diagnostics"]["seed"],
                                     device)
    epochs = sorted(saved["snapshots"])
    if not epochs:
        raise ValueError(f"{snapshots_path} holds no checkpoints: set probes.epochs in the config")
    reports = []
    for epoch in epochs:
        model, rule = assemble(run, info, device)
        load_weights(model, rule, saved["snapshots"][epoch], device)
        reports.append({"epoch": epoch, **probe_report(model, rule, run["method"], x, y,
                                                       settings, seed=run["seed"] * 1000
                                                       + epoch)})
    return job.finish({"run": _run_key(run), "settings": settings, "epochs": reports}, device)


def measure(model_path: str | Path, data_path: str | Path, batch: int, out: str | Path,
            device: str = "auto", threads: int | None = None,
            batch_sizes=(2048, 128)) -> dict:
    """Step measure: the measurement variants of one trained model (no retraining)."""
    job = Job("measure", out, threads)
    run, model, rule, dev = load_trained(model_path, device)
    ensure_data(data_path)
    data = datasets.load(data_path)
    diag = run["diagnostics"]
    sets, variants = measurements(model, rule, data, diag["n_samples"], diag["seed"], batch,
                                  dev, batch_sizes)
    return job.finish({"run": _run_key(run), "config": run, "batch": batch,
                       "batch_sizes": list(batch_sizes), "eps": COSINE_EPS, "sets": sets,
                       "variants": variants}, dev)


def primer_check(settings: dict, out, threads: int | None = None) -> dict:
    """Step primer_check: the primer's claims checked numerically (float64)."""
    job = Job("primer_check", out, threads)
    betas = np.logspace(math.log10(settings["beta_min"]), math.log10(settings["beta_max"]),
                        settings["n_betas"])
    models = check_primer(settings["width"], settings["depth"], settings["batch"],
                                 settings["inputs"], settings["classes"], betas,
                                 settings["seed"])
    return job.finish({"config": settings, "dtype": "float64", "models": models})


# ---- the EP stack -----------------------------------------------------------------------
def ep_stack_probe(corpus_path, corpus_name: str, seed: int, settings: dict, out, timings_out,
                   resume=None, threads: int | None = None) -> dict:
    """Step ep_stack_probe: one (corpus, seed) probe → result JSON + timings JSON."""
    job = Job("ep_stack", out, threads)
    ensure_data(corpus_path)
    corpus = CharCorpus.load(corpus_path)
    body, seconds = run_probe(corpus, settings, seed, resume, progress=False)  # log: lines
    precision = settings["pretrain"]["precision"]
    result = job.finish(
        {"corpus": corpus_name, "seed": seed, "settings": settings,
         "corpus_info": {"n_chars": sum(len(v) for v in corpus.splits.values()),
                         "vocab_size": len(corpus.vocab)}, **body},
        torch.device("cpu"), timings=False,
        # the arithmetic each phase ran in: pretraining's is the config's choice
        provenance_extra={"precision": {"pretrain": precision, "probe": "float32"}})
    Job.side_record("ep_stack_timings", {
        "corpus": corpus_name, "seed": seed, "precision": precision, **seconds,
        "total": job.elapsed(), "peak_rss_mb": peak_rss_mb(), "threads": threads,
        "record": run_record()}, timings_out, flags=True)
    ResumeState(resume, {}).done()
    return result


def ep_fixed_point(corpus_path, corpus_name: str, seed: int, settings: dict, out,
                   timings_out, resume=None, threads: int | None = None) -> dict:
    """Step ep_fixed_point: one (corpus, seed): EP against the fixed-point gradient and
    BPTT → result JSON (deterministic for a config on the CPU) + timings JSON."""
    job = Job("ep_fixed_point", out, threads)
    ensure_data(corpus_path)
    corpus = CharCorpus.load(corpus_path)
    try:
        body, seconds = run_fixed_point(corpus, settings, seed, resume, progress=False)
    except Exception as err:  # scipy's ARPACK on a state that is not finite
        # ARPACK's error -9999 on a state that is not finite; ArpackNoConvergence (a
        # subclass, on finite states too) is not a divergence and is raised as it is
        if type(err).__name__ != "ArpackError":
            raise
        # an outcome, not a crash: a diverged stack has no fixed point to probe, and the
        # question's findings name the seed (analysis.ep_question: reason "diverged")
        log.warning("%s seed %d: pretraining diverged (%s)", corpus_name, seed, err)
        body = {"pretrain": {}, "batches": [], "diverged": (
            f"the Jacobian's eigenvalues cannot be computed at the free state ({err}): the "
            "pretrained stack's state is not finite (the job log's pretraining losses say "
            "when; ep_stack.eps or the learning rate too large?)")}
        seconds = {"pretrain": job.elapsed(), "probes": []}
    result = job.finish({"corpus": corpus_name, "seed": seed, "settings": settings, **body},
                        torch.device("cpu"), timings=False)
    Job.side_record("ep_fixed_point_timings", {
        "corpus": corpus_name, "seed": seed, **seconds, "total": job.elapsed(),
        "peak_rss_mb": peak_rss_mb(), "threads": threads, "record": run_record()},
        timings_out, flags=True)
    ResumeState(resume, {}).done()
    return result
