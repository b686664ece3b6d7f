# Helpers shared by the rules: target lists from config, the run config of a job.
import functools
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir) / "src"))
from credit_assign.pipeline.configfiles import seed_values  # noqa: E402 (pure Python, no torch)
from credit_assign.pipeline.recipe import method_training  # noqa: E402 (pure Python, no torch)

try:  # the learning rules: one module each in src/credit_assign/rules/
    from credit_assign.rules import catalog, options_of  # noqa: E402
except ImportError as err:
    raise WorkflowError(
        f"the workflow reads the learning rules (src/credit_assign/rules/) when it "
        f"parses the config, and that needs the project's packages ({err}): run "
        f"snakemake from the environment `make setup` (or `pip install -e .`) made"
    ) from None

# The registered learning rules, in name order (for each: label, colour, probed, the
# defaults of its options). Their names are what sweep.<method> and rule.<method> take.
RULE_INFO = catalog()
METHODS = tuple(RULE_INFO)
CORPORA = ("tinyshakespeare", "pydoc")
PRECISIONS = ("float32", "bfloat16")
FIG_FORMATS = ("pdf", "png", "svg")


wildcard_constraints:
    dataset="[a-z0-9]+(@[a-z0-9_]+)?",
    method="|".join(METHODS),
    lam="[0-9.e+-]+",
    seed="[0-9]+",
    fmt="|".join(FIG_FORMATS),
    corpus="|".join(CORPORA),
    precision="|".join(PRECISIONS),


TRAIN_OUTPUTS = ("metrics.json", "model.pt", "timings.json", "snapshots.pt")
# One training run's folder, the one place its pattern is written (rules: f"{RUN_DIR}/…")
RUN_DIR = "results/{dataset}/train/{method}/lam{lam}/seed{seed}"


def run_file(name, **wildcards):
    """A file of one run's folder: run_file("metrics.json", dataset=…, method=…, …)."""
    return f"{RUN_DIR}/{name}".format(**wildcards)


def lam_str(lam):
    """The one spelling of a λ in paths: 0, 0.0001, 0.01."""
    return f"{float(lam):g}"


def runs(methods=METHODS, dataset=None):
    """(method, λ-string, seed) for every training job the config asks for; for a
    recipe variant's dataset (`cifar10@<variant>`) only its methods and seeds."""
    sweep = config["sweep"]
    seeds = sweep["seeds"]
    variant = variant_of(dataset) if dataset else None
    if variant:
        spec = config["variants"][variant]
        methods = [m for m in methods if m in spec["methods"]]
        seeds = study_seeds()
    return [
        (m, lam_str(lam), seed) for m in methods for lam in sweep[m] for seed in seeds
    ]


def _dataset(wildcards):
    return wildcards.dataset if wildcards is not None else config["dataset"]


# ---- recipe variants: results/<dataset>@<variant>/... (config["variants"])
def base_dataset(dataset):
    """cifar10@const_lr -> cifar10: the data a variant trains on."""
    return dataset.split("@")[0]


def variant_of(dataset):
    return dataset.split("@")[1] if "@" in dataset else None


def variant_config(name):
    """The config with a variant's overrides laid over it (no variant: the config)."""
    import copy

    from snakemake.utils import update_config

    if not name:
        return config
    merged = copy.deepcopy(config)
    update_config(merged, copy.deepcopy(config["variants"][name]["overrides"]))
    return merged


def study_seeds():
    """The seeds every recipe of the study runs on: study.seeds, or the sweep's."""
    return config["study"]["seeds"] or config["sweep"]["seeds"]


def check_study():
    """The study's pre-registered seeds: the same for every recipe. study.seeds must be
    the sweep's (the default recipe's); a variant with other seeds than the study's is
    an error naming it (per-variant screening seeds are what the study rules out)."""
    seeds = study_seeds()
    if sorted(seeds) != sorted(config["sweep"]["seeds"]):
        raise WorkflowError(
            f"study.seeds = {seeds} differ from sweep.seeds = {config['sweep']['seeds']}: "
            "the default recipe runs on the sweep's seeds, and every recipe of the study "
            "must run on the same ones"
        )
    for name, spec in config["variants"].items():
        own = spec.get("seeds")
        if own is not None and sorted(own) != sorted(seeds):
            raise WorkflowError(
                f"variants.{name}.seeds = {own}: every recipe of the study runs on the "
                f"study's seeds {seeds} (study.seeds); remove the variant's seeds"
            )


