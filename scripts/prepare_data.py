"""Step prepare_data: decode a dataset once into data/{dataset}.pt and its manifest."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from pathlib import Path

    from credit_assign.infra.data import prepare_manifest

    prepare_manifest(snakemake.wildcards.dataset, snakemake.params.source or None,
                     Path(snakemake.params.cache).parent, Path(snakemake.params.cache))
