"""python -m credit_assign.science.learning_rules [--write]: the registered rules' options, as
config/README.md lists them. With --write (run from the repository root), the two files
generated from the rules are rewritten: the workflow's catalogue of the rules
(src/credit_assign/planning/rules_catalog.json) and the options table of
config/README.md."""

import sys
from pathlib import Path

from credit_assign.infra import paths
from credit_assign.infra.provenance import check_checkout
from credit_assign.planning import catalog as spec_catalog
from credit_assign.science.learning_rules import catalog, options_table

README = Path(paths.RULE_OPTIONS_README)
ROW = "| `methods."
HEADING = "## Learning rules' options"


def readme_with(text: str, table: str) -> str:
    """config/README.md's text with its rule-options rows (the table under the heading
    "Learning rules' options") replaced by ``table``."""
    lines = text.splitlines(keepends=True)
    heading = next((i for i, line in enumerate(lines) if line.startswith(HEADING)), None)
    if heading is None:
        raise SystemExit(f"{README}: no heading {HEADING!r} above the rule-options table")
    first = next(i for i in range(heading, len(lines)) if lines[i].startswith(ROW))
    last = first
    while last + 1 < len(lines) and lines[last + 1].startswith(ROW):
        last += 1
    return "".join(lines[:first] + [table + "\n"] + lines[last + 1:])


def main(argv: list[str]) -> int:
    if argv not in ([], ["--write"]):
        print(__doc__, file=sys.stderr)
        return 2
    table = options_table()
    if not argv:
        print(table)
        return 0
    try:  # write the catalogue of this checkout's rules, into this checkout
        check_checkout(".")
    except RuntimeError as err:
        print(f"--write: {err}", file=sys.stderr)
        return 2
    text = spec_catalog.render(catalog(), spec_catalog.sources_digest())
    spec_catalog.CATALOG.write_text(text)
    README.write_text(readme_with(README.read_text(), table))
    print(f"wrote {spec_catalog.CATALOG} and the rule options of {README}")
    return 0


raise SystemExit(main(sys.argv[1:]))