def study_compute():
    """The study's core-minutes as a sentence, from the config and the per-epoch times
    recorded in docs/rebuild_estimate.json (credit_assign.compute)."""
    from credit_assign.pipeline.compute import statement

    return statement(config, Path(workflow.basedir) / "docs" / "rebuild_estimate.json")


def check_variants():
    """Every variant merged over the config validates like the config itself; an error
    names the variant and the key, before any job starts."""
    import copy

    from snakemake.utils import validate as validate_config

    check_study()
    for name in config["variants"]:
        merged = copy.deepcopy(variant_config(name))
        try:
            validate_config(merged, "../schemas/config.schema.yaml")
        except WorkflowError as err:
            raise WorkflowError(f"variants.{name}.overrides: {err}") from None
        check_methods(merged, f"variants.{name}.overrides: ")
        if not runs(dataset=f"{config['dataset']}@{name}"):
            raise WorkflowError(
                f"variants.{name}: none of its methods {config['variants'][name]['methods']} "
                f"has a λ in the sweep (sweep.<method>), so it has nothing to train; give "
                f"one a λ list or remove the variant"
            )


DATA_MANIFEST = "data/{dataset}.json"
DATA_CACHE = "data/{dataset}.pt"
CORPUS_MANIFEST = "data/corpus/{corpus}.json"
CORPUS_CACHE = "data/corpus/{corpus}.pt"


def dataset_manifest(wildcards):
    """What a job that reads the decoded data depends on: the data's manifest (its info
    and digest), which rule prepare_data rewrites when the source changes, so that every
    job reading the data reruns in the same run. Not the cache: a deleted cache is
    rebuilt by the first job that reads it (credit_assign.data.load), so it reruns
    nothing. (A variant reads its base dataset's.)"""
    return DATA_MANIFEST.format(dataset=base_dataset(wildcards.dataset))


def dataset_cache_path(wildcards):
    return DATA_CACHE.format(dataset=base_dataset(wildcards.dataset))


def variant_datasets():
    return [f"{config['dataset']}@{name}" for name in config["variants"]]


def variant_targets():
    """What `snakemake variants` builds: every variant's reproduction table, the gap map."""
    if not config["variants"]:
        return []
    return (
        [f"results/{ds}/summary/reproduction.csv" for ds in variant_datasets()]
        + [
            f"results/{config['dataset']}/summary/{name}"
            for name in (
                "variants_gap.csv",
                "reproduction_variants.md",
                "reproduction_notes.md",
            )
        ]
        + figure("fig_variants")
        + measured_figure()
    )


def measured_figure():
    """fig_variants_measured (rule variants_measured_map), where measurements run."""
    if not (config["variants"] and config["measurements"]["run"]):
        return []
    return figure("fig_variants_measured")


def train_metrics(wildcards=None, methods=METHODS):
    """Input function: every training result of the sweep."""
    return [
        run_file(
            "metrics.json", dataset=_dataset(wildcards), method=m, lam=lam, seed=seed
        )
        for m, lam, seed in runs(methods, _dataset(wildcards))
    ]


def train_timings(wildcards=None):
    """Input function: the wall-clock record beside every training result."""
    return [p.replace("metrics.json", "timings.json") for p in train_metrics(wildcards)]


def null_results(wildcards=None):
    """Input function: one fresh-B null per trained DFA model."""
    return [
        f"results/{_dataset(wildcards)}/fresh_b_null/{m}/lam{lam}/seed{seed}.json"
        for m, lam, seed in runs(("dfa",), _dataset(wildcards))
    ]


def probe_results(wildcards=None):
    """Input function: one probe result per training run (none if probes.epochs is empty)."""
    if not config["probes"]["epochs"] or variant_of(_dataset(wildcards)):
        return []
    return [
        f"results/{_dataset(wildcards)}/probes/{m}/lam{lam}/seed{seed}.json"
        for m, lam, seed in runs()
    ]


