"""Infrastructure: data, result files, provenance, honest file IO, resume, threads and
device, the Snakemake job context."""
