"""Every figure step (rule fig_<name>): the module of its name in its study's room,
src/credit_assign/studies/<study>/fig_<name>.py, draws it from the job (its from_job);
the rule lists the inputs, outputs and params."""
import importlib
import sys
from pathlib import Path

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    import credit_assign.studies as studies

    found = [p for d in studies.__path__ for p in Path(d).glob(f"*/{snakemake.rule}.py")]
    if len(found) != 1:
        raise SystemExit(f"figure step {snakemake.rule} needs one module "
                         f"studies/<study>/{snakemake.rule}.py; found {len(found)}")
    module = f"credit_assign.studies.{found[0].parent.name}.{snakemake.rule}"
    importlib.import_module(module).from_job(snakemake)
