"""Rule prepare_data: decode a dataset once into data/{dataset}.pt."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.runtime import job  # noqa: E402

with job(snakemake):
    from pathlib import Path

    from credit_assign.data import prepare
    from credit_assign.runtime import atomic_write_text, dumps

    info = prepare(snakemake.wildcards.dataset, snakemake.params.source or None, Path("data"),
                   Path(snakemake.output.cache))
    atomic_write_text(snakemake.output.manifest, dumps(info))
