"""A change touches only what it changes (issue #58): what can be shown without
starting Snakemake."""

import shutil

from credit_assign.planning import catalog


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


SOURCE = '''def f(x: int, *a, k=2, **kw) -> int:
    """doc"""
    y = [i for i in range(x) if i % k]  # a comment
    return sum(y) + len(a) + len(kw)


class C:
    z: float = 1.5
'''


def test_a_code_digest_is_of_meaning_and_the_same_on_every_python():
    """A comment, a docstring or a reformatting leaves a module's digest (planning.code:
    every run's ``code`` param) as it was; a change to what it computes does not. The
    digest is written without the fields a newer Python adds empty (``type_params``):
    this value, computed on Python 3.11, is what every supported Python computes."""
    import hashlib

    from credit_assign.planning.catalog import meaning

    assert hashlib.sha256(meaning(SOURCE)).hexdigest() == (
        "2eacd51c9a352d3cfcd2755f3aaf3c8c6548ae63c3870a5d6dd8ca66b0c13ccc")
    reworded = ('"""A module docstring."""\n# a new comment\n'
                + SOURCE.replace('"""doc"""', '"""Another docstring,\n    on two lines."""')
                .replace("sum(y) + len(a)", "sum(y)+len( a )"))
    assert meaning(reworded) == meaning(SOURCE)
    assert meaning(SOURCE.replace("k=2", "k=3")) != meaning(SOURCE)
    assert meaning(SOURCE.replace("i % k", "k % i")) != meaning(SOURCE)

