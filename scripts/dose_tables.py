"""Rule dose_tables: the dose study's runs (those in the record) → its per-run and
per-epoch tables, its findings (each table judged once all its runs are here) and page."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    import json
    import subprocess

    from credit_assign.infra.files import atomic_write_text
    from credit_assign.infra.results import read_result
    from credit_assign.studies.dose import judge, page, plan

    p = plan.load(snakemake.input.plan)
    table = judge.read_present(p)
    table.to_csv(snakemake.output.runs, index=False)
    judge.epochs(p).to_csv(snakemake.output.epochs, index=False)
    found = judge.findings(p, table)
    first = subprocess.run(["git", "log", "--diff-filter=A", "--format=%H", "--",
                            plan.PLAN], capture_output=True, text=True).stdout.split()
    own = []  # the study's own runs: made from the plan's commit or a later one
    for run in plan.runs(p):
        try:
            m = read_result(run.metrics(), "train")
        except Exception:  # not here yet: counted by the table's status
            continue
        code = m["provenance"]["code"]
        later = bool(first) and subprocess.run(
            ["git", "merge-base", "--is-ancestor", first[-1], code["git_commit"]],
            capture_output=True).returncode == 0
        if later:
            timings = json.loads(open(run.metrics().replace("metrics.json",
                                                            "timings.json")).read())
            own.append({"commit": code["git_commit"], "dirty": code["git_dirty"],
                        "finished_at": timings["record"]["finished_at"]})
    found["order"] = page.order(plan.PLAN, plan.JUDGE, own)
    atomic_write_text(snakemake.output.findings,
                      json.dumps(found, indent=1, sort_keys=True, allow_nan=True) + "\n")
    atomic_write_text(snakemake.output.md, page.render(found, table, p) + "\n")
