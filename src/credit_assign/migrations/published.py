"""What make publish wrote before one findings file (docs/findings.json, a section per
group: infra.published): each group's findings in a file of its own in docs/. The
claims' (docs/claims_findings.json) history in git holds their first publication
(analysis.history.first_publication reads it there first); the study's was
docs/findings.json itself, without sections (``study_alone``: make publish makes it the
study's section before it writes)."""

from credit_assign.infra import paths

LEGACY = {"claims": paths.PUBLISHED_CLAIMS_BEFORE}


def study_alone(whole) -> bool:
    """Whether a docs/findings.json is the study's findings alone, as published before
    sections (the step findings' file: ``kind: findings``)."""
    return isinstance(whole, dict) and "about" not in whole and whole.get("kind") == "findings"
