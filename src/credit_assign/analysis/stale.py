"""List the results whose job would compute them otherwise today, as Snakemake sees it.

Each computing job (training, nulls, measurements, probes, EP) takes as its ``code``
param the digest of the science it computes with (``credit_assign.planning.code``: its
step's modules, its learning rule's own module and what they import), and Snakemake
reruns a job whose params differ from those its record holds (``.snakemake/metadata``,
one record per output file). This command reads each result's record and lists the
results whose recorded code digest is not today's for their step and method — the
results a ``snakemake`` run plans again for a change to the science (an edit to
``science/learning_rules/dfa.py`` lists DFA's runs, their nulls and the alignment probes, which
measure every rule, and not BP's runs); a plotting or reporting change lists nothing:

    python -m credit_assign.analysis.stale               # results/ under the current folder
    python -m credit_assign.analysis.stale results/digits --rerun   # print the snakemake command

Run it from the workflow's folder (where Snakemake keeps ``.snakemake/``): the records
are named by each file's path from there.

It also lists the summary tables (``summary/*.csv``) that no longer match what they were
made from: edited after they were written, or made from result files that have changed
or gone since (each table's record, ``<table>.csv.digest.json``, holds the sha256 of the
table and of its inputs; credit_assign.analysis.tables).

A training result whose recorded run config is not the one today's config gives its
run (``--configfile``, as the workflow is run; the paper config lies under them) is
listed too, whatever Snakemake's records say.

A result without such a record (a fresh clone, or ``.snakemake/`` deleted) is judged
from what it records itself: the commit it was made from, against today's files of its
step; one that cannot say (made from a dirty tree, a commit this checkout lacks) is
listed apart.

Exit status 0 when every result and table is current, 1 when some are not (a CI step can
require a fresh tree), 2 when none is stale but some result cannot say. A resumed job
never mixes code versions: its resume state is tied to the library digest too
(``infra.resume.load_resume``).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
from pathlib import Path

from credit_assign.analysis.tables import audit
from credit_assign.infra import paths
from credit_assign.infra.provenance import check_checkout
from credit_assign.infra.record import SNAKEMAKE_METADATA, record_name

# each computing step's result files (its outputs the record keeps), with the step that
# writes them: the step and method of a result come from its path
RESULTS: tuple[tuple[str, str], ...] = (
    (paths.METRICS, "train"), (paths.TIMINGS, "train"),
    (paths.NULL, "fresh_b_null"), (paths.PROBE, "alignment_probe"),
    (paths.MEASURE, "measure"),
    (paths.EP_TIMINGS, "ep_stack_probe"), (paths.EP_RESULT, "ep_stack_probe"),
)
# Snakemake's records hold params as reprs (record format 6 and later); a code digest is
# the one param that is a bare sha256
_DIGEST = re.compile(r"'[0-9a-f]{64}'")


_PATTERNS = [(paths.regex(p), step) for p, step in RESULTS]


def _job(path: str) -> tuple[str, dict[str, str]] | None:
    """(step, wildcards) of a computing job's result path, or None for any other file."""
    for regex, step in _PATTERNS:
        if m := regex.fullmatch(path):
            return step, m.groupdict()
    return None


def job_of(path: str) -> tuple[str, str | None] | None:
    """(step, method or None) of a computing job's result path (relative to the
    workflow's folder, posix), or None for any other file."""
    job = _job(path)
    return (job[0], job[1].get("method")) if job else None


def expected(step: str, method: str | None) -> str:
    """Today's code digest of a ``step`` job of ``method`` (the param Snakemake compares)."""
    from credit_assign.planning import params

    return params.code_digest({}, step, method)


