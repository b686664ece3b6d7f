"""What a rerun builds after a change, and what it refuses to trust: the data a job
read, the tables a figure reads, the strings that reach TeX, the values a config means.
The workflow tests run on a tiny CIFAR-10 layout (a few 8×8 images per class)."""

import json
import os
import shutil
import string
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import fresh_copy, job_counts, needs_tex, pdf_text, snakemake
from PIL import Image

TINY_CIFAR = {
    "dataset": "cifar10",
    "model": {"width": 8, "depth": 1},
    "training": {"epochs": 1, "batch_size": 16, "augmentation": "none"},
    "sweep": {"seeds": [1], "dfa": [0], "bp": [0], "frozen": [], "fa": [], "np": []},
    "diagnostics": {"n_samples": 10},
    "fresh_b_null": {"draws": 2},
    "reproduction": {"reference": ""},
    "ep_stack": {"corpora": []},
    "probes": {"epochs": []},
}
FIG4 = "paper/figures/fig4_penalty_rescue.pdf"


def image_folder(root: Path, per_class: int, seed: int,
                 classes=("cat", "dog", "frog")) -> Path:
    """A CIFAR-10-like image folder: train/<class>/*.png, test/<class>/*.png, 8×8 RGB."""
    rng = np.random.default_rng(seed)
    for split in ("train", "test"):
        for cls in classes:
            d = root / split / cls
            d.mkdir(parents=True, exist_ok=True)
            for i in range(per_class):
                pixels = rng.integers(0, 255, (8, 8, 3), dtype=np.uint8)
                Image.fromarray(pixels).save(d / f"{i}.png")
    return root


def write_config(repo: Path, source: Path, **changes) -> str:
    cfg = json.loads(json.dumps(TINY_CIFAR))
    cfg["data"] = {"cifar10": {"source": str(source)}}
    for key, value in changes.items():
        section, option = key.split("__")
        cfg[section][option] = value
    (repo / "config" / "tiny_cifar.yaml").write_text(yaml.safe_dump(cfg))
    return "config/tiny_cifar.yaml"


@pytest.fixture(scope="module")
def cifar_finished(tmp_path_factory) -> Path:
    """A finished tiny CIFAR-10 workflow (repo/) beside its image folder (images_a/),
    which its config names by a relative path: a copy of the pair is the same run."""
    case = tmp_path_factory.mktemp("cifar")
    repo = fresh_copy(case / "repo")
    image_folder(case / "images_a", per_class=6, seed=0)
    cfg = write_config(repo, Path("../images_a"))
    snakemake(repo, "--configfile", cfg)
    return case


@pytest.fixture
def cifar_run(cifar_finished, tmp_path):
    """A copy of the finished tiny CIFAR-10 workflow for one test (mtimes and Snakemake's
    metadata kept: nothing is out of date): (repo, the folder holding repo and images)."""
    case = tmp_path / "case"
    shutil.copytree(cifar_finished, case, symlinks=True)
    return case / "repo", case


def n_train(repo: Path) -> set[int]:
    runs = repo.glob("results/cifar10/default/train/*/*/*/metrics.json")
    return {json.loads(p.read_text())["data"]["n_train"] for p in runs}


