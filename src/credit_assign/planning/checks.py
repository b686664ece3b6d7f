"""What the schema (workflow/schemas/config.schema.yaml) cannot say about a config,
checked when the workflow parses it, before any job: each a ConfigError naming the key.
``prepare`` is the whole parse sequence the Snakefile runs (the files as written, the
schema, then ``check_config``); ``load_config`` reads the files and runs it, as the
workflow does. ``check_config`` runs the checks, in order; ``check_methods`` fills every
rule's options block with its defaults (a run records all the options it ran with).
"""

from __future__ import annotations

import copy
import json
import math
import tarfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from credit_assign.infra import paths
from credit_assign.migrations import config_keys
from credit_assign.planning import ConfigError, catalog
from credit_assign.planning.configfiles import check_files, exponent_strings, seed_values
from credit_assign.planning.matrix import (
    FIGURE_MARK,
    figure_lam,
    run_table,
    study_seeds,
    sweep_lams,
)
from credit_assign.planning.targets import _update, variant_config

Config = dict[str, Any]


def check_methods(cfg: Config, where: str = "") -> None:
    """Every method the config names is a registered rule, and each rule's options
    block (methods.<method>) is valid: filled in with the rule's defaults, so that a run
    records all the options it ran with. Registered rules absent from the sweep are not
    run (sweep.<method> = []). The schema cannot say this: the methods are whatever
    modules src/credit_assign/science/learning_rules/ holds."""
    rules = catalog.load()
    methods = tuple(rules)
    known = (f"registered rules: {list(methods)} (one module each in "
             "src/credit_assign/science/learning_rules/)")
    named = {
        "sweep": [m for m in cfg["sweep"] if m != "seeds"],
        "methods": list(cfg["methods"]),
        "training.per_method": list(cfg["training"]["per_method"]),
        "probes.network.method": [cfg["probes"]["network"]["method"]],
    }
    named |= {f"variants.{name}.methods": spec["methods"]
              for name, spec in cfg.get("variants", {}).items()}
    for key, named_methods in named.items():
        for method in named_methods:
            if method not in methods:
                owners = [m for m, r in rules.items() if method in r["defaults"]]
                hint = (f" ({method!r} is an option of {', '.join(owners)}: write it as "
                        f"methods.<method>.{method})" if owners else "")
                raise ConfigError(f"{where}{key}: {method!r} is not a learning rule{hint}; "
                                  f"{known}")
    for method in methods:
        block = cfg["methods"].get(method)
        if block is not None and not isinstance(block, dict):
            raise ConfigError(f"{where}methods.{method}: {block!r} is not a mapping of options")
        try:
            cfg["methods"][method] = catalog.options_of(method, block)
        except ValueError as err:
            raise ConfigError(f"{where}{err}") from None
        cfg["sweep"].setdefault(method, [])


# A variant's name is its results folder (results/<dataset>/<name>/), part of its logs'
# names (logs/aggregate/<dataset>/<name>_measurements.log, 255 bytes a name at most) and a
# column header of the paper's fig_variants_key at 7 pt: measured there, a header held 9
# to 14 characters on one line (m … x) before it met its neighbour, so the figure wraps
# a name in lines of 64 pt (studies.variants.gap_key.wrap_name); at 32 characters of the widest
# letter that is 4 lines and the headers stay apart and on the canvas
# (tests/test_reproduction.py). The schema says the same (propertyNames.maxLength).
VARIANT_NAME_MAX = 32


def check_variant_names(config: Config) -> None:
    """No variant's name longer than VARIANT_NAME_MAX, checked before the schema, whose
    refusal would not say why ("... is too long")."""
    variants = config.get("variants")
    for name in (variants if isinstance(variants, dict) else ()):
        if isinstance(name, str) and len(name) > VARIANT_NAME_MAX:
            raise ConfigError(
                f"variants.{name}: a variant's name is at most {VARIANT_NAME_MAX} "
                f"characters (this one has {len(name)}): it names the recipe's results "
                "folder and logs and a column header of the paper's fig_variants_key, "
                f"which holds {VARIANT_NAME_MAX} characters at print size; choose a "
                "shorter name (the description can say more)")


