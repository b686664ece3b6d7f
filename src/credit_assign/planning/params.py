"""Each job's parameters: everything a job depends on and nothing else, so that a
changed key reruns exactly the jobs it affects (Snakemake's params trigger compares
them: the values and their key order are part of every finished job's record).
"""

from __future__ import annotations

import functools
import platform
from pathlib import Path
from typing import Any

from credit_assign.infra import paths
from credit_assign.planning import catalog
from credit_assign.planning.checks import LOCAL_COPY
from credit_assign.planning.matrix import lam_of, study_seeds, variant_of
from credit_assign.planning.method_training import method_training
from credit_assign.planning.targets import variant_config

Config = dict[str, Any]
# above every training job: each EP stack probe is the longest job of a rebuild
EP_PRIORITY = 1000


def run_config(config: Config, dataset: str, recipe: str, method: str, lam: str,
               seed: str) -> Config:
    """Everything a training job depends on, and nothing else: a changed key
    reruns exactly the jobs it affects (Snakemake's params trigger). ``lam``: the
    path's spelling (matrix.lam_str), read back to the config's float (matrix.lam_of)."""
    variant = variant_of(config, recipe)
    cfg = variant_config(config, variant)
    run = {
        "dataset": dataset,
        "method": method,
        "lam": lam_of(lam),
        "seed": int(seed),
        "model": {**cfg["model"], "final_norm": True},
        "training": method_training(cfg["training"], method),
        "options": cfg["methods"][method],
        "diagnostics": cfg["diagnostics"],
    }
    return {**run, "variant": variant} if variant else run


def train_priority(config: Config, recipe: str, method: str) -> int:
    """Longest jobs first: a training job's priority is its number of epochs (FA's 100
    before the 30-epoch runs), so that on a few cores no long job starts last and runs
    alone while the other cores idle. The EP stack probes (longer still) rank above."""
    cfg = variant_config(config, variant_of(config, recipe))
    return method_training(cfg["training"], method)["epochs"]


def reproduction_config(config: Config, recipe: str) -> Config:
    """What the reproduction table's header reports (reproduction.context), and nothing
    else: a change to another key does not rerun it."""
    name = variant_of(config, recipe)
    cfg = variant_config(config, name)
    t = cfg["training"]
    keys = ("epochs", "batch_size", "lr", "weight_decay", "augmentation", "schedule",
            "schedule_step")
    out = {
        "dataset": cfg["dataset"],
        "model": {k: cfg["model"][k] for k in ("width", "depth")},
        "training": {k: t[k] for k in keys if k in t}
        | {"per_method": {m: {"epochs": v["epochs"]}
                          for m, v in t.get("per_method", {}).items() if "epochs" in v}},
        # the methods run (a sweep left empty is not run): the header's epochs name them
        "sweep": {"seeds": cfg["sweep"]["seeds"],
                  "methods": [m for m in catalog.methods() if cfg["sweep"].get(m)]},
        "diagnostics": {"n_samples": cfg["diagnostics"]["n_samples"]},
        "fresh_b_null": {"draws": cfg["fresh_b_null"]["draws"]},
        "reproduction": {"reference": cfg["reproduction"]["reference"]},
    }
    if name:
        spec = config["variants"][name]
        out["variant"] = {"name": name, **spec}
        out["sweep"] = {"seeds": study_seeds(config)}
    return out


def probe_settings(config: Config) -> Config:
    """The probe's settings, and under ``methods`` the options (methods.<method>) of the
    rules it measures on every network (the registry's probed rules). Its
    node-perturbation estimates take their settings from probes.*, not from methods.np."""
    settings = {k: v for k, v in config["probes"].items() if k not in ("epochs", "network")}
    probed = [m for m, r in catalog.load().items() if r["probed"]]
    return {**settings, "methods": {m: config["methods"][m] for m in probed}}


def method_styles() -> dict[str, dict[str, str]]:
    """Each rule's label and colour, as its module declares them: what the figures and
    the paper show (they do not import the rules)."""
    return catalog.styles()


