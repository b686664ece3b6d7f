"""What an older checkout wrote, kept apart from the core: the config keys that are gone
(``config_keys``: the message that says what to write now; planning's checks raise it),
and where make publish put the claims' findings before one findings file
(``claims_findings``: git's history of it is read for the order of plan and runs).
Nothing here is needed by a config or a results folder written today; a migration that
has served its time is deleted here, in one place (the results-layout move went once the
record was all in today's layout). Stdlib and paths only, below planning and above the
infrastructure (pyproject.toml's import-linter layers).
"""
