"""The dose study's plan (config/claims_dose.yaml): read, checked, and the runs it reads.

Each arm of the plan is one DFA option; it runs as its own rule
(science/learning_rules/dfa_arms.py), so that the runs already in the record keep
their code: ``ARM_RULES`` says which.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jsonschema
import yaml

from credit_assign.infra import paths
from credit_assign.planning.matrix import lam_str

# the study's own paths (a room's files are its own: the shared table, infra.paths, is
# part of every report step's code, and a new study must not rerun the others)
PLAN = "config/claims_dose.yaml"
CONFIG = "config/dose.yaml"  # the arms as recipes, laid over the paper config to run them
ARM_RULES = {"branch_cap": ("dfa_cap", "cap"), "redraw_every": ("dfa_redraw", "redraw_every")}

_RUN = {"type": "object", "additionalProperties": False,
        "properties": {"lam": {"type": "number", "minimum": 0},
                       "method": {"enum": ["dfa", "frozen"]},
                       "arm": {"type": "string"}, "value": {"type": "number"}}}
_PART = {
    "type": "object", "additionalProperties": False,
    "required": ["id", "text", "effect", "claim", "favours"],
    "properties": {
        "id": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
        "text": {"type": "string"},
        "effect": {"type": "object", "required": ["kind"], "oneOf": [
            {"properties": {"kind": {"const": "diff"}, "metric": {"type": "string"},
                            "a": _RUN, "b": _RUN}, "required": ["metric", "a", "b"],
             "additionalProperties": False},
            {"properties": {"kind": {"const": "null_gap"}, "a": _RUN,
                            "layers": {"type": "array", "items": {"const": "deep"}}},
             "required": ["a", "layers"], "additionalProperties": False},
            {"properties": {"kind": {"const": "dose_correlation"}, "x": {"type": "string"},
                            "y": {"type": "string"}},
             "required": ["x", "y"], "additionalProperties": False}]},
        "claim": {"type": "object", "oneOf": [
            {"properties": {"side": {"enum": ["greater", "less"]},
                            "threshold": {"type": "number"}},
             "required": ["side", "threshold"], "additionalProperties": False},
            {"properties": {"side": {"const": "within"},
                            "margin": {"type": "number", "exclusiveMinimum": 0}},
             "required": ["side", "margin"], "additionalProperties": False}]},
        "favours": {"type": "object", "additionalProperties": {"type": "string"},
                    "propertyNames": {"enum": ["holds", "contradicted", "undecided"]}},
    }}
SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["version", "seeds", "recipe", "dose", "arms", "decision", "tables",
                 "mediation"],
    "properties": {
        "version": {"const": 1},
        "seeds": {"type": "array", "items": {"type": "integer", "minimum": 0},
                  "minItems": 3, "uniqueItems": True},
        "recipe": {"type": "string"},
        "dose": {"type": "object", "required": ["method", "lam"],
                 "properties": {"method": {"const": "dfa"},
                                "lam": {"type": "array", "minItems": 3,
                                        "items": {"type": "number", "minimum": 0}}}},
        "arms": {"type": "object", "additionalProperties": {
            "type": "object", "required": ["method", "option", "values", "lam"],
            "properties": {"method": {"const": "dfa"},
                           "option": {"enum": list(ARM_RULES)},
                           "values": {"type": "array", "minItems": 1,
                                      "items": {"type": "number"}},
                           "lam": {"oneOf": [{"type": "number"},
                                             {"type": "array", "items": {"type": "number"}}]}}}},
        "decision": {"type": "object", "required": ["method", "confidence", "correction",
                                                    "min_seeds"],
                     "properties": {"method": {"const": "t"},
                                    "confidence": {"type": "number"},
                                    "correction": {"const": "holm"},
                                    "min_seeds": {"type": "integer", "minimum": 2}}},
        "tables": {"type": "object", "additionalProperties": {"type": "array",
                                                              "items": _PART}},
        "mediation": {"type": "object"},
    }}


class PlanError(ValueError):
    """A plan this study cannot judge, named."""


ROOT = Path(__file__).resolve().parents[4]  # the checkout: the plan is found from any folder


def load(path: str | Path | None = None) -> dict:
    """The plan (default: this checkout's), checked against SCHEMA (a wrong key or value
    is named with its place)."""
    path = ROOT / PLAN if path is None else Path(path)
    try:
        plan = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(f"{path}: the dose study's plan is missing") from None
    for parts in (plan or {}).get("tables", {}).values():
        for part in parts:
            _rejoin(part.get("favours") or {})
    try:
        jsonschema.validate(plan, SCHEMA)
    except jsonschema.ValidationError as err:
        where = ".".join(map(str, err.absolute_path)) or "(top)"
        raise PlanError(f"{path}: {where}: {err.message}") from None
    ids = [p["id"] for parts in plan["tables"].values() for p in parts]
    if len(set(ids)) != len(ids):
        raise PlanError(f"{path}: a part's id is used twice: {sorted(ids)}")
    for parts in plan["tables"].values():
        for p in parts:
            for side in ("a", "b"):
                arm = p["effect"].get(side, {}).get("arm")
                if arm is not None and arm not in plan["arms"]:
                    raise PlanError(f"{path}: part {p['id']}: arm {arm!r} is not one of "
                                    f"the plan's arms {sorted(plan['arms'])}")
    return plan


def _rejoin(favours: dict) -> None:
    """The committed plan wrote one ``favours`` text unquoted in a flow mapping, and YAML
    split it at its comma into a second key with no value ("...alone, since λ moves
    both)"): such a key is put back after the text before it, with its comma. Only the
    words a result is said to favour are read so; no threshold or rule is."""
    keys = list(favours)
    for i, key in enumerate(keys):
        if favours[key] is None and i > 0 and key not in ("holds", "contradicted",
                                                           "undecided"):
            prev = keys[i - 1]
            favours[prev] = f"{favours[prev]}, {key}"
            del favours[key]


@dataclass(frozen=True)
class Run:
    """One training run the study reads: ``arm`` is ``dose`` for the stated recipe's DFA
    (and the frozen baseline), else the arm's name; ``value`` the arm's setting."""

    arm: str
    value: float | None
    method: str
    recipe: str
    lam: float
    seed: int

    def metrics(self) -> str:
        return paths.fill(paths.METRICS, dataset="cifar10", recipe=self.recipe,
                          method=self.method, lam=lam_str(self.lam), seed=self.seed)

    def null(self) -> str | None:
        if self.method == "frozen":
            return None
        return paths.fill(paths.NULL, dataset="cifar10", recipe=self.recipe,
                          method=self.method, lam=lam_str(self.lam), seed=self.seed)


def arm_recipe(name: str, value: float) -> str:
    """An arm's result folder: its name and setting (cap250, cap50, redraw1)."""
    return f"{name}{float(value):g}"


