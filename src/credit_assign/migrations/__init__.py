"""What an older checkout wrote, kept apart from the core: the code that moves its results
to today's layout (``python -m credit_assign.migrations.layout``) and the config keys that
are gone (``config_keys``: the message that says what to write now; the spec's checks
raise it), and where make publish put the claims' findings before one findings file
(``published``). Nothing here is needed by a config or a results folder written today; a
migration that has served its time is deleted here, in one place. Stdlib and paths only, below the
spec and above the infrastructure (pyproject.toml's import-linter layers).
"""
