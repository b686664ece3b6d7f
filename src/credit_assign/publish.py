"""``make publish``: copy what the paper config generated into docs/ (never edited by
hand there). The files come in groups, each copied whole or not at all, and every
problem is named before anything is copied, so a refused publish leaves docs/ as it was:

- ``study``: the variant study's pages and the findings they are rendered from, the gap
  map and figures, fig4 and the paper;
- ``ep``: the EP stack probe's report, tables and figure (the paper config's corpora only);
- ``ep_question``: the EP question judged (config/claims_ep.yaml): its page, findings,
  tables and figure; and README's ep_question block, its answer (written for
  the verdict of record, templates/readme_ep_question.md.j2);
- ``claims``: the claims page, its verdicts and findings, and its figure; and README's
  claims block, rewritten from the findings (templates/readme_claims.md.j2).

The findings of every group are one file, ``docs/findings.json`` (infra.findings_file): a
publish sets the sections of the groups it publishes (study, claims, ep_question: each
the findings its step wrote) and keeps the others.

Every publish stamps what it copied in ``docs/published.json``: each group's files
(their sha256) and what they were made from: the report code (each report step's
``code`` param, planning.code.report_digest, with the workflow's rule files, the configs and
the paper's TeX source) and the record's results the group reads (their sha256 in
results/.record/index.json). tests/test_docs_fresh.py computes the same from the
checkout and fails, naming what changed, when docs/ is no longer what today's code makes
from the record.

Nothing is copied that is out of date or drawn for another dataset: Snakemake is asked
first, by a dry run of every file it would copy (with the publish's config), and a
planned job refuses the publish, naming the files it would rewrite and why; a figure
copies only when its PNG says it was drawn for the published dataset (the EP figure:
for the config's corpora) from that dataset's results (figures.style.save writes it).

    python -m credit_assign.publish [--only study ep ep_question claims]
        [--dataset cifar10]   (default: study ep claims)
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import yaml

from credit_assign.infra import findings_file, paths
from credit_assign.infra.files import atomic_write_text
from credit_assign.infra.snakejob import drawn_from
from credit_assign.reporting import render

DOCS = Path("docs")


def groups(dataset: str) -> dict[str, list[tuple[str, str]]]:
    """Each group's (generated file, its name in docs/), from paths (none spelled here):
    the stated recipe's tables (the study's pages are written beside them)."""
    def s(pattern):
        return paths.fill(pattern, dataset=dataset, recipe=paths.DEFAULT_RECIPE)

    return {
        "study": [(s(paths.REPRODUCTION_VARIANTS), "reproduction.md"),
                  (s(paths.REPRODUCTION_NOTES), "reproduction-notes.md"),
                  (s(paths.FINDINGS), FINDINGS),  # what the notes are rendered from
                  (s(paths.REPRODUCTION), "reproduction.csv"),
                  (s(paths.VARIANTS_GAP), "variants_gap.csv"),
                  (paths.figure("fig_variants", "png"), "fig_variants.png"),
                  (paths.figure("fig_variants_key", "png"), "fig_variants_key.png"),
                  (paths.figure("fig_variants_measured", "png"), "fig_variants_measured.png"),
                  (paths.figure("fig_variants_measured_eps", "png"),
                   "fig_variants_measured_eps.png"),
                  (paths.figure("fig4_penalty_rescue", "png"),
                   f"fig4_penalty_rescue_{dataset}.png"),
                  (paths.PAPER_PDF, "paper.pdf")],
        "ep": [(paths.EP_REPORT, "ep_stack.md"), (paths.EP_BY_SEED, "ep_stack_by_seed.csv"),
               (paths.EP_COSINES, "ep_stack_cosines.csv"),
               (paths.figure("fig_ep_stack_cosines", "png"),
                "fig_ep_stack_cosines_tinyshakespeare.png")],
        "ep_question": _ep_question_files(),
        "dose": _dose_files(),
        "claims": [(s(paths.CLAIMS_MD), "claims.md"),
                   (s(paths.CLAIMS_VERDICTS), "claims.csv"),
                   (s(paths.CLAIMS_BY_SEED), "claims_by_seed.csv"),
                   (s(paths.CLAIMS_FINDINGS), FINDINGS),
                   (paths.figure("fig_claims", "png"), "fig_claims.png")],
    }


def _ep_question_files() -> list[tuple[str, str]]:
    """EP's two questions: the page of both (the second's room writes it), the first's
    findings and tables, the second's findings, the precision study's table and
    figure."""
    from credit_assign.studies.ep_estimator import files as precision
    from credit_assign.studies.ep_question2 import plan

    return [(plan.OUT["page"], "ep_question.md"), (plan.OUT["all_findings"], FINDINGS),
            (paths.EP_QUESTION_BATCHES, "ep_question_batches.csv"),
            (paths.EP_QUESTION_COSINES, "ep_question_cosines.csv"),
            (paths.figure("fig_ep_fixed_point", "png"), "fig_ep_fixed_point.png"),
            (plan.OUT["findings"], "ep_question2_findings.json"),
            (precision.TABLE, "ep_estimator.csv"),
            (precision.REMADE, "ep_estimator_remade.csv"),
            (paths.figure("fig_ep_estimator", "png"), "fig_ep_estimator.png")]


def _dose_files() -> list[tuple[str, str]]:
    """The dose study's page, findings (a file of its own: the shared findings file's
    reader is part of every report step's code), per-run table and figure."""
    from credit_assign.studies.dose import plan

    return [(plan.OUT["md"], "dose.md"), (plan.OUT["findings"], "dose_findings.json"),
            (plan.OUT["runs"], "dose_runs.csv"), (paths.figure("fig_dose", "png"), "fig_dose.png")]