def check_config_values(config: Config) -> None:
    """What the schema cannot say: every number finite (the schema's bounds let NaN
    through), seeds plain integers, something to train, no two λ of a method sharing a
    results path, and figure 4's λ marked in sweep.dfa (planning.matrix)."""

    def walk(value, key):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{key}.{k}" if key else str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{key}[{i}]")
        elif isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"config key {key} = {value}: numbers must be finite")

    walk(config, "")
    for key, value in seed_values(config):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(
                f"config key {key} = {value!r}: a seed is a plain integer (e.g. 42), not "
                f"a {type(value).__name__}")
    methods = catalog.methods()
    if not any(config["sweep"][m] for m in methods):
        raise ConfigError(
            f"sweep: every sweep.<method> is empty, so there is nothing to train; give at "
            f"least one method a λ list (registered: {', '.join(methods)})")
    for method in methods:
        sweep_lams(config, method)  # no λ twice: two λ of one method share no results path
    figure_lam(config)  # sweep.dfa marks figure 4's λ, a penalised one
    check_probe_epochs(config)


def check_probe_epochs(config: Config) -> None:
    """probes.epochs names checkpoints every run saves: an epoch past a swept method's
    last would be silently missing from the probe tables and figure."""
    from credit_assign.planning.method_training import method_training

    wanted = config["probes"]["epochs"]
    for method in catalog.methods():
        if not config["sweep"][method]:
            continue
        last = method_training(config["training"], method)["epochs"]
        beyond = [e for e in wanted if e > last]
        if beyond:
            raise ConfigError(
                f"probes.epochs: {', '.join(map(str, beyond))} past the last epoch of "
                f"{method} ({last}, training.epochs or training.per_method.{method}); "
                f"probe epochs 1 … {last}")


def check_study(config: Config) -> None:
    """The study's seeds: the same for every recipe. study.seeds must be
    the sweep's (the default recipe's); a variant with other seeds than the study's is
    an error naming it (per-variant screening seeds are what the study rules out)."""
    seeds = study_seeds(config)
    if sorted(seeds) != sorted(config["sweep"]["seeds"]):
        raise ConfigError(
            f"study.seeds = {seeds} differ from sweep.seeds = {config['sweep']['seeds']}: "
            "the default recipe runs on the sweep's seeds, and every recipe of the study "
            "must run on the same ones")
    for name, spec in config["variants"].items():
        own = spec.get("seeds")
        if own is not None and sorted(own) != sorted(seeds):
            raise ConfigError(
                f"variants.{name}.seeds = {own}: every recipe of the study runs on the "
                f"study's seeds {seeds} (study.seeds); remove the variant's seeds")


def check_variants(config: Config, schema: str | Path = paths.CONFIG_SCHEMA) -> None:
    """Every variant merged over the config validates like the config itself (against
    ``schema``, by Snakemake's validator); an error names the variant and the key."""
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    check_study(config)
    for name in config["variants"]:
        merged = copy.deepcopy(variant_config(config, name))
        try:
            validate(merged, str(schema))
        except WorkflowError as err:
            raise ConfigError(f"variants.{name}.overrides: {err}") from None
        check_methods(merged, f"variants.{name}.overrides: ")
        if not run_table(config, recipe=name):
            raise ConfigError(
                f"variants.{name}: none of its methods {config['variants'][name]['methods']} "
                f"has a λ in the sweep (sweep.<method>), so it has nothing to train; give "
                f"one a λ list or remove the variant")


# Data with a configurable source (config["data"]): what a local copy must look like
# (cheap checks only: a folder's layout, a file's header), and the advice when it does
# not. Digits and pydoc ship with their packages.
def _cifar_source_ok(path: Path) -> bool:
    if path.is_dir():  # train/ and test/ at the top or one folder down
        return any((d / "train").is_dir() and (d / "test").is_dir()
                   for d in [path, *[c for c in path.iterdir() if c.is_dir()]])
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


