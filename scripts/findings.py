"""Rule findings: the summary tables → findings.json (every verdict; the notes' findings
with the variant study)."""
import json
import sys
from pathlib import Path

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.reporting import findings, reproduction_notes
    from credit_assign.reporting.history import read_events

    i, p = snakemake.input, snakemake.params
    notes = None
    if p.variants:
        notes = reproduction_notes.read_findings(
            {"runs": i.runs, "epochs": i.epochs, "layers": i.layers, "nulls": i.nulls},
            dict(zip(p.variants, i.variant_runs, strict=True)), i.gaps,
            i.get("measurements"), json.loads(Path(i.info).read_text()), expect=p.expect,
            study=p.study, penalty=p.penalty, compute=p.compute,
            history=read_events(snakemake.scriptdir + "/..", i.history))
    findings.write(snakemake.output[0], i.runs, i.nulls, p.penalty, i.get("gaps"), p.study,
                   notes, expect=p.expect)
