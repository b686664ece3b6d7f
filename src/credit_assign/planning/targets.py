"""What the config asks for: the training runs, the files each step reads, the target
lists of ``all`` and ``variants``, and the runs each summary table must hold. Plain
functions of the (validated, filled) config dict; paths from
:mod:`credit_assign.infra.paths`.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from credit_assign.infra import paths
from credit_assign.planning import catalog
from credit_assign.planning.matrix import (
    DEFAULT_RECIPE,
    Run,
    arm_recipe,
    run,
    run_table,
    variant_of,
)

Config = dict[str, Any]
CORPORA = ("tinyshakespeare", "pydoc")
PRECISIONS = ("float32", "bfloat16")


# ---- recipe variants: results/<dataset>/<variant>/... (config["variants"])
def _update(config, over):
    """Snakemake's update_config: ``over`` laid over ``config`` in place, recursively
    (keys already there keep their place, new ones come last)."""
    for key, value in over.items():
        if not isinstance(config, Mapping):
            config = {}
        config[key] = _update(config.get(key, {}), value) if isinstance(value, Mapping) \
            else value
    return config


def variant_config(config: Config, name: str | None) -> Config:
    """The config with a variant's overrides laid over it (no variant: the config)."""
    if not name:
        return config
    merged = copy.deepcopy(config)
    variant = config["variants"].get(name) or arm_recipe(name)
    _update(merged, copy.deepcopy(variant["overrides"]))
    return merged


def recipes(config: Config) -> list[str]:
    """The stated recipe (DEFAULT_RECIPE), then every recipe variant, in the config's
    order: each a folder of results/<dataset>/."""
    return [DEFAULT_RECIPE, *config["variants"]]


def runs(config: Config, methods: Iterable[str] | None = None, dataset: str | None = None,
         recipe: str | None = None) -> list[Run]:
    """Every training job the config asks for (methods: every registered rule); for a
    recipe variant only its methods and seeds: the run matrix (planning.matrix.run_table)."""
    return run_table(config, methods, dataset, recipe)


def _per_run(config: Config, pattern: str, dataset: str | None, recipe: str | None,
             methods=None) -> list[str]:
    return [r.path(pattern) for r in runs(config, methods, dataset, recipe)]


def train_metrics(config: Config, dataset: str | None = None,
                  recipe: str | None = None) -> list[str]:
    """Every training result of the sweep (of a recipe variant: its runs)."""
    return _per_run(config, paths.METRICS, dataset, recipe)


def train_timings(config: Config, dataset: str | None = None,
                  recipe: str | None = None) -> list[str]:
    """The wall-clock record beside every training result."""
    return _per_run(config, paths.TIMINGS, dataset, recipe)


def null_results(config: Config, dataset: str | None = None,
                 recipe: str | None = None) -> list[str]:
    """One fresh-B null per trained DFA model."""
    return _per_run(config, paths.NULL, dataset, recipe, ("dfa",))


def probe_results(config: Config, dataset: str | None = None,
                  recipe: str | None = None) -> list[str]:
    """One probe result per training run (none if probes.epochs is empty, none for a
    variant)."""
    if not config["probes"]["epochs"] or variant_of(config, recipe):
        return []
    return _per_run(config, paths.PROBE, dataset, recipe)


def measure_results(config: Config, dataset: str | None = None,
                    recipe: str | None = None) -> list[str]:
    """The measurement variants of every trained model (when enabled)."""
    if not config["measurements"]["run"]:
        return []
    return _per_run(config, paths.MEASURE, dataset, recipe)


def measurement_tables(config: Config) -> list[str]:
    """Every recipe's measurements.csv, default first (none unless measurements.run):
    the gap map's `<recipe>/<measurement>` columns."""
    if not config["measurements"]["run"]:
        return []
    return [summary(config, paths.MEASUREMENTS, recipe) for recipe in recipes(config)]


def summary(config: Config, pattern: str, recipe: str = DEFAULT_RECIPE) -> str:
    """A summary table (or page) of the config's dataset under the stated recipe, or
    under ``recipe``."""
    return paths.fill(pattern, dataset=config["dataset"], recipe=recipe)


def summary_tables(config: Config) -> list[str]:
    return [summary(config, p) for p in (paths.RUNS, paths.EPOCHS, paths.LAYERS, paths.NULLS)]


def reproduction_tables(config: Config) -> list[str]:
    """The paper-vs-ours tables, when the config names a reference file."""
    if not config["reproduction"]["reference"]:
        return []
    return [summary(config, paths.REPRODUCTION), summary(config, paths.REPRODUCTION_MD)]


def variant_reproduction_tables(config: Config) -> list[str]:
    """The default's reproduction table, then every variant's."""
    return [summary(config, paths.REPRODUCTION, recipe) for recipe in recipes(config)]


