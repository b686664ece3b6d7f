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
