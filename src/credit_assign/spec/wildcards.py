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
from credit_assign.spec import params, targets
from credit_assign.spec.targets import Config


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
            fresh = {s for c in spec["claims"] if c["effect"]["kind"] == "value"
                     for s in spec["seeds"][c.get("seeds", "fresh")]}
            files = [paths.fill(paths.EP_RESULT, corpus=w.corpus, precision=w.precision,
                                seed=seed)]
        else:
            fresh = set(spec["seeds"]["fresh"])
            if w.recipe != paths.DEFAULT_RECIPE:
                return
            run = {"dataset": w.dataset, "recipe": w.recipe, "method": w.method,
                   "lam": w.lam, "seed": seed}
            files = [paths.fill(paths.METRICS, **run)] + (
                [paths.fill(paths.NULL, **run)] if w.method == "dfa" else [])
        if seed in fresh and not all(Path(f).exists() for f in files):
            self._refuse_uncommitted()

    def _refuse_uncommitted(self, file: str | None = None) -> None:
        """A ConfigError naming the files whose changes are not committed (tracked, or new
        and not ignored; the record's folders results/ and data/ are not code): a
        pre-registered run made from uncommitted code runs code no commit holds, and the
        claims page could not show what it ran. Outside a git checkout there is no order
        to show, and nothing to refuse; a checkout git cannot read is refused."""
        from credit_assign.infra.provenance import uncommitted
        from credit_assign.spec import ConfigError

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
        with (credit_assign.spec.code), its own learning rule's module included."""
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