def variant_runs_tables(config: Config) -> list[str]:
    return [summary(config, paths.RUNS, v) for v in config["variants"]]


def measured_figure(config: Config) -> list[str]:
    """fig_variants_measured and fig_variants_measured_eps (step
    variants_measured_map), where measurements run."""
    if not (config["variants"] and config["measurements"]["run"]):
        return []
    return paths.figures("fig_variants_measured") + paths.figures("fig_variants_measured_eps")


def study_steps(config: Config) -> list[list[str]]:
    """The study recipe by recipe: the stated recipe, then the `open` variants, then the
    `departs` ones (what the headline ranking needs first), each group in the config's
    order. A step's targets are one recipe's reproduction table and, where measurements
    run, its measurements table, so that a study stopped between steps holds whole
    recipes (``make study``; the gap map and the notes come after the last step)."""
    group = {"open": 0, "departs": 1}
    variants = sorted(config["variants"], key=lambda v: group.get(
        config["variants"][v].get("kind"), 2))
    table = paths.REPRODUCTION if config["reproduction"]["reference"] else paths.RUNS
    steps = []
    for recipe in [DEFAULT_RECIPE, *variants]:
        step = [summary(config, table, recipe)]
        if config["measurements"]["run"]:
            step.append(summary(config, paths.MEASUREMENTS, recipe))
        steps.append(step)
    return steps


def variant_targets(config: Config) -> list[str]:
    """What `snakemake variants` builds: every variant's reproduction table, the gap map."""
    if not config["variants"]:
        return []
    return (
        [summary(config, paths.REPRODUCTION, v) for v in config["variants"]]
        + [summary(config, p) for p in (paths.VARIANTS_GAP, paths.REPRODUCTION_VARIANTS,
                                        paths.REPRODUCTION_NOTES)]
        + paths.figures("fig_variants")
        + paths.figures("fig_variants_key")
        + measured_figure(config)
    )


# ---- the EP stack probe
def ep_precisions(config: Config) -> list[str]:
    """The pretraining precisions run: the config's, then the comparison's."""
    ep = config["ep_stack"]
    main = ep["pretrain"]["precision"]
    return [main] + [p for p in ep["compare_precisions"] if p != main]


def _ep(config: Config, pattern: str) -> list[str]:
    ep = config["ep_stack"]
    return [paths.fill(pattern, corpus=corpus, precision=precision, seed=seed)
            for corpus in ep["corpora"] for precision in ep_precisions(config)
            for seed in ep["seeds"]]


def ep_results(config: Config) -> list[str]:
    """One probe per (corpus, pretraining precision, seed)."""
    return _ep(config, paths.EP_RESULT)


def ep_timings(config: Config) -> list[str]:
    return _ep(config, paths.EP_TIMINGS)


def ep_fixed_point_results(config: Config, pattern: str = paths.EP_FIXED_POINT) -> list[str]:
    """One fixed-point job per (corpus, fixed_point seed), at the config's pretraining
    precision (none where ep_stack.fixed_point.seeds is empty)."""
    ep = config["ep_stack"]
    return [paths.fill(pattern, corpus=corpus, precision=ep["pretrain"]["precision"], seed=s)
            for corpus in ep["corpora"] for s in ep["fixed_point"]["seeds"]]


def ep_question_runs(config: Config, pattern: str = paths.EP_FIXED_POINT) -> list[str]:
    """The fixed-point jobs the EP question (claims.ep) judges and shows: its fresh seeds,
    then its seen ones (none where claims.ep is null)."""
    path = config["claims"].get("ep")
    if not path:
        return []
    from credit_assign.planning.claims import load_ep

    spec = load_ep(path)
    run = spec["runs"]
    return [paths.fill(pattern, corpus=run["corpus"], precision=run["precision"], seed=s)
            for s in spec["seeds"]["fresh"] + spec["seeds"]["seen"]]


def ep_targets(config: Config) -> list[str]:
    if not config["ep_stack"]["corpora"]:
        return []
    return [paths.EP_COSINES] + paths.figures("fig_ep_stack_cosines")


# ---- the claims (config claims.file: credit_assign.planning.claims)
@functools.lru_cache
def _claims_spec(path: str):
    from credit_assign.planning.claims import load

    return load(path)


def claims_spec(config: Config):
    """The claims file the config names, read and checked (None: no claims)."""
    path = config["claims"]["file"]
    return _claims_spec(str(path)) if path else None


def claims_runs(config: Config, methods: Iterable[str] | None = None) -> list[Run]:
    """Every training run the claims read (of the config's dataset)."""
    spec = claims_spec(config)
    if spec is None:
        return []
    from credit_assign.planning.claims import runs_needed

    return [run(config, m, lam, s) for m, lam, s in runs_needed(spec)
            if methods is None or m in methods]


