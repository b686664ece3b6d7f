"""The Snakemake side of a ``script:`` job: its log, its threads, its failures."""

from __future__ import annotations

import logging
from pathlib import Path

from credit_assign.infra.hardware import set_threads


def _job_paths(smk) -> list[str]:
    """The files a job writes: its outputs and its resume state (params.resume)."""
    paths = [str(p) for p in getattr(smk, "output", [])]
    resume = getattr(getattr(smk, "params", None), "resume", None)
    if isinstance(resume, str):
        paths.append(resume)
    return paths


class snakemake_job:
    """Context for a Snakemake ``script:`` job: log to the step's log file, use
    exactly the step's threads, and record a failure in the log before re-raising.

        with snakemake_job(snakemake) as threads:
            ...
    """

    def __init__(self, smk):
        self.smk = smk
        self.attempt = int(getattr(smk, "attempt", 1) or 1)
        log_path = smk.log[0] if len(smk.log) else None
        self.log_path = Path(log_path) if log_path else None

    def __enter__(self) -> int:
        handlers = [logging.StreamHandler()]
        if self.log_path:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            # a retry appends: every attempt of the job stays readable in one log
            handlers.append(logging.FileHandler(self.log_path,
                                                mode="a" if self.attempt > 1 else "w"))
        logging.basicConfig(level=logging.WARNING, handlers=handlers, force=True,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        logging.getLogger("credit_assign").setLevel(logging.INFO)
        if self.attempt > 1:
            logging.getLogger("credit_assign").warning("---- attempt %d of this job ----",
                                                       self.attempt)
        # temporary files a killed attempt left beside this job's outputs (our atomic
        # writes name them .<output>.<random>.tmp); nothing else writes them
        for out in _job_paths(self.smk):
            for tmp in Path(out).parent.glob(f".{Path(out).name}.*.tmp"):
                tmp.unlink(missing_ok=True)
                logging.getLogger("credit_assign").warning(
                    "removed %s, left by a killed write", tmp)
        set_threads(int(self.smk.threads))
        return int(self.smk.threads)

    def __exit__(self, exc_type, exc, tb):
        failures = self.log_path.with_name(self.log_path.name + ".failures") \
            if self.log_path else None
        if exc is None:
            if failures:
                failures.unlink(missing_ok=True)
            return False
        log = logging.getLogger("credit_assign")
        log.error("job failed (attempt %d)", self.attempt, exc_info=(exc_type, exc, tb))
        if failures:
            # a failure that repeats exactly is not a pre-emption: say that retrying
            # (the cluster profiles' `retries`) cannot help
            this = f"{exc_type.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            before = failures.read_text().splitlines() if failures.exists() else []
            if before and before[-1] == this:
                log.error("attempt %d failed exactly as the one before (%s): this failure "
                          "does not go away by retrying; fix its cause (above) and rerun",
                          self.attempt, this)
            with open(failures, "a") as fh:
                fh.write(this + "\n")
        return False
