"""``make publish``: copy what the paper config generated into docs/ (never edited by
hand there). The files come in groups, each copied whole or not at all, and every
problem is named before anything is copied, so a refused publish leaves docs/ as it was:

- ``study``: the variant study's pages and the findings they are rendered from, the gap
  map and figures, fig4 and the paper;
- ``ep``: the EP stack probe's report, tables and figure (the paper config's corpora only);
- ``ep_question``: the EP question judged (config/claims_ep.yaml): its page, findings,
  tables and figure;
- ``claims``: the claims page, its verdicts and findings, and its figure; and README's
  claims block, rewritten from the findings (templates/readme_claims.md.j2).

Nothing is copied that is out of date or drawn for another dataset: Snakemake is asked
first, by a dry run of every file it would copy (with the publish's config), and a
planned job refuses the publish, naming the files it would rewrite and why; a figure
copies only when its PNG says it was drawn for the published dataset (the EP figure:
for the config's corpora) from that dataset's results (figures.style.save writes it).

    python -m credit_assign.reporting.publish [--only study ep ep_question claims]
        [--dataset cifar10]   (default: study ep claims)
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from credit_assign.infra import paths
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
                  (s(paths.FINDINGS), "findings.json"),  # what the notes are rendered from
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
        "ep_question": [(paths.EP_QUESTION_MD, "ep_question.md"),
                        (paths.EP_QUESTION_FINDINGS, "ep_question_findings.json"),
                        (paths.EP_QUESTION_BATCHES, "ep_question_batches.csv"),
                        (paths.EP_QUESTION_COSINES, "ep_question_cosines.csv"),
                        (paths.figure("fig_ep_fixed_point", "png"), "fig_ep_fixed_point.png")],
        "claims": [(s(paths.CLAIMS_MD), "claims.md"),
                   (s(paths.CLAIMS_VERDICTS), "claims.csv"),
                   (s(paths.CLAIMS_BY_SEED), "claims_by_seed.csv"),
                   (s(paths.CLAIMS_FINDINGS), DOCS_FINDINGS),
                   (paths.figure("fig_claims", "png"), "fig_claims.png")],
    }


README = "README.md"
DOCS_FINDINGS = "claims_findings.json"  # the findings' name in docs/
# README's claims block lies between these two lines; publish rewrites what is between
BEGIN = "<!-- claims: written by make publish from docs/claims_findings.json -->"
END = "<!-- /claims -->"


def claims_block(findings_path) -> str:
    """README's claims block from the published findings (templates/readme_claims.md.j2)."""
    record = json.loads(Path(findings_path).read_text(encoding="utf-8"))
    return render.render("readme_claims.md.j2", **record).strip()


def readme_claims(readme, findings_path) -> None:
    """Rewrite the block between BEGIN and END in ``readme`` (both lines must be there)."""
    text = Path(readme).read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    atomic_write_text(readme, f"{head}{BEGIN}\n{claims_block(findings_path)}\n{END}{tail}")


