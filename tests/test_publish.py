"""make publish (credit_assign.publish): every group whole or none, each
problem named before a file is copied; nothing out of date (Snakemake's dry run) and no
figure drawn for another dataset."""

import json
import shutil
import sys
from pathlib import Path

import pytest
from PIL import Image, PngImagePlugin

from credit_assign import publish
from credit_assign.infra.snakejob import ABOUT_KEY

BEGIN, END = publish.BLOCKS["claims"][:2]
CIFAR = {"step": "fig", "dataset": "cifar10", "corpora": ["tinyshakespeare"],
         "read": ["cifar10/default"]}


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A working folder whose files Snakemake would not rebuild (its dry run is stubbed:
    the tests below that ask Snakemake run a workflow of their own)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("ep_stack: {corpora: [tinyshakespeare]}\n")
    monkeypatch.setattr(publish, "planned", lambda targets, config, *extra: ([], None))
    _no_record(monkeypatch)
    return tmp_path


def _no_record(monkeypatch):
    """The stamp's made_from stubbed: these folders have no record and no full config
    (the stamp itself: tests/test_docs_fresh.py, on the checkout)."""
    monkeypatch.setattr(publish, "made_from",
                        lambda name, config, scope=None: {"code": {}, "record": {}})
    monkeypatch.setattr(publish, "group_scope", lambda name, files, config, extra=(), cwd=None: {
        "steps": [], "files": [], "methods": []})


def png(path, about=CIFAR) -> None:
    """A PNG saying what it was drawn from, as figures.style.save writes one."""
    info = PngImagePlugin.PngInfo()
    if about is not None:
        info.add_text(ABOUT_KEY, json.dumps(about))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (4, 4)).save(path, pnginfo=info)


def _make(files, about=CIFAR):
    for src, _ in files:
        path = Path(src)
        path.parent.mkdir(parents=True, exist_ok=True)
        if src.endswith(".png"):
            png(path, about)
        elif src.endswith(".json"):  # findings: a section of docs/findings.json
            path.write_text("{}\n")
        else:
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
    assert sorted(p.name for p in (workdir / "docs").iterdir()) == sorted(
        [publish.STAMP, *(n for _, n in files)])


def test_a_write_that_fails_leaves_docs_as_it_was_and_is_named(workdir, monkeypatch,
                                                                capsys):
    """#57, 10: one file that cannot be written (a read-only PNG, a full disk) stops the
    publish before any docs/ file is replaced, and the error names the file."""
    files = publish.groups("cifar10")["claims"]
    _make(files)
    assert publish.main(["--only", "claims"]) == 0
    before = {p.name: p.read_bytes() for p in (workdir / "docs").iterdir()}
    for src, _ in files:  # a new build of the pages and tables
        if src.endswith((".md", ".csv")):
            Path(src).write_text(f"{src} again\n")
    real = shutil.copyfile

    def failing(src, dest, *a, **k):
        if str(dest).endswith(".png"):
            raise PermissionError(13, "Permission denied", str(dest))
        return real(src, dest, *a, **k)

    monkeypatch.setattr(publish.shutil, "copyfile", failing)
    assert publish.main(["--only", "claims"]) == 1
    err = capsys.readouterr().err
    assert "nothing copied" in err and ".png: Permission denied" in err
    assert {p.name: p.read_bytes() for p in (workdir / "docs").iterdir()} == before


def test_a_file_that_cannot_be_replaced_puts_back_every_one_replaced(workdir, monkeypatch,
                                                                     capsys):
    """#57, 10, the rename: a docs/ file that cannot be replaced (immutable, say) after
    others were puts those back; docs/ is as it was and the error names the file."""
    files = publish.groups("cifar10")["claims"]
    _make(files)
    assert publish.main(["--only", "claims"]) == 0
    before = {p.name: p.read_bytes() for p in (workdir / "docs").iterdir()}
    for src, _ in files:
        if src.endswith((".md", ".csv")):
            Path(src).write_text(f"{src} again\n")
    real = Path.replace

    def failing(self, target):
        if str(target).endswith(".png") and ".publish-" not in str(target):
            raise PermissionError(1, "Operation not permitted", str(target))
        return real(self, target)

    monkeypatch.setattr(Path, "replace", failing)
    assert publish.main(["--only", "claims"]) == 1
    err = capsys.readouterr().err
    assert ".png could not be replaced" in err and "put back" in err
    assert {p.name: p.read_bytes() for p in (workdir / "docs").iterdir()} == before


