"""A run's model and rule from its run config, and a trained one from ``model.pt``: what
training, the fresh-B null, the alignment probes and the measurement jobs share."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch

from credit_assign.infra.checkpoints import load_checkpoint
from credit_assign.infra.device import resolve_device
from credit_assign.science.learning_rules import feedback_generator, make_rule
from credit_assign.science.model import ResidualMLP


def method_options(run: dict[str, Any]) -> dict[str, Any]:
    """The method's options a run config records (``run["options"]``, the config's
    methods.<method> block as the run used it). A run config written before that key was
    named ``options`` (a model.pt, snapshots.pt or metrics.json of then) has them under
    ``run["rule"]``: read either, so old results stay loadable."""
    return run["options"] if "options" in run else run["rule"]


def assemble(run: dict[str, Any], info: dict[str, Any], device):
    """Model and rule for a run config, seeded: the same config gives the same start."""
    torch.manual_seed(run["seed"])
    in_features = math.prod(info["shape"])
    m = run["model"]
    model = ResidualMLP(in_features, m["width"], m["depth"], len(info["classes"]),
                        final_norm=m["final_norm"], branch_init_std=m["branch_init_std"])
    rule = make_rule(run["method"], model, run["lam"], method_options(run),
                     feedback_generator(run["seed"]))
    return model.to(device), rule.to(device)


def load_weights(model: ResidualMLP, rule, state: dict, device) -> None:
    """Put saved model and rule state (``state["model"]``, ``state["rule"]``) into a
    model and rule made by :func:`assemble`."""
    model.load_state_dict(state["model"])
    rule.load_state_dict(state["rule"])
    rule.to(device)


def load_trained(model_path: str | Path, device: str = "auto"):
    """A trained model and its rule from ``model.pt`` (weights only), on ``device`` — or
    on the CPU with a warning where that is a CUDA device this node lacks: the jobs that
    evaluate a saved model. Returns (run config, model, rule, torch device)."""
    dev = resolve_device(device, cpu_fallback=True)
    ckpt = load_checkpoint(model_path, "trained model", map_location=dev)
    model, rule = assemble(ckpt["run"], ckpt["info"], dev)
    load_weights(model, rule, ckpt, dev)
    return ckpt["run"], model, rule, dev
