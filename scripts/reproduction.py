"""Rule reproduction: summary tables + reference file → reproduction.{csv,md}."""
import json
import sys
from pathlib import Path

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.penalty_rescue.page import context, write

    i, o = snakemake.input, snakemake.output
    info = json.loads(Path(i.info).read_text())
    context_md = context(snakemake.params.config, info)
    write(i.reference, i.runs, i.layers, i.nulls, o.csv, o.md, context_md,
          expect=snakemake.params.expect)
