"""A killed job loses at most one unit of work: the resume state, one mechanism for every
resumable job."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from credit_assign.infra.checkpoints import atomic_torch_save, load_checkpoint
from credit_assign.infra.files import CorruptFileError


def load_resume(path: str | Path | None, expected: dict[str, Any], map_location=None,
                logger=None) -> dict | None:
    """The resume state at ``path`` if it was written with exactly ``expected`` (config,
    code, ...: the ``"written_for"`` entry of the state); else None. A state that cannot be
    read or was written for anything else is moved aside to ``<name>.rejected`` with a
    warning naming it, so the job starts afresh instead of failing on every retry."""
    log = logger or logging.getLogger(__name__)
    if not path:
        return None
    path = Path(path)
    if not path.exists():
        return None
    try:
        state = load_checkpoint(path, "resume state", map_location)
        written_for = state.get("written_for") if isinstance(state, dict) else None
        if written_for != expected:
            differs = sorted(k for k in expected
                             if not isinstance(written_for, dict)
                             or written_for.get(k) != expected[k])
            reason = f"written for another {', '.join(differs) or 'format'}"
        else:
            return state
    except CorruptFileError as err:
        reason = f"unreadable ({err.__cause__.__class__.__name__})"
    _set_aside(path, reason, log)
    return None


def _set_aside(path: Path, reason: str, log) -> None:
    """Move a resume state the job cannot use to ``<name>.rejected``, saying why, so the
    job starts afresh instead of failing on every retry."""
    aside = path.with_name(path.name + ".rejected")
    os.replace(path, aside)
    log.warning("not resuming from %s: %s; moved it to %s and starting afresh", path, reason,
                aside)


class ResumeState:
    """A job's resume file, one mechanism for every resumable job (training, the EP stack
    probe): saved atomically after each unit of work with the ``written_for`` record
    (config, code, ...), read back only when written for exactly this job, set aside
    when it cannot be restored, removed when the job is done. ``path = None``: no
    resume file (nothing is saved or read)."""

    def __init__(self, path: str | Path | None, written_for: dict[str, Any], logger=None):
        self.path = Path(path) if path else None
        self.written_for = written_for
        self.log = logger or logging.getLogger(__name__)

    def load(self, map_location=None) -> dict | None:
        return load_resume(self.path, self.written_for, map_location, self.log)

    def save(self, state: dict[str, Any]) -> None:
        if self.path:
            atomic_torch_save({"written_for": self.written_for, **state}, self.path)

    def reject(self, err: Exception) -> None:
        """A state that loaded but cannot be restored: move it aside, say why."""
        _set_aside(self.path, f"it cannot be restored ({type(err).__name__}: {err})", self.log)

    def done(self) -> None:
        if self.path:
            self.path.unlink(missing_ok=True)