README = "README.md"
# every group's findings, one file in docs/ (a section per group: infra.findings_file)
FINDINGS = Path(paths.PUBLISHED_FINDINGS).name
# README's blocks, by the group whose publish rewrites each (from the group's section of
# the published findings): the two lines it lies between, and its template
BLOCKS = {group: (f"<!-- {group}: written by make publish from docs/{FINDINGS}'s section "
                  f"{group} -->", f"<!-- /{group} -->", f"readme_{group}.md.j2")
          for group in ("claims", "ep_question")}
BLOCKS["dose"] = ("<!-- dose: written by make publish from docs/dose_findings.json -->",
                  "<!-- /dose -->", None)


STAMP = "published.json"  # in docs/: what each published group was made from


def _sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def report_code(scope: dict) -> dict[str, str]:
    """What a group's files are rendered with, beside the results: each of its report
    steps' ``code`` param (credit_assign.planning.code.report_digest: its script, the modules
    it imports, the report side's data files), file by file so that a stale page names
    the file that changed; the rule file that defines each step; every other file its
    jobs read that git tracks (its configs, the paper's TeX source, the claims file, the
    history); and the rules' catalogue entries of the methods its results hold (their
    labels and colours). ``scope``: {steps, files, methods}, found by group_scope when
    the group is published and kept in its stamp: a file no job of the group reads (a
    new study's config, another figure's module) stales nothing here."""
    from credit_assign.planning import catalog, code

    root = code.ROOT
    package = code.PACKAGE.resolve().relative_to(root.resolve()).as_posix()
    scripted = sorted({_rule_script(s) for s in scope["steps"]} & set(code.report_steps()))
    out = {f"step {step}": code.report_digest(step) for step in scripted}
    for rel in sorted({f for step in scripted for f in code.report_files(step)}):
        out[f"{package}/{rel}"] = code.file_digest(rel)
    for name in sorted({*scope["files"], *map(_rule_file, scope["steps"]),
                        "workflow/rules/common.smk", "workflow/schemas/config.schema.yaml"}):
        if name and (root / name).is_file():
            out[name] = _sha256(root / name)
    rules = catalog.load(check=False)
    for method in scope["methods"]:
        entry = {k: v for k, v in rules.get(method, {}).items() if k != "source"}
        out[f"rule {method}"] = hashlib.sha256(
            json.dumps(entry, sort_keys=True).encode()).hexdigest()
    return dict(sorted(out.items()))


