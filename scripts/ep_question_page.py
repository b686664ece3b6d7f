"""Rule ep_question_page: EP's two questions and the precision study on one page
(docs/ep_question.md), and their numbers and guards for the paper (paper/ep2.tex)."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    import json
    from pathlib import Path

    import pandas as pd

    from credit_assign.infra.files import atomic_write_text
    from credit_assign.studies.ep_question2 import facts, page, tex

    i = snakemake.input

    def text(path):
        return Path(path).read_text(encoding="utf-8")

    pf = facts.precision(pd.read_csv(i.table), pd.read_csv(i.remade))
    q2 = facts.question2(json.loads(text(i.q2_findings)))
    first = json.loads(text(i.first_findings))
    atomic_write_text(snakemake.output.page, page.compose(
        first, text(i.first_md), pd.read_csv(i.table), pf, q2, text(i.q2_md)))
    atomic_write_text(snakemake.output.tex, tex.macros(pf, q2))
    atomic_write_text(snakemake.output.findings, json.dumps(
        {**first, "precision": pf, "question2": q2}, indent=1, sort_keys=True) + "\n")
