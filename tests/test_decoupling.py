"""A change touches only what it changes (issue #58): what can be shown without
starting Snakemake."""

import shutil

from credit_assign.spec import catalog


def test_a_comment_in_a_rule_leaves_the_catalogue_current_a_code_edit_does_not(tmp_path):
    rules = tmp_path / "rules"
    shutil.copytree(catalog.rules_dir(), rules, ignore=shutil.ignore_patterns("__pycache__"))
    before = catalog.sources_digest(rules)
    assert before == catalog.sources_digest()  # the copy says what the package says
    dfa = rules / "dfa.py"
    text = dfa.read_text()
    dfa.write_text("# a comment\n" + text.replace('"""', '"""A reworded docstring. ', 1))
    assert catalog.sources_digest(rules) == before
    dfa.write_text(text + "\nEXTRA = 1\n")
    assert catalog.sources_digest(rules) != before
