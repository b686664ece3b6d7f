"""EP's first question (config/claims_ep.yaml, issue #37): does EP's estimate reach the
bottom block? Its judge of record is analysis.ep_question (committed before its runs, and
left there: its page proves the order from git's history of that path); here are its page
and its figure."""