def measure_results(wildcards=None):
    """Input function: the measurement variants of every trained model (when enabled)."""
    if not config["measurements"]["run"]:
        return []
    return [
        f"results/{_dataset(wildcards)}/measure/{m}/lam{lam}/seed{seed}.json"
        for m, lam, seed in runs(METHODS, _dataset(wildcards))
    ]


def measurement_tables():
    """Every recipe's measurements.csv, default first (none unless measurements.run):
    the gap map's `<recipe>/<measurement>` columns."""
    if not config["measurements"]["run"]:
        return []
    return [
        f"results/{ds}/summary/measurements.csv"
        for ds in [config["dataset"], *variant_datasets()]
    ]


def table_expect(dataset=None):
    """The runs each summary table of a dataset (default: the config's; `cifar10@<v>`:
    a variant's) must hold, as [method, λ, seed]: what a figure, the paper and the notes
    check a table against before they read it (credit_assign.tables)."""
    dataset = dataset or config["dataset"]

    def rows(methods):
        return [[m, float(lam), int(seed)] for m, lam, seed in runs(methods, dataset)]

    return {"runs": rows(METHODS), "nulls": rows(("dfa",))}


def dataset_expect(wildcards):
    return table_expect(wildcards.dataset)


def variant_expect():
    """variant → the runs its runs.csv (and measurements.csv) must hold."""
    return {
        v: table_expect(ds)["runs"]
        for v, ds in zip(config["variants"], variant_datasets(), strict=True)
    }


def notes_expect():
    """The notes read the default's tables and every variant's runs.csv."""
    return table_expect() | {"variants": variant_expect()}


def gap_map_expect():
    """recipe → the runs its measurements.csv must hold (the gap map reads them)."""
    if not config["measurements"]["run"]:
        return {}
    return {"default": table_expect()["runs"]} | variant_expect()


def method_styles():
    """Each rule's label and colour, as its module declares them: what the figures and
    the paper show (they do not import the rules)."""
    return {m: {"label": r["label"], "color": r["color"]} for m, r in RULE_INFO.items()}


def probe_settings(wildcards):
    """The probe's settings, and the options of the rules it measures on every network
    (the registry's probed rules). Its node-perturbation estimates take their settings
    from probes.*, not from rule.np."""
    settings = {
        k: v for k, v in config["probes"].items() if k not in ("epochs", "network")
    }
    probed = [m for m, r in RULE_INFO.items() if r["probed"]]
    return {**settings, "rules": {m: config["rule"][m] for m in probed}}


def summary_tables():
    return [
        f"results/{config['dataset']}/summary/{name}.csv"
        for name in ("runs", "epochs", "layers", "nulls")
    ]


def figure(name):
    return [f"paper/figures/{name}.{fmt}" for fmt in FIG_FORMATS]


def reproduction_tables():
    """The paper-vs-ours tables, when the config names a reference file."""
    if not config["reproduction"]["reference"]:
        return []
    return [
        f"results/{config['dataset']}/summary/reproduction.{ext}"
        for ext in ("csv", "md")
    ]


# ---- the EP stack probe (workflow/rules/ep_stack.smk)
def ep_precisions():
    """The pretraining precisions run: the config's, then the comparison's."""
    ep = config["ep_stack"]
    main = ep["pretrain"]["precision"]
    return [main] + [p for p in ep["compare_precisions"] if p != main]


def ep_results():
    """One probe per (corpus, pretraining precision, seed)."""
    ep = config["ep_stack"]
    return [
        f"results/ep_stack/{corpus}/{precision}/seed{seed}.json"
        for corpus in ep["corpora"]
        for precision in ep_precisions()
        for seed in ep["seeds"]
    ]


def corpus_version(wildcards):
    """What a corpus' text depends on beyond its name: pydoc's is the documentation of
    the Python that runs the workflow (a new version re-encodes it and reruns its
    probes); Tiny Shakespeare's is pinned by its sha256."""
    import platform

    return platform.python_version() if wildcards.corpus == "pydoc" else ""


