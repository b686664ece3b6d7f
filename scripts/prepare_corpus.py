"""Rule prepare_corpus: read or fetch a character corpus into data/corpus/{corpus}.pt."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.runtime import job  # noqa: E402

with job(snakemake):
    from pathlib import Path

    from credit_assign.ep_stack.corpus import prepare_corpus
    from credit_assign.runtime import atomic_write_text, dumps

    encoded = prepare_corpus(snakemake.wildcards.corpus, snakemake.params.source or "download",
                             Path("data"), Path(snakemake.output.cache))
    atomic_write_text(snakemake.output.manifest, dumps(
        {k: encoded[k] for k in ("name", "sha256", "n_chars", "vocab")}))