def test_the_ep_pages_only_from_the_paper_configs_corpora(workdir, capsys):
    files = publish.groups("cifar10")["ep"]
    _make(files)
    from credit_assign.infra import paths

    (workdir / paths.EP_BY_SEED).write_text("corpus,seed\npydoc,0\n")  # another corpus
    assert publish.main(["--only", "ep"]) == 1
    assert "not config/config.yaml's ['tinyshakespeare']" in capsys.readouterr().err


FINDINGS = {"counts": {"verdict_claims": {"holds": 7, "claims": 11, "contradicted": 1,
                                          "undecided": 3},
                       "t_verdict_claims": {"holds": 6, "claims": 11, "contradicted": 1,
                                            "undecided": 4},
                       "study_claims": {"holds": 5, "claims": 10, "contradicted": 0,
                                        "undecided": 5},
                       "t_study_claims": {"holds": 2, "claims": 10, "contradicted": 0,
                                          "undecided": 8}},
            "magnitude": {"given": 8, "inside_t": 2, "above_t": 1, "below_t": 5,
                          "inside_pred": 3, "vs_directions": "less_often"},
            "sensitivity": {"same_as_record": False},
            "seeds": {"fresh": list(range(1001, 1009)), "study": [42, 123, 456]},
            "decision": {"confidence": 0.95, "method": "BCa"},
            "claims": [{"id": "a", "text": "a holds"}, {"id": "b", "text": "b is open"},
                       {"id": "fa", "seeds": "study", "text": "FA beats DFA"}],
            "claim_verdicts": [
                {"claim": "a", "seed_set": "fresh", "verdict_set": True, "verdict": "holds",
                 "n": 8},
                {"claim": "b", "seed_set": "fresh", "verdict_set": True,
                 "verdict": "undecided", "n": 0},
                {"claim": "fa", "seed_set": "study", "verdict_set": True,
                 "verdict": "contradicted", "n": 3}],
            "order": {"spec": {"short": "abc1234", "alone": True}, "all_after": True,
                      "amended": [], "working_differs": False, "shown": True,
                      "first_result": "2026-12-02 05:00 UTC"}}


def test_publishing_the_claims_rewrites_readmes_block_from_the_findings(workdir):
    """README's claims block is the findings rendered (no number typed in README), and
    only the block changes."""
    import json

    files = publish.groups("cifar10")["claims"]
    _make(files)
    findings = [src for src, name in files if name == publish.FINDINGS][0]
    Path(findings).write_text(json.dumps(FINDINGS))
    (workdir / "README.md").write_text(f"# top\n{BEGIN}\nold\n{END}\nrest\n")
    assert publish.main(["--only", "claims"]) == 0
    text = (workdir / "README.md").read_text()
    assert text.startswith("# top\n") and text.endswith(f"{END}\nrest\n")
    assert "\nold\n" not in text
    assert max(len(line) for line in text.splitlines()) <= 100  # wrapped
    words = " ".join(text.split())
    assert ("**The paper's claims** ([docs/claims.md](docs/claims.md)): 7 of 11 hold as "
            "directions on 8 pre-registered seeds (1 judged on other seeds). "
            'Contradicted: "FA beats DFA". Undecided: "b is open" (no usable seed). By a '
            "t-interval with Holm's correction, chosen after the results: 6 hold, 1 "
            "contradicted, 4 undecided. The sizes reproduce less often: the paper's value "
            "lies inside our t-interval for 2 of 8 effects.") in words


def test_a_readme_without_the_claims_block_is_named(workdir, capsys):
    files = publish.groups("cifar10")["claims"]
    _make(files)
    findings = [src for src, name in files if name == publish.FINDINGS][0]
    Path(findings).write_text('{"counts": {}}')
    (workdir / "README.md").write_text("# no block\n")
    assert publish.main(["--only", "claims"]) == 1
    assert "README.md has no claims block" in capsys.readouterr().err
    assert not list((workdir / "docs").iterdir())  # named before anything is copied
    # the block in place, the findings without what it reads: named, nothing copied
    (workdir / "README.md").write_text(f"{BEGIN}\n{END}\n")
    assert publish.main(["--only", "claims"]) == 1
    assert "README's claims block cannot be written from it" in capsys.readouterr().err
    assert not list((workdir / "docs").iterdir())


