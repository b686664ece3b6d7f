"""Rule findings: the summary tables → findings.json (the variant study's verdicts, the
fresh-B nulls' values; the notes' findings with the variant study). Each table is read,
and checked against the runs the config asks for, once."""
import json
import sys
from pathlib import Path

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.analysis import findings, notes_findings
    from credit_assign.analysis import tables as table_io
    from credit_assign.analysis.history import read_events
    from credit_assign.analysis.verdicts import judge

    i, p = snakemake.input, snakemake.params
    runs_expected = p.expect.get("runs")
    runs = table_io.read(i.runs, "runs", runs_expected)
    nulls = table_io.read(i.nulls, "nulls", p.expect.get("nulls"))
    gaps = table_io.read(i.gaps, "variants_gap") if p.variants else None
    notes = None
    if p.variants:
        summary = {"runs": runs, "epochs": table_io.read(i.epochs, "epochs", runs_expected),
                   "layers": table_io.read(i.layers, "layers", runs_expected)}
        variants = {name: table_io.read(path, "runs", p.expect["variants"].get(name))
                    for name, path in zip(p.variants, i.variant_runs, strict=True)}
        notes = notes_findings.findings(
            summary, variants, gaps,
            table_io.read_optional(i.get("measurements"), "measurements", runs_expected),
            json.loads(Path(i.info).read_text()), study=p.study, compute=p.compute,
            history=read_events(snakemake.scriptdir + "/..", i.history))
    findings.write(snakemake.output[0], judge(gaps, p.study), notes,
                   [findings.null_summary(nulls, lam) for lam in (0.0, p.penalty)])
