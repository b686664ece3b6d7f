"""Properties of the committed files themselves."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# a home, work or scratch folder of the machine that wrote a file
MACHINE_PATH = re.compile(r"(?:^|[^\w.])/(?:work|home|Users|root|scratch)/\w")


@pytest.mark.process
def test_no_committed_file_names_a_path_of_the_machine_that_made_it():
    """Results and docs name a data source by file name and checksum, never by where it
    lay on the machine that ran the pipeline."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    hits = []
    for name in files:
        path = ROOT / name
        if name.startswith("tests/") or not path.is_file() or path.stat().st_size > 5_000_000:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        hits += [f"{name}:{i}" for i, line in enumerate(text.splitlines(), 1)
                 if MACHINE_PATH.search(line)]
    assert hits == [], f"machine paths in committed files: {hits}"


def test_hand_written_pages_type_no_measured_number():
    """README and docs/performance.md point to generated pages for every measurement
    (docs: numbers come from generated files, never typed)."""
    from credit_assign import publish

    for name in ("README.md", "docs/performance.md"):
        text = (ROOT / name).read_text()
        for begin, end, *_ in publish.BLOCKS.values():  # README's blocks: generated
            if begin in text:                             # (the test below)
                head, rest = text.split(begin, 1)
                text = head + rest.split(end, 1)[1]
        found = re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])|\d+\s?%", text)
        assert found == [], f"{name} types {found}"


@pytest.mark.parametrize("group", ["claims", "ep_question"])
def test_readmes_blocks_are_the_published_findings_rendered(group):
    """README's claims block is what `make publish` renders from docs/findings.json's
    claims section and its EP question block what it renders from its ep_question (no
    number in either typed, none stale); before the EP question is published its block
    holds words only (how to run it)."""
    from credit_assign import publish

    begin, end, _ = publish.BLOCKS[group]
    text = (ROOT / "README.md").read_text()
    assert begin in text and end in text
    block = text.split(begin, 1)[1].split(end, 1)[0].strip()
    findings = publish.findings_file.section(group, ROOT / publish.findings_file.FILE)
    if findings is None:
        assert group == "ep_question" and not re.findall(r"\d+\.\d+|\d+\s?%", block)
        return
    assert block == publish.block(group, findings)


def test_resources_are_stated_once_in_the_rules_and_the_profiles_only_add_a_clusters():
    """Each rule states its threads, memory and minutes (workflow/rules/*.smk); a profile
    sets none of them (it would contradict the rule), only what a cluster adds."""
    import yaml

    cluster = {"slurm_partition", "slurm_account", "gpu", "gpu_model", "gres", "constraint",
               "qos", "slurm_extra"}
    for profile in sorted((ROOT / "profiles").glob("*/profile.yaml")):
        cfg = yaml.safe_load(profile.read_text())
        assert "set-threads" not in cfg, profile
        for rule, res in (cfg.get("set-resources") or {}).items():
            assert set(res) <= cluster, f"{profile}: {rule} sets {sorted(set(res) - cluster)}"
    checked = 0
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=rule )", "\n" + smk.read_text())[1:]:
            name = block.split(":")[0].removeprefix("rule ")
            if "output:" not in block:
                continue  # a target rule (all, variants, claims): no job of its own
            checked += 1
            # a report step's job: REPORT_JOB (common.smk), written once
            keys = ("threads:", "**REPORT_JOB") if "**REPORT_JOB" in block else (
                "threads:", "mem_mb=", "runtime=")
            for key in keys:
                assert key in block, f"{smk.name}: rule {name} does not state {key}"
    assert checked >= 30  # every rule with a job, the first of each file too


def _english_literals(path: Path, words: int = 6) -> list[str]:
    """String literals of ``words`` or more words in a module, leaving out docstrings, an
    error's message (inside a raise, or an exception's or a warning's constructor) and a
    command line's help."""
    import ast

    tree = ast.parse(path.read_text())
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) \
                and isinstance(node.body[0].value, ast.Constant):
            skip.add(id(node.body[0].value))
        called = getattr(getattr(node, "func", None), "id", None) or \
            getattr(getattr(node, "func", None), "attr", "")
        if isinstance(node, ast.Raise) or (isinstance(node, ast.Call) and (
                str(called).endswith(("Error", "Exception", "Warning", "warn"))
                or called in ("add_argument", "ArgumentParser"))):
            skip |= {id(sub) for sub in ast.walk(node)}
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in skip and len(n.value.split()) >= words]