def ep_settings(wildcards):
    """What a probe depends on (not which corpora, seeds or comparisons the sweep
    has), with the pretraining precision of its path."""
    ep = config["ep_stack"]
    settings = {
        k: v
        for k, v in ep.items()
        if k not in ("corpora", "seeds", "compare_precisions", "settle")
    }
    settings["pretrain"] = {**ep["pretrain"], "precision": wildcards.precision}
    return settings


def ep_settle(wildcards):
    """The settling criterion: the summary's, never a probe's."""
    return config["ep_stack"]["settle"]


def ep_targets():
    if not config["ep_stack"]["corpora"]:
        return []
    return ["results/ep_stack/summary/cosines.csv"] + figure("fig_ep_stack_cosines")


def intermediates():
    """Every file a job writes that later jobs read. Part of `all`, so that one
    deleted (by hand, as an error message advised, or by a failed rerun) is rebuilt
    by the next run, instead of a run that reports success with a gap."""
    out = [DATA_MANIFEST.format(dataset=config["dataset"])]
    for metrics in train_metrics():
        run_dir = metrics.rsplit("/", 1)[0]
        out += [f"{run_dir}/{name}" for name in TRAIN_OUTPUTS]
    out += null_results() + probe_results() + measure_results()
    out += [CORPUS_MANIFEST.format(corpus=c) for c in config["ep_stack"]["corpora"]]
    out += ep_results() + [p.replace(".json", ".timings.json") for p in ep_results()]
    return out


def all_targets():
    return (
        intermediates()
        + summary_tables()
        + reproduction_tables()
        + figure("fig4_penalty_rescue")
        + figure("fig_primer_phases")
        + figure("fig_primer_check")
        + (figure("fig_alignment_probes") if config["probes"]["epochs"] else [])
        + (
            [f"results/{config['dataset']}/summary/measurements.csv"]
            if config["measurements"]["run"]
            else []
        )
        + ep_targets()
    )


def run_config(wildcards):
    """Everything a training job depends on, and nothing else: a changed key
    reruns exactly the jobs it affects (Snakemake's params trigger)."""
    variant = variant_of(wildcards.dataset)
    cfg = variant_config(variant)
    run = {
        "dataset": base_dataset(wildcards.dataset),
        "method": wildcards.method,
        "lam": float(wildcards.lam),
        "seed": int(wildcards.seed),
        "model": {**cfg["model"], "final_norm": True},
        "training": method_training(cfg["training"], wildcards.method),
        "rule": cfg["rule"][wildcards.method],
        "diagnostics": cfg["diagnostics"],
    }
    return {**run, "variant": variant} if variant else run


def train_priority(wildcards):
    """Longest jobs first: a training job's priority is its number of epochs (FA's 100
    before the 30-epoch runs), so that on a few cores no long job starts last and runs
    alone while the other cores idle. The EP stack probes (longer still) rank above."""
    return run_config(wildcards)["training"]["epochs"]


# above every training job: each EP stack probe is the longest job of a rebuild
EP_PRIORITY = 1000


def reproduction_config(wildcards):
    """What the reproduction table's header reports (reproduction.context), and nothing
    else: a change to another key does not rerun it."""
    name = variant_of(wildcards.dataset)
    cfg = variant_config(name)
    t = cfg["training"]
    out = {
        "dataset": cfg["dataset"],
        "model": {k: cfg["model"][k] for k in ("width", "depth")},
        "training": {
            k: t[k]
            for k in (
                "epochs",
                "batch_size",
                "lr",
                "weight_decay",
                "augmentation",
                "schedule",
                "schedule_step",
            )
            if k in t
        }
        | {
            "per_method": {
                m: {"epochs": v["epochs"]}
                for m, v in t.get("per_method", {}).items()
                if "epochs" in v
            }
        },
        "sweep": {"seeds": cfg["sweep"]["seeds"]},
        "diagnostics": {"n_samples": cfg["diagnostics"]["n_samples"]},
        "fresh_b_null": {"draws": cfg["fresh_b_null"]["draws"]},
        "reproduction": {"reference": cfg["reproduction"]["reference"]},
    }
    if name:
        spec = config["variants"][name]
        out["variant"] = {"name": name, **spec}
        out["sweep"] = {"seeds": study_seeds()}
    return out


