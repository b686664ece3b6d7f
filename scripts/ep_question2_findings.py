"""Rule ep_question2_findings: the second EP question's runs here → its findings (the
verdict once every fresh seed's run is here), per-seed table and page."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    import json

    from credit_assign.infra.files import atomic_write_text
    from credit_assign.studies.ep_question2 import judge, page, plan
    from credit_assign.studies.ep_question2.results import read

    p = plan.load(snakemake.input.plan)
    results = [read(f) for f in snakemake.input.results]
    found = judge.findings(p, results)
    found["order"] = page.order(results)
    found["batches"] = page.batches(results, p)
    atomic_write_text(snakemake.output.findings,
                      json.dumps(found, indent=1, sort_keys=True, allow_nan=True) + "\n")
    atomic_write_text(snakemake.output.seeds,
                      judge.seed_table(found).to_csv(index=False))
    atomic_write_text(snakemake.output.md, page.render(found) + "\n")