# modules that write no page or figure: their strings are a tool's messages (a table's,
# a stale check's, publish's and the TeX build's errors and reports)
TOOLS = {"analysis/tables.py", "analysis/table_contracts.py", "analysis/stale.py",
         "reporting/tex_build.py"}  # publish: credit_assign/publish.py, not scanned


def test_no_python_module_writes_an_english_sentence():
    """Findings are data, words are templates: outside the label table (labels.py) and the
    figures' YAML words, the Python of the analysis (the findings), the pages
    and the figures holds no string of six or more words but docstrings, error messages
    and a command line's help. A page's sentence lives in a template (reporting/templates/,
    or beside its study's page), a figure's in the YAML file beside its module. The study
    rooms whose pages were written as prose by a person for the outcome the data show, each
    sentence guarded by its finding (issue #59: dose, ep_estimator, ep_question2), are
    left out."""
    package = ROOT / "src" / "credit_assign"
    prose = ("dose", "ep_estimator", "ep_question2")
    found = {str(p.relative_to(package)): _english_literals(p)
             for part in ("analysis", "reporting", "figures", "studies")
             for p in sorted((package / part).rglob("*.py"))
             if p.name != "labels.py" and str(p.relative_to(package)) not in TOOLS
             and not (part == "studies" and p.relative_to(package).parts[1] in prose)}
    assert len(found) > 30  # every module that finds or writes something a reader reads
    assert {k: v for k, v in found.items() if v} == {}


def test_config_readmes_table_cells_are_short():
    """config/README.md's hand-written table rows stay short: a meaning that needs more
    than a sentence or two links to its note under "Notes on keys" (issue #46). The
    rule-options rows are generated from the rules' modules and left out here."""
    from credit_assign.science.learning_rules import options_table

    text = (ROOT / "config/README.md").read_text()
    generated = options_table()
    assert generated in text, "rerun `python -m credit_assign.science.learning_rules --write`"
    long = []
    for line in text.replace(generated, "").splitlines():
        if not line.startswith("|") or re.fullmatch(r"\|[-:| ]+\|", line.strip()):
            continue  # not a row, or a header's separator
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        long += [f"{cells[0]} (column {i + 1}: {len(cell)} characters)"
                 for i, cell in enumerate(cells) if len(cell) > 300]
    assert long == [], f"config/README.md: cells over 300 characters: {long}"


# a backticked span that names a file or folder of the repository (docs/adding.md)
_REPO_SUFFIXES = (".py", ".yaml", ".smk", ".md", ".rst", ".j2")


def test_every_path_docs_adding_names_exists():
    """docs/adding.md says where a change goes: every file or folder it names in
    backticks (a span with a `/` or a file suffix, outside the fenced blocks; a `<`
    placeholder or a `*` glob left out) is in the repository, and every test it names
    as `file::test` is defined in that file."""
    text = re.sub(r"^```.*?^```", "", (ROOT / "docs" / "adding.md").read_text(),
                  flags=re.M | re.S)
    named, missing = [], []
    for span in re.findall(r"`([^`\s]+)`", text):
        path, _, test = span.partition("::")
        if "<" in path or "*" in path or not ("/" in path or path.endswith(_REPO_SUFFIXES)):
            continue
        named.append(span)
        file = ROOT / path
        if not file.exists():
            missing.append(span)
        elif test and not re.search(rf"^def {re.escape(test)}\(", file.read_text(), re.M):
            missing.append(span)
    assert len(named) > 40  # the check reads the page's paths
    assert missing == [], f"docs/adding.md names what the repository lacks: {missing}"


