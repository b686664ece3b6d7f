"""Step reproduction_notes: findings.json → reproduction_notes.md."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.reporting.reproduction_notes import write_notes

    write_notes(snakemake.input[0], snakemake.output[0])
