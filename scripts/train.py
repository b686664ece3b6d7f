"""Step train: one (method, λ, seed) run → metrics.json + model.pt."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake) as threads:
    from credit_assign.jobs import train

    train(snakemake.params.run, snakemake.params.cache, snakemake.output.metrics,
          snakemake.output.model, resume_path=snakemake.params.resume, threads=threads,
          timings_out=snakemake.output.timings,
          snapshot_epochs=tuple(snakemake.params.snapshot_epochs),
          snapshots_out=snakemake.output.snapshots)