# Data with a configurable source (config["data"]): what a local copy must look like
# (cheap checks only: a folder's layout, a file's header), and the advice when it does
# not. Digits and pydoc ship with their packages.
def _cifar_source_ok(path):
    import tarfile

    if path.is_dir():  # train/ and test/ at the top or one folder down
        return any(
            (d / "train").is_dir() and (d / "test").is_dir()
            for d in [path, *[c for c in path.iterdir() if c.is_dir()]]
        )
    return path.is_file() and tarfile.is_tarfile(path)


LOCAL_COPY = {
    "cifar10": (
        _cifar_source_ok,
        "is not an image folder with train/<class>/ and test/<class>/ folders, nor a "
        "tar archive. Point it at an image folder, a .tar of one, or the official "
        "cifar-10-python.tar.gz, or set it to 'download'.",
    ),
    "tinyshakespeare": (
        lambda path: path.is_file() and path.stat().st_size > 0,
        "is not a (non-empty) file. Point it at a copy of Tiny Shakespeare or set it to "
        "'download'.",
    ),
}


def data_source(wildcards):
    """Where a dataset's or corpus' bytes come from ('' for data shipped with a package)."""
    name = base_dataset(wildcards.get("dataset") or wildcards.get("corpus"))
    return config["data"][name]["source"] if name in LOCAL_COPY else ""


def source_stamp(wildcards):
    """What a local data source holds: a digest of its bytes (credit_assign.sources), a
    param of prepare_data, so that a source whose bytes change (in place, or replaced at
    the same path) reruns it and everything that reads the data, while a copy, a touch or
    a re-extraction (same bytes, new mtimes) reruns nothing. '' for a download or data
    shipped with a package."""
    source = data_source(wildcards)
    if source in ("", "download"):
        return ""
    return _stamp(str(Path(source).expanduser()))


@functools.lru_cache
def _stamp(path):
    from credit_assign.sources import source_digest

    return source_digest(path, cache="data/.source-digests.json")


def check_data_sources():
    """Fail at parse time, before any job starts, when a configured path is missing."""
    for name in (config["dataset"], *config["ep_stack"]["corpora"]):
        if name not in LOCAL_COPY:
            continue
        source = config["data"][name]["source"]
        usable, advice = LOCAL_COPY[name]
        if source != "download" and not usable(Path(source).expanduser()):
            raise WorkflowError(f"data.{name}.source = {source!r} {advice}")


def check_methods(cfg, where=""):
    """Every method the config names is a registered rule, and each rule's options
    block (rule.<method>) is valid: filled in with the rule's defaults, so that a run
    records all the options it ran with. Registered rules absent from the sweep are not
    run (sweep.<method> = []). The schema cannot say this: the methods are whatever
    modules src/credit_assign/rules/ holds."""
    known = f"registered rules: {list(METHODS)} (one module each in src/credit_assign/rules/)"
    named = {
        "sweep": [m for m in cfg["sweep"] if m != "seeds"],
        "rule": list(cfg["rule"]),
        "training.per_method": list(cfg["training"]["per_method"]),
        "probes.network.method": [cfg["probes"]["network"]["method"]],
    }
    named |= {
        f"variants.{name}.methods": spec["methods"]
        for name, spec in cfg.get("variants", {}).items()
    }
    for key, methods in named.items():
        for method in methods:
            if method not in METHODS:
                owners = [m for m, r in RULE_INFO.items() if method in r["defaults"]]
                hint = (
                    f" ({method!r} is an option of {', '.join(owners)}: write it as "
                    f"rule.<method>.{method})"
                    if owners
                    else ""
                )
                raise WorkflowError(
                    f"{where}{key}: {method!r} is not a learning rule{hint}; {known}"
                )
    for method in METHODS:
        block = cfg["rule"].get(method)
        if block is not None and not isinstance(block, dict):
            raise WorkflowError(
                f"{where}rule.{method}: {block!r} is not a mapping of options"
            )
        try:
            options = options_of(method, block)
        except ValueError as err:
            raise WorkflowError(f"{where}{err}") from None
        cfg["rule"][method] = options.to_config()
        cfg["sweep"].setdefault(method, [])


