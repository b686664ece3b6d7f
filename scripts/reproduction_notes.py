"""Rule reproduction_notes: the study's tables → reproduction_notes.md."""
import json
import sys
from pathlib import Path

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.reporting.reproduction_notes import write_notes

    i = snakemake.input
    default = {"runs": i.runs, "epochs": i.epochs, "layers": i.layers, "nulls": i.nulls}
    variants = dict(zip(snakemake.params.variants, i.variant_runs, strict=True))
    info = json.loads(Path(i.info).read_text())
    from credit_assign.reporting.history import read_events

    write_notes(default, variants, i.gaps, i.measurements[0] if i.measurements else None,
                info, snakemake.output[0], expect=snakemake.params.expect,
                study=snakemake.params.study, penalty=snakemake.params.penalty,
                compute=snakemake.params.compute,
                history=read_events(snakemake.scriptdir + "/..", i.history))
