"""Step ep_stack_summary: the EP stack probes' tables (analysis.ep_stack_tables) written
as CSV, and report.md rendered from their findings (:func:`page_findings`), every word of
it in ep_stack.md.j2 beside this module. Reads result files only: no torch (the step runs in the
figures environment).
"""

from __future__ import annotations

from credit_assign.analysis.ep_stack_tables import by_seed, page_findings, summary_tables
from credit_assign.analysis.tables import write as write_table
from credit_assign.infra.files import atomic_write_text
from credit_assign.infra.results import read_result
from credit_assign.reporting import render


def write_summary(result_paths, timing_paths, outputs, settle: dict | None = None) -> None:
    """The summary tables and report.md; ``settle`` is the settling criterion (config
    ``ep_stack.settle``), applied here only, so changing it reruns no probe."""
    results = [read_result(p, "ep_stack") for p in result_paths]
    timings = [read_result(p, "ep_stack_timings") for p in timing_paths]
    tables = summary_tables(results, timings, settle)
    tables = (*tables, by_seed(tables[0]))
    inputs = [*result_paths, *timing_paths]
    for table, out, kind in zip(tables, (outputs.cosines, outputs.increments,
                                         outputs.pretrain, outputs.timings, outputs.by_seed),
                                ("ep_cosines", "ep_increments", "ep_pretrain", "ep_timings",
                                 "ep_by_seed"), strict=True):
        write_table(table, out, kind, inputs, float_format="%.6g")
    atomic_write_text(outputs.report, report(results, tables[4], tables[2], tables[3],
                                             tables[0]))


def report(results: list[dict], seeds, pre, tim, cos=None) -> str:
    """docs/ep_stack.md: the probe over seeds and pretraining precisions, every number
    from the results (nothing typed). Spreads are over settled seeds only, beside the
    count of unsettled ones and why they did not settle."""
    return render.render("ep_stack.md.j2", **page_findings(results, seeds, pre, tim, cos))