def _rule_script(step: str) -> str | None:
    """The script (scripts/<name>.py) step ``step``'s rule runs, by its name; a figure
    step's, which runs the figures' shared script, by the step's own name."""
    from credit_assign.planning import code

    smk = _rule_file(step)
    if smk is None:
        return None
    text = (code.ROOT / smk).read_text(encoding="utf-8")
    block = re.split(r"^rule \w+:", text.split(f"rule {step}:", 1)[1], maxsplit=1, flags=re.M)[0]
    m = re.search(r"scripts/(\w+)\.py", block)
    if not m:
        return None
    return step if m.group(1) == code.FIGURE_SCRIPT else m.group(1)


def _rule_file(step: str) -> str | None:
    """The workflow file that defines step ``step`` (``rule <step>:``)."""
    from credit_assign.planning import code

    for smk in sorted((code.ROOT / "workflow" / "rules").glob("*.smk")):
        if re.search(rf"^rule {re.escape(step)}:", smk.read_text(encoding="utf-8"), re.M):
            return smk.relative_to(code.ROOT).as_posix()
    return None


def group_scope(name: str, files: list[str], config: str,
                extra: tuple[str, ...] = (), cwd: str | Path | None = None) -> dict:
    """What group ``name`` is made with, from Snakemake: every job that makes its
    ``files`` (a forced dry run), its report steps, the tracked files those jobs read
    (results aside: the record's are the group's record inputs) with the template of its
    README block, and the methods of the runs they read. Raises PublishError where the
    dry run fails."""
    from credit_assign.planning import code

    args = (files, list(configs_of(name, config)), ("--forceall", *extra))
    jobs, error = planned(*args, cwd=cwd) if cwd is not None else planned(*args)
    if error:
        raise PublishError(f"group {name}: {error}")
    tracked = set(subprocess.run(["git", "ls-files", "-z"], capture_output=True, text=True,
                                 cwd=code.ROOT).stdout.split("\0"))
    report = {j["step"] for j in jobs
              if j["step"] not in code.ENTRY and j["step"] not in code.DATA_STEPS}
    root = code.ROOT.resolve()
    reads = {Path(f).resolve().relative_to(root).as_posix()
             if Path(f).is_absolute() and Path(f).resolve().is_relative_to(root) else f
             for j in jobs if j["step"] in report for f in j["input"]}
    steps = "|".join(("train", "fresh_b_null", "probes", "measure"))
    results = PurePosixPath(paths.RECORD).parts[0]  # the record's folder
    methods = {m.group(1) for f in reads
               if (m := re.match(rf"{results}/[^/]+/[^/]+/(?:{steps})/([^/]+)/", f))}
    package = code.PACKAGE.resolve().relative_to(root).as_posix()
    readme = f"{package}/reporting/templates/readme_{name}.md.j2"  # its README block
    return {"steps": sorted(report),
            "files": sorted({*(f for f in reads if f in tracked and f.split("/")[0]
                               not in (results, DOCS.name)),
                             *configs_of(name, config),
                             *([readme] if (root / readme).is_file() else [])}),
            "methods": sorted(methods)}


class PublishError(RuntimeError):
    """What stops a publish, named."""


def _config(files) -> dict:
    """The config as the workflow parses it, from the checkout this module belongs to
    (its schema and configs; a render in a scratch folder judges the same)."""
    from credit_assign.planning import checks, code

    return checks.load_config([f for f in files if Path(f) != Path(paths.DEFAULT_CONFIG)],
                              root=code.ROOT)


def _claims_runs(config: str) -> list[str]:
    from credit_assign.planning import targets

    cfg = _config([config])
    if targets.claims_spec(cfg) is None:
        return []
    return (targets.claims_train(cfg) + targets.claims_timings(cfg) + targets.claims_nulls(cfg)
            + targets.claims_ep(cfg) + targets.claims_ep(cfg, paths.EP_TIMINGS))