# ---- round five: nothing out of date, no figure of another dataset -------------------
@pytest.mark.parametrize("about, named", [
    ({**CIFAR, "dataset": "digits", "read": ["digits/default"]}, "was drawn for digits"),
    ({**CIFAR, "read": ["digits/default"]}, "from digits/default"),
    (None, "does not say what data it was drawn from")])
def test_a_figure_drawn_for_another_dataset_is_refused(workdir, capsys, about, named):
    """paper/figures/ is one folder for every config: a figure drawn for digits (or
    saying nothing of its data) is never copied as CIFAR-10's."""
    files = publish.groups("cifar10")["claims"]
    _make(files)
    png("paper/figures/fig_claims.png", about)
    assert publish.main(["--only", "claims"]) == 1
    err = capsys.readouterr().err
    assert "paper/figures/fig_claims.png (group claims)" in err and named in err
    assert "snakemake --cores N --force paper/figures/fig_claims.png" in err
    assert not list((workdir / "docs").iterdir())
    # drawn for the paper config's corpora, the EP figure copies; for others it does not
    _make(publish.groups("cifar10")["ep"], {**CIFAR, "corpora": ["pydoc"]})
    (workdir / publish.paths.EP_BY_SEED).write_text("corpus,seed\ntinyshakespeare,0\n")
    assert publish.main(["--only", "ep"]) == 1
    assert "was drawn for the corpora ['pydoc']" in capsys.readouterr().err


def test_a_figure_saved_in_a_job_says_what_it_was_drawn_from(tmp_path):
    """figures.style.save writes the running job's dataset, corpora and the recipes its
    inputs are read from into the PNG (what publish reads); outside a job, nothing."""
    from types import SimpleNamespace

    import matplotlib.pyplot as plt

    from credit_assign.figures import style
    from credit_assign.infra.snakejob import drawn_from, snakemake_job

    smk = SimpleNamespace(rule="fig4_penalty_rescue", threads=1, log=[], output=[],
                          input=["results/digits/default/summary/runs.csv",
                                 "results/ep_stack/summary/cosines.csv"],
                          config={"dataset": "digits", "ep_stack": {"corpora": ["pydoc"]}})
    with snakemake_job(smk):
        style.save(plt.figure(figsize=(1, 1)), [tmp_path / "a.png"])
    style.save(plt.figure(figsize=(1, 1)), [tmp_path / "b.png"])
    assert drawn_from(tmp_path / "a.png") == {
        "step": "fig4_penalty_rescue", "dataset": "digits", "corpora": ["pydoc"],
        "read": ["digits/default"]}
    assert drawn_from(tmp_path / "b.png") is None


CLAIMS_SNAKEFILE = """
import json
from PIL import Image, PngImagePlugin

rule claims:
    input: "config/claims.yaml"
    output: {outputs}
    run:
        for out in output:
            if out.endswith(".png"):
                info = PngImagePlugin.PngInfo()
                info.add_text({key!r}, json.dumps({about!r}))
                Image.new("RGB", (4, 4)).save(out, pnginfo=info)
            elif out.endswith(".json"):
                open(out, "w").write(json.dumps({findings!r}))
            else:
                open(out, "w").write(open(input[0]).read())
"""


@pytest.mark.process
def test_a_claims_file_amended_after_its_results_stops_the_publish(tmp_path, monkeypatch,
                                                                    capsys):
    """Round five, case 2: the claims file is amended after its results were made; the
    published files are all there, but Snakemake's dry run plans their job again, so
    publish refuses, naming them and the step, and copies nothing."""
    import os
    import subprocess

    monkeypatch.chdir(tmp_path)
    _no_record(monkeypatch)
    (tmp_path / "docs").mkdir()
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("ep_stack: {corpora: []}\n")
    (tmp_path / "config" / "claims.yaml").write_text("claims: [a]\n")
    files = [src for src, _ in publish.groups("cifar10")["claims"]]
    (tmp_path / "Snakefile").write_text(CLAIMS_SNAKEFILE.format(
        outputs=", ".join(map(repr, files)), key=ABOUT_KEY, about=CIFAR,
        findings=FINDINGS))
    built = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", *files],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    assert publish.main(["--only", "claims"]) == 0  # current: copied
    assert len(list((tmp_path / "docs").iterdir())) == len(files) + 1  # and the stamp
    for f in (tmp_path / "docs").iterdir():
        f.unlink()
    claims = tmp_path / "config" / "claims.yaml"
    claims.write_text("claims: [a, b]\n")  # amended after its results
    later = os.stat(files[0]).st_mtime + 10
    os.utime(claims, (later, later))
    assert publish.main(["--only", "claims"]) == 1
    err = capsys.readouterr().err
    assert f"{files[0]} is out of date (step claims: Updated input files: " \
           "config/claims.yaml)" in err
    assert "snakemake --dry-run plans 1 job(s) (claims 1)" in err
    assert not list((tmp_path / "docs").iterdir())