def _lams(arm: dict) -> list[float]:
    return [float(x) for x in (arm["lam"] if isinstance(arm["lam"], list) else [arm["lam"]])]


def runs(plan: dict) -> list[Run]:
    """Every run the plan reads: the dose, each arm's, and the frozen baseline where a
    part compares with it."""
    out = [Run("dose", None, "dfa", paths.DEFAULT_RECIPE, float(lam), seed)
           for lam in plan["dose"]["lam"] for seed in plan["seeds"]]
    for name, arm in plan["arms"].items():
        method = ARM_RULES[arm["option"]][0]
        out += [Run(name, float(v), method, arm_recipe(name, v), lam, seed)
                for v in arm["values"] for lam in _lams(arm) for seed in plan["seeds"]]
    if any(p["effect"].get(s, {}).get("method") == "frozen"
           for parts in plan["tables"].values() for p in parts for s in ("a", "b")):
        out += [Run("dose", None, "frozen", paths.DEFAULT_RECIPE, 0.0, seed)
                for seed in plan["seeds"]]
    return out


def plan_file(wildcards=None) -> str:
    """The plan's file in this checkout (a step's input, found from any working folder)."""
    return str(ROOT / PLAN)


def present(wildcards=None) -> list[str]:
    """The study's result files that are here (step dose_tables reads these; a table
    waits for its missing runs)."""
    return [f for f in inputs(load()) if Path(f).exists()]


def all_inputs(wildcards=None) -> list[str]:
    """Every result file the study reads (target dose_runs trains what is missing)."""
    return inputs(load())


def inputs(plan: dict) -> list[str]:
    """The result files the judge reads (each run's metrics, and its null where it has
    one)."""
    files = []
    for run in runs(plan):
        files.append(run.metrics())
        if run.null():
            files.append(run.null())
    return files


# what the study writes (the summary folder is never part of the record: rebuilt from it)
SUMMARY = paths.SUMMARY.format(dataset="cifar10", recipe=paths.DEFAULT_RECIPE)
OUT = {"runs": f"{SUMMARY}/dose_runs.csv", "epochs": f"{SUMMARY}/dose_epochs.csv",
       "findings": f"{SUMMARY}/dose_findings.json", "md": f"{SUMMARY}/dose.md",
       "tex": "paper/dose.tex"}
JUDGE = "src/credit_assign/studies/dose/judge.py"
LOGS = {"dose_tables": "logs/dose/dose_tables.log",
        "paper_dose": "logs/dose/paper_dose.log"}
