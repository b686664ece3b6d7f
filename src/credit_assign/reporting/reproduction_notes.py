"""docs/reproduction-notes.md: what matches the paper, what does not, and which run
shows why. analysis.notes_findings computes each section's finding once, as data
(numbers, names, seeds, outcomes; JSON-ready, a missing number is None) from the tables
the pipeline wrote; templates/notes.md.j2 writes every word from them (findings.json's
``notes``, :func:`write_notes`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from credit_assign.analysis import findings as found_io
from credit_assign.analysis import notes_findings
from credit_assign.analysis import verdicts as registry
from credit_assign.analysis.findings import null_summary
from credit_assign.infra.files import atomic_write_text
from credit_assign.reporting import labels, render


def page(found: dict, nulls: list[dict] | None, verdicts: dict) -> str:
    """The page: the notes' findings, the fresh-B nulls' values at λ = 0 and at the
    penalty (findings.null_summary's; None: not measured) and every verdict of the study
    (findings.json's ``verdicts``: each worded beside its module, in the verdicts' order,
    analysis.verdicts) in templates/notes.md.j2's words."""
    study = {name: verdicts[f"{name}{registry.SUFFIX}"] for name in registry.of("study")}
    return render.render("notes.md.j2", **found, nulls=nulls, verdicts=study,
                         datasets=labels.names(labels.DATASETS, "md"))


def notes(summary: dict[str, pd.DataFrame], variant_runs: dict[str, pd.DataFrame],
          gaps: pd.DataFrame, measurements: pd.DataFrame | None, info: dict,
          study: dict | None = None, penalty: float | None = None, compute: str = "",
          history: list[dict] | None = None) -> str:
    """The page from the tables (``summary`` with ``nulls`` and a ``penalty``: with the
    fresh-B section)."""
    nulls = summary.get("nulls")
    values = None if nulls is None or penalty is None else \
        [null_summary(nulls, lam) for lam in (0.0, penalty)]
    found = notes_findings.findings(summary, variant_runs, gaps, measurements, info, study,
                                    compute, history)
    return page(found, values, registry.judge(gaps, study))


def write_notes(findings_json: str | Path, out: str | Path) -> str:
    """reproduction_notes.md from findings.json (step findings, with the variant study)."""
    record = found_io.read(findings_json)
    notes_found = record["notes"]
    if notes_found is None:
        raise ValueError(f"{findings_json}: holds no notes' findings (the config runs no "
                         "recipe variant); the notes are the variant study's: add "
                         "config/variants.yaml and rerun step findings")
    text = page(notes_found, record["nulls"], record["verdicts"])
    atomic_write_text(out, text)
    return text