def test_the_study_is_asked_with_the_study_configs_the_rest_with_the_publishs(workdir,
                                                                            monkeypatch):
    """The study's pages are built with config/variants.yaml over the paper config: its
    files' dry run reads both, or a page the study made would look out of date (its
    params hold the variants); the other groups' read the publish's config."""
    asked = []
    monkeypatch.setattr(publish, "planned", lambda targets, config: (
        asked.append((sorted(targets), config)), ([], None))[1])
    chosen = {name: publish.groups("cifar10")[name] for name in ("study", "claims")}
    assert publish.out_of_date(chosen, "config/config.yaml") == []
    assert [config for _, config in asked] == [list(publish.paths.STUDY_CONFIGS),
                                               ["config/config.yaml"]]
    assert asked[0][0] == sorted(src for src, _ in chosen["study"])


def test_the_papers_claims_come_from_their_runs_and_never_from_docs(tmp_path, monkeypatch):
    """The paper and fig_claims read the findings the claims' runs make, whether or not
    docs/ holds published claims (docs/ is never an input to the workflow)."""
    from credit_assign.infra import paths
    from credit_assign.planning import checks, targets

    root = Path(__file__).resolve().parents[1]
    config = checks.load_config([], root=root)
    monkeypatch.chdir(tmp_path)  # no result here: every claims run is missing
    made = targets.summary(config, paths.CLAIMS_FINDINGS)
    assert targets.claims_findings(config) == made
    (tmp_path / "docs").mkdir()
    shutil.copy(root / paths.PUBLISHED_FINDINGS, tmp_path / paths.PUBLISHED_FINDINGS)
    assert targets.claims_findings(config) == made
    assert targets.paper_claims_inputs(config) == {"history": paths.HISTORY, "findings": made}


def test_what_the_files_were_built_with_reaches_the_dry_run(workdir, monkeypatch):
    """`publish ... -- --config "data=..."`: the runs were made from a local copy of the
    data, and the dry run must ask with it (else it plans the data's step again)."""
    asked = []
    monkeypatch.setattr(publish, "planned", lambda targets, config, *extra: (
        asked.append(extra), ([], None))[1])
    _make(publish.groups("cifar10")["claims"])
    assert publish.main(["--only", "claims", "--", "--config", "data={'a': 1}"]) == 0
    assert asked == [(("--config", "data={'a': 1}"),)]  # the scope's dry run: stubbed


def test_publishing_the_ep_question_rewrites_readmes_block_with_its_answer(tmp_path):
    """README's EP question block is rendered from the published findings in words
    written for the verdict of record (undecided: the interval straddles): the verdict,
    the interval and how many fresh seeds have no stable fixed point; only the block
    changes. Another verdict stops the render, naming it."""

    begin, end = publish.BLOCKS["ep_question"][:2]
    found = {"claim": {"threshold": 0.9},
             "verdict": {"verdict": "undecided", "reason": "straddles", "low": 0.77,
                         "high": 1.07, "mean": 0.921, "confidence": 0.95, "n_judged": 3,
                         "n_fresh": 4,
                         "not_judged": [8]},
             "seed_sets": {"fresh": [6, 8], "seen": [0]},
             "seeds": [{"seed": 6, "set": "fresh", "effect": 0.926, "reason": None},
                       {"seed": 8, "set": "fresh", "effect": None, "reason": "not_converged",
                        "not_converged": 2, "batches": 3},
                       {"seed": 0, "set": "seen", "effect": 0.95, "reason": None}]}
    readme = tmp_path / "README.md"
    readme.write_text(f"# top\n{begin}\nold\n{end}\nrest\n")
    publish.readme_block(readme, "ep_question", found)
    text = readme.read_text()
    assert text.startswith("# top\n") and text.endswith(f"{end}\nrest\n")
    assert "\nold\n" not in text
    one_line = " ".join(text.split())
    assert ("fixed-point gradient EP estimates? Planned before its runs: undecided (mean "
            "cosine 0.921, 95 % t-interval [0.770, 1.070], threshold 0.9, over 3 fresh seeds; "
            "1 more had no stable fixed point).") in one_line
    import jinja2

    found["verdict"] |= {"verdict": "holds", "reason": None}
    with pytest.raises(jinja2.UndefinedError, match="not for holds"):
        publish.readme_block(readme, "ep_question", found)


