"""Planning: the config model — what a config asks the workflow to run, as plain,
importable functions of the config dict, without torch (the Snakefile and
workflow/rules/*.smk are a thin layer over it; the tests call it in milliseconds, no
Snakemake started):

* :mod:`~credit_assign.planning.catalog` — the learning rules as the workflow sees them
  (names, labels, colours, options), read from the generated ``rules_catalog.json``;
* :mod:`~credit_assign.planning.checks` — what the schema cannot say about a config;
* :mod:`~credit_assign.planning.matrix` — the run matrix: the sweep as one typed table
  of runs, λ's one spelling and one equality, and figure 4's λ (marked in the sweep);
* :mod:`~credit_assign.planning.targets` — the target lists and the tables' expected
  runs, from the run matrix;
* :mod:`~credit_assign.planning.params` — each job's parameters (what reruns it);
* :mod:`~credit_assign.planning.configfiles`, :mod:`~credit_assign.planning.method_training`,
  :mod:`~credit_assign.planning.estimate` — the config files as written, a run's training
  recipe, the study's compute time.

Every file pattern is in :mod:`credit_assign.infra.paths` (the infrastructure layer, so
that the library below planning takes its paths from the same table).

Nothing here imports torch or the science modules (an import-linter contract and a test
check it): parsing the workflow stays fast.
"""


class ConfigError(ValueError):
    """A config the workflow refuses before any job (the Snakefile reports it as a
    WorkflowError, with this message)."""
