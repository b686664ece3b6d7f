"""The precision study's own paths (a room's files are its own: the shared table,
infra.paths, is part of every report step's code, and a new study must not rerun the
others)."""

from credit_assign.infra import paths

TABLE = f"{paths.EP_SUMMARY}/ep_estimator.csv"
REMADE = f"{paths.EP_SUMMARY}/ep_estimator_remade.csv"
LOGS = {"ep_estimator_tables": "logs/ep_stack/ep_estimator_tables.log"}
