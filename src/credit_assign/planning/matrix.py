"""The run matrix: the config's sweep as one typed table of training runs.

``run_table(config)`` is every training job the config asks for, one :class:`Run` each:
(dataset, recipe, method, λ, seed), λ a float with its one path spelling beside it
(``lam_path``, written by :func:`lam_str`). Everything downstream reads λ from here:
the targets' paths (``Run.path``), a job's params (:func:`lam_of`, the spelling read
back), the runs a summary table must hold (``Run.key``; :func:`run_key` is how a table's
row is keyed), and figure 4's λ (:func:`figure_lam`). Two λ are the same λ by
:func:`same_lam` alone.

The sweep's form (workflow/schemas/config.schema.yaml): ``sweep.<method>`` is a list of
λ; one entry of ``sweep.dfa`` may be written ``{fig4: λ}``, which marks the penalised λ
that figure 4 (and the paper's penalty numbers) set against λ = 0 — the mark is part of
the list, so a config that replaces the list replaces the mark with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from credit_assign.infra import paths
from credit_assign.planning import ConfigError, catalog

Config = dict[str, Any]

LAM_RTOL = 1e-5  # λ agree to six significant digits: what a "%.6g" table keeps
FIGURE_MARK = "fig4"  # sweep.dfa: [0, 1.0e-4, {fig4: 1.0e-2}]
FIGURE_METHOD = "dfa"
# figure 4's λ when sweep.dfa has no penalised λ to mark: its penalty panels and the
# paper's penalty cells then name this λ and show it as not run
UNSWEPT_FIGURE_LAM = 1.0e-2
DEFAULT_RECIPE = paths.DEFAULT_RECIPE  # the stated recipe; a variant's recipe is its name


# ---- λ: one spelling, one equality --------------------------------------------------
def lam_str(lam) -> str:
    """The one spelling of a λ — in paths, wildcards and the tables' run keys: 0, 0.0001,
    0.01, 1e-05; a λ that six significant digits would round (1/3) is spelled in full
    (0.3333333333333333), so the λ a job reads back from its path is the config's."""
    x = float(lam)
    short = f"{x:g}"
    return short if float(short) == x else repr(x)


def lam_of(spelling: str) -> float:
    """The λ a path's (or wildcard's) spelling stands for: lam_str's inverse, exact."""
    return float(spelling)


def same_lam(a, b) -> bool:
    """The one equality of λ: to six significant digits (a table written with "%.6g"
    still finds 1/3), relative to ``b`` and never absolute (λ = 1e-9 is not λ = 0).
    np.isclose(a, b, rtol=LAM_RTOL, atol=0) for one pair: analysis.aggregate.same_lam
    is that call over a table's column."""
    a, b = float(a), float(b)
    return abs(a - b) <= LAM_RTOL * abs(b)


def run_key(method: str, lam, seed) -> tuple[str, str, int]:
    """A run as the tables key it: λ in the one spelling of its results path."""
    return str(method), lam_str(lam), int(seed)


# ---- the sweep's λ ------------------------------------------------------------------
def _entries(config: Config, method: str) -> list[tuple[float, bool]]:
    """sweep.<method> as (λ, marked for figure 4), in the config's order."""
    out = []
    for entry in config["sweep"].get(method, []):
        if isinstance(entry, dict):
            out.append((float(entry[FIGURE_MARK]), True))
        else:
            out.append((float(entry), False))
    return out


def sweep_lams(config: Config, method: str) -> list[float]:
    """The λ of sweep.<method>, floats in the config's order (a ``{fig4: λ}`` entry is
    its λ). Two entries that are one λ (same_lam: 1e-4 and 0.0001, or 0.01 and
    0.0100000001) are a ConfigError naming them: they would share a results path."""
    seen: list[float] = []
    for lam, _ in _entries(config, method):
        same = [x for x in seen if same_lam(lam, x) or same_lam(x, lam)]
        if same:
            raise ConfigError(
                f"sweep.{method}: λ = {same[0]!r} and {lam!r} are one λ to the tables "
                f"(lam{lam_str(same[0])} and lam{lam_str(lam)} agree to 6 digits); write "
                "it once, or make them differ in the first 6 digits")
        seen.append(lam)
    return seen


