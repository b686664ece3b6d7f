"""The Snakemake side of a ``script:`` job: its log, its threads, its failures."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from credit_assign.infra.hardware import set_threads

# what the job running in this process draws from (job_about): set by snakemake_job
_ABOUT: dict[str, Any] | None = None
_CONFIG: dict[str, Any] = {}  # and its config (job_config)
_RECIPE_DIR = re.compile(r"(?:^|/)results/([^/]+)/([^/]+)/")


def about(smk) -> dict[str, Any]:
    """What a job draws from, as a figure records it (figures.style.save): its step, its
    config's dataset and EP corpora, and every ``<dataset>/<recipe>`` its inputs are
    read from (``results/<dataset>/<recipe>/...``)."""
    config = getattr(smk, "config", None) or {}
    inputs = [str(p) for p in getattr(smk, "input", [])]
    read = sorted({f"{m.group(1)}/{m.group(2)}" for p in inputs
                   if (m := _RECIPE_DIR.search(p)) and m.group(1) != "ep_stack"})
    return {"step": getattr(smk, "rule", None), "dataset": config.get("dataset"),
            "corpora": list((config.get("ep_stack") or {}).get("corpora") or []),
            "read": read}


def job_about() -> dict[str, Any] | None:
    """What the Snakemake job running in this process draws from (``about``), or None
    outside a job."""
    return _ABOUT


# the PNG text chunk in which a figure says what it was drawn from (figures.style.save)
ABOUT_KEY = "credit-assign"


def drawn_from(png: str | Path) -> dict[str, Any] | None:
    """What a figure's PNG says it was drawn from (``about``), or None when it says
    nothing (drawn outside a job, or before figures said it)."""
    import json

    from PIL import Image

    with Image.open(png) as image:
        text = getattr(image, "text", {}).get(ABOUT_KEY)
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _job_paths(smk) -> list[str]:
    """The files a job writes: its outputs and its resume state (params.resume)."""
    paths = [str(p) for p in getattr(smk, "output", [])]
    resume = getattr(getattr(smk, "params", None), "resume", None)
    if isinstance(resume, str):
        paths.append(resume)
    return paths


def job_config() -> dict[str, Any]:
    """The config of the Snakemake job running in this process ({} outside a job)."""
    return _CONFIG


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
        global _ABOUT, _CONFIG
        _ABOUT = about(self.smk)
        _CONFIG = dict(getattr(self.smk, "config", None) or {})
        # the screen shows warnings and errors; the job's log, its progress too (a step's
        # per-epoch lines would interleave with every other job's on the terminal)
        screen = logging.StreamHandler()
        screen.setLevel(logging.WARNING if self.log_path else logging.INFO)
        handlers: list[logging.Handler] = [screen]
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
        global _ABOUT, _CONFIG
        _ABOUT, _CONFIG = None, {}
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
