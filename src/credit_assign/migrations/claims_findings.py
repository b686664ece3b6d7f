"""Where make publish put the claims' findings before one findings file
(docs/findings.json, a section per group: infra.findings_file): a file of their own in
docs/, docs/claims_findings.json. Its history in git holds the claims' first
publication (analysis.history.first_publication reads it there first). (The study's
findings were docs/findings.json itself, without sections: infra.findings_file.read reads
such a file as the study's section.)"""

from credit_assign.infra import paths

LEGACY = {"claims": paths.PUBLISHED_CLAIMS_BEFORE}