def group_inputs(name: str, config: str = paths.DEFAULT_CONFIG) -> list[str]:
    """The record's files a group is made from, besides the code. The study (its pages
    and the paper): the study's runs (every recipe of config/variants.yaml), the paper
    config's EP probes and the claims' runs (the paper reads their findings); the EP
    probe's group: its probes; the EP question's: its runs; the claims: their runs; the
    dose study: its runs in the record (a table waits for the rest). Data manifests
    with the runs made from them."""
    from credit_assign.infra import record
    from credit_assign.planning import targets

    cfg = _config([config])
    claims = _claims_runs(config)
    if name == "claims":
        return claims
    if name == "dose":
        from credit_assign.studies.dose import plan

        index = record.recorded(".")
        return [f for f in plan.inputs(plan.load()) if f in index]
    if name == "ep_question":
        runs = targets.ep_question_runs(cfg) + targets.ep_question_runs(
            cfg, paths.EP_FIXED_POINT_TIMINGS)
        corpora = sorted({r.split("/")[2] for r in runs})
        # the precision study's and the second question's runs in the record (their
        # pages wait for the rest)
        from credit_assign.planning.wildcards import JobFunctions
        from credit_assign.studies.ep_question2 import plan

        index = record.recorded(".")
        more = JobFunctions(cfg, ".").ep_estimator_targets() + plan.targets()
        return ([paths.CORPUS_MANIFEST.format(corpus=c) for c in corpora] + runs
                + [f for f in more if f in index])
    ep = [paths.CORPUS_MANIFEST.format(corpus=c) for c in cfg["ep_stack"]["corpora"]] + \
        targets.ep_results(cfg) + targets.ep_timings(cfg)
    if name == "ep":
        return ep
    if name != "study":
        raise KeyError(f"no publish group {name!r}")
    study = _config(paths.STUDY_CONFIGS)
    out = [paths.DATA_MANIFEST.format(dataset=study["dataset"])]
    for recipe in targets.recipes(study):
        for of in (targets.train_metrics, targets.train_timings, targets.null_results,
                   targets.probe_results, targets.measure_results):
            out += of(study, recipe=recipe)
    return list(dict.fromkeys(out + ep + claims))


def made_from(name: str, config: str = paths.DEFAULT_CONFIG,
              scope: dict | None = None) -> dict[str, dict]:
    """What group ``name`` is made from, as the checkout holds it: ``code``
    (report_code over the group's ``scope``) and ``record`` (each of group_inputs' files:
    its sha256 in the record's index, None where the record lacks it)."""
    from credit_assign.infra import record

    index = record.recorded(".")
    return {"code": report_code(scope) if scope is not None else {},
            "record": {f: (index.get(f) or {}).get("sha256")
                       for f in group_inputs(name, config)}}


def stamp_problems(chosen: dict[str, list[tuple[str, str]]], config: str) -> list[str]:
    """What stops a stamp: a result the group reads that the record lacks or holds with
    other bytes (``python -m credit_assign.infra.record save`` first)."""
    from credit_assign.infra import record

    out = []
    for name in chosen:
        made = made_from(name, config, scope=None)
        for path, sha in made["record"].items():
            if sha is None:
                out.append(f"{path} (group {name}) is not in the record: run python -m "
                           "credit_assign.infra.record save after its job")
            elif Path(path).exists() and record.recorded_sha(path) != sha:
                out.append(f"{path} (group {name}) differs from the record: python -m "
                           "credit_assign.infra.record check names why")
    return out


def write_stamp(chosen: dict[str, list[tuple[str, str]]], config: str,
                docs: Path = DOCS, scopes: dict[str, dict] | None = None) -> None:
    """docs/published.json: each published group's files (sha256 of the docs/ copy) and
    made_from; groups not published now keep their entry. The findings file: the sha256
    of the group's section (published.digest)."""
    path = docs / STAMP
    stamp = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    stamp["about"] = ("written by make publish (credit_assign.publish): each "
                      "group's files in docs/ and what they were made from; checked by "
                      "tests/test_docs_fresh.py")
    groups_ = stamp.setdefault("groups", {})
    for name, files in chosen.items():
        scope = (scopes or {}).get(name) or group_scope(name, [s for s, _ in files], config)
        groups_[name] = {"files": {n: _published_sha(docs, n, name) for _, n in files},
                         "config": str(config), "scope": scope,
                         **made_from(name, config, scope)}
    stamp["groups"] = dict(sorted(groups_.items()))
    atomic_write_text(path, json.dumps(stamp, indent=1, sort_keys=False) + "\n")


