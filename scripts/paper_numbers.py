"""Step paper_numbers: summary tables → paper/numbers.tex (one macro per number)."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.reporting.paper import write_numbers

    i = snakemake.input
    write_numbers(snakemake.params.config, i.info, i.runs, i.nulls, i.findings,
                  snakemake.output[0],
                  reproduction_csv=i.get("reproduction"), gaps_csv=i.get("gaps"),
                  ep_by_seed_csv=i.get("ep"), primer_json=i.primer,
                  expect=snakemake.params.expect)