def recorded(workdir: Path, path: str) -> list[str] | None:
    """The params of the job that wrote ``path``, as Snakemake recorded them (reprs), or
    None when it has no record Snakemake would compare params with (none, unfinished,
    or a format before 6)."""
    folder = workdir / SNAKEMAKE_METADATA
    try:
        longest = os.pathconf(folder, "PC_NAME_MAX") if folder.is_dir() else 255
        meta = json.loads((folder / record_name(path, longest or 255)).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("incomplete") \
            or (meta.get("record_format_version") or 0) < 6 \
            or not isinstance(meta.get("params"), list):
        return None
    return meta["params"]


def config_word(path: Path, wildcards: dict[str, str], config: dict | None) -> str | None:
    """Why a training result's recorded run config is not the one ``config`` gives its
    run today (planning.params.run_config: what its job would train), or None where they
    agree or cannot be compared (no config, another dataset, a recipe the config does not
    name, a result that records none)."""
    from credit_assign.planning import params

    if config is None or wildcards.get("dataset") != config.get("dataset"):
        return None
    try:
        had = json.loads(path.read_text())["config"]
        want = json.loads(json.dumps(params.run_config(config, **wildcards)))
    except Exception:  # noqa: BLE001 - a recipe or method this config does not name
        return None
    diff = _differ(had, want)
    return None if not diff else (
        "its config differs from today's: " + "; ".join(diff[:3])
        + (" …" if len(diff) > 3 else ""))


def _differ(had, want, key: str = "") -> list[str]:
    if isinstance(had, dict) and isinstance(want, dict):
        return [d for k in sorted(set(had) | set(want))
                for d in _differ(had.get(k), want.get(k), f"{key}.{k}" if key else k)]
    return [] if had == want else [f"{key} {had!r} → {want!r}"]


def scan(root: Path, workdir: Path | None = None, config: dict | None = None
         ) -> tuple[list[Path], list[tuple[Path, str]], list[Path]]:
    """(current results, [(stale result, why)], results without a record of their job),
    for the computing jobs' results under ``root``; ``workdir``: the workflow's folder
    (default: the current one), whose ``.snakemake/metadata`` holds the records."""
    workdir = Path(os.path.abspath(workdir or Path.cwd()))
    fresh, stale, unknown = [], [], []
    for path in sorted(p for p in root.rglob("*.json") if p.is_file()):
        try:
            rel = Path(os.path.abspath(path)).relative_to(workdir).as_posix()
        except ValueError:
            rel = path.as_posix()
        job = _job(rel)
        if job is None:
            continue  # not a computing job's result (tables' records, findings, ...)
        step, method = job[0], job[1].get("method")
        if step == "train" and rel.endswith(Path(paths.METRICS).name) and (
                why := config_word(path, job[1], config)):
            stale.append((path, why))
            continue
        try:
            want = expected(step, method)
        except KeyError as err:  # a method the catalogue no longer has
            stale.append((path, f"{step}: {err.args[0]}"))
            continue
        params = recorded(workdir, rel)
        if params is None:  # no record of its job: what the result itself records
            why = own_word(path, step, method)
            if why is None:
                fresh.append(path)
            elif why == UNKNOWN:
                unknown.append(path)
            else:
                stale.append((path, why))
        elif repr(want) in params:
            fresh.append(path)
        else:
            old = next((p.strip("'") for p in params if _DIGEST.fullmatch(p)), None)
            stale.append((path, f"{step} code {old[:12] if old else 'not recorded'}, "
                                f"now {want[:12]}"))
    again = retrained(workdir, stale)
    rerun = {Path(os.path.abspath(p)) for p, _ in again}
    return [p for p in fresh if Path(os.path.abspath(p)) not in rerun], stale + again, unknown


UNKNOWN = "cannot say"


def own_word(path: Path, step: str, method: str | None) -> str | None:
    """Whether a result without a record of its job was made by today's code of its
    step, from what the result records itself: the commit it was made from
    (``provenance.code``) against today's files of its step (the ``code`` param's
    files: planning.code.files). None when every one is the same there; why not, when one
    differs; UNKNOWN where the result cannot say (made from a dirty tree, no commit, a
    commit this checkout lacks, not readable)."""
    from credit_assign.planning import code

    try:
        prov = json.loads(_provenance_file(path).read_text())["provenance"]["code"]
    except (OSError, ValueError, KeyError, TypeError):
        return UNKNOWN
    commit = prov.get("git_commit")
    if not commit or prov.get("git_dirty") is not False:
        return UNKNOWN
    from credit_assign.planning import catalog

    try:
        methods = tuple(m for m, r in catalog.load().items() if r["probed"]) \
            if step == "alignment_probe" else (method,) if method else ()
        files = code.files(step, methods)
    except KeyError:
        return UNKNOWN
    where = [f"src/credit_assign/{f}" for f in files]
    # in the package's own checkout, whatever folder this runs from (paths from its top)
    return _changed(str(code.ROOT), commit, tuple(where), step)


def _provenance_file(path: Path) -> Path:
    """The file that records a result's provenance: itself, or for a job's timings
    (``timings.json``, ``<seed>.timings.json``) the result its job wrote beside them."""
    if path.name == Path(paths.TIMINGS).name:
        return path.with_name(Path(paths.METRICS).name)
    if path.name.endswith(".timings.json"):
        return path.with_name(path.name.removesuffix(".timings.json") + ".json")
    return path


@functools.cache
def _changed(workdir: str, commit: str, where: tuple[str, ...], step: str) -> str | None:
    import subprocess

    try:
        done = subprocess.run(["git", "-C", workdir, "diff", "--name-only", commit, "--",
                               *where], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN
    if done.returncode != 0:
        return UNKNOWN  # a commit this checkout does not hold
    changed = [f for f in done.stdout.split() if not _same_meaning(workdir, commit, f)]
    if not changed:
        return None
    return (f"{step} code changed since its commit {commit[:7]}: "
            f"{', '.join(Path(c).name for c in changed[:3])}"
            f"{' …' if len(changed) > 3 else ''} (read from the result: no record of its "
            "job)")


def _same_meaning(workdir: str, commit: str, path: str) -> bool:
    """Whether a Python file says at ``commit`` what it says today (a comment or a
    docstring changes nothing: planning.code's digests are of meaning; a file from
    before the packages' rename of issue #58 is read at its old path, its new names
    aside: planning.old_digests)."""
    import subprocess

    from credit_assign.planning import old_digests
    from credit_assign.planning.catalog import meaning

    def show(at: str):
        return subprocess.run(["git", "-C", workdir, "show", f"{commit}:{at}"],
                              capture_output=True, text=True, timeout=60)

    now = Path(workdir) / path
    if not now.is_file() or not path.endswith(".py"):
        return False
    then = show(path)
    if then.returncode != 0:
        package = "src/credit_assign/"
        then = show(package + old_digests.old_path(path.removeprefix(package)))
    if then.returncode != 0:
        return False
    text = now.read_text(encoding="utf-8")
    try:
        return (meaning(then.stdout) == meaning(text)
                or old_digests.same_as_before_rename(then.stdout, text, path))
    except SyntaxError:
        return False


# the weights a step reads from its run: temp(), so a stale reader of a run whose
# weights are gone reruns the run too (Snakemake remakes them: the same bytes)
READS_WEIGHTS = {"fresh_b_null": paths.MODEL, "measure": paths.MODEL,
                 "alignment_probe": paths.SNAPSHOTS}


def retrained(workdir: Path, stale: list[tuple[Path, str]]) -> list[tuple[Path, str]]:
    """The training results a stale null, measurement or probe makes Snakemake rerun:
    those of its run whose weights (temp) are gone, unless already stale themselves."""
    listed = {Path(os.path.abspath(p)) for p, _ in stale}
    out = []
    for path, _ in stale:
        try:
            rel = Path(os.path.abspath(path)).relative_to(workdir).as_posix()
        except ValueError:
            continue
        job = _job(rel)
        if job is None or job[0] not in READS_WEIGHTS:
            continue
        run = job[1]
        weights = workdir / paths.fill(READS_WEIGHTS[job[0]], **run)
        metrics = workdir / paths.fill(paths.METRICS, **run)
        if not weights.exists() and metrics.exists() and metrics not in listed:
            listed.add(metrics)
            out.append((Path(os.path.relpath(metrics)) if not path.is_absolute() else metrics,
                        f"train: reruns to remake {weights.name} (temp, gone) for the "
                        f"stale {job[0]} {rel}"))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default="results", type=Path)
    ap.add_argument("--rerun", action="store_true",
                    help="print a snakemake command that rebuilds the listed results")
    ap.add_argument("--configfile", nargs="*", default=[], metavar="FILE",
                    help="the config files the workflow runs with (as snakemake's "
                         "--configfile; the paper config lies under them): a training "
                         "result whose recorded run config differs is stale")
    args = ap.parse_args(argv)
    try:  # the library digest must be this checkout's, not another's on sys.path
        check_checkout(args.root)
    except RuntimeError as err:
        print(f"stale: {err}", file=sys.stderr)
        return 2
    if not args.root.is_dir():
        print(f"{args.root} is not a folder of results", file=sys.stderr)
        return 2
    from credit_assign.planning import ConfigError
    from credit_assign.planning.checks import load_config

    try:
        config = load_config(args.configfile, ".")
    except (ConfigError, OSError) as err:
        if args.configfile:
            print(f"stale: {err}", file=sys.stderr)
            return 2
        config = None  # not a workflow's folder: no run config to compare with
    fresh, stale, unknown = scan(args.root, config=config)
    print(f"{len(fresh)} results current, {len(stale)} made by other code of their "
          "step (Snakemake reruns their jobs)")
    for path, why in stale:
        print(f"  {path}  ({why})")
    if unknown:
        print(f"{len(unknown)} results whose code cannot be told: no finished record of "
              f"their job in {SNAKEMAKE_METADATA}, and the result names no commit this "
              "checkout holds from a clean tree (run from the workflow's folder)")
        for path in unknown:
            print(f"  {path}")
    tables = audit(args.root)
    print(f"{len(tables)} summary table(s) that do not match what they were made from")
    for path, why in tables:
        print(f"  {path}  ({why})")
    targets = [str(p) for p, _ in stale] + sorted({str(p) for p, _ in tables})
    if targets and args.rerun:
        print("rebuild them (and, on the next plain run, what depends on them) with:\n"
              "  snakemake --cores N --force " + " ".join(targets))
    return 1 if stale or tables else 2 if unknown else 0


def run(argv=None) -> int:
    """main(), quiet when its reader stops early (``stale | head``): a closed pipe ends
    the listing, not a traceback."""
    try:
        code = main(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # Python's recipe: point stdout at devnull so the interpreter's final flush
        # does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(run())