def _published_sha(docs: Path, name: str, group: str) -> str | None:
    """A published file's sha256 as stamped (None where it is not there); the findings
    file: the group's section's (the other groups' sections are theirs)."""
    if name == FINDINGS:
        return findings_file.section_digest(group, docs / name)
    return _sha256(docs / name) if (docs / name).exists() else None


def stale(name: str, stamped: dict, config: str = paths.DEFAULT_CONFIG,
          docs: Path = DOCS) -> list[str]:
    """What differs between group ``name``'s stamp and the checkout, named: a docs/ file
    edited or missing, a report step's code, a rule file, a config, a result of the
    record."""
    out = []
    if stamped.get("config", config) != config:
        config = stamped["config"]  # published with another config: judged with it
    for n, sha in stamped["files"].items():
        now = _published_sha(docs, n, name)
        if now is None:
            if sha is not None:  # None: not published (a figure kept as it was, absent)
                out.append(f"{docs / n} is missing" if n != FINDINGS
                           else f"{docs / n} has no section {name}")
        elif now != sha:
            out.append(f"{docs / n} is not the file make publish copied (edited by hand?)"
                       if n != FINDINGS else f"{docs / n}'s section {name} is not what "
                       "make publish wrote (edited by hand?)")
    if "scope" not in stamped:
        return out + [f"group {name} was stamped before a stamp named the group's own "
                      "inputs: republish it (make publish PUBLISH='--only "
                      f"{name}')"]
    now = made_from(name, config, stamped["scope"])
    steps = []  # a step's digest follows its files: one line for them all, after the files
    for part, what in (("code", "report code"), ("record", "record's result")):
        old, new = stamped.get(part, {}), now[part]
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                change = ("is new" if key not in old else "is gone" if key not in new
                          else "changed")
                if part == "code" and key.startswith("step "):
                    steps.append(key.removeprefix("step "))
                else:
                    out.append(f"{what} {key} {change} since the publish")
    if steps:
        out.append(f"report code of {len(steps)} step{'s' if len(steps) > 1 else ''} "
                   f"changed since the publish: {', '.join(steps)}")
    return out


def block(group: str, findings: dict) -> str:
    """README's block of ``group`` from its findings (BLOCKS: its template; the findings'
    keys, and the whole as ``findings``; the dose study: its room's function)."""
    if group == "dose":
        from credit_assign.studies.dose import page

        return wrap(page.readme_block(findings))
    return wrap(render.render(BLOCKS[group][2], **findings, findings=findings).strip())


def wrap(markdown: str, width: int = 100) -> str:
    """A block's Markdown with every line at most ``width`` characters (a list item's
    continuation indented under its text; a link or code span is never split inside a
    word): README reads in a terminal and in a diff."""
    import textwrap

    items: list[str] = []  # a list item's continuation lines joined to it first
    for line in markdown.splitlines():
        if items and line.startswith(" ") and not line.lstrip(" ").startswith("- ") \
                and items[-1].strip():
            items[-1] += " " + line.strip()
        else:
            items.append(line)
    out = []
    for line in items:
        body = line.lstrip(" ")
        indent = " " * (len(line) - len(body))
        lead = indent + ("- " if body.startswith("- ") else "")
        text = body[2:] if body.startswith("- ") else body
        out += textwrap.wrap(text, width, initial_indent=lead,
                             subsequent_indent=" " * len(lead), break_long_words=False,
                             break_on_hyphens=False) or [line]
    return "\n".join(out)


def readme_block(readme, group: str, findings: dict) -> None:
    """Rewrite the block of ``group`` in ``readme`` (both its lines must be there)."""
    begin, end = BLOCKS[group][:2]
    text = Path(readme).read_text(encoding="utf-8")
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    atomic_write_text(readme, f"{head}{begin}\n{block(group, findings)}\n{end}{tail}")