def _sentences(markdown: str) -> list[str]:
    """A Markdown page's prose sentences: code blocks, comments and link targets out."""
    text = re.sub(r"```.*?```", "\n\n", markdown, flags=re.S)
    text = re.sub(r"<!--.*?-->", "\n\n", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    # paragraphs, headings and list items apart, each one line
    parts = re.split(r"\n\s*\n|\n(?=\s*- )|\n(?=#)|(?<=\n)(?=#)", text)
    out = []
    for part in parts:
        part = " ".join(part.split())
        out += [s for s in re.split(r"(?<=[.?!:])\s+(?=[A-Z*(\[`])", part) if s.strip()]
    return out


def test_readme_is_a_front_door_a_person_reads():
    """README: at most 150 lines, none over 120 characters, no sentence over 40 words
    (its generated blocks included: make publish wraps them and writes them short)."""
    text = (ROOT / "README.md").read_text()
    lines = text.splitlines()
    assert len(lines) <= 150
    assert [line for line in lines if len(line) > 120] == []
    long = [s for s in _sentences(text) if len(s.split()) > 40]
    assert long == [], long


def test_every_guarded_sentence_of_the_paper_matches_the_published_findings():
    """Each outcome ms.tex's prose asserts (``\\claimguard{claim}{verdict}``,
    ``\\doseguard{part}{verdict}``, ``\\findingguard{name}{outcome}`` or
    ``{name/field}{word}``, ``\\eptwoguard{finding}{outcome}``) is the one
    the published findings hold, and every value it quotes (``\\fv{name}{field}``) is
    one they have (TeX stops the build on a mismatch: test_dose_tex; this says it
    without TeX, naming the line)."""
    import json

    import yaml

    claims = json.loads((ROOT / "docs" / "findings.json").read_text())["claims"]
    verdicts = {("claim", v["claim"]): v["verdict"] for v in claims["claim_verdicts"]
                if v["verdict_set"]}
    verdicts |= {("claim", f"{v['claim']}/{v['part']}"): v["verdict"]
                 for v in claims["verdicts"] if v["verdict_set"] and v["part"]}
    dose = json.loads((ROOT / "docs" / "dose_findings.json").read_text())
    verdicts |= {("dose", v["id"]): v["verdict"] for v in dose["verdicts"]}
    from credit_assign.reporting import paper

    published = json.loads((ROOT / "docs" / "findings.json").read_text())
    study = yaml.safe_load((ROOT / "config" / "variants.yaml").read_text()).get("study")
    found = paper.paper_findings({"study": study}, published["study"]["verdicts"], claims)
    tex = paper.findings_tex(found, "test", {"ep_question": published["ep_question"]})
    verdicts |= {("finding", k): v for k, v in
                 re.findall(r"csname finding:([^\\]+)\\endcsname\{([^}]*)\}", tex)}
    values = set(re.findall(r"csname value:([^\\]+)\\endcsname", tex))
    ep = published["ep_question"]  # EP's two questions: ep2.tex writes _ as -
    verdicts |= {("eptwo", k): v.replace("_", "-") for section in ("precision", "question2")
                 for k, v in ep[section]["outcomes"].items()}
    wrong, seen, quoted = [], 0, 0
    for n, line in enumerate((ROOT / "paper" / "ms.tex").read_text().splitlines(), 1):
        code = line.split("%")[0] if not line.lstrip().startswith("%") else ""
        for kind, part, says in re.findall(
                r"\\(claim|dose|finding|eptwo)guard\{([\w/]+)\}\{([\w-]+)\}", code):
            seen += 1
            if verdicts.get((kind, part)) != says:
                wrong.append(f"ms.tex line {n}: says {part} {says}, the findings say "
                             f"{verdicts.get((kind, part))}")
        for name, field in re.findall(r"\\fv\{([\w/]+)\}\{([\w/]+)\}", code):
            quoted += 1
            if f"{name}/{field}" not in values:
                wrong.append(f"ms.tex line {n}: quotes {field} of {name}, the findings "
                             f"have none")
    assert seen >= 20 and quoted >= 30 and wrong == [], wrong
    assert "\\statement{" not in (ROOT / "paper" / "ms.tex").read_text()


def test_the_abstract_is_short_and_states_the_findings():
    """The published paper's abstract: at most 200 words, no sentence over 40, and it
    states the EP question's answer and the dose study's."""
    import shutil

    if shutil.which("pdftotext") is None:
        pytest.skip("no pdftotext (poppler) here")
    text = subprocess.run(["pdftotext", "-l", "1", str(ROOT / "docs" / "paper.pdf"), "-"],
                          capture_output=True, text=True, check=True).stdout
    abstract = " ".join(text.split("Abstract", 1)[1].split("\n\n")[0].split())
    assert len(abstract.split()) <= 200, len(abstract.split())
    long = [s for s in re.split(r"(?<=[.:])\s+(?=[A-Z0-9])", abstract)
            if len(s.split()) > 40]
    assert long == [], long
    assert "equilibrium propagation" in abstract and "feedback redrawn" in abstract


def test_a_study_rooms_template_and_the_shared_templates_never_share_a_name():
    """reporting.render finds a page's template by its name in templates/ or beside its
    study's page (studies/<study>/): a name taken twice would render the wrong words."""
    from credit_assign.reporting import render

    found: dict[str, list[str]] = {}
    for folder in (render.TEMPLATES, *render.STUDY_FOLDERS):
        for p in folder.glob("*.j2"):
            found.setdefault(p.name, []).append(str(p.relative_to(ROOT)))
    assert render.STUDY_FOLDERS, "no study room holds its page's template"
    assert not {n: f for n, f in found.items() if len(f) > 1}