@pytest.mark.workflow
def test_a_changed_data_source_reruns_its_readers_in_one_run(cifar_run):
    """Round three, case 1: a changed data.cifar10.source with a figure asked for used to
    run prepare_data alone ("1 of 1 steps done", rc 0, no figure, models of the old data)."""
    repo, tmp = cifar_run
    (repo / FIG4).unlink()
    second = image_folder(tmp / "images_b", per_class=8, seed=1)
    cfg = write_config(repo, second)
    out = snakemake(repo, FIG4, "--configfile", cfg)
    assert job_counts(out.stdout + out.stderr) == {
        "prepare_data": 1, "train": 2, "fresh_b_null": 1, "aggregate": 1,
        "fig4_penalty_rescue": 1, "total": 6}
    assert (repo / FIG4).exists() and n_train(repo) == {24}
    again = snakemake(repo, FIG4, "--configfile", cfg, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.workflow
def test_a_source_changed_in_place_reruns_its_readers(cifar_run):
    repo, tmp = cifar_run
    extra = tmp / "images_a" / "train" / "cat" / "extra.png"
    Image.fromarray(np.zeros((8, 8, 3), dtype=np.uint8)).save(extra)
    out = snakemake(repo, "--configfile", "config/tiny_cifar.yaml")
    counts = job_counts(out.stdout + out.stderr)
    assert counts["prepare_data"] == 1 and counts["train"] == 2
    assert n_train(repo) == {19}
    again = snakemake(repo, "--configfile", "config/tiny_cifar.yaml", "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.workflow
def test_an_archive_replaced_in_place_reruns_its_readers(tmp_path):
    import tarfile

    repo = fresh_copy(tmp_path / "repo")
    archive = tmp_path / "images.tar"

    def pack(per_class, seed):
        folder = image_folder(tmp_path / f"images{seed}", per_class=per_class, seed=seed)
        with tarfile.open(archive, "w") as tar:
            tar.add(folder, arcname="images")

    pack(6, 0)
    cfg = write_config(repo, archive)
    snakemake(repo, "--configfile", cfg)
    pack(8, 1)  # the same path, other bytes
    out = snakemake(repo, "--configfile", cfg)
    counts = job_counts(out.stdout + out.stderr)
    assert counts["prepare_data"] == 1 and counts["train"] == 2 and n_train(repo) == {24}
    assert "Nothing to be done" in snakemake(repo, "--configfile", cfg, "-n").stdout


@pytest.mark.workflow
def test_a_deleted_cache_reruns_nothing_and_is_rebuilt_by_the_next_reader(cifar_run):
    """The property round two needed: a deleted cache whose source is unchanged retrains
    nothing; with a λ added at the same time, exactly the new λ's jobs run (the first of
    them rebuilds the cache) and the old runs stay."""
    repo, _ = cifar_run
    cache = repo / "data" / "cifar10.pt"
    old_model = repo / "results/cifar10/default/train/dfa/lam0/seed1/metrics.json"
    stamp = old_model.stat().st_mtime_ns
    cache.unlink()
    out = snakemake(repo, "--configfile", "config/tiny_cifar.yaml", "-n")
    assert "Nothing to be done" in out.stdout + out.stderr
    cfg = write_config(repo, Path(yaml.safe_load((repo / "config/tiny_cifar.yaml").read_text())
                                  ["data"]["cifar10"]["source"]), sweep__dfa=[0, {"fig4": 1.0e-2}])
    out = snakemake(repo, "--configfile", cfg)
    counts = job_counts(out.stdout + out.stderr)
    assert counts["train"] == 1 and counts["fresh_b_null"] == 1 and "prepare_data" not in counts
    assert cache.exists() and old_model.stat().st_mtime_ns == stamp
    again = snakemake(repo, "--configfile", cfg, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr
    (repo / "data/cifar10.json").unlink()  # the data's identity: everything reruns
    counts = job_counts(snakemake(repo, "--configfile", cfg, "-n").stdout)
    assert counts["prepare_data"] == 1 and counts["train"] == 3


def test_a_cache_rebuilt_from_a_changed_source_is_refused(tmp_path):
    """The manifest records the data's digest: a cache rebuilt (after it was deleted)
    from a source whose bytes changed since is an error naming the manifest."""
    from credit_assign.infra import data, decode

    folder = image_folder(tmp_path / "images", per_class=2, seed=0)
    cache = tmp_path / "data" / "cifar10.pt"
    data.prepare_manifest("cifar10", str(folder), cache.parent, cache)
    assert data.load(cache)["info"]["n_train"] == 6
    cache.unlink()
    image_folder(tmp_path / "images", per_class=3, seed=1)  # the source changes meanwhile
    with pytest.raises(decode.DataFormatError, match="differ from what .*cifar10.json records"):
        data.load(cache)


def test_jobs_that_find_the_cache_missing_rebuild_it_once(tmp_path, monkeypatch):
    """Readers started together on a missing cache: one rebuilds it, the others wait
    for it (a lock beside the cache) and read it."""
    from concurrent.futures import ThreadPoolExecutor

    from credit_assign.infra import data

    cache = tmp_path / "digits.pt"
    data.prepare_manifest("digits", None, tmp_path, cache)
    cache.unlink()
    calls, prepare = [], data.prepare

    def counted(*args, **kwargs):
        calls.append(args)
        return prepare(*args, **kwargs)

    monkeypatch.setattr(data, "prepare", counted)
    with ThreadPoolExecutor(4) as pool:
        loaded = list(pool.map(lambda _: data.load(cache), range(4)))
    assert len(calls) == 1
    assert {d["info"]["digest"] for d in loaded} == {json.loads(
        cache.with_suffix(".json").read_text())["digest"]}


# ---- tables are data with a contract (round three, case 2) ----------------------------
def _runs_frame(runs=(("bp", 0.0, 1), ("bp", 0.0, 2), ("dfa", 0.0, 1), ("dfa", 0.0, 2))):
    import pandas as pd

    return pd.DataFrame([{
        "dataset": "digits", "method": m, "lam": lam, "seed": s, "epochs": 2,
        "final_epoch": 2, "test_acc": 0.5, "train_loss": 1.0, "test_loss": 1.1,
        "h_L_norm_median": 3.0, "deep_cosine": 0.1 if m == "dfa" else 1.0,
        "first_nonfinite_epoch": None, "stopped_early": False, "n_nonfinite": 0,
        "total_s": 1.5, "device": "cpu", "git_commit": "abc", "path": "x"}
        for m, lam, s in runs])


EXPECT = [["bp", 0.0, 1], ["bp", 0.0, 2], ["dfa", 0.0, 1], ["dfa", 0.0, 2]]


def test_a_runs_table_holds_nan_only_where_the_run_says_it_diverged(tmp_path):
    """NaN cells in runs.csv: refused (on writing and on reading) unless the row's own
    n_nonfinite says the run diverged; a diverged run's NaN is data."""
    import pandas as pd

    from credit_assign.analysis import tables

    nan = _runs_frame().astype({"test_acc": float})
    nan.loc[2, "h_L_norm_median"] = float("nan")
    with pytest.raises(tables.TableError, match="non-finite .* stayed finite"):
        tables.write(nan, tmp_path / "runs.csv", "runs")
    # the same table written by hand (not through tables.write) is refused on reading
    path = tmp_path / "hand.csv"
    tables.write(_runs_frame(), path, "runs")
    text = path.read_text().replace(",3.0,", ",,", 1)
    path.write_text(text)
    record = json.loads(tables.digest_path(path).read_text())
    record["sha256"] = tables.sha256_file(path)
    tables.digest_path(path).write_text(json.dumps(record))
    with pytest.raises(tables.TableError, match="stayed finite"):
        tables.read(path, "runs")
    diverged = nan.assign(n_nonfinite=[0, 0, 3, 0], first_nonfinite_epoch=[None, None, 2, None])
    tables.write(diverged, tmp_path / "ok.csv", "runs")
    assert pd.read_csv(tmp_path / "ok.csv").h_L_norm_median.isna().sum() == 1


@pytest.fixture
def runs_table(tmp_path):
    from credit_assign.analysis import tables

    result = tmp_path / "metrics.json"
    result.write_text("{}")
    path = tmp_path / "summary" / "runs.csv"
    tables.write(_runs_frame(), path, "runs", [result])
    return path


def test_a_table_as_written_reads_back(runs_table):
    from credit_assign.analysis import tables

    frame = tables.read(runs_table, "runs", EXPECT)
    assert len(frame) == 4 and set(frame.method) == {"bp", "dfa"}


@pytest.mark.parametrize("damage, named", [
    ("drop_bp", "changed after the pipeline wrote it"),
    ("cut_header", "changed after the pipeline wrote it"),
    ("empty", "empty (0 bytes)"),
    ("no_record", "no record of what it was made from"),
])
def test_a_damaged_or_edited_table_is_a_named_error(runs_table, damage, named):
    """BP's rows removed, the file cut inside its header, zero bytes, its record gone:
    each a TableError that names the file and says to delete it and rerun."""
    from credit_assign.analysis import tables

    text = runs_table.read_text()
    if damage == "drop_bp":
        runs_table.write_text("\n".join(line for line in text.splitlines()
                                        if ",bp," not in line) + "\n")
    elif damage == "cut_header":
        runs_table.write_text(text[:25])
    elif damage == "empty":
        runs_table.write_text("")
    else:
        tables.digest_path(runs_table).unlink()
    with pytest.raises(tables.TableError) as err:
        tables.read(runs_table, "runs", EXPECT)
    assert str(runs_table) in str(err.value) and named in str(err.value)
    assert "delete it" in str(err.value)


def test_a_table_that_does_not_cover_the_sweep_is_refused(tmp_path):
    """Even with a consistent record (written so by an older config, say), a table that
    lacks a run the config asks for, or has one it does not, is refused (a run twice is
    refused by the runs contract's uniqueness: test_a_table_that_breaks_its_contract)."""
    from credit_assign.analysis import tables

    path = tmp_path / "runs.csv"
    tables.write(_runs_frame(), path, "runs")
    with pytest.raises(tables.TableError, match="lacks 1 run.*np λ=0 seed 1"):
        tables.read(path, "runs", [*EXPECT, ["np", 0.0, 1]])
    with pytest.raises(tables.TableError, match="does not ask for: dfa λ=0 seed 2"):
        tables.read(path, "runs", EXPECT[:3])


def test_a_table_that_breaks_its_contract_is_refused(tmp_path):
    from credit_assign.analysis import tables

    frame = _runs_frame()
    frame["seed"] = ["1", "2", "x", "4"]
    with pytest.raises(tables.TableError, match="when writing"):
        tables.write(frame, tmp_path / "bad.csv", "runs")
    twice = _runs_frame((("bp", 0.0, 1), ("bp", 0.0, 1)))
    with pytest.raises(tables.TableError, match="not a valid runs table"):
        tables.write(twice, tmp_path / "twice.csv", "runs")


def test_stale_lists_tables_whose_results_changed(tmp_path, monkeypatch, capsys):
    """Written from the workflow's folder with relative input paths (as jobs write), the
    record holds from any folder; a changed input is listed."""
    from credit_assign.analysis import stale, tables

    work = tmp_path / "work"
    (work / "results/x/summary").mkdir(parents=True)
    (work / "results/x/metrics.json").write_text("{}")
    monkeypatch.chdir(work)
    tables.write(_runs_frame(), "results/x/summary/runs.csv", "runs",
                 ["results/x/metrics.json"])
    monkeypatch.chdir(tmp_path)  # elsewhere
    assert stale.main([str(work / "results")]) == 0
    (work / "results/x/metrics.json").write_text('{"changed": true}')
    assert stale.main([str(work / "results")]) == 1
    out = capsys.readouterr().out
    assert "runs.csv" in out and "1 of its 1 inputs changed or are gone" in out


@pytest.mark.process
def test_stale_piped_into_head_ends_without_a_traceback(tmp_path):
    """`python -m credit_assign.analysis.stale results | head -1`: the reader closes the
    pipe early; the listing ends quietly."""
    import subprocess
    import sys

    results = tmp_path / "results"
    for i in range(2000):  # more than a pipe's buffer of listing (no record: listed)
        folder = results / "digits/default/train/bp/lam0" / f"seed{i}"
        folder.mkdir(parents=True)
        (folder / "metrics.json").write_text("{}")
    proc = subprocess.run(
        f"{sys.executable} -m credit_assign.analysis.stale results | head -1",
        shell=True, capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert proc.stdout.startswith("0 results current"), proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr


def _job_record(work: Path, path: str, rule: str, params: list) -> None:
    """Snakemake's record of the job that wrote ``path`` (as it writes one: params as
    sorted reprs, record format 6)."""
    from credit_assign.infra.record import SNAKEMAKE_METADATA, record_name

    rec = work / SNAKEMAKE_METADATA / record_name(path)
    rec.parent.mkdir(parents=True, exist_ok=True)
    rec.write_text(json.dumps({"rule": rule, "params": sorted(repr(p) for p in params),
                               "record_format_version": 6, "incomplete": False}))


@pytest.fixture
def clear_code_digests():
    from credit_assign.planning import code

    code.digest.cache_clear()
    yield
    code.digest.cache_clear()


def test_stale_lists_the_runs_a_rules_code_change_reruns(tmp_path, monkeypatch, capsys,
                                                         clear_code_digests):
    """Round five, case 1: stale agrees with Snakemake's params trigger. An edit to
    science/learning_rules/dfa.py lists DFA's runs and nulls and the alignment probes (which
    measure every probed rule), not BP's runs; a result whose job left no record is
    listed apart; the library digest a result records decides nothing."""
    from credit_assign.analysis import stale
    from credit_assign.planning import code, params

    runs = {("train", "bp"): "results/digits/default/train/bp/lam0/seed1/metrics.json",
            ("train", "dfa"): "results/digits/default/train/dfa/lam0/seed1/metrics.json",
            ("train", "bp2"): "results/digits/default/train/bp/lam0/seed1/timings.json",
            ("fresh_b_null", "dfa"): "results/digits/default/fresh_b_null/dfa/lam0/seed1.json",
            ("alignment_probe", "bp"): "results/digits/default/probes/bp/lam0/seed1.json",
            ("ep_stack_probe", None): "results/ep_stack/pydoc/float32/seed0.json"}
    work = tmp_path
    for (step, method), path in runs.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        # every result made by another library (the old check listed them all)
        (work / path).write_text(json.dumps(
            {"provenance": {"code": {"library_sha256": "0" * 64}}}))
        method = method and method.rstrip("2")
        _job_record(work, path, step, [params.code_digest({}, step, method), "data/x.pt",
                                       {"method": method}])
    unrecorded = "results/digits/default/measure/bp/lam0/seed1.json"
    (work / unrecorded).parent.mkdir(parents=True)
    (work / unrecorded).write_text("{}")
    monkeypatch.chdir(work)
    assert stale.main(["results"]) == 2  # none stale; one result cannot say
    assert "6 results current, 0 made by other code" in capsys.readouterr().out

    real = code.file_digest  # DFA's module edited (its bytes' digest changes)
    monkeypatch.setattr(code, "file_digest",
                        lambda f: "e" * 64 if f.endswith("rules/dfa.py") else real(f))
    code.digest.cache_clear()
    fresh, old, unknown = stale.scan(Path("results"))
    # the probe of BP's run is stale and its snapshots (temp) are gone: Snakemake reruns
    # BP's run to remake them (the same bytes), and stale says so (round five, case 11)
    assert sorted(p.as_posix() for p, _ in old) == sorted(
        [runs["train", "dfa"], runs["fresh_b_null", "dfa"], runs["alignment_probe", "bp"],
         runs["train", "bp"]])
    assert "reruns to remake snapshots.pt" in dict(
        (p.as_posix(), why) for p, why in old)[runs["train", "bp"]]
    assert sorted(p.as_posix() for p in fresh) == sorted(
        [runs["train", "bp2"], runs["ep_stack_probe", None]])
    assert [p.as_posix() for p in unknown] == [unrecorded]
    # with the snapshots there, BP's run is not rerun
    (work / "results/digits/default/train/bp/lam0/seed1/snapshots.pt").write_bytes(b"x")
    assert runs["train", "bp"] not in [p.as_posix() for p, _ in stale.scan(Path("results"))[1]]
    (work / "results/digits/default/train/bp/lam0/seed1/snapshots.pt").unlink()
    assert stale.main(["results", "--rerun"]) == 1
    out = capsys.readouterr().out
    assert "4 made by other code" in out and "1 results whose code cannot be told" in out
    assert "--force " + " ".join(p.as_posix() for p, _ in old) in out


# ---- no raw string reaches TeX (round three, case 3) ---------------------------------
ROOT = Path(__file__).resolve().parents[1]
NASTY = ["x^^5cinput^^7b^^2fetc^^2fhostname^^7d", "a{b", string.punctuation,
         "a--b ''q'' ``r`` !` ?` << >> ,, ... \\input{/etc/hostname}",
         # a non-ASCII folder name prints as written, not as '?'s (the accents whose text
         # pdftotext composes back; ñ and ê print right but extract as '~ n', '^ e')
         "données_été çà ü"]


def test_tex_escape_leaves_no_markup():
    from credit_assign.reporting.render import tex_escape

    for name in NASTY:
        escaped = tex_escape(name)
        # no raw brace, backslash-command from the name, ^ or comment character survives
        assert "^" not in escaped.replace("{\\ttfamily\\char94}", "")
        assert "\\input" not in escaped and "%" not in escaped.replace("\\%", "")
        assert escaped.count("{") == escaped.count("}")


def _paper_numbers(source: str) -> str:
    """numbers.tex for a config whose data source is named ``source``."""
    import pandas as pd

    from credit_assign.reporting import paper

    runs = pd.DataFrame([("bp", 0, 1, 0.58, 140.0, 1.0), ("dfa", 0, 1, 0.30, 5e5, 0.01),
                         ("dfa", 0.01, 1, 0.36, 4e4, 0.15), ("frozen", 0, 1, 0.35, 150.0, None)],
                        columns=["method", "lam", "seed", "test_acc", "h_L_norm_median",
                                 "deep_cosine"])
    nulls = pd.DataFrame({"method": "dfa", "lam": 0.01, "seed": 1,
                          "feedback": ["trained", "fresh", "fresh"],
                          "deep_cosine": [0.15, 0.0, 0.01]})
    cfg = {"dataset": "cifar10", "model": {"width": 16, "depth": 2},
           "training": {"epochs": 2, "batch_size": 8, "lr": 1e-3, "weight_decay": 0.01,
                        "augmentation": "crop_flip"},
           "sweep": {"seeds": [1], "dfa": [0, {"fig4": 0.01}]},
           "diagnostics": {"n_samples": 100}, "probes": {"epochs": []},
           "ep_stack": {"corpora": [], "seeds": [0], "model": {"blocks": 2, "width": 16},
                        "pretrain": {"steps": 3, "relax_steps": 20, "precision": "float32"}}}
    macros, flags = paper.numbers(cfg, {"n_train": 10, "n_test": 5, "source": source},
                                  runs, nulls)
    return paper.numbers_tex(macros, flags, "test")


def _paper_findings() -> str:
    """findings.tex without the variant study, claims, EP or the EP question."""
    from credit_assign.analysis.verdicts import judge
    from credit_assign.reporting import paper

    cfg = {"ep_stack": {"pretrain": {"precision": "float32"}}}
    return paper.findings_tex(paper.paper_findings(cfg, judge()), "test")


def _tex_trees() -> list[str]:
    import subprocess

    names = ["SELFAUTOPARENT", "TEXMFDIST", "TEXMFMAIN", "TEXMFSYSVAR", "TEXMFSYSCONFIG",
             "TEXMFLOCAL", "TEXMFVAR", "TEXMFCONFIG", "TEXMFHOME", "TEXMFROOT"]
    trees = []
    for name in names:
        out = subprocess.run(["kpsewhich", f"-var-value={name}"], capture_output=True,
                             text=True).stdout.strip()
        trees += [t for t in out.replace("{", "").replace("}", "").split(",") if t.startswith("/")]
    return [str(Path(t).resolve()) for t in trees]


@needs_tex
@pytest.mark.parametrize("name", NASTY)
def test_a_hostile_source_name_prints_as_written_and_reads_nothing_outside(tmp_path, name):
    """A data source named with TeX's ^^ notation, an open brace, every ASCII punctuation
    character: the paper builds, its text shows the name as written, and TeX read no
    file but the build's own and its installation's (the .fls record)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from credit_assign.reporting import tex_build

    work = tmp_path / "paper"
    (work / "figures").mkdir(parents=True)
    tex = (ROOT / "paper" / "ms.tex").read_text()
    for fig in tex_build.figure_names(tex):
        plt.figure(figsize=(2, 1)).savefig(work / fig)
        plt.close("all")
    (work / "ms.tex").write_text(tex)
    (work / "numbers.tex").write_text(_paper_numbers(name + "/ (image folder)"))
    (work / "findings.tex").write_text(_paper_findings())
    from credit_assign.studies.claims.page import write_tex

    write_tex(None, ROOT / "config" / "history.yaml", work / "claims.tex", ROOT)
    tex_build.build_pdf(work / "ms.tex", work / "ms.pdf")
    # an accented letter comes out of the PDF as the letter and its combining accent: NFC
    text = unicodedata.normalize("NFC", " ".join(pdf_text(work / "ms.pdf").split()))
    assert name.replace(" ", "") in text.replace(" ", "")
    read = [line.split(" ", 1)[1] for line in (work / "build" / "ms.fls").read_text().splitlines()
            if line.startswith("INPUT ")]
    trees = _tex_trees()
    outside = [p for p in read if Path(p).is_absolute()
               and not any(str(Path(p).resolve()).startswith(t) for t in trees)]
    assert not outside and not any("hostname" in p for p in read)


@needs_tex
def test_tex_reads_no_file_by_an_absolute_path_whatever_numbers_tex_says(tmp_path):
    """The second wall behind the escaping: a raw \\input of a system file in numbers.tex
    stops the build instead of reading it (openin_any=p)."""
    from credit_assign.reporting import tex_build

    (tmp_path / "numbers.tex").write_text("\\newcommand{\\leak}{\\input{/etc/hostname}}\n")
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\n\\input{numbers.tex}\n"
                                      "\\begin{document}\\leak\\end{document}\n")
    with pytest.raises(RuntimeError, match="hostname"):
        tex_build.build_pdf(tmp_path / "doc.tex", tmp_path / "doc.pdf")
    log = (tmp_path / "build" / "doc.log").read_text()
    assert "Not reading from /etc/hostname" in log or "not found" in log
    fls = (tmp_path / "build" / "doc.fls").read_text()
    assert "INPUT /etc/hostname" not in fls


@needs_tex
def test_a_tex_error_names_the_file_and_line(tmp_path):
    from credit_assign.reporting import tex_build

    (tmp_path / "numbers.tex").write_text("\\newcommand{\\good}{1}\n\\undefinedmacro\n")
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\n\\input{numbers.tex}\n"
                                      "\\begin{document}\\good\\end{document}\n")
    with pytest.raises(RuntimeError, match=r"numbers.tex line 2: Undefined control sequence"
                                           r"(.|\n)*line 2: \\undefinedmacro"):
        tex_build.build_pdf(tmp_path / "doc.tex", tmp_path / "doc.pdf")


# ---- config values mean what they look like (round three, case 4) ---------------------
@pytest.mark.parametrize("written, read_as", [("042", "34"), ("0x2a", "42"), ("4_2", "42"),
                                              ("42.0", "42.0"), ("true", "True")])
def test_a_seed_not_written_as_plain_digits_is_named(written, read_as):
    from credit_assign.planning.configfiles import ConfigFileError, check_yaml

    with pytest.raises(ConfigFileError) as err:
        check_yaml(f"sweep:\n  seeds: [1, {written}]\n", "my.yaml")
    assert str(err.value).startswith(f"my.yaml, line 2: sweep.seeds[1] = {written} is not a "
                                     f"plain decimal integer (YAML reads it as {read_as})")


def test_plain_seeds_and_other_numbers_pass():
    from credit_assign.planning.configfiles import check_yaml

    check_yaml("sweep:\n  seeds: [0, 42, 123]\n  dfa: [0, 1.0e-4]\ndiagnostics: {seed: 7}\n"
               "ep_stack:\n  seeds:\n    - 1\n  lr: 0x10\n")


def test_the_paper_configs_spell_their_seeds_plainly():
    from credit_assign.planning.configfiles import check_files

    check_files(sorted((ROOT / "config").glob("*.yaml")))


@pytest.mark.workflow
@pytest.mark.parametrize("seeds", ["[042]"])  # the others: tests/test_planning.py
def test_a_badly_spelled_seed_stops_the_workflow_before_any_job(tmp_path, seeds):
    repo = fresh_copy(tmp_path / "repo")
    (repo / "config" / "seeds.yaml").write_text(f"sweep:\n  seeds: {seeds}\n")
    out = snakemake(repo, "-n", "--configfile", "config/quick.yaml", "config/seeds.yaml",
                    check=False)
    text = out.stdout + out.stderr
    assert out.returncode != 0 and "Job stats" not in text
    assert f"seeds.yaml, line 2: sweep.seeds[0] = {seeds[1:-1]} is not a plain decimal" in text


def test_a_method_left_out_of_the_sweep_is_a_drawn_notice_in_fig4():
    """An empty sweep.<method> means "not run" (config.yaml runs no np); fig4 then says so
    in the panels that would draw it, instead of drawing them empty."""
    import pandas as pd

    from credit_assign.studies.penalty_rescue import fig4_penalty_rescue as penalty_rescue

    runs = _runs_frame((("bp", 0.0, 1),))
    epochs = runs[["dataset", "method", "lam", "seed"]].assign(
        epoch=1, h_L_norm_median=3.0, test_acc=0.5)
    nulls = pd.DataFrame(columns=["dataset", "method", "lam", "seed", "feedback", "draw",
                                  "deep_cosine"])
    fig = penalty_rescue.plot(runs, epochs, nulls, 0.01, "digits")
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert "no DFA runs in this run" in texts


@pytest.mark.workflow
def test_every_sweep_empty_is_refused_and_the_tables_stay(cifar_run):
    """It used to fail inside the aggregate job (KeyError: 'dataset') after Snakemake had
    deleted the old summary tables."""
    repo, _ = cifar_run
    tables = sorted((repo / "results/cifar10/default/summary").glob("*.csv"))
    before = {p: p.read_bytes() for p in tables}
    source = yaml.safe_load((repo / "config/tiny_cifar.yaml").read_text())["data"]["cifar10"]
    cfg = write_config(repo, Path(source["source"]), sweep__dfa=[], sweep__bp=[])
    out = snakemake(repo, "--configfile", cfg, check=False)
    text = out.stdout + out.stderr
    assert out.returncode != 0 and "sweep: every sweep.<method> is empty" in text
    assert "Job stats" not in text
    assert {p: p.read_bytes() for p in tables} == before


# ---- data folders stay inside (round three, case 4) ------------------------------------
@pytest.mark.parametrize("link_to", ["file", "folder"])
def test_a_symlink_out_of_the_data_folder_is_refused_by_name(tmp_path, link_to):
    from credit_assign.infra import data, decode

    folder = image_folder(tmp_path / "images", per_class=2, seed=0)
    outside = image_folder(tmp_path / "elsewhere", per_class=1, seed=1)
    if link_to == "file":
        link = folder / "train" / "cat" / "9.png"
        link.symlink_to(outside / "train" / "cat" / "0.png")
    else:
        link = folder / "train" / "bird"
        link.symlink_to(outside / "train" / "dog", target_is_directory=True)
    with pytest.raises(decode.DataFormatError, match="is a symbolic link to .*outside the data"):
        data.prepare("cifar10", str(folder), tmp_path, tmp_path / "cache.pt")


def test_a_symlink_inside_the_data_folder_is_read_once_where_its_target_is(tmp_path):
    """Links inside the folder add nothing: a linked file is not read twice, and a folder
    linked under another class name does not relabel (or hide) the real one."""
    from credit_assign.infra import data

    folder = image_folder(tmp_path / "images", per_class=2, seed=0)
    (folder / "train" / "cat" / "copy.png").symlink_to(folder / "train" / "cat" / "0.png")
    (folder / "train" / "aaa").symlink_to(folder / "train" / "cat", target_is_directory=True)
    (folder / "train" / "cat" / "loop").symlink_to(folder, target_is_directory=True)
    info = data.prepare("cifar10", str(folder), tmp_path, tmp_path / "cache.pt")
    assert info["n_train"] == 6 and info["classes"] == ["cat", "dog", "frog"]


@pytest.mark.workflow
@pytest.mark.parametrize("damage", ["drop_bp", "cut_header", "empty"])
def test_a_damaged_table_stops_the_figure_and_the_advice_rebuilds_it(cifar_run, damage):
    """BP's rows removed used to redraw fig4 without BP (rc 0); a header cut short drew
    "0 epochs, 0 seeds"; zero bytes failed with pandas' EmptyDataError, no file named."""
    repo, _ = cifar_run
    runs = repo / "results/cifar10/default/summary/runs.csv"
    text = runs.read_text()
    runs.write_text({"drop_bp": "\n".join(line for line in text.splitlines()
                                          if ",bp," not in line) + "\n",
                     "cut_header": text[:30], "empty": ""}[damage])
    (repo / FIG4).unlink()
    out = snakemake(repo, FIG4, "--configfile", "config/tiny_cifar.yaml", check=False)
    said = out.stdout + out.stderr
    assert out.returncode != 0 and not (repo / FIG4).exists()
    assert "results/cifar10/default/summary/runs.csv" in said and "delete it" in said
    runs.unlink()  # as the message says
    snakemake(repo, FIG4, "--configfile", "config/tiny_cifar.yaml")
    assert (repo / FIG4).exists() and runs.read_text() == text


# ---- round four: no conclusion from a diverged run -----------------------------------
@pytest.mark.workflow
@needs_tex
def test_a_diverged_run_builds_a_paper_that_draws_no_conclusion_from_it(tmp_path):
    """Every run diverges (branch_init_std 1e37, lr 10): the paper builds, its means say
    which seeds diverged, and fig4 names the diverged runs instead of dropping their
    bars. (The run section's screens, which said undecided here, were retired into the
    claims; a claim with a diverged seed is undecided: test_claims.)"""
    from conftest import TINY

    repo = fresh_copy(tmp_path / "repo")
    cfg = {**TINY, "reproduction": {"reference": None}, "probes": {"epochs": []},
           "ep_stack": {**TINY["ep_stack"], "corpora": []},
           "sweep": {**TINY["sweep"], "np": []},
           "model": {**TINY["model"], "branch_init_std": 1.0e37},
           "training": {**TINY["training"], "lr": 10.0}}
    (repo / "config" / "diverge.yaml").write_text(yaml.safe_dump(cfg))
    snakemake(repo, "paper/ms.pdf", "--configfile", "config/diverge.yaml")
    numbers = (repo / "paper" / "numbers.tex").read_text()
    assert "no alignment beyond chance" not in numbers and "not lower" not in numbers
    assert "diverged: seed" in numbers  # the means say which seeds diverged
    svg = (repo / "paper" / "figures" / "fig4_penalty_rescue.svg").read_text()
    assert "diverged: seed" in svg


@needs_tex
def test_a_paper_build_that_failed_once_recovers_on_the_next(tmp_path, monkeypatch):
    """numbers.tex deleted while pdflatex runs (round four, case 2): the build fails
    naming it; with the same numbers.tex written back, the next build makes the PDF
    (latexmk's state from the failed run used to answer 'Nothing to do … gave an error'
    for ever, exit 12)."""
    from credit_assign.reporting import tex_build

    def write(body):
        (tmp_path / "ms.tex").write_text("\\documentclass{article}\\input{numbers.tex}"
                                         f"\\begin{{document}}{body}\\end{{document}}\n")

    numbers = tmp_path / "numbers.tex"
    numbers.write_text("\\newcommand{\\x}{one}\n")
    write("\\x")
    tex_build.build_pdf(tmp_path / "ms.tex", tmp_path / "ms.pdf")
    write("\\x{} two")
    monkeypatch.setattr(tex_build, "PDFLATEX", "rm -f numbers.tex; " + tex_build.PDFLATEX)
    with pytest.raises(RuntimeError, match="(?s)numbers.tex.*not found.*starts clean"):
        tex_build.build_pdf(tmp_path / "ms.tex", tmp_path / "ms.pdf")
    monkeypatch.undo()
    numbers.write_text("\\newcommand{\\x}{one}\n")  # the rule writes the same bytes back
    tex_build.build_pdf(tmp_path / "ms.tex", tmp_path / "ms.pdf")
    assert "one two" in " ".join(pdf_text(tmp_path / "ms.pdf").split())


# ---- round four, case 5: the config is found from anywhere; a dry run writes nothing --
def test_a_run_without_the_paper_config_is_refused_by_name(tmp_path):
    from credit_assign.planning import ConfigError
    from credit_assign.planning.checks import check_default_loaded

    check_default_loaded([ROOT / "config" / "config.yaml", "x.yaml"], ROOT)
    with pytest.raises(ConfigError, match="config/config.yaml was not loaded"):
        check_default_loaded([tmp_path / "quick.yaml"], ROOT)


@pytest.mark.workflow
def test_the_config_is_found_from_another_folder_and_a_dry_run_writes_nothing(tmp_path):
    """--directory elsewhere, and --snakefile ../Snakefile from a subfolder, plan the same
    jobs as a run from the repository (config/config.yaml laid under the --configfile,
    found from the Snakefile's folder); a dry run with a local data source writes no
    digest cache."""
    repo = fresh_copy(tmp_path / "repo")
    source = image_folder(tmp_path / "images", per_class=2, seed=0)
    cfg = repo / write_config(repo, source)
    elsewhere, sub = tmp_path / "elsewhere", repo / "sub"
    elsewhere.mkdir(), sub.mkdir()
    runs = [snakemake(repo, "-n", "--configfile", str(cfg)),
            snakemake(elsewhere, "-n", "--snakefile", str(repo / "Snakefile"),
                      "--configfile", str(cfg)),
            snakemake(sub, "-n", "--snakefile", "../Snakefile", "--configfile", str(cfg))]
    for out in runs:  # the paper config is a layer of each (Snakemake lists it)
        listed = out.stdout.split("Config file(s):")[1].splitlines()[0]
        assert "config/config.yaml" in listed and "tiny_cifar.yaml" in listed, listed
    assert job_counts(runs[0].stdout) == job_counts(runs[1].stdout) == job_counts(runs[2].stdout)
    for folder in (repo, elsewhere, sub):  # the dry runs wrote no data (no digest cache)
        assert not (folder / "data").exists(), folder


# ---- round four, case 3: a checkout knows itself ------------------------------------
@pytest.mark.parametrize("command", [["credit_assign.analysis.stale", "results"],
                                     ["credit_assign.science.learning_rules", "--write"]])
@pytest.mark.process
def test_a_checkout_refuses_another_checkouts_package(tmp_path, command):
    """Two clones, one environment (Python imports the first's package): run in the
    second, stale and the catalogue writer refuse, naming both packages, and write
    nothing into the first."""
    import subprocess
    import sys

    first, second = tmp_path / "first", tmp_path / "second"
    for clone in (first, second):
        shutil.copytree(ROOT / "src", clone / "src",
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(ROOT / "config", clone / "config")
        (clone / "results").mkdir()
    catalogue = first / "src/credit_assign/planning/rules_catalog.json"
    before = catalogue.read_bytes()
    env = {**os.environ, "PYTHONPATH": str(first / "src")}
    proc = subprocess.run([sys.executable, "-m", *command], cwd=second, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert str(second / "src" / "credit_assign") in proc.stderr
    assert str(first / "src" / "credit_assign") in proc.stderr
    assert catalogue.read_bytes() == before
    # in its own checkout the same command runs
    ok = subprocess.run([sys.executable, "-m", *command], cwd=first, env=env,
                        capture_output=True, text=True)
    assert ok.returncode in (0, 1), ok.stderr  # stale: 1 = something listed


# ---- round five: the defects beside ---------------------------------------------------
def test_a_missing_finding_under_any_filter_is_named():
    """A template number passed through a filter with its finding missing fails naming
    the key (was: TypeError: unsupported format string passed to StrictUndefined)."""
    import jinja2

    from credit_assign.reporting import render

    env = render.environment()
    ours = ["num", "short", "signed", "sci", "sig", "lam", "cell", "seeds", "lstrip",
            "estimate", "gap", "gap_sd", "tolerance", "run_label", "metric_label",
            "paper_text", "tex", "tex_num", "tex_sci", "tex_norm", "tex_lam", "tex_cosine"]
    for name in ours:
        template = env.from_string(f"{{{{ finding.effect_mean|{name} }}}}")
        with pytest.raises(jinja2.UndefinedError, match="has no attribute 'effect_mean'"):
            template.render(finding={"effect_sd": 0.1})
    assert env.from_string("{{ f.x|num }} {{ f.y|num }}").render(f={"x": 0.5, "y": None}) \
        == "0.500 —"


@pytest.mark.parametrize("text, tex", [
    ("5 µs", "5 $\\mu$s"), ("μ, Ω", "$\\mu$,{} $\\Omega$"),
    ("中", "[{}CJK UNIFIED IDEOGRAPH-{}4E2D]{}"), ("😀", "[{}GRINNING FACE]{}")])
def test_text_tex_cannot_set_is_written_by_name_never_as_a_question_mark(text, tex):
    from credit_assign.reporting.tex_chars import tex_escape

    assert tex_escape(text) == tex and "?" not in tex_escape(text)


def test_an_unwritable_output_folder_is_a_named_error(tmp_path, monkeypatch):
    """The temporary file of an atomic write cannot be made (a read-only folder): a
    WriteError naming the file and its folder, not a raw PermissionError (root ignores
    a folder's mode, so the refusal is the one the OS gives)."""
    import errno
    import tempfile

    from credit_assign.infra import files

    def denied(dir=None, **_):
        raise PermissionError(errno.EACCES, "Permission denied", str(Path(dir) / ".x.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    with pytest.raises(files.WriteError, match=rf"cannot write {tmp_path}/out\.json: its "
                                               rf"folder {tmp_path} is not writable"):
        files.atomic_write_text(tmp_path / "out.json", "{}")


def test_the_reproduction_page_names_the_dataset_and_the_methods_it_ran():
    """The tiny (digits) config without FA: the title names the digits, the setup line
    gives no FA epochs."""
    from conftest import TINY

    from credit_assign.planning import checks, params
    from credit_assign.studies.penalty_rescue.page import context

    config = checks.load_config(["config/quick.yaml"], ROOT, overrides=TINY)
    header = context(params.reproduction_config(config, "default"),
                     {"name": "digits", "source": "sklearn", "n_train": 1, "n_test": 1})
    assert header.startswith("# Reproduction of the paper's numbers on the digits data")
    assert "CIFAR-10" not in header and "(fa " not in header


def test_a_config_number_yaml_reads_as_a_string_gets_the_hint():
    """--config "training={'lr': 1.0e9}": Snakemake reads the nested value with YAML, a
    string; the refusal says how to write it, as for a config file."""
    from snakemake.cli import parse_config

    from credit_assign.planning import ConfigError, checks

    overrides = parse_config(["training={'lr': 1.0e9}"])
    with pytest.raises(ConfigError, match=r"training\.lr = 1\.0e9 is read as the string "
                                          r"'1\.0e9', not a number .* signed exponent: "
                                          r"1\.0e\+9"):
        checks.load_config(["config/quick.yaml"], ROOT, overrides=overrides)


def test_a_nested_config_number_on_the_command_line_is_a_number():
    """--config "training={'lr': 0.5, 'epochs': 41}": Snakemake keeps nested scalars as
    strings; they are typed as a config file types them, so plain numbers pass, and the
    form the hint asks for (1.0e+9) is a number too; paths and names stay strings."""
    from snakemake.cli import parse_config

    from credit_assign.planning import checks

    overrides = parse_config(["training={'lr': 0.5, 'epochs': 41}"])
    assert overrides["training"] == {"lr": "0.5", "epochs": "41"}  # as Snakemake reads them
    cfg = checks.load_config(["config/quick.yaml"], ROOT, overrides=overrides)
    assert cfg["training"]["lr"] == 0.5 and cfg["training"]["epochs"] == 41
    typed = checks.typed_overrides(parse_config(["training={'lr': 1.0e+9}"]))
    assert typed["training"]["lr"] == 1.0e9
    assert checks.typed_overrides({"x": {"s": "a/b", "t": "1.0e9", "n": "null"}}) == {
        "x": {"s": "a/b", "t": "1.0e9", "n": None}}


@pytest.mark.workflow
def test_a_nested_config_number_runs_from_the_command_line(tmp_path):
    repo = fresh_copy(tmp_path / "repo")
    out = snakemake(repo, "-n", "--configfile", "config/quick.yaml",
                    "--config", "training={'lr': 0.5, 'epochs': 41}", check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    bad = snakemake(repo, "-n", "--configfile", "config/quick.yaml",
                    "--config", "training={'lr': 1.0e9}", check=False)
    assert bad.returncode != 0 and "1.0e+9" in bad.stdout + bad.stderr