def check_data_sources(config: Config) -> None:
    """Fail at parse time, before any job starts, when a configured path is missing."""
    for name in (config["dataset"], *config["ep_stack"]["corpora"]):
        if name not in LOCAL_COPY:
            continue
        source = config["data"][name]["source"]
        usable, advice = LOCAL_COPY[name]
        if source != "download" and not usable(Path(source).expanduser()):
            raise ConfigError(f"data.{name}.source = {source!r} {advice}")


def check_config(config: Config, root: str | Path = ".") -> None:
    """Every check, in the order the workflow runs them on the schema-validated config
    (``root``: the workflow's folder, where the schema is): fills in the rules' options."""
    check_methods(config)
    check_config_values(config)
    check_variants(config, Path(root) / paths.CONFIG_SCHEMA)
    check_data_sources(config)


def check_default_loaded(configfiles: Iterable[str | Path], root: str | Path) -> None:
    """The paper config (``root``/paths.DEFAULT_CONFIG) is the first layer of every run:
    a run that lacks it (a folder without it, Snakemake skipping a missing configfile
    when --configfile is given) would plan other jobs silently."""
    default = (Path(root) / paths.DEFAULT_CONFIG).resolve()
    loaded = [Path(f).resolve() for f in configfiles]
    if default not in loaded:
        raise ConfigError(f"{default} was not loaded (the config files are "
                          f"{', '.join(map(str, loaded)) or 'none'}): every run lays its "
                          f"--configfile over the paper config; restore {paths.DEFAULT_CONFIG}")


# config keys that name a file of the repository (the paper config's are relative to it)
FILE_KEYS = (("reproduction", "reference"), ("claims", "file"))


def locate_files(config: Config, root: str | Path) -> None:
    """A file key's relative path that is not in the working folder but is in the
    workflow's (``root``: a run from --directory elsewhere, or from a subfolder) is
    read from the workflow's folder."""
    for section, key in FILE_KEYS:
        value = config.get(section, {}).get(key)
        if value and not Path(value).is_absolute() and not Path(value).exists() \
                and (Path(root) / value).exists():
            config[section][key] = str((Path(root) / value).resolve())


def prepare(config: Config, configfiles: Iterable[str | Path] = (),
            root: str | Path = ".") -> None:
    """The one parse sequence of a config, in place: what the Snakefile runs on the config
    Snakemake merged from ``configfiles`` (``root``: the workflow's folder, where the
    schema is). The files' spelling (configfiles.check_files: duplicate keys, seeds), the
    schema (its defaults filled in, by Snakemake's validator), then check_config (the
    rules' options filled in). Every refusal is a ConfigError (ConfigFileError is one;
    the schema's WorkflowError becomes one, with its message)."""
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    check_files(configfiles)
    # a key that is gone, before the schema, whose refusal would not say what to write now
    if gone := config_keys.gone(config, figure_mark=FIGURE_MARK):
        raise ConfigError(gone[0])
    check_variant_names(config)  # the same: the schema would say only "too long"
    try:
        validate(config, str(Path(root) / paths.CONFIG_SCHEMA))
    except WorkflowError as err:
        # a number YAML read as a string ('1.0e9' from --config: the files' check named
        # those in files): the same hint, not only "'1.0e9' is not of type 'number'"
        for key, value, fix in exponent_strings(config):
            if repr(value) in str(err):
                raise ConfigError(
                    f"{key} = {value} is read as the string '{value}', not a number (a "
                    "--config value is read by YAML as a config file is); write it with a "
                    f"dot and a signed exponent: {fix}") from None
        raise ConfigError(str(err)) from None
    check_config(config, root)
    locate_files(config, root)
    from credit_assign.planning.targets import claims_spec

    claims_spec(config)  # the claims file, if the config names one (a ClaimsError)


