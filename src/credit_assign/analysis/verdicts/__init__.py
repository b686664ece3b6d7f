"""The verdicts: one module per verdict in this folder, its words beside it
(<name>.md.j2: the pages' sentence, written by hand for the outcome of record, the plain
facts for any other; rendered by reporting.render, never read here). The paper's
sentence is paper/ms.tex's, guarded by the finding's outcome (``\\findingguard``).

A verdict module defines ``VERDICT = Verdict(...)``: its name, what it
reads (``study``: the variant study's gap map and config), its outcomes (declared
here and nowhere else: the findings validate against them), the fields its finding holds
beside ``outcome`` (a JSON-schema fragment), the decision rule's name, and ``finding``:
the finding from what it reads. Step ``findings`` writes the study's verdicts into
findings.json as ``<name>verdict`` (:func:`judge`); the notes page lists every one, and
step ``paper_numbers`` writes each one's outcome and values into paper/findings.tex for
ms.tex's ``\\findingguard`` and ``\\fv``. Adding a verdict is adding its module and its
words (docs/adding.md).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pandas as pd

from credit_assign.infra.results import ResultError

FOLDER = Path(__file__).resolve().parent
READS = ("study",)  # what a verdict reads: the variant study
SUFFIX = "verdict"  # findings.json names a verdict <name>verdict


class VerdictError(ValueError):
    """A verdict module that is not one (named)."""


@dataclass
class Study:
    """What a study verdict reads: the gap map (analysis.study's table) and the config's
    ``study`` section; the selections several verdicts share, made once."""

    gaps: pd.DataFrame
    study: dict | None = None

    @functools.cached_property
    def headline(self) -> pd.DataFrame:
        """The headline norm's rows that ran or measured it (not inherited)."""
        from credit_assign.analysis import study as variant_study

        rows = variant_study.headline_rows(self.gaps)
        return rows[~rows.inherited.astype(bool)]

    @functools.cached_property
    def rank(self) -> pd.DataFrame:
        """The study's ranking of its columns (study.ranking)."""
        from credit_assign.analysis import study as variant_study

        return variant_study.ranking(self.gaps, self.study)


@dataclass(frozen=True)
class Verdict:
    name: str  # its words: <name>.md.j2 beside its module
    reads: str  # one of READS
    outcomes: tuple[str, ...]
    rule: str  # the decision rule, named (screen, count, estimate, measure)
    finding: Callable[[Any], dict]  # what it reads -> {"outcome": ..., ...}
    schema: dict = field(default_factory=dict)  # the finding's fields beside outcome
    order: int = 100  # where the notes page lists it (then by name)

    def finding_schema(self) -> dict:
        """The JSON schema of this verdict's finding."""
        return {"type": "object", "required": ["outcome"],
                "properties": {"outcome": {"enum": list(self.outcomes)}},
                "allOf": [self.schema] if self.schema else []}


@functools.cache
def registry() -> dict[str, Verdict]:
    """Every verdict in this folder, by name, in their order (a module without VERDICT,
    or a VERDICT that names another module, reads something unknown or has no outcomes,
    stops here)."""
    out = {}
    for info in sorted(pkgutil.iter_modules([str(FOLDER)]), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        verdict = getattr(module, "VERDICT", None)
        where = f"credit_assign/analysis/verdicts/{info.name}.py"
        if not isinstance(verdict, Verdict):
            raise VerdictError(f"{where} defines no VERDICT = Verdict(...)")
        if verdict.name != info.name:
            raise VerdictError(f"{where}: VERDICT.name is {verdict.name!r}, not its "
                               f"module's name {info.name!r}")
        if verdict.reads not in READS or not verdict.outcomes:
            raise VerdictError(f"{where}: reads must be one of {READS} and outcomes "
                               "non-empty")
        out[info.name] = verdict
    return dict(sorted(out.items(), key=lambda kv: (kv[1].order, kv[0])))


def of(reads: str) -> dict[str, Verdict]:
    """The verdicts that read ``reads`` (READS), by name, in the folder's order."""
    return {name: v for name, v in registry().items() if v.reads == reads}


def check(name: str, found: dict, source: str = "<memory>") -> dict:
    """``found`` checked against verdict ``name``'s outcomes and fields (a ResultError
    names the file, the verdict and what is wrong); returned as given."""
    verdict = registry().get(name)
    if verdict is None:
        raise ResultError(f"{source}: {name}{SUFFIX} is no verdict (credit_assign/analysis/"
                          f"verdicts/ holds {', '.join(registry())})")
    errors = sorted(jsonschema.Draft202012Validator(verdict.finding_schema())
                    .iter_errors(found), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in ("verdicts", f"{name}{SUFFIX}", *e.absolute_path))
        raise ResultError(f"{source}: not a valid findings result at {where}: {e.message}")
    return found


def check_all(found: dict, source: str = "<memory>") -> dict:
    """findings.json's ``verdicts`` (``<name>verdict``: finding) checked, each by its
    verdict; none (no variant study) or every study verdict (a file written before a
    verdict was added names the one it lacks: rerun step findings)."""
    for key, f in found.items():
        check(key.removesuffix(SUFFIX), f, source)
    if found and (missing := [n for n in of("study") if f"{n}{SUFFIX}" not in found]):
        raise ResultError(f"{source}: holds no {', '.join(n + SUFFIX for n in missing)} "
                          "(written before that verdict was added?): rerun step findings")
    return found


def take(reads: str, data) -> dict[str, dict]:
    """Every verdict that reads ``reads`` (READS), by name: its finding from ``data``
    (a Study; the EP probe's block-0 rows), checked."""
    return {name: check(name, v.finding(data)) for name, v in of(reads).items()}


def judge(gaps: pd.DataFrame | None = None, study: dict | None = None) -> dict:
    """The variant study's verdicts as findings.json holds them (``<name>verdict``), each
    checked; none without the study. (The run section's screens — the penalty lowers
    the norm, penalised DFA above its fresh-B null, λ = 0 above its null, the accuracy
    ordering — were retired into the claims that judge the same statements with
    intervals on fresh seeds.)"""
    if gaps is None or gaps.empty:
        return {}
    return {f"{name}{SUFFIX}": f for name, f in take("study", Study(gaps, study)).items()}