def _claims_per_run(config: Config, pattern: str, methods=None) -> list[str]:
    from credit_assign.planning.claims import check_against

    if (spec := claims_spec(config)) is None:
        return []
    check_against(spec, config, config["claims"]["file"])
    return [r.path(pattern) for r in claims_runs(config, methods)]


def claims_train(config: Config) -> list[str]:
    return _claims_per_run(config, paths.METRICS)


def claims_timings(config: Config) -> list[str]:
    return _claims_per_run(config, paths.TIMINGS)


def claims_nulls(config: Config) -> list[str]:
    """The per-layer fresh-B null of every DFA run the claims read."""
    return _claims_per_run(config, paths.NULL, ("dfa",))


def claims_ep(config: Config, pattern: str = paths.EP_RESULT) -> list[str]:
    """The EP probes the claims read: the seeds of every claim on the EP probe, on the
    config's first corpus at its pretraining precision. Refused (a ClaimsError) where a
    claim reads a free-phase length the config's probe does not run."""
    spec, ep = claims_spec(config), config["ep_stack"]
    if spec is None or not ep["corpora"]:
        return []
    from credit_assign.planning.claims import check_against

    check_against(spec, config, config["claims"]["file"])
    seeds = sorted({s for c in spec["claims"] if "free_steps" in c["effect"]
                    for s in spec["seeds"][c.get("seeds", "fresh")]})
    return [paths.fill(pattern, corpus=ep["corpora"][0],
                       precision=ep["pretrain"]["precision"], seed=s) for s in seeds]


def claims_expect(config: Config) -> dict[str, list]:
    """The runs the claims' tables must hold, as [method, λ, seed]."""
    return {"runs": [r.key() for r in claims_runs(config)],
            "null_layers": [r.key() for r in claims_runs(config, ("dfa",))]}


def claims_targets(config: Config) -> list[str]:
    """What `snakemake claims` builds: the verdicts, their page and figure."""
    if claims_spec(config) is None:
        return []
    return ([summary(config, p) for p in (paths.CLAIMS_VERDICTS, paths.CLAIMS_MD)]
            + paths.figures("fig_claims"))


def intermediates(config: Config) -> list[str]:
    """Every file a job writes that later jobs read, but the weights (temp(): the
    record keeps no weights, results/README.md). Part of `all`, so that one
    deleted (by hand, as an error message advised, or by a failed rerun) is rebuilt
    by the next run, instead of a run that reports success with a gap."""
    out = [paths.fill(paths.DATA_MANIFEST, dataset=config["dataset"])]
    for r in runs(config, dataset=config["dataset"]):
        out += [r.path(f"{paths.RUN_DIR}/{name}") for name in paths.TRAIN_OUTPUTS]
    out += null_results(config) + probe_results(config) + measure_results(config)
    out += [paths.fill(paths.CORPUS_MANIFEST, corpus=c) for c in config["ep_stack"]["corpora"]]
    return (out + ep_results(config) + ep_timings(config) + ep_fixed_point_results(config)
            + ep_fixed_point_results(config, paths.EP_FIXED_POINT_TIMINGS))


def all_targets(config: Config) -> list[str]:
    """What `snakemake` (its target all) builds."""
    return (
        intermediates(config)
        + summary_tables(config)
        + reproduction_tables(config)
        + paths.figures("fig4_penalty_rescue")
        + paths.figures("fig_primer_phases")
        + paths.figures("fig_primer_check")
        + (paths.figures("fig_alignment_probes") if config["probes"]["epochs"] else [])
        + ([summary(config, paths.MEASUREMENTS)] if config["measurements"]["run"] else [])
        + ep_targets(config)
    )


# ---- what a table must hold (credit_assign.analysis.tables checks it before anything reads it)
def table_expect(config: Config, dataset: str | None = None,
                 recipe: str | None = None) -> dict[str, list]:
    """The runs each summary table of a dataset (default: the config's) under a recipe
    (default: the stated one) must hold, as [method, λ, seed]: what a figure, the paper
    and the notes check a table against before they read it
    (credit_assign.analysis.tables)."""

    def rows(methods):
        return [r.key() for r in runs(config, methods, dataset, recipe)]

    return {"runs": rows(catalog.methods()), "nulls": rows(("dfa",))}


def variant_expect(config: Config) -> dict[str, list]:
    """variant → the runs its runs.csv (and measurements.csv) must hold."""
    return {v: table_expect(config, recipe=v)["runs"] for v in config["variants"]}