def check_config_values():
    """What the schema cannot say: every number finite (the schema's bounds let NaN
    through), and no two λ of a method sharing a results path."""
    import math

    def walk(value, key):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{key}.{k}" if key else str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{key}[{i}]")
        elif isinstance(value, float) and not math.isfinite(value):
            raise WorkflowError(f"config key {key} = {value}: numbers must be finite")

    walk(config, "")
    for key, value in seed_values(config):
        if isinstance(value, bool) or not isinstance(value, int):
            raise WorkflowError(
                f"config key {key} = {value!r}: a seed is a plain integer (e.g. 42), not "
                f"a {type(value).__name__}"
            )
    if not any(config["sweep"][m] for m in METHODS):
        raise WorkflowError(
            f"sweep: every sweep.<method> is empty, so there is nothing to train; give at "
            f"least one method a λ list (registered: {', '.join(METHODS)})"
        )
    lam = config["figures"]["penalty_lambda"]
    penalised = [x for x in config["sweep"]["dfa"] if x > 0]
    if penalised and lam_str(lam) not in map(lam_str, penalised):
        raise WorkflowError(
            f"figures.penalty_lambda = {lam!r} is not one of sweep.dfa's penalised λ "
            f"{penalised}: fig4 would draw empty panels; pick one of them"
        )
    for method in METHODS:
        paths = {}
        for lam in config["sweep"][method]:
            path = lam_str(lam)
            if path in paths:
                raise WorkflowError(
                    f"sweep.{method}: λ = {paths[path]!r} and {lam!r} would share the "
                    f"results path lam{path}; make them differ in the first 6 digits"
                )
            paths[path] = lam


check_methods(config)
check_config_values()
check_variants()
check_data_sources()


# ---- the paper (workflow/rules/paper.smk)
def paper_figures():
    """The figure PDFs the manuscript includes for this config."""
    names = ["fig4_penalty_rescue", "fig_primer_phases", "fig_primer_check"]
    names += ["fig_ep_stack_cosines"] if config["ep_stack"]["corpora"] else []
    names += ["fig_variants"] if config["variants"] else []
    names += ["fig_variants_measured"] if measured_figure() else []
    names += ["fig_alignment_probes"] if config["probes"]["epochs"] else []
    return [f"paper/figures/{name}.pdf" for name in names]


def paper_number_inputs(wildcards):
    """The tables numbers.tex is written from (what this config produces)."""
    summary = f"results/{config['dataset']}/summary"
    inputs = {
        "info": DATA_MANIFEST.format(dataset=config["dataset"]),
        "runs": f"{summary}/runs.csv",
        "nulls": f"{summary}/nulls.csv",
        "primer": "results/primer_check/primer_check.json",
    }
    if config["reproduction"]["reference"]:
        inputs["reproduction"] = f"{summary}/reproduction.csv"
    if config["variants"]:
        inputs["gaps"] = f"{summary}/variants_gap.csv"
    if config["ep_stack"]["corpora"]:
        inputs["ep"] = "results/ep_stack/summary/by_seed.csv"
    return inputs


def paper_number_config(wildcards):
    """The config keys numbers.tex reads (a change elsewhere does not rewrite it), and
    the rules' labels."""
    keys = ("dataset", "model", "training", "sweep", "diagnostics", "figures", "probes")
    return {
        **{k: config[k] for k in keys},
        "labels": {m: style["label"] for m, style in method_styles().items()},
        "study": config["study"],
        "ep_stack": {k: config["ep_stack"][k] for k in ("corpora", "seeds", "model")}
        | {
            "pretrain": {
                k: config["ep_stack"]["pretrain"][k]
                for k in ("steps", "relax_steps", "precision")
            }
        },
    }


def paper_sources(wildcards=None):
    return {
        "tex": "paper/ms.tex",
        "numbers": "paper/numbers.tex",
        "figures": paper_figures(),
    }


def paper_build_inputs(wildcards):
    """paper_sources, after checking for a TeX engine: without one, asking for the PDF
    fails at once (before any job runs) with what to install."""
    from credit_assign.paper import missing_tex

    if problem := missing_tex():
        raise WorkflowError(f"paper/ms.pdf: {problem}")
    return paper_sources()