def figure_lam(config: Config) -> float:
    """The penalised λ figure 4 sets against λ = 0 (and the paper's penalty numbers):
    the entry of sweep.dfa written ``{fig4: λ}``. A sweep.dfa with a penalised λ marks
    exactly one, and only a penalised one (a ConfigError says how to write it); one
    without a penalised λ has none to mark: UNSWEPT_FIGURE_LAM, shown as not run."""
    entries = _entries(config, FIGURE_METHOD)
    sweep_lams(config, FIGURE_METHOD)  # no λ twice
    marked = [lam for lam, mark in entries if mark]
    penalised = [lam for lam, _ in entries if lam > 0]
    how = (f"write the one figure 4 shows as {{{FIGURE_MARK}: λ}} in the list, e.g. "
           f"sweep: {{dfa: [0, 1.0e-4, {{{FIGURE_MARK}: 1.0e-2}}]}}")
    if len(marked) > 1:
        raise ConfigError(f"sweep.dfa marks {len(marked)} λ for figure 4 "
                          f"({', '.join(map(repr, marked))}); mark one: {how}")
    if marked and not marked[0] > 0:
        raise ConfigError(f"sweep.dfa: {{{FIGURE_MARK}: {marked[0]!r}}} marks an unpenalised "
                          f"λ; figure 4 sets a penalised λ against λ = 0: {how}")
    if not marked and penalised:
        raise ConfigError(f"sweep.dfa {penalised} has penalised λ but marks none for "
                          f"figure 4: {how}")
    return marked[0] if marked else UNSWEPT_FIGURE_LAM


# ---- recipes --------------------------------------------------------------------------
def variant_of(config: Config, recipe: str | None) -> str | None:
    """The recipe variant a recipe names (config.variants), or None for the stated
    recipe (DEFAULT_RECIPE, or no recipe given). A recipe the config does not define is a
    ConfigError naming the ones it does."""
    if recipe in (None, DEFAULT_RECIPE):
        return None
    if recipe not in config["variants"] and arm_recipe(recipe) is None:
        known = ", ".join([DEFAULT_RECIPE, *config["variants"]])
        raise ConfigError(f"recipe {recipe!r}: not a recipe of this config ({known}); a "
                          "variant's results need its config file (config/variants.yaml)")
    return recipe


def arm_recipe(recipe: str) -> dict | None:
    """A dose-study arm's recipe (paths.DOSE_ARMS), for a config that does not lay that
    file over: the paper's dose section reads the arms' recorded results, and their jobs'
    params must be what the file made them. None for any other name."""
    import yaml

    try:
        with open(paths.DOSE_ARMS, encoding="utf-8") as fh:
            return (yaml.safe_load(fh).get("variants") or {}).get(recipe)
    except (OSError, AttributeError):
        return None


def study_seeds(config: Config) -> list[int]:
    """The seeds every recipe of the study runs on: study.seeds, or the sweep's."""
    return config["study"]["seeds"] or config["sweep"]["seeds"]


# ---- the table ------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    """One training job. ``dataset``: the data it trains on (``cifar10``); ``recipe``:
    DEFAULT_RECIPE (the stated recipe) or a recipe variant's name; ``lam``: the
    config's float, exactly; ``lam_path``: its one spelling (lam_str), in every path and
    wildcard of the run."""

    dataset: str
    recipe: str
    method: str
    lam: float
    seed: int
    lam_path: str = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "lam", float(self.lam))
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "lam_path", lam_str(self.lam))

    def path(self, pattern: str) -> str:
        """``pattern`` (infra.paths) filled with this run's wildcards."""
        return paths.fill(pattern, dataset=self.dataset, recipe=self.recipe,
                          method=self.method, lam=self.lam_path, seed=self.seed)

    def key(self) -> list:
        """[method, λ, seed]: how a table's expectation names the run (run_key keys it)."""
        return [self.method, self.lam, self.seed]


def run(config: Config, method: str, lam, seed) -> Run:
    """One run of the config's dataset under the stated recipe, outside the sweep's grid
    (a claim's run)."""
    return Run(config["dataset"], DEFAULT_RECIPE, method, lam, seed)


def run_table(config: Config, methods: Iterable[str] | None = None,
              dataset: str | None = None, recipe: str | None = None) -> list[Run]:
    """Every training job the config asks for, method by method (every registered rule,
    or ``methods``), then λ in the sweep's order, then seed: of the config's dataset (or
    ``dataset``) under the stated recipe, or under ``recipe``, a recipe variant: only its
    methods, on the study's seeds. A λ given twice is a ConfigError (sweep_lams)."""
    methods = catalog.methods() if methods is None else methods
    dataset = dataset or config["dataset"]
    seeds = config["sweep"]["seeds"]
    variant = variant_of(config, recipe)
    if variant:
        spec = config["variants"][variant]
        methods = [m for m in methods if m in spec["methods"]]
        seeds = study_seeds(config)
    return [Run(dataset, variant or DEFAULT_RECIPE, m, lam, seed) for m in methods
            for lam in sweep_lams(config, m) for seed in seeds]