def findings_inputs(config: Config) -> dict[str, Any]:
    """What findings.json is computed from: the runs and nulls (the runs' verdicts) and,
    with the variant study, the gap map (its verdicts) and what the notes state: the
    default's epochs, layers and measurements, every variant's runs.csv, the data's
    manifest and what was fixed when (paths.HISTORY). Not the EP probe's table: its
    verdict is taken by paper_numbers, so the study never waits for the probes."""
    inputs: dict[str, Any] = {"runs": summary(config, paths.RUNS),
                              "nulls": summary(config, paths.NULLS)}
    if config["variants"]:
        inputs |= {"gaps": summary(config, paths.VARIANTS_GAP),
                   "info": paths.fill(paths.DATA_MANIFEST, dataset=config["dataset"]),
                   "epochs": summary(config, paths.EPOCHS),
                   "layers": summary(config, paths.LAYERS),
                   "variant_runs": variant_runs_tables(config), "history": paths.HISTORY}
        if config["measurements"]["run"]:
            inputs["measurements"] = summary(config, paths.MEASUREMENTS)
    return inputs


def notes_expect(config: Config) -> dict[str, Any]:
    """The notes read the default's tables and every variant's runs.csv."""
    return table_expect(config) | {"variants": variant_expect(config)}


def gap_map_expect(config: Config) -> dict[str, list]:
    """recipe → the runs its measurements.csv must hold (the gap map reads them)."""
    if not config["measurements"]["run"]:
        return {}
    return {DEFAULT_RECIPE: table_expect(config)["runs"]} | variant_expect(config)


# ---- the paper
def paper_figures(config: Config) -> list[str]:
    """The figure PDFs the manuscript includes for this config."""
    names = ["fig4_penalty_rescue", "fig_primer_phases", "fig_primer_check"]
    names += ["fig_ep_stack_cosines"] if config["ep_stack"]["corpora"] else []
    # the gap map's key recipes (the full maps, too wide to print, are docs/ pages)
    names += ["fig_variants_key"] if config["variants"] else []
    names += ["fig_alignment_probes"] if config["probes"]["epochs"] else []
    names += ["fig_claims"] if claims_spec(config) is not None else []
    names += ["fig_ep_fixed_point"] if ep_question_findings(config) else []
    return [paths.figure(name, "pdf") for name in names]


def ep_question_findings(config: Config) -> str | None:
    """The EP question's findings where the paper reads them: once every run of
    claims.ep is here (in the record, or run), step ep_question_findings' output; until
    then none, and the paper says its runs are not in this build (they take hours a
    seed: `snakemake ep_question` runs them)."""
    runs = ep_question_runs(config)
    if runs and all(Path(p).exists() for p in runs):
        return paths.EP_QUESTION_FINDINGS
    return None


def paper_number_inputs(config: Config) -> dict[str, str]:
    """The tables numbers.tex is written from (what this config produces)."""
    inputs = {
        "info": paths.fill(paths.DATA_MANIFEST, dataset=config["dataset"]),
        "runs": summary(config, paths.RUNS),
        "nulls": summary(config, paths.NULLS),
        "primer": paths.PRIMER_CHECK,
        "findings": summary(config, paths.FINDINGS),
    }
    if config["reproduction"]["reference"]:
        inputs["reproduction"] = summary(config, paths.REPRODUCTION)
    if config["variants"]:
        inputs["gaps"] = summary(config, paths.VARIANTS_GAP)
    if config["ep_stack"]["corpora"]:
        inputs["ep"] = paths.EP_BY_SEED
    if question := ep_question_findings(config):
        inputs["ep_question"] = question
    if claims_spec(config) is not None:  # the claims' sizes, the abstract's counts
        inputs["claims"] = claims_findings(config)
    return inputs


def paper_sources(config: Config) -> dict[str, Any]:
    return {"tex": paths.PAPER_TEX,
            "numbers": [paths.PAPER_NUMBERS, paths.PAPER_FINDINGS, paths.PAPER_CLAIMS],
            "figures": paper_figures(config)}


def claims_findings(config: Config) -> str:
    """The claims' findings the paper and fig_claims read: those the claims' runs make
    (paths.CLAIMS_FINDINGS); docs/ is never read."""
    if claims_spec(config) is None:
        raise ValueError("this config names no claims file (claims.file is null): there are "
                         "no claims' findings to read; set claims.file (config/README.md, "
                         "e.g. config/claims.yaml with the paper config) or ask for a target "
                         "that does not judge the claims")
    return summary(config, paths.CLAIMS_FINDINGS)


def paper_claims_inputs(config: Config) -> dict[str, str]:
    """What claims.tex is written from: the claims' findings where the config has claims
    (claims_findings), and what was fixed when (paths.HISTORY)."""
    inputs = {"history": paths.HISTORY}
    if claims_spec(config) is not None:
        inputs["findings"] = claims_findings(config)
    return inputs


