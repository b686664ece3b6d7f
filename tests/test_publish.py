"""make publish (credit_assign.reporting.publish): every group whole or none, each
problem named before a file is copied."""

from pathlib import Path

import pytest

from credit_assign.reporting import publish


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("ep_stack: {corpora: [tinyshakespeare]}\n")
    return tmp_path


def _make(files):
    for src, _ in files:
        path = Path(src)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{src}\n")


def test_a_publish_without_its_files_names_them_and_copies_nothing(workdir, capsys):
    _make(publish.groups("cifar10")["claims"])  # the claims are there, the EP probe not
    assert publish.main(["--only", "claims", "ep"]) == 1
    err = capsys.readouterr().err
    assert "results/ep_stack/summary/report.md is missing (group ep)" in err
    assert "Traceback" not in err and not list((workdir / "docs").iterdir())


def test_a_group_is_copied_whole(workdir):
    files = publish.groups("cifar10")["claims"]
    _make(files)
    assert publish.main(["--only", "claims"]) == 0
    assert sorted(p.name for p in (workdir / "docs").iterdir()) == sorted(n for _, n in files)


def test_the_ep_pages_only_from_the_paper_configs_corpora(workdir, capsys):
    files = publish.groups("cifar10")["ep"]
    _make(files)
    from credit_assign.infra import paths

    (workdir / paths.EP_BY_SEED).write_text("corpus,seed\npydoc,0\n")  # another corpus
    assert publish.main(["--only", "ep"]) == 1
    assert "not config/config.yaml's ['tinyshakespeare']" in capsys.readouterr().err


FINDINGS = {"counts": {"verdict_claims": {"holds": 7, "claims": 11, "contradicted": 1,
                                          "undecided": 3},
                       "study_claims": {"holds": 5, "claims": 10, "contradicted": 0,
                                        "undecided": 5}},
            "seeds": {"fresh": list(range(1001, 1009)), "study": [42, 123, 456]},
            "decision": {"confidence": 0.95},
            "claims": [{"id": "a"}, {"id": "fa", "seeds": "study"}],
            "order": {"spec": {"short": "abc1234", "alone": True}, "all_after": True,
                      "amended": [], "working_differs": False,
                      "first_result": "2026-12-02 05:00 UTC"}}


def test_publishing_the_claims_rewrites_readmes_block_from_the_findings(workdir):
    """README's claims block is the findings rendered (no number typed in README), and
    only the block changes."""
    import json

    files = publish.groups("cifar10")["claims"]
    _make(files)
    findings = [src for src, name in files if name == "claims_findings.json"][0]
    Path(findings).write_text(json.dumps(FINDINGS))
    (workdir / "README.md").write_text(f"# top\n{publish.BEGIN}\nold\n{publish.END}\nrest\n")
    assert publish.main(["--only", "claims"]) == 0
    text = (workdir / "README.md").read_text()
    assert text.startswith("# top\n") and text.endswith(f"{publish.END}\nrest\n")
    assert "\nold\n" not in text
    assert ("**7 of the paper's 11 claims hold** (1 contradicted, 3 undecided), each an "
            "effect with a 95 % bootstrap interval over 8 seeds never used before (1 of them "
            "on a seed set of its own") in text
    assert "The 10 of them judged on those fresh seeds" in text and "`abc1234`" in text
    assert "study's 3 seeds (42, 123 and 456): 5 hold, 0 contradicted" in text
    assert "alone and before the first fresh-seed result (2026-12-02 05:00 UTC)" in text
    # a record that does not show the order: the block says so, never "before"
    edited = {**FINDINGS, "order": {**FINDINGS["order"], "working_differs": True}}
    Path(findings).write_text(json.dumps(edited))
    assert publish.main(["--only", "claims"]) == 0
    text = (workdir / "README.md").read_text()
    assert "before the first" not in text and "cannot be shown from the record" in text


def test_a_readme_without_the_claims_block_is_named(workdir, capsys):
    files = publish.groups("cifar10")["claims"]
    _make(files)
    findings = [src for src, name in files if name == "claims_findings.json"][0]
    Path(findings).write_text('{"counts": {}}')
    (workdir / "README.md").write_text("# no block\n")
    assert publish.main(["--only", "claims"]) == 1
    assert "README.md has no claims block" in capsys.readouterr().err
    assert not list((workdir / "docs").iterdir())  # named before anything is copied
    # the block in place, the findings without what it reads: named, nothing copied
    (workdir / "README.md").write_text(f"{publish.BEGIN}\n{publish.END}\n")
    assert publish.main(["--only", "claims"]) == 1
    assert "README's claims block cannot be written from it" in capsys.readouterr().err
    assert not list((workdir / "docs").iterdir())