def problems(chosen: dict[str, list[tuple[str, str]]], config: str) -> list[str]:
    """Everything that stops a publish, named: a missing file, EP probes of the wrong
    corpora."""
    out = [f"{src} is missing (group {name}): build it first (snakemake --cores N {src})"
           for name, files in chosen.items() for src, _ in files if not Path(src).exists()]
    if "ep" in chosen and Path(paths.EP_BY_SEED).exists():
        want = set(yaml.safe_load(Path(config).read_text(encoding="utf-8"))
                   ["ep_stack"]["corpora"])
        with open(paths.EP_BY_SEED, newline="", encoding="utf-8") as fh:
            have = {row["corpus"] for row in csv.DictReader(fh)}
        if have != want:
            out.append(f"{paths.EP_BY_SEED} holds the EP probes of {sorted(have)}, not "
                       f"{config}'s {sorted(want)}: run snakemake --cores N {paths.EP_REPORT} "
                       "with the paper config first")
    if "claims" in chosen and Path(README).exists():
        text = Path(README).read_text(encoding="utf-8")
        if BEGIN not in text or END not in text or text.index(BEGIN) > text.index(END):
            out.append(f"{README} has no claims block to rewrite: put the lines {BEGIN} "
                       f"and {END}, in that order, where it goes")
        findings = {name: src for src, name in chosen["claims"]}.get(DOCS_FINDINGS)
        if findings and Path(findings).exists():
            try:  # the block renders before anything is copied (a missing finding named)
                claims_block(findings)
            except Exception as err:  # noqa: BLE001 - any failure stops the publish
                out.append(f"{findings}: README's claims block cannot be written from it "
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
                if about.get("step") != "fig_ep_fixed_point":
                    out.append(f"{src} (group ep_question) was drawn by step "
                               f"{about.get('step')}, not fig_ep_fixed_point: {redraw}")
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


def planned(targets: list[str], config: str) -> tuple[list[dict], str | None]:
    """What Snakemake would run to bring ``targets`` up to date, by a dry run from the
    working folder with ``config`` (beside config/config.yaml, always read first):
    ([{step, output, reason}], None), or ([], the dry run's error) when it fails."""
    cmd = [sys.executable, "-m", "snakemake", "--dry-run", "--nocolor", *targets]
    if Path(config) != Path(paths.DEFAULT_CONFIG):
        cmd += ["--configfile", config]  # after the targets: it takes every word after it
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as err:
        return [], f"{' '.join(cmd[2:])} could not run: {err}"
    if proc.returncode != 0:
        tail = "\n  ".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        return [], f"snakemake --dry-run failed (exit {proc.returncode}):\n  {tail}"
    jobs = []
    for m in _JOB.finditer(proc.stdout):
        fields = dict(re.findall(r"^\s+(\w+): (.*)$", m.group(2), re.M))
        jobs.append({"step": m.group(1),
                     "output": [f for f in fields.get("output", "").split(", ") if f],
                     "reason": fields.get("reason", "")})
    return jobs, None


def out_of_date(chosen: dict[str, list[tuple[str, str]]], config: str) -> list[str]:
    """The files to copy that Snakemake would rebuild (named with the job's step and
    reason), or the dry run's failure: what stops a publish after the files are there."""
    targets = sorted({src for files in chosen.values() for src, _ in files})
    jobs, error = planned(targets, config)
    if error:
        return [f"cannot tell whether the files are up to date: {error}"]
    if not jobs:
        return []
    steps: dict[str, int] = {}
    for job in jobs:
        steps[job["step"]] = steps.get(job["step"], 0) + 1
    out = [f"{src} is out of date (step {job['step']}: {job['reason']})"
           for src in targets for job in jobs if src in job["output"]]
    plan = ", ".join(f"{step} {n}" for step, n in steps.items())
    extra = "" if Path(config) == Path(paths.DEFAULT_CONFIG) else f" --configfile {config}"
    out.append(f"snakemake --dry-run plans {len(jobs)} job(s) ({plan}) for the files to "
               f"publish: rebuild them first: snakemake --cores N {' '.join(targets)}{extra}")
    return out


def claims_from_published(config: str | Path = paths.DEFAULT_CONFIG,
                          root: str | Path = ".") -> list[str]:
    """The claims group rendered again from the findings already in docs/ (their effects
    seed by seed) with today's code, where the claims' per-run results are not in the
    record: the page says so (claims_page.from_published); every interval of record must
    come back from the published effects. The figure stays as published (it draws the
    intervals of record, which come back unchanged). ``root``: the checkout whose git
    history the page reads. The files written, in docs/."""
    import pandas as pd

    from credit_assign.reporting import claims_page

    spec_path = yaml.safe_load(Path(config).read_text(encoding="utf-8"))["claims"]["file"]
    record = claims_page.from_published(DOCS / DOCS_FINDINGS, spec_path, root,
                                        paths.HISTORY)
    verdicts = pd.DataFrame(record["verdicts"]).drop(columns=["seeds", "diverged",
                                                              "unsettled"])
    texts = {"claims.md": claims_page.page(record),
             "claims.csv": verdicts.to_csv(index=False, float_format="%.6g"),
             "claims_by_seed.csv": pd.DataFrame(record["by_seed"]).to_csv(index=False),
             DOCS_FINDINGS: json.dumps(record, indent=1, ensure_ascii=False) + "\n"}
    for name, text in texts.items():
        atomic_write_text(DOCS / name, text)
    if Path(README).exists():
        readme_claims(README, DOCS / DOCS_FINDINGS)
    return sorted(texts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=["study", "ep", "ep_question", "claims"],
                        default=["study", "ep", "claims"],
                        help="the groups to publish (ep_question only when named: its runs "
                        "take sessions)")
    parser.add_argument("--dataset", default="cifar10")
    parser.add_argument("--config", default=paths.DEFAULT_CONFIG,
                        help="the config whose EP corpora docs/ holds")
    parser.add_argument("--claims-from-published", action="store_true",
                        help="render the claims group again from docs/claims_findings.json "
                             "(its per-seed effects) with today's code, where the claims' "
                             "runs are not in the record; the page says so")
    args = parser.parse_args(argv)
    if args.claims_from_published:
        written = claims_from_published(args.config)
        print(f"rendered {len(written)} files of the claims group again from "
              f"{DOCS / DOCS_FINDINGS} into {DOCS}/, and README's claims block")
        return 0
    chosen = {k: v for k, v in groups(args.dataset).items() if k in args.only}
    found = problems(chosen, args.config)
    if not found:  # the files are there: are they current and of this dataset?
        found = figure_problems(chosen, args.dataset, args.config) \
            + out_of_date(chosen, args.config)
    if found:
        print("publish: nothing copied.\n- " + "\n- ".join(found), file=sys.stderr)
        return 1
    for files in chosen.values():
        for src, name in files:
            shutil.copyfile(src, DOCS / name)
    if "claims" in chosen and Path(README).exists():
        readme_claims(README, DOCS / DOCS_FINDINGS)
    print(f"published {sum(map(len, chosen.values()))} files into {DOCS}/ "
          f"({', '.join(chosen)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
