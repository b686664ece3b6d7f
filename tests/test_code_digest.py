"""The code param of each computing job (credit_assign.planning.code): an edit to one
learning rule's module changes the digest of that rule's jobs only, a plotting or
reporting module is in no job's digest, and an import added to the science is followed."""

import shutil
from pathlib import Path

import pytest

from credit_assign.planning import catalog, checks, code, params

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def package_copy(tmp_path, monkeypatch):
    """A copy of the package that planning.code reads instead (its caches cleared)."""
    copy = tmp_path / "credit_assign"
    shutil.copytree(code.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))

    def clear():
        for f in (code.file_digest, code.digest, code.closure, code._tree, code._names,
                  code.report_files, code.report_digest):
            f.cache_clear()

    clear()
    monkeypatch.setattr(code, "PACKAGE", copy)
    yield copy
    clear()


def test_an_edit_to_one_rule_changes_only_its_runs_digests(package_copy):
    keys = [(s, m) for s in ("train", "fresh_b_null", "measure") for m in ("dfa", "bp")]
    before = {k: code.digest(k[0], (k[1],)) for k in keys}
    dfa = package_copy / code.rule_module("dfa", catalog.load())
    text = dfa.read_text()

    def after() -> dict:
        code.file_digest.cache_clear()
        code.digest.cache_clear()
        return {k: code.digest(k[0], (k[1],)) for k in keys}

    dfa.write_text("# a comment\n" + text.replace('"""', '"""Reworded. ', 1))
    assert after() == before  # a comment or a docstring changes no run's digest
    dfa.write_text(text + "\nEDITED = True\n")
    changed = after()
    assert [k for k in keys if changed[k] != before[k]] == [k for k in keys if k[1] == "dfa"]


def test_an_import_added_to_the_science_joins_the_digest(package_copy):
    assert "figures/style.py" not in code.files("train", ("dfa",))
    model = package_copy / "science/model.py"
    model.write_text(model.read_text() + "\nfrom credit_assign.figures import style  # noqa\n")
    code._tree.cache_clear()
    code.closure.cache_clear()
    assert "figures/style.py" in code.files("train", ("dfa",))


def test_each_step_computes_with_its_science_and_no_plotting():
    paper_config = checks.load_config([], ROOT)
    cat = catalog.load()
    every = set()
    for step in code.ENTRY:
        files = code.files(step, () if step == "ep_stack_probe" else ("dfa",))
        assert set(code.ENTRY[step]) <= set(files)
        every |= set(files)
    assert {"science/model.py", "science/learning_rules/dfa.py", "infra/decode.py",
            "ep_stack/dynamics.py"} <= every
    assert not [f for f in every if f.split("/")[0] in ("figures", "reporting", "analysis")]
    assert not every & code.NOT_SCIENCE
    probed = [m for m, r in cat.items() if r["probed"]]
    probe = code.files("alignment_probe", tuple(probed))
    assert {code.rule_module(m, cat) for m in probed} <= set(probe)
    assert params.code_digest(paper_config, "train", "dfa") != params.code_digest(
        paper_config, "train", "bp")
    assert params.code_digest(paper_config, "alignment_probe", "dfa") == params.code_digest(
        paper_config, "alignment_probe", "bp")


def test_a_rule_without_a_source_in_the_catalogue_is_named():
    with pytest.raises(KeyError, match="regenerate it"):
        code.rule_module("dfa", {"dfa": {"label": "DFA"}})
    with pytest.raises(KeyError, match="no code list for step"):
        code.files("plot")


def test_a_package_folder_that_shadows_a_rule_module_is_refused(package_copy):
    """A ``science/learning_rules/dfa/__init__.py`` (untracked, say) is what ``import`` loads in
    place of ``dfa.py``: a digest of dfa.py would vouch for code no job runs."""
    shadow = package_copy / "science/learning_rules/dfa/__init__.py"
    shadow.parent.mkdir()
    shadow.write_text("EDITED = True\n")
    with pytest.raises(RuntimeError, match=r"science/learning_rules/dfa/__init__.py shadows "
                                           r"science/learning_rules/dfa.py"):
        code.digest("train", ("dfa",))
    shadow.unlink()
    shadow.parent.rmdir()
    code.file_digest.cache_clear()
    code.digest("train", ("dfa",))


def test_the_rename_migration_maps_only_code_that_says_what_it_said(package_copy):
    """issue #58 renamed credit_assign.spec (planning) and science.rules
    (learning_rules): planning.old_digests maps a job's code param at the commit before
    (BEFORE_RENAME, its files read from git's history) to today's only where every one
    of the step's modules says today what it said then, its imports' new names and
    order aside. At the rename every computing step mapped; a module edited since
    drops its steps from the mapping, so their old jobs stay stale."""
    from credit_assign.planning import old_digests

    if old_digests.before_rename("planning/code.py") is None:
        pytest.skip("git's history of the commit before the rename is not here")
    rules = catalog.load()
    mapped = old_digests.renamed()
    keys = [("train", ("dfa",)), ("train", ("bp",)), ("measure", ("dfa",))]
    then = {k: old_digests._before_rename(code.files(*k, rules)) for k in keys}
    still = [k for k in keys if then[k] is not None]
    if not still:
        pytest.skip("every such step's code was edited since the rename")
    step, methods = still[0]
    assert mapped[then[(step, methods)]] == code.digest(step, methods)
    module = code.rule_module(methods[0], rules)
    path = package_copy / module
    path.write_text(path.read_text().replace("return", "return 1 or", 1))
    code.file_digest.cache_clear()
    code.digest.cache_clear()
    assert not old_digests.same_as_before_rename(old_digests.before_rename(module),
                                                 path.read_text(), module)
    assert old_digests._before_rename(code.files(step, methods, rules)) is None
    assert then[(step, methods)] not in old_digests.renamed()
