"""One training job: (dataset, method, λ, seed) → metrics JSON + model checkpoint.

Resumable: after every epoch the full state (model, optimizer, scheduler, RNG,
metrics so far) is written atomically to ``resume_path``; a rerun with the same
config continues from the last finished epoch and ends with the same JSON as
an uninterrupted run (on the CPU).
"""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path
from typing import Any

import torch

from credit_assign import data as datasets
from credit_assign import recipe
from credit_assign.diagnostics import evaluate
from credit_assign.results import validate_result
from credit_assign.runs import build, load_weights
from credit_assign.runtime import (
    adamw,
    atomic_torch_save,
    atomic_write_text,
    dumps,
    library_digest,
    load_resume,
    provenance,
    resolve_device,
    run_record,
    sanitize,
    set_threads,
)

log = logging.getLogger("credit_assign.train")

PER_LAYER_KEYS = ("cosine", "h_norm_median", "grad_norm_median", "signal_norm_median",
                  "branch_norm_median")


class Batches:
    """Seeded shuffling and augmentation of a uint8 image tensor held on the device."""

    def __init__(self, x, y, batch_size, normalize, augmentation, pad, generator):
        self.x, self.y, self.batch_size = x, y, batch_size
        self.normalize, self.augmentation, self.pad = normalize, augmentation, pad
        self.generator = generator

    def __len__(self):
        return math.ceil(len(self.x) / self.batch_size)

    def __iter__(self):
        order = torch.randperm(len(self.x), generator=self.generator).to(self.x.device)
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            x = self.x.index_select(0, idx)  # 20× faster than x[idx] on uint8 images
            if self.augmentation == "crop_flip":
                x = datasets.crop_flip(x, self.pad, self.generator)
            yield self.normalize(x), self.y.index_select(0, idx)


