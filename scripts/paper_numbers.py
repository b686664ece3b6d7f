"""Rule paper_numbers: summary tables → paper/numbers.tex (one macro per number) and
paper/findings.tex (the findings' outcomes and values, for ms.tex's guarded sentences)."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.reporting.paper import write_numbers

    i = snakemake.input
    write_numbers(snakemake.params.config, i.info, i.runs, i.nulls, i.findings,
                  snakemake.output.numbers, snakemake.output.findings,
                  reproduction_csv=i.get("reproduction"), gaps_csv=i.get("gaps"),
                  ep_by_seed_csv=i.get("ep"), primer_json=i.primer,
                  ep_question_json=i.get("ep_question"), claims_json=i.get("claims"),
                  expect=snakemake.params.expect)
