"""Step prepare_corpus: read or fetch a character corpus into data/corpus/{corpus}.pt and
its manifest."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from pathlib import Path

    from credit_assign.ep_stack.corpus import prepare_manifest

    # the source is read from the config, not passed as a param: Tiny Shakespeare's text is
    # pinned by its sha256, so another copy of it changes nothing and reruns no probe
    corpus = snakemake.wildcards.corpus
    source = snakemake.config["data"].get(corpus, {}).get("source", "download")
    prepare_manifest(corpus, source, Path("data"), Path(snakemake.params.cache))