def train(run: dict[str, Any], data_path: str | Path, metrics_out: str | Path,
          model_out: str | Path, resume_path: str | Path | None = None,
          threads: int | None = None, timings_out: str | Path | None = None,
          snapshot_epochs: tuple[int, ...] = (), snapshots_out: str | Path | None = None,
          ) -> dict[str, Any]:
    """Train one run; write ``metrics_out`` (JSON), ``model_out`` (torch checkpoint) and,
    if given, ``timings_out`` (wall-clock times and where the job ran).

    ``metrics_out`` holds nothing that differs between identical runs: the same
    config gives the same bytes on the CPU, also after a kill and a resume.
    ``snapshots_out`` (if given) receives the model and rule state after each epoch
    in ``snapshot_epochs``: the checkpoints the alignment probes measure.
    """
    t_start = time.perf_counter()
    if threads:
        set_threads(threads)
    tr = run["training"]
    device = resolve_device(tr["device"])
    data = datasets.load(data_path)
    info = data["info"]
    normalize = datasets.Normalizer(info, device)
    train_x, train_y = data["train_x"].to(device), data["train_y"].to(device)
    test_x, test_y = data["test_x"].to(device), data["test_y"].to(device)
    diag_x, diag_y = datasets.diagnostic_batch(data, run["diagnostics"]["n_samples"],
                                               run["diagnostics"]["seed"], device)
    eval_bs = run["diagnostics"]["eval_batch_size"]

    def test_batches():
        for s in range(0, len(test_x), eval_bs):
            yield normalize(test_x[s:s + eval_bs]), test_y[s:s + eval_bs]

    model, rule = build(run, info, device)
    params = rule.trainable(model)
    optimizer = adamw(recipe.param_groups(params, tr), tr["lr"], tr["weight_decay"])
    generator = torch.Generator().manual_seed(run["seed"])
    batches = Batches(train_x, train_y, tr["batch_size"], normalize, tr["augmentation"],
                      tr["crop_padding"], generator)
    multiplier, per_batch = recipe.lr_schedule(tr, len(batches))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, multiplier)

    history: dict[str, list] = {k: [] for k in (
        "epoch", "lr", "train_loss", "test_acc", "test_loss", "h_L_norm_median", "deep_cosine",
        *PER_LAYER_KEYS)}
    timings: dict[str, Any] = {"epoch_train_s": [], "epoch_diagnostics_s": [],
                               "resumed_from_epoch": None}
    divergence = {"policy": tr["nonfinite_policy"], "first_nonfinite_epoch": None,
                  "stopped_early": False}
    start_epoch = 1
    snapshots: dict[int, dict] = {}

    resume_path = Path(resume_path) if resume_path else None
    # resume only from state written by this config, this code and these snapshot epochs
    written_for = {"run": run, "code": library_digest(),
                   "snapshot_epochs": sorted(snapshot_epochs)}
    state = load_resume(resume_path, written_for, map_location=device, logger=log)
    if state is not None:
        try:
            load_weights(model, rule, state, device)
            optimizer.load_state_dict(state["optimizer"])
            scheduler.load_state_dict(state["scheduler"])
            generator.set_state(state["generator"])
            torch.set_rng_state(state["torch_rng"])
            history, divergence = state["history"], state["divergence"]
            snapshots = state.get("snapshots", {})
            timings.update(state["timings"])
            start_epoch = state["epoch"] + 1
            timings["resumed_from_epoch"] = state["epoch"]
            log.info("resumed from %s after epoch %d", resume_path, state["epoch"])
        except (KeyError, RuntimeError, ValueError, TypeError) as err:
            aside = resume_path.with_name(resume_path.name + ".rejected")
            resume_path.replace(aside)
            log.warning("not resuming from %s: it cannot be restored (%s: %s); moved it to "
                        "%s and starting afresh", resume_path, type(err).__name__, err, aside)
            return train(run, data_path, metrics_out, model_out, resume_path, threads,
                         timings_out, snapshot_epochs, snapshots_out)

    n_params = sum(p.numel() for p in params.values())
    log.info("%s λ=%g seed=%d on %s: %d trainable parameters, %d epochs × %d steps",
             run["method"], run["lam"], run["seed"], device, n_params, tr["epochs"], len(batches))
    for epoch in range(start_epoch, tr["epochs"] + 1):
        if divergence["stopped_early"]:
            break
        model.train()
        t0 = time.perf_counter()
        loss_sum = torch.zeros((), dtype=torch.float64, device=device)
        lr = optimizer.param_groups[0]["lr"]
        for x, y in batches:
            cache = model(x, local=rule.local)
            out = rule.update(model, cache, y)
            for name, p in params.items():
                p.grad = out.grads[name]
            optimizer.step()
            if per_batch:
                scheduler.step()
            loss_sum += out.loss.double() * len(y)
        if not per_batch:
            scheduler.step()
        train_loss = (loss_sum / len(train_x)).item()
        t1 = time.perf_counter()
        report = evaluate(rule, model, diag_x, diag_y, test_batches)
        t2 = time.perf_counter()

        row = {"epoch": epoch, "lr": lr, "train_loss": train_loss,
               "h_L_norm_median": report["h_norm_median"][-1], **report}
        for key in history:
            history[key].append(row[key])
        timings["epoch_train_s"].append(t1 - t0)
        timings["epoch_diagnostics_s"].append(t2 - t1)
        finite = math.isfinite(train_loss) and math.isfinite(report["h_norm_median"][-1])
        if not finite and divergence["first_nonfinite_epoch"] is None:
            divergence["first_nonfinite_epoch"] = epoch
            divergence["stopped_early"] = tr["nonfinite_policy"] == "stop"
            log.warning("non-finite loss or activations at epoch %d (policy: %s)",
                        epoch, tr["nonfinite_policy"])
        log.info("epoch %d/%d  train_loss %.4f  test_acc %.4f  |h_L| %.3g  deep_cos %s  "
                 "(%.1fs train, %.1fs diagnostics)", epoch, tr["epochs"], train_loss,
                 report["test_acc"], row["h_L_norm_median"],
                 "n/a" if report["deep_cosine"] is None else f"{report['deep_cosine']:+.3f}",
                 t1 - t0, t2 - t1)
        if epoch in snapshot_epochs:
            snapshots[epoch] = {"model": {k: v.detach().cpu().clone()
                                          for k, v in model.state_dict().items()},
                                "rule": rule.state_dict()}
        if resume_path:
            atomic_torch_save({
                "written_for": written_for, "run": run, "epoch": epoch, "model": model.state_dict(),
                "rule": rule.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "generator": generator.get_state(),
                "torch_rng": torch.get_rng_state(), "history": history,
                "divergence": divergence, "timings": timings, "snapshots": snapshots,
            }, resume_path)

    final = {k: history[k][-1] for k in ("epoch", "train_loss", "test_acc", "test_loss",
                                          "h_L_norm_median", "deep_cosine", "cosine")}
    timings["total_s"] = time.perf_counter() - t_start
    timings["epochs_this_process"] = len(timings["epoch_train_s"]) - (
        timings["resumed_from_epoch"] or 0)
    result = {
        "schema_version": 1,
        "kind": "train",
        "run": {k: run[k] for k in ("dataset", "method", "lam", "seed")},
        "config": run,
        "data": {**{k: info[k] for k in ("source", "order", "n_train", "n_test", "classes")},
                 "diagnostic_set": {"n": len(diag_y), "seed": run["diagnostics"]["seed"],
                                    "selection": "class-stratified (sklearn train_test_split)"}},
        "history": history,
        "final": final,
        "divergence": divergence,
        "provenance": provenance(device, threads),
    }
    result, flags = sanitize(result)
    result["nonfinite"] = flags
    validate_result(result, "train", source=str(metrics_out))
    atomic_torch_save({"run": run, "info": info, "model": model.state_dict(),
                       "rule": rule.state_dict()}, model_out)
    if snapshots_out:
        atomic_torch_save({"run": run, "info": info, "snapshots": snapshots}, snapshots_out)
    if timings_out:
        record, _ = sanitize({"schema_version": 1, "kind": "train_timings",
                              "run": result["run"], **timings, "record": run_record()})
        validate_result(record, "train_timings", source=str(timings_out))
        atomic_write_text(timings_out, dumps(record))
    atomic_write_text(metrics_out, dumps(result))
    if resume_path:
        resume_path.unlink(missing_ok=True)
    return result