def problems(chosen: dict[str, list[tuple[str, str]]], config: str) -> list[str]:
    """Everything that stops a publish, named: a missing file, findings that are not
    JSON, EP probes of the wrong corpora, a README without a group's block or findings
    its block cannot be rendered from."""
    out = [f"{src} is missing (group {name}): build it first (snakemake --cores N {src})"
           for name, files in chosen.items() for src, _ in files if not Path(src).exists()]
    try:  # the one findings file: the other groups' sections are kept
        findings_file.read(DOCS / FINDINGS)
    except findings_file.PublishedError as err:
        out.append(str(err))
    for name, files in chosen.items():  # a section of the one findings file: JSON data
        for src in (s for s, n in files if n == FINDINGS and Path(s).exists()):
            try:
                if not isinstance(json.loads(Path(src).read_text(encoding="utf-8")), dict):
                    raise ValueError("not a JSON object")
            except (UnicodeDecodeError, ValueError) as err:
                out.append(f"{src} (group {name}) is not findings as JSON ({err}): rebuild "
                           f"it: snakemake --cores N --force {src}")
    if "ep" in chosen and Path(paths.EP_BY_SEED).exists():
        want = set(yaml.safe_load(Path(config).read_text(encoding="utf-8"))
                   ["ep_stack"]["corpora"])
        with open(paths.EP_BY_SEED, newline="", encoding="utf-8") as fh:
            have = {row["corpus"] for row in csv.DictReader(fh)}
        if have != want:
            out.append(f"{paths.EP_BY_SEED} holds the EP probes of {sorted(have)}, not "
                       f"{config}'s {sorted(want)}: run snakemake --cores N {paths.EP_REPORT} "
                       "with the paper config first")
    for group in (g for g in BLOCKS if g in chosen and Path(README).exists()):
        begin, end, _ = BLOCKS[group]
        text = Path(README).read_text(encoding="utf-8")
        if begin not in text or end not in text or text.index(begin) > text.index(end):
            out.append(f"{README} has no {group} block to rewrite: put the lines {begin} "
                       f"and {end}, in that order, where it goes")
        names = {name: src for src, name in chosen[group]}
        findings = names.get(FINDINGS) or names.get("dose_findings.json")
        if findings and Path(findings).exists():
            try:  # the block renders before anything is copied (a missing finding named)
                block(group, json.loads(Path(findings).read_text(encoding="utf-8")))
            except Exception as err:  # noqa: BLE001 - any failure stops the publish
                out.append(f"{findings}: README's {group} block cannot be written from it "
                           f"({type(err).__name__}: {err})")
    return out


def _corpora(config: str) -> list[str]:
    return list(yaml.safe_load(Path(config).read_text(encoding="utf-8"))
                ["ep_stack"]["corpora"])


def figure_problems(chosen: dict[str, list[tuple[str, str]]], dataset: str,
                    config: str) -> list[str]:
    """Every figure (a PNG under paper/figures/, one folder for every config) that does
    not say it was drawn for ``dataset`` from its results (the EP figure: for the
    config's corpora)."""
    out = []
    folder = str(Path(paths.FIGURE).parent)
    for name, files in chosen.items():
        for src, _ in files:
            if not (src.startswith(folder + "/") and src.endswith(".png")
                    and Path(src).exists()):
                continue
            try:
                about = drawn_from(src)
            except OSError as err:  # not a PNG PIL can read
                out.append(f"{src} (group {name}) is not a readable PNG ({err}): "
                           f"redraw it: snakemake --cores N --force {src}")
                continue
            redraw = f"redraw it with that config: snakemake --cores N --force {src}"
            if about is None:
                out.append(f"{src} (group {name}) does not say what data it was drawn "
                           f"from (drawn outside a job, or before figures said it): {redraw}")
            elif name == "ep_question":
                want = Path(src).stem  # the EP figures are drawn by the step of their name
                if about.get("step") != want:
                    out.append(f"{src} (group ep_question) was drawn by step "
                               f"{about.get('step')}, not {want}: {redraw}")
            elif name == "ep":
                if sorted(about.get("corpora") or []) != sorted(_corpora(config)):
                    out.append(f"{src} (group ep) was drawn for the corpora "
                               f"{about.get('corpora')}, not {config}'s "
                               f"{_corpora(config)}: {redraw}")
            else:
                read = {r.split("/")[0] for r in about.get("read") or []}
                if about.get("dataset") != dataset or read - {dataset}:
                    out.append(f"{src} (group {name}) was drawn for {about.get('dataset')} "
                               f"(from {', '.join(about.get('read') or []) or 'no results'}"
                               f", step {about.get('step')}), not for {dataset}: {redraw}")
    return out


