"""The workflow's input, params and priority functions: one object built from the config
(and what Snakemake knows of its run), each method a function of a job's wildcards as a
step's ``input:``, ``params:`` or ``priority:`` takes it. The logic is in ``targets``
(what a job reads) and ``params`` (what it is told); here it is only bound to the
config, so that workflow/rules/common.smk holds no function that only forwards.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from credit_assign.infra import paths
from credit_assign.planning import params, targets
from credit_assign.planning.targets import Config

DOSE_ARM_RULES = ("dfa_cap", "dfa_redraw")  # science/learning_rules/dfa_arms.py


class JobFunctions:
    """``JobFunctions(config, basedir, dryrun)``: the config's functions of wildcards.
    ``basedir``: the Snakefile's folder (a file of the workflow itself is found from it
    wherever Snakemake runs); ``dryrun``: asked when a job's params are made (Snakemake
    knows whether the run is a dry one only then, not while it parses the workflow): a
    dry run writes nothing (the digest cache)."""

    def __init__(self, config: Config, basedir: str | Path,
                 dryrun: Callable[[], bool] = lambda: False):
        self.config, self.basedir, self.dryrun = config, Path(basedir), dryrun

    def summary(self, pattern: str) -> str:
        """A summary table of the config's dataset (paths.RUNS, paths.FINDINGS, ...)."""
        return targets.summary(self.config, pattern)

    def repo_file(self, path: str) -> str:
        """A file of the workflow itself (config/history.yaml, ...)."""
        return str(self.basedir / path)

    # ---- data
    def dataset_manifest(self, w) -> str:
        """What a job that reads the decoded data depends on: the data's manifest (its
        info and digest), which step prepare_data rewrites when the source changes, so
        that every job reading the data reruns in the same run. Not the cache: a deleted
        cache is rebuilt by the first job that reads it (credit_assign.infra.data.load),
        so it reruns nothing. (Every recipe of a dataset reads the same.) A job of a
        pre-registered run still to be made is refused from uncommitted code
        (:meth:`_pre_registered`)."""
        if "seed" in w.keys():
            self._pre_registered(w)
        return paths.fill(paths.DATA_MANIFEST, dataset=w.dataset)

    def corpus_manifest(self, w) -> str:
        """What an EP probe depends on: its corpus' manifest (the probe of a
        pre-registered seed still to be made is refused from uncommitted code)."""
        self._pre_registered(w)
        return paths.fill(paths.CORPUS_MANIFEST, corpus=w.corpus)

    def fixed_point_manifest(self, w) -> str:
        """What a fixed-point job depends on: its corpus' manifest. A job of a seed of the
        EP question (claims.ep, fresh or seen) still to be made is refused from
        uncommitted code: the file was committed before its runs, and each run's commit
        shows it."""
        result = paths.fill(paths.EP_FIXED_POINT, corpus=w.corpus, precision=w.precision,
                            seed=int(w.seed))
        if result in targets.ep_question_runs(self.config) and not Path(result).exists():
            self._refuse_uncommitted(self.config["claims"]["ep"])
        return paths.fill(paths.CORPUS_MANIFEST, corpus=w.corpus)

    # ---- EP's estimator and its precision (config/ep_estimator.yaml; exploratory)
    def _ep_estimator_study(self) -> Config:
        """The precision study's settings (its file, read by the step: not a configfile)."""
        import yaml

        return yaml.safe_load((self.basedir / paths.EP_ESTIMATOR_STUDY).read_text(
            encoding="utf-8"))

    def ep_estimator_settings(self, w) -> Config:
        """The EP question's settings (float32 pretraining, its fixed-point block): the
        stacks remade as its runs made them."""
        return params.ep_fixed_point_settings(self.config, "float32")

    def ep_estimator_params(self, w) -> Config:
        return {k: v for k, v in self._ep_estimator_study().items() if k != "seeds"}

    def ep_estimator_manifest(self, w) -> str:
        return paths.fill(paths.CORPUS_MANIFEST, corpus=w.corpus)

    def ep_estimator_targets(self, w=None) -> list[str]:
        study = self._ep_estimator_study()
        return [paths.fill(paths.EP_ESTIMATOR, corpus=study["corpus"], seed=s)
                for s in study["seeds"]]

    def ep_estimator_present(self, w=None) -> list[str]:
        """The study's results here: its table is drawn from each seed as its job ends."""
        return [p for p in self.ep_estimator_targets() if Path(p).exists()]

    def ep_estimator_recorded(self, w=None) -> list[str]:
        """The first EP question's result for each seed of the study here, where the
        record holds one: the stack a remade one is compared with."""
        study, present = self._ep_estimator_study(), set(self.ep_estimator_present())
        out = [paths.fill(paths.EP_FIXED_POINT, corpus=study["corpus"], precision="float32",
                          seed=s)
               for s, target in zip(study["seeds"], self.ep_estimator_targets(), strict=True)
               if target in present]
        return [p for p in out if Path(p).exists()]

    def dataset_cache_path(self, w) -> str:
        return paths.fill(paths.DATA_CACHE, dataset=w.dataset)

    def data_source(self, w) -> str:
        return params.data_source(self.config, w.get("dataset") or w.get("corpus"))

    def source_stamp(self, w) -> str:
        return params.source_stamp(self.config, w.get("dataset") or w.get("corpus"),
                                   remember=not self.dryrun())

    # ---- the claims: pre-registered runs start from committed code only
    def claims_train(self, w) -> list[str]:
        """The claims' training results (targets.claims_train). While any of the claims'
        runs (training, nulls, EP) is still to be made, asked only from a checkout whose
        code is committed (:meth:`_refuse_uncommitted`)."""
        train = targets.claims_train(self.config)
        runs = train + targets.claims_nulls(self.config) + targets.claims_ep(self.config)
        if not all(Path(p).exists() for p in runs):  # a pre-registered run is to be made
            self._refuse_uncommitted()
        return train

    def _pre_registered(self, w) -> None:
        """Refuse (_refuse_uncommitted) a job of a pre-registered run — a claims fresh
        seed's training, null or EP probe — that is still to be made, however asked
        for (the claims target, or the run's own file)."""
        spec = targets.claims_spec(self.config)
        if spec is None:
            return
        seed = int(w.seed)
        if "corpus" in w.keys():
            fresh = {s for c in spec["claims"] if "free_steps" in c["effect"]
                     for s in spec["seeds"][c.get("seeds", "fresh")]}
            files = [paths.fill(paths.EP_RESULT, corpus=w.corpus, precision=w.precision,
                                seed=seed)]
        else:
            fresh = set(spec["seeds"]["fresh"])
            # the stated recipe's runs, and the dose study's arms (their rules exist for it
            # alone: config/claims_dose.yaml pre-registers their runs on these seeds)
            if w.recipe != paths.DEFAULT_RECIPE and w.method not in DOSE_ARM_RULES:
                return
            run = {"dataset": w.dataset, "recipe": w.recipe, "method": w.method,
                   "lam": w.lam, "seed": seed}
            files = [paths.fill(paths.METRICS, **run)] + (
                [paths.fill(paths.NULL, **run)] if w.method == "dfa" else [])
        if seed in fresh and (not all(Path(f).exists() for f in files)
                              or ("corpus" not in w.keys() and self._would_rerun(w, files[0]))):
            self._refuse_uncommitted()

    def _would_rerun(self, w, metrics: str) -> bool:
        """Whether Snakemake would train a run whose result is here again: its record of
        the job holds other params (the run's config, or the code digest of what it
        computes with) than the job has now. A pre-registered run rerun from uncommitted
        code would replace the result of record with one no commit made."""
        import json

        from credit_assign.infra import record

        meta = record._metadata(self.basedir, metrics)
        if meta is None or "params" not in meta:
            return False
        try:
            recorded = json.loads(meta["params"]) if isinstance(meta["params"], str) \
                else list(meta["params"])
        except ValueError:
            return True
        now = (self.code("train")(w), self.run_config(w))
        if any(repr(v) not in recorded for v in now):
            return True
        # Snakemake's mtime trigger: a script or an input newer than the result
        script = self.basedir / "scripts" / "train.py"
        newer = [script, self.basedir / paths.fill(paths.DATA_MANIFEST, dataset=w.dataset)]
        made = (self.basedir / metrics).stat().st_mtime
        return any(f.exists() and f.stat().st_mtime > made for f in newer)


    def _refuse_uncommitted(self, file: str | None = None) -> None:
        """A ConfigError naming the files whose changes are not committed (tracked, or new
        and not ignored; the record's folders results/ and data/ are not code): a
        pre-registered run made from uncommitted code runs code no commit holds, and the
        claims page could not show what it ran. Outside a git checkout there is no order
        to show, and nothing to refuse; a checkout git cannot read is refused."""
        from credit_assign.infra.provenance import uncommitted
        from credit_assign.planning import ConfigError

        try:
            changed = uncommitted(self.basedir)
        except (OSError, subprocess.SubprocessError) as err:
            if (self.basedir / ".git").exists():
                raise ConfigError(f"the claims' runs are pre-registered and start only from "
                                  f"committed code, but git cannot tell whether the code in "
                                  f"{self.basedir} is committed ({err})") from None
            return
        if changed:
            file = file or self.config["claims"]["file"]
            raise ConfigError(
                f"the claims' runs are pre-registered ({file}) and start only "
                "from committed code, but these files have changes not committed: "
                + ", ".join(changed[:10]) + (" ..." if len(changed) > 10 else "")
                + ". Commit them (git add, git commit) or set them aside (git stash -u), "
                "then run the claims again")

    # ---- training and the jobs that read a trained model
    def ep_fixed_point_settings(self, w) -> Config:
        return params.ep_fixed_point_settings(self.config, w.precision)

    def code(self, step: str) -> Callable[[Any], str]:
        """The ``code`` param of a ``step`` job: the digest of the science it computes
        with (credit_assign.planning.code), its own learning rule's module included."""
        return lambda w: params.code_digest(self.config, step, w.get("method"))

    def run_config(self, w) -> Config:
        return params.run_config(self.config, w.dataset, w.recipe, w.method, w.lam, w.seed)

    def train_priority(self, w) -> int:
        return params.train_priority(self.config, w.recipe, w.method)

    def probe_settings(self, w) -> Config:
        return params.probe_settings(self.config)

    def train_metrics(self, w) -> list[str]:
        return targets.train_metrics(self.config, w.dataset, w.recipe)

    def train_timings(self, w) -> list[str]:
        return targets.train_timings(self.config, w.dataset, w.recipe)

    def null_results(self, w) -> list[str]:
        return targets.null_results(self.config, w.dataset, w.recipe)

    def probe_results(self, w) -> list[str]:
        return targets.probe_results(self.config, w.dataset, w.recipe)

    def measure_results(self, w) -> list[str]:
        return targets.measure_results(self.config, w.dataset, w.recipe)

    def reproduction_config(self, w) -> Config:
        return params.reproduction_config(self.config, w.recipe)

    def dataset_expect(self, w) -> dict[str, Any]:
        return targets.table_expect(self.config, w.dataset, w.recipe)

    # ---- the EP stack probe
    def corpus_version(self, w) -> str:
        return params.corpus_version(w.corpus)

    def ep_settings(self, w) -> Config:
        return params.ep_settings(self.config, w.precision)

    def ep_settle(self, w) -> Config:
        return params.ep_settle(self.config)

    # ---- findings and the paper
    def findings_inputs(self, w) -> dict[str, Any]:
        inputs = targets.findings_inputs(self.config)
        if "history" in inputs:
            inputs["history"] = self.repo_file(inputs["history"])
        return inputs

    def paper_number_inputs(self, w) -> dict[str, str]:
        return targets.paper_number_inputs(self.config)

    def paper_number_config(self, w) -> Config:
        return params.paper_number_config(self.config)

    def paper_claims_inputs(self, w) -> dict[str, str]:
        return targets.paper_claims_inputs(self.config) | {
            "history": self.repo_file(paths.HISTORY)}

    def paper_sources(self, w) -> dict[str, Any]:
        return targets.paper_sources(self.config)

    # ---- what a target or report step reads that the config alone names (no wildcard
    # of the job): spelled per_job.<name> in the rules like every other input
    def all_targets(self, w) -> list[str]:
        return targets.all_targets(self.config)

    def reference(self, w) -> str | list:
        """The paper's numbers (reproduction.reference; none: no input)."""
        return self.config["reproduction"]["reference"] or []

    def table_expect(self, w) -> dict[str, Any]:
        return targets.table_expect(self.config)

    def runs_expect(self, w) -> Any:
        return targets.table_expect(self.config)["runs"]

    def variant_targets(self, w) -> list[str]:
        return targets.variant_targets(self.config)

    def variant_reproduction_tables(self, w) -> list[str]:
        return targets.variant_reproduction_tables(self.config)

    def measurement_tables(self, w) -> list[str]:
        return targets.measurement_tables(self.config)

    def gap_map_expect(self, w) -> dict[str, list]:
        return targets.gap_map_expect(self.config)

    def notes_expect(self, w) -> dict[str, Any]:
        return targets.notes_expect(self.config)

    def claims_file(self, w) -> str | list:
        """config/claims.yaml (claims.file; none: no input)."""
        return self.config["claims"]["file"] or []

    def claims_targets(self, w) -> list[str]:
        return targets.claims_targets(self.config)

    def claims_timings(self, w) -> list[str]:
        return targets.claims_timings(self.config)

    def claims_nulls(self, w) -> list[str]:
        return targets.claims_nulls(self.config)

    def claims_ep(self, w) -> list[str]:
        return targets.claims_ep(self.config)

    def claims_ep_timings(self, w) -> list[str]:
        return targets.claims_ep(self.config, paths.EP_TIMINGS)

    def claims_findings(self, w) -> str:
        return targets.claims_findings(self.config)

    def claims_expect(self, w) -> dict[str, list]:
        return targets.claims_expect(self.config)

    def ep_results(self, w) -> list[str]:
        return targets.ep_results(self.config)

    def ep_timings(self, w) -> list[str]:
        return targets.ep_timings(self.config)

    def ep_question_file(self, w) -> str | list:
        """config/claims_ep.yaml (claims.ep; none: no input)."""
        return self.config["claims"]["ep"] or []

    def ep_question_runs(self, w) -> list[str]:
        return targets.ep_question_runs(self.config)

    def ep_question_timings(self, w) -> list[str]:
        return targets.ep_question_runs(self.config, paths.EP_FIXED_POINT_TIMINGS)