def typed_overrides(overrides: Config) -> Config:
    """``--config``'s values with the scalars Snakemake left as strings typed as a config
    file types them: Snakemake reads a nested value (``training={'lr': 0.5}``) with YAML's
    base loader, which keeps every scalar a string, so ``0.5`` reached the schema as
    '0.5'. Each nested string that YAML reads as a number, a boolean or null becomes one;
    any other string (a path, a name, ``1.0e9``, which YAML 1.1 reads as a string and the
    schema's refusal then explains) stays as written."""
    import yaml

    def typed(value, nested):
        if isinstance(value, dict):
            return {k: typed(v, True) for k, v in value.items()}
        if isinstance(value, list):
            return [typed(v, True) for v in value]
        if nested and isinstance(value, str):
            try:
                read = yaml.safe_load(value)
            except yaml.YAMLError:
                return value
            if read is None or isinstance(read, bool | int | float):
                return read
        return value

    return {k: typed(v, False) for k, v in (overrides or {}).items()}


def load_config(configfiles=(), root: str | Path = ".", overrides: Config | None = None
                ) -> Config:
    """The config the workflow parses from ``root`` with ``--configfile *configfiles``
    (and ``--config`` ``overrides``), then ``prepare``, as the Snakefile runs it. Merged
    as Snakemake merges (its keys in the same order): the command line's files and
    overrides, paths.DEFAULT_CONFIG (the Snakefile's ``configfile:``) laid over them, and
    the command line's laid over that again. Errors: ConfigError (ConfigFileError for the
    files as written)."""
    import yaml

    def load(path):
        return yaml.safe_load(Path(path).read_text()) or {}

    root = Path(root)
    files = [root / f for f in configfiles]
    command_line: Config = {}
    for path in files:
        _update(command_line, load(path))
    _update(command_line, typed_overrides(copy.deepcopy(overrides or {})))
    config = copy.deepcopy(command_line)
    _update(config, load(root / paths.DEFAULT_CONFIG))
    _update(config, copy.deepcopy(command_line))
    prepare(config, [*files, root / paths.DEFAULT_CONFIG], root)
    return config


def source_note(config: Config, root: str | Path = ".") -> str | None:
    """Where this config's data source is not what the record's results of its dataset
    were made from (the record's manifest names it by file name and sha256), what that
    means; None where they agree or cannot differ (data shipped with a package). Said at
    every parse: nothing recorded reruns for another source (the data step keeps no
    record here), so without it the disagreement would go unseen until a job reads the
    data and stops on their digest."""
    name = config.get("dataset")
    from credit_assign.infra.record import MANIFESTS

    copy = Path(root) / MANIFESTS / paths.fill(paths.DATA_MANIFEST, dataset=name)
    source = ((config.get("data") or {}).get(name) or {}).get("source")
    if not source or not copy.is_file():
        return None
    made = json.loads(copy.read_text()).get("source", "")
    if source == "download":
        if made.startswith("cifar-10-python.tar.gz"):
            return None
        here = "the download (the official archive)"
    else:
        from credit_assign.infra.sources import source_digest

        local = Path(source).expanduser()
        if local.is_dir():  # a folder is recorded by its name (its digest: the data's)
            return None if made == f"{local.name}/ (image folder)" else (
                f"data: the record's {name} results were made from {made}; this "
                f"config's source is the folder {source}. A job that reads the data "
                "builds it from this source and stops if the data differ from the "
                "record's (their digest).")
        digest = source_digest(local, cache=Path(root) / paths.SOURCE_DIGESTS,
                               write=False) if local.exists() else ""
        if local.is_file() and f"(sha256 {digest.removeprefix('sha256:')})" in made:
            return None
        here = f"{source}" + (f" ({digest})" if digest else " (missing)")
    return (f"data: the record's {name} results were made from {made}; this config's "
            f"source is {here}. Nothing recorded reruns for it: a job that reads the data "
            "builds it from this source and stops if the data differ from the record's "
            "(their digest). To train on other data, rerun the data step: "
            "snakemake --forcerun prepare_data")