# what a dry run says of each job it plans: "rule <step>:" then its indented fields
_JOB = re.compile(r"^(?:local)?rule (\w+):\n((?:[ \t]+\S.*\n?)*)", re.M)


def planned(targets: list[str], config: str | list[str], extra: tuple[str, ...] = (),
            cwd: str | Path | None = None) -> tuple[list[dict], str | None]:
    """What Snakemake would run to bring ``targets`` up to date, by a dry run from the
    working folder with ``config`` (one file or several, beside config/config.yaml,
    always read first): ([{step, output, reason}], None), or ([], the dry run's error)
    when it fails. ``extra``: arguments the runs were made with (``--config data=...``:
    a local copy of the data), so that the dry run asks as the build did."""
    files = [config] if isinstance(config, str) else list(config)
    files = [f for f in files if Path(f) != Path(paths.DEFAULT_CONFIG)]
    cmd = [sys.executable, "-m", "snakemake", "--dry-run", "--nocolor", *targets, *extra]
    if files:
        cmd += ["--configfile", *files]  # after the targets: it takes every word after it
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=cwd)
    except (OSError, subprocess.SubprocessError) as err:
        return [], f"{' '.join(cmd[2:])} could not run: {err}"
    if proc.returncode != 0:
        tail = "\n  ".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        return [], f"snakemake --dry-run failed (exit {proc.returncode}):\n  {tail}"
    jobs = []
    for m in _JOB.finditer(proc.stdout):
        fields = dict(re.findall(r"^\s+(\w+): (.*)$", m.group(2), re.M))
        jobs.append({"step": m.group(1),
                     "input": [f for f in fields.get("input", "").split(", ") if f],
                     "output": [f for f in fields.get("output", "").split(", ") if f],
                     "reason": fields.get("reason", "")})
    return jobs, None


def configs_of(name: str, config: str) -> tuple[str, ...]:
    """The configs a group is built with: the study's (paths.STUDY_CONFIGS: the paper
    config and its variants) for the study, the publish's for the others."""
    if name == "dose":  # its arms are recipes of config/dose.yaml
        from credit_assign.studies.dose import plan

        return (config, plan.CONFIG)
    return tuple(paths.STUDY_CONFIGS) if name == "study" else (config,)


