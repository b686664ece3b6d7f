"""The second EP question's plan (config/claims_ep2.yaml): read, checked, its runs, and
the refusal of a run still to be made from uncommitted code."""

from __future__ import annotations

import subprocess
from pathlib import Path

import jsonschema
import yaml

from credit_assign.infra import paths

# the study's own paths (a room's files are its own: infra.paths is part of every report
# step's code, and a new study must not rerun the others)
PLAN = "config/claims_ep2.yaml"
RESULT = paths.EP_QUESTION2
RESUME = "results/ep_stack/{corpus}/float32/seed{seed}.question2.resume.pt"
SUMMARY = f"{paths.EP_SUMMARY}/ep_question2"  # never part of the record: rebuilt from it
OUT = {"findings": f"{SUMMARY}/findings.json", "seeds": f"{SUMMARY}/seeds.csv",
       "md": f"{SUMMARY}/ep_question2.md",
       "page": f"{SUMMARY}/ep_question.md",  # both questions: docs/ep_question.md
       # the first question's findings with the precision study's and the second's facts:
       # docs/findings.json's section ep_question
       "all_findings": f"{SUMMARY}/ep_findings.json",
       "tex": "paper/ep2.tex"}
LOGS = {"ep_question2": "logs/ep_stack/{corpus}_seed{seed}_question2.log",
        "ep_question2_findings": "logs/ep_stack/ep_question2_findings.log",
        "ep_question_page": "logs/ep_stack/ep_question_page.log"}

_CELL = {"type": "object", "required": ["precision", "r", "nudged_steps_max"],
         "additionalProperties": False,
         "properties": {"precision": {"enum": ["float32", "float64"]},
                        "r": {"type": "number", "exclusiveMinimum": 0},
                        "nudged_steps_max": {"type": "integer", "minimum": 1}}}
SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["version", "runs", "seeds", "estimator", "claim", "no_stable_fixed_point",
                 "decision"],
    "properties": {
        "version": {"const": 1},
        "runs": {"type": "object", "required": ["step", "corpus"],
                 "properties": {"step": {"const": "ep_question2"},
                                "corpus": {"type": "string"}}},
        "seeds": {"type": "object", "required": ["fresh", "never"],
                  "additionalProperties": False,
                  "properties": {"fresh": {"type": "array", "minItems": 5,
                                           "uniqueItems": True,
                                           "items": {"type": "integer", "minimum": 0}},
                                 "never": {"type": "array",
                                           "items": {"type": "integer"}}}},
        "estimator": {"type": "object", "required": ["judged", "beside", "reference"],
                      "additionalProperties": False,
                      "properties": {"judged": _CELL,
                                     "beside": {"type": "array", "items": _CELL},
                                     "reference": {
                                         "type": "object", "additionalProperties": False,
                                         "required": ["tol", "cap", "adjoint_tol"],
                                         "properties": {"tol": {"type": "number"},
                                                        "cap": {"type": "integer"},
                                                        "adjoint_tol": {"type": "number"}}}}},
        "claim": {"type": "object", "required": ["id", "text", "group", "side", "threshold"],
                  "properties": {"group": {"const": "block0"},
                                 "side": {"const": "greater"},
                                 "threshold": {"type": "number"}}},
        "no_stable_fixed_point": {
            "type": "object", "additionalProperties": False,
            "required": ["counts_as", "reference_residual", "adjoint_residual"],
            "properties": {"counts_as": {"const": "not_judged"},
                           "reference_residual": {"type": "number", "exclusiveMinimum": 0},
                           "adjoint_residual": {"type": "number", "exclusiveMinimum": 0}}},
        "decision": {"type": "object", "additionalProperties": False,
                     "required": ["method", "confidence", "correction", "min_seeds"],
                     "properties": {"method": {"const": "t"},
                                    "confidence": {"type": "number", "exclusiveMinimum": 0,
                                                   "exclusiveMaximum": 1},
                                    "correction": {"const": "none"},
                                    "min_seeds": {"type": "integer", "minimum": 2}}},
        "power": {"type": "object"},
    }}


class PlanError(ValueError):
    """A plan this question cannot be judged by, named."""


ROOT = Path(__file__).resolve().parents[4]  # the checkout: the plan is found from any folder


def load(path: str | Path | None = None) -> dict:
    """The plan (default: this checkout's), checked against SCHEMA; a fresh seed among
    the seeds it says were used before is refused, naming it."""
    path = ROOT / PLAN if path is None else Path(path)
    try:
        plan = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(f"{path}: the second EP question's plan is missing") from None
    try:
        jsonschema.validate(plan, SCHEMA)
    except jsonschema.ValidationError as err:
        where = ".".join(map(str, err.absolute_path)) or "(top)"
        raise PlanError(f"{path}: {where}: {err.message}") from None
    used = sorted(set(plan["seeds"]["fresh"]) & set(plan["seeds"]["never"]))
    if used:
        raise PlanError(f"{path}: fresh seeds {used} were used before (seeds.never)")
    return plan


def exists() -> bool:
    return (ROOT / PLAN).is_file()


def targets(wildcards=None) -> list[str]:
    """Every run the plan judges (none before the plan is committed)."""
    if not exists():
        return []
    plan = load()
    return [paths.fill(RESULT, corpus=plan["runs"]["corpus"], seed=s)
            for s in plan["seeds"]["fresh"]]


def present(wildcards=None) -> list[str]:
    """The plan's runs here (its findings say which seeds still wait)."""
    return [f for f in targets() if Path(f).exists()]


def estimator(wildcards=None) -> dict:
    return load()["estimator"]


def manifest(wildcards) -> str:
    """What a job reads: the corpus' manifest. A run of the plan still to be made is
    refused from uncommitted code (it was pre-registered: its commit must show the code
    it ran)."""
    result = paths.fill(RESULT, corpus=wildcards.corpus, seed=int(wildcards.seed))
    if result in targets() and not Path(result).exists():
        refuse_uncommitted()
    return paths.fill(paths.CORPUS_MANIFEST, corpus=wildcards.corpus)


def refuse_uncommitted(root: Path = ROOT) -> None:
    """A ConfigError naming the files not committed (infra.provenance.uncommitted)."""
    from credit_assign.infra.provenance import uncommitted
    from credit_assign.planning import ConfigError

    try:
        changed = uncommitted(root)
    except (OSError, subprocess.SubprocessError) as err:
        if (root / ".git").exists():
            raise ConfigError(f"{PLAN}'s runs start only from committed code, but git "
                              f"cannot tell whether {root} is ({err})") from None
        return
    if changed:
        raise ConfigError(
            f"{PLAN}'s runs are pre-registered and start only from committed code, but "
            "these files have changes not committed: " + ", ".join(changed[:10])
            + (" ..." if len(changed) > 10 else "") + ". Commit them or set them aside "
            "(git stash -u), then run again")