def test_every_groups_findings_are_one_file_a_section_each(workdir):
    """docs/findings.json holds a section per published group: publishing one group sets
    its section and keeps the others; each group's stamp is its section's, so publishing
    another group leaves it current, and a section edited by hand is named."""
    from credit_assign.infra import findings_file

    chosen = {name: publish.groups("cifar10")[name] for name in ("claims", "ep_question")}
    for name, files in chosen.items():
        for f in files:  # each EP figure drawn by the step of its name
            _make([f], {**CIFAR, "step": Path(f[0]).stem})
        src = [s for s, n in files if n == publish.FINDINGS][0]
        Path(src).write_text(json.dumps({"made_for": name, "value": 0.5}))
    assert publish.main(["--only", "claims"]) == 0
    assert publish.main(["--only", "ep_question"]) == 0
    docs = workdir / "docs"
    assert findings_file.read(docs / publish.FINDINGS) == {
        "claims": {"made_for": "claims", "value": 0.5},
        "ep_question": {"made_for": "ep_question", "value": 0.5}}
    # one findings file, a section per group; the second EP question's beside it
    assert sorted(p.name for p in docs.glob("*.json")) == sorted(
        [publish.FINDINGS, publish.STAMP, "ep_question2_findings.json"])
    stamps = json.loads((docs / publish.STAMP).read_text())["groups"]
    for name in chosen:
        assert publish.stale(name, stamps[name], docs=docs) == []
    findings_file.write("claims", {"made_for": "claims", "value": 0.75}, docs / publish.FINDINGS)
    assert publish.stale("claims", stamps["claims"], docs=docs) == [
        f"{docs / publish.FINDINGS}'s section claims is not what make publish wrote "
        "(edited by hand?)"]
    assert publish.stale("ep_question", stamps["ep_question"], docs=docs) == []
    # findings that are not JSON: named before anything is copied
    src = [s for s, n in chosen["claims"] if n == publish.FINDINGS][0]
    Path(src).write_text("not json\n")
    before = (docs / publish.FINDINGS).read_bytes()
    assert publish.main(["--only", "claims"]) == 1
    assert (docs / publish.FINDINGS).read_bytes() == before


def test_a_findings_file_published_before_sections_becomes_the_studys_section(workdir):
    """docs/findings.json as published before one findings file (the study's findings
    alone) is kept as the study's section when another group publishes; a file that is
    neither is named, and nothing is copied."""
    from credit_assign.infra import findings_file

    study = {"kind": "findings", "verdicts": {"headline": {"outcome": "holds"}}}
    (workdir / "docs" / publish.FINDINGS).write_text(json.dumps(study))
    # every reader reads it as the study's section (the stamp's, the claims' targets)
    assert findings_file.read(workdir / "docs" / publish.FINDINGS) == {"study": study}
    assert findings_file.section_digest("claims", workdir / "docs" / publish.FINDINGS) is None
    files = publish.groups("cifar10")["claims"]
    _make(files)
    assert publish.main(["--only", "claims"]) == 0
    assert findings_file.read(workdir / "docs" / publish.FINDINGS) == {"study": study,
                                                                   "claims": {}}
    (workdir / "docs" / publish.FINDINGS).write_text('{"other": 1}')
    before = sorted(p.name for p in (workdir / "docs").iterdir())
    assert publish.main(["--only", "claims"]) == 1
    assert sorted(p.name for p in (workdir / "docs").iterdir()) == before
