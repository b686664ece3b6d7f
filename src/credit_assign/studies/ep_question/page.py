"""Step ep_question_findings: the first EP question (config/claims_ep.yaml) judged by its judge of
record (analysis.ep_question, committed before its runs: it stays where git's history of
it proves that order), with what the page states beside the verdict, as findings.json;
the tables it rests on; and the page, rendered from those findings alone
(ep_question.md.j2, beside this module)."""

from __future__ import annotations

from credit_assign.analysis.tables import write as write_table
from credit_assign.infra import paths
from credit_assign.infra.files import atomic_write_text
from credit_assign.infra.results import read_result
from credit_assign.reporting import render


def refuse_diverged(results: list[dict], result_paths: list) -> None:
    """A seed whose stack diverged in pretraining is an outcome its job records
    (``diverged``), but the question's judge of record (analysis.ep_question, committed
    before its runs) has none for it: named here, and left to a question whose judge
    says what such a seed counts as before its runs."""
    bad = [(str(p), r["diverged"]) for p, r in zip(result_paths, results, strict=True)
           if r.get("diverged")]
    if bad:
        raise ValueError(
            "EP question: " + "; ".join(f"{p}: its stack diverged in pretraining ({why})"
                                        for p, why in bad)
            + ". The judge of record was committed before the question's runs and has no "
            "outcome for a diverged seed: lower ep_stack.eps or the learning rate and "
            "rerun, or ask the question again with a judge that counts such seeds")


def write_question(result_paths, timing_paths, spec_path, outputs, root=".") -> dict:
    """The EP question judged (analysis.ep_question) with what the page states beside the
    verdict — the runs' settings, their cost, and git's facts on the order of the file,
    its judge and the runs (history.order) — as findings.json; the tables it rests on;
    and the page, rendered from those findings alone (ep_question.md.j2, beside this module)."""
    import json
    from datetime import datetime, timedelta

    from credit_assign.analysis import ep_question, history
    from credit_assign.analysis.aggregate import provenance_table
    from credit_assign.planning.claims import load_ep

    spec = load_ep(spec_path)
    result_paths, timing_paths = list(result_paths), list(timing_paths)
    results = [read_result(p, "ep_fixed_point") for p in result_paths]
    timings = [read_result(p, "ep_fixed_point_timings") for p in timing_paths]
    refuse_diverged(results, result_paths)
    found = ep_question.findings(spec, results)
    settings = {json.dumps(r["settings"], sort_keys=True) for r in results}
    if len(settings) != 1:
        raise ValueError(f"the EP question's results were made with {len(settings)} different "
                         f"settings: {', '.join(map(str, result_paths))}")
    prov = provenance_table({"ep_fixed_point": result_paths},
                            {"ep_fixed_point": timing_paths})
    order = history.order(root, spec_path, prov, READER)
    # the judge's later changes, as facts: each commit to it after the first run started
    # (a run's start: its finish less its work — the pretraining and batches' seconds,
    # which add up over a resumed job's processes, or its last process's wall time if
    # longer), and whether a result had finished
    starts = [datetime.strptime(t["record"]["finished_at"], "%Y-%m-%dT%H:%M:%S%z")
              - timedelta(seconds=max(t["total"], t["pretrain"]
                                      + sum(b["total"] for b in t["probes"])))
              for t in timings if t.get("record", {}).get("finished_at")]
    first_start = min(starts).strftime("%Y-%m-%dT%H:%M:%S%z") if starts else None
    order["first_start"] = history.utc(first_start)
    order["reader_changed"] = [
        {**c, "after_first_result": bool(order["first_result"])
         and history.utc(c["time"]) > order["first_result"]}
        for c in history.commits_touching(root, READER)[1:]
        if first_start and history.utc(c["time"]) >= history.utc(first_start)]
    order["reader_differs"] = bool(order["reader"]) and history.differs_from(root, READER,
                                                                             "HEAD")
    order["shown"] = (order["shown"] and not order["reader_differs"]  # and the judge
                      and not any(c["after_first_result"] for c in order["reader_changed"]))
    found.update({
        "settings": results[0]["settings"],
        "cost": [{"seed": t["seed"], "total": t["total"], "pretrain": t["pretrain"],
                  "probes": sum(b["total"] for b in t["probes"]), "batches": len(t["probes"]),
                  "peak_rss_mb": t["peak_rss_mb"], "threads": t["threads"]}
                 for t in sorted(timings, key=lambda t: t["seed"])],
        "order": order,
        "spec_path": history.repo_relative(root, spec_path), "reader_path": READER,
        "paths": {"page": paths.EP_QUESTION_MD, "findings": paths.EP_QUESTION_FINDINGS,
                  "tables": paths.EP_QUESTION, "figure": paths.figure("fig_ep_fixed_point",
                                                                      "pdf")}})
    inputs = result_paths + timing_paths
    write_table(ep_question.batch_table(results), outputs.batches, "ep_fp_batches", inputs,
                float_format="%.6g")
    write_table(ep_question.cosine_table(results), outputs.cosines, "ep_fp_cosines", inputs,
                float_format="%.6g")
    atomic_write_text(outputs.findings, json.dumps(found, indent=1, allow_nan=False) + "\n")
    atomic_write_text(outputs.page, question_page(found))
    return found


# the code that judges config/claims_ep.yaml: the page states its first commit
READER = "src/credit_assign/analysis/ep_question.py"


def question_page(found: dict) -> str:
    """docs/ep_question.md from the EP question's findings alone."""
    return render.render("ep_question.md.j2", **found, findings=found)