def variants_about(config: Config) -> Config:
    """What the gap map says of each variant: its kind, description, methods and seeds."""
    return {name: {k: v.get(k, []) for k in ("kind", "description", "methods")}
            | {"seeds": study_seeds(config)}
            for name, v in config["variants"].items()}


def study_compute(config: Config, root: str | Path) -> str:
    """The study's core-minutes as a sentence, from the config and the per-epoch times
    recorded in paths.REBUILD_ESTIMATE (credit_assign.planning.estimate)."""
    from credit_assign.planning.estimate import statement

    return statement(config, Path(root) / paths.REBUILD_ESTIMATE)


# ---- the EP stack probe
def corpus_version(corpus: str) -> str:
    """What a corpus' text depends on beyond its name: pydoc's is the documentation of
    the Python that runs the workflow (a new version re-encodes it and reruns its
    probes); Tiny Shakespeare's is pinned by its sha256."""
    return platform.python_version() if corpus == "pydoc" else ""


def ep_settings(config: Config, precision: str) -> Config:
    """What a probe depends on (not which corpora, seeds or comparisons the sweep
    has), with the pretraining precision of its path."""
    ep = config["ep_stack"]
    settings = {k: v for k, v in ep.items()
                if k not in ("corpora", "seeds", "compare_precisions", "settle", "fixed_point")}
    settings["pretrain"] = {**ep["pretrain"], "precision": precision}
    return settings


def ep_fixed_point_settings(config: Config, precision: str) -> Config:
    """What a fixed-point job depends on: the probe's settings (its pretraining among them)
    and the fixed-point block, less its seeds."""
    fp = {k: v for k, v in config["ep_stack"]["fixed_point"].items() if k != "seeds"}
    return {**ep_settings(config, precision), "fixed_point": fp}


def ep_settle(config: Config) -> Config:
    """The settling criterion: the summary's, never a probe's."""
    return config["ep_stack"]["settle"]


# ---- the science's code
def code_digest(config: Config, step: str, method: str | None = None) -> str:
    """What a ``step`` job computes with (credit_assign.planning.code.digest): a training
    run's, null's or measurement's own method's rule; an alignment probe's every probed
    rule (it measures them all on each network); the EP probe's none."""
    from credit_assign.planning import code

    if step == "alignment_probe":
        methods = tuple(m for m, r in catalog.load().items() if r["probed"])
    else:
        methods = (method,) if method else ()
    return code.digest(step, methods)


# ---- data sources
def data_source(config: Config, name: str) -> str:
    """Where a dataset's or corpus' bytes come from ('' for data shipped with a package)."""
    return config["data"][name]["source"] if name in LOCAL_COPY else ""


def source_stamp(config: Config, name: str, remember: bool = True) -> str:
    """What a local data source holds: a digest of its bytes (credit_assign.infra.sources), a
    param of prepare_data, so that a source whose bytes change (in place, or replaced at
    the same path) reruns it and everything that reads the data, while a copy, a touch or
    a re-extraction (same bytes, new mtimes) reruns nothing. '' for a download or data
    shipped with a package. ``remember``: write the digest to the cache
    (paths.SOURCE_DIGESTS); a dry run reads the cache but writes nothing."""
    source = data_source(config, name)
    if source in ("", "download"):
        return ""
    return _stamp(str(Path(source).expanduser()), remember)


@functools.lru_cache
def _stamp(path: str, remember: bool = True) -> str:
    from credit_assign.infra.sources import source_digest

    return source_digest(path, cache=paths.SOURCE_DIGESTS, write=remember)


# ---- the paper
def paper_number_config(config: Config) -> Config:
    """The config keys numbers.tex reads (a change elsewhere does not rewrite it), and
    the rules' labels."""
    keys = ("dataset", "model", "training", "sweep", "diagnostics", "probes")
    ep = config["ep_stack"]
    return {
        **{k: config[k] for k in keys},
        "labels": {m: style["label"] for m, style in method_styles().items()},
        "study": config["study"],
        "ep_question": config["claims"].get("ep"),  # the file of the EP question, or None
        "ep_stack": {k: ep[k] for k in ("corpora", "seeds", "model")}
        | {"pretrain": {k: ep["pretrain"][k] for k in ("steps", "relax_steps", "precision")}},
    }