def out_of_date(chosen: dict[str, list[tuple[str, str]]], config: str,
                extra: tuple[str, ...] = ()) -> list[str]:
    """The files to copy that Snakemake would rebuild (named with the job's step and
    reason), or the dry run's failure: what stops a publish after the files are there.
    One dry run per set of configs (configs_of: the study's group with the study's)."""
    by_configs: dict[tuple[str, ...], list[str]] = {}
    for name, files in chosen.items():
        by_configs.setdefault(configs_of(name, config), []).extend(src for src, _ in files)
    out = []
    for configs, sources in by_configs.items():
        targets = sorted(set(sources))
        jobs, error = planned(targets, list(configs), *([extra] if extra else []))
        if error:
            out.append(f"cannot tell whether the files are up to date: {error}")
            continue
        if not jobs:
            continue
        steps: dict[str, int] = {}
        for job in jobs:
            steps[job["step"]] = steps.get(job["step"], 0) + 1
        out += [f"{src} is out of date (step {job['step']}: {job['reason']})"
                for src in targets for job in jobs if src in job["output"]]
        plan = ", ".join(f"{step} {n}" for step, n in steps.items())
        extra = [c for c in configs if Path(c) != Path(paths.DEFAULT_CONFIG)]
        extra = f" --configfile {' '.join(extra)}" if extra else ""
        out.append(f"snakemake --dry-run plans {len(jobs)} job(s) ({plan}) for the files to "
                   f"publish: rebuild them first: snakemake --cores N {' '.join(targets)}"
                   f"{extra}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+",
                        choices=["study", "ep", "ep_question", "claims", "dose"],
                        default=["study", "ep", "claims"],
                        help="the groups to publish (ep_question only when named: its runs "
                        "take sessions)")
    parser.add_argument("--dataset", default="cifar10")
    parser.add_argument("--config", default=paths.DEFAULT_CONFIG,
                        help="the config whose EP corpora docs/ holds")
    parser.add_argument("snakemake_args", nargs=argparse.REMAINDER,
                        help="after --: what the files were built with, passed to "
                        "Snakemake's dry run (e.g. -- --config \"data={...}\")")
    args = parser.parse_args(argv)
    extra = tuple(a for a in args.snakemake_args if a != "--")
    chosen = {k: v for k, v in groups(args.dataset).items() if k in args.only}
    found = problems(chosen, args.config)
    if not found:  # the files are there: are they current and of this dataset?
        found = figure_problems(chosen, args.dataset, args.config) \
            + stamp_problems(chosen, args.config) + out_of_date(chosen, args.config, extra)
    scopes = {}
    if not found:  # what each group is made with, before anything is copied
        try:
            scopes = {g: group_scope(g, [src for src, _ in files], args.config, extra)
                      for g, files in chosen.items()}
        except PublishError as err:
            found = [str(err)]
    if found:
        print("publish: nothing copied.\n- " + "\n- ".join(found), file=sys.stderr)
        return 1
    try:
        copy(chosen, args.config, scopes)
    except OSError as err:
        print(f"publish: nothing copied: {err.filename or DOCS}: {err.strerror or err} "
              "(docs/ and README.md must be writable)", file=sys.stderr)
        return 1
    print(f"published {sum(map(len, chosen.values()))} files into {DOCS}/ "
          f"({', '.join(chosen)})")
    return 0


def copy(chosen: dict[str, list[tuple[str, str]]], config: str, scopes: dict) -> None:
    """Whole or not at all: every file of the chosen groups, the findings' sections,
    README's blocks and the stamp are written into a staging folder in docs/ first, then
    moved over docs/' files (and README) one rename each. A write that fails while staging
    leaves docs/ as it was (the OSError names the file)."""
    import tempfile

    staging = Path(tempfile.mkdtemp(prefix=".publish-", dir=DOCS))
    try:
        for kept in (FINDINGS, STAMP):
            if (DOCS / kept).exists():
                shutil.copyfile(DOCS / kept, staging / kept)
        readme = staging / README
        if Path(README).exists():
            shutil.copyfile(README, readme)
        for group, files in chosen.items():
            for src, name in files:
                if name == FINDINGS:  # one file: the group's section, the others kept
                    findings_file.write(group, json.loads(Path(src).read_text(encoding="utf-8")),
                                    staging / name)
                else:
                    shutil.copyfile(src, staging / name)
        for group in (g for g in BLOCKS if g in chosen and readme.exists()):
            found = (json.loads((staging / "dose_findings.json").read_text(encoding="utf-8"))
                     if group == "dose" else findings_file.section(group, staging / FINDINGS))
            readme_block(readme, group, found)
        write_stamp(chosen, config, docs=staging, scopes=scopes)
        moves = [(staging / n, DOCS / n) for n in sorted({n for files in chosen.values()
                                                          for _, n in files} | {STAMP})]
        if readme.exists():
            moves.append((readme, Path(README)))
        # each file replaced is kept until all are: a rename that fails puts every one
        # already made back (a file that cannot be replaced, say, immutable)
        before = staging / ".before"
        before.mkdir()
        kept = {}
        for i, (_, dest) in enumerate(moves):
            if dest.exists():
                kept[dest] = before / str(i)
                shutil.copyfile(dest, kept[dest])
        done = []
        try:
            for src, dest in moves:
                src.replace(dest)
                done.append(dest)
        except OSError as err:
            for dest in done:
                if dest in kept:
                    kept[dest].replace(dest)
                else:
                    dest.unlink(missing_ok=True)
            raise OSError(f"publish: {err.filename or dest} could not be replaced ({err}); "
                          "every file already replaced was put back: docs/ is as it "
                          "was") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
