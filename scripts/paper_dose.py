"""Rule paper_dose: the dose study's findings → paper/dose.tex (numbers and guards)."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    import json

    import pandas as pd

    from credit_assign.infra.files import atomic_write_text
    from credit_assign.studies.dose.tex import macros

    with open(snakemake.input.findings, encoding="utf-8") as f:
        found = json.load(f)
    try:
        runs = pd.read_csv(snakemake.input.runs)
    except pd.errors.EmptyDataError:  # no run of the study here: the section is left out
        runs = pd.DataFrame()
    atomic_write_text(snakemake.output[0], macros(found, runs))
