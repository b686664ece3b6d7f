"""The old name of credit_assign.planning, kept for one reader: the first EP question's
judge of record (analysis/ep_question.py) imports ``credit_assign.spec.claims``. That
judge was committed before its runs, and its page shows the order from git's history of
the file, so it is never edited (issue #58); this alias lets its import resolve. Nothing
else imports it (tests/test_planning.py)."""

import sys

from credit_assign.planning import claims

sys.modules[f"{__name__}.claims"] = claims
