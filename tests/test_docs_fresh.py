"""Published = rendered (issue #42): what docs/ holds is what today's code renders from
the record: a template, a finding or a rule changed without republishing fails here,
naming each file that differs."""

import json
import re
from pathlib import Path

import pytest

from credit_assign import publish

ROOT = Path(__file__).resolve().parents[1]


# ---- the EP question (config/claims_ep.yaml): judged again from the record's results
EP_DOCS = {name: src for src, name in publish.groups("cifar10")["ep_question"]}


def _render_ep_question(tmp_path: Path) -> list[str]:
    """The EP question's text files judged and rendered again into tmp_path from the
    record's fixed-point results with today's code; the docs/ files that differ."""
    from types import SimpleNamespace

    import yaml

    from credit_assign.infra import paths
    from credit_assign.planning import targets
    from credit_assign.studies.ep_question.page import write_question

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    ep = {"claims": {"ep": str(ROOT / config["claims"]["ep"])}}
    runs = targets.ep_question_runs(ep)
    timings = targets.ep_question_runs(ep, paths.EP_FIXED_POINT_TIMINGS)
    out = SimpleNamespace(**{key: tmp_path / name for key, name in
                             [("page", "ep_question.md"),
                              ("findings", "findings.json"),
                              ("batches", "ep_question_batches.csv"),
                              ("cosines", "ep_question_cosines.csv")]})
    write_question([ROOT / r for r in runs], [ROOT / t for t in timings],
                   ROOT / config["claims"]["ep"], out, root=ROOT)
    from credit_assign.studies.ep_question2.page import _demote

    # the first question's tables as they are; its page inside the page of both questions
    differ = [f"docs/{n}" for n in ("ep_question_batches.csv", "ep_question_cosines.csv")
              if (tmp_path / n).read_bytes() != (ROOT / "docs" / n).read_bytes()]
    if _demote((tmp_path / "ep_question.md").read_text(encoding="utf-8")) not in (
            ROOT / "docs" / "ep_question.md").read_text(encoding="utf-8"):
        differ.append("docs/ep_question.md (the first question's section)")
    made = json.loads((tmp_path / "findings.json").read_text(encoding="utf-8"))
    section = publish.findings_file.section("ep_question", ROOT / "docs" / publish.FINDINGS)
    # the section adds the precision study's and the second question's facts
    if made != {k: v for k, v in section.items() if k not in ("precision", "question2")}:
        differ.append(f"docs/{publish.FINDINGS} (its section ep_question)")
    return differ


def test_the_published_ep_question_is_what_todays_code_judges_from_the_record(tmp_path):
    from credit_assign.analysis import history

    if not (ROOT / "docs" / "ep_question.md").exists():
        pytest.skip("the EP question is not published yet (its runs are not all in the record)")
    if history.first_commit(ROOT, "config/claims_ep.yaml") is None:
        pytest.skip("not a git checkout with history (a shallow clone, an sdist)")
    differ = _render_ep_question(tmp_path)
    assert not differ, ("these published files are not what today's code makes from the "
                        "record's fixed-point results; republish them (snakemake --cores 2 "
                        f"ep_question, then make publish PUBLISH='--only ep_question'): "
                        f"{', '.join(differ)}")


# ---- every published group: docs/published.json against the checkout (make publish
# writes it; credit_assign.publish.stale names what changed since)
def _stamped() -> dict:
    import json

    path = ROOT / "docs" / publish.STAMP
    if not path.exists():
        pytest.skip("nothing published with a stamp yet")
    if not (ROOT / "scripts").is_dir():
        pytest.skip("not a checkout (no scripts/): the report code cannot be read")
    return json.loads(path.read_text(encoding="utf-8"))["groups"]


def test_every_published_group_is_what_todays_code_makes_from_the_record(monkeypatch):
    monkeypatch.chdir(ROOT)
    problems = {name: publish.stale(name, stamped) for name, stamped in _stamped().items()}
    problems = {name: found for name, found in problems.items() if found}
    assert not problems, (
        "docs/ is not what today's code makes from the record; rebuild and republish "
        "(make paper-from-record, then make publish PUBLISH='--only <group>'):\n"
        + "\n".join(
            f"- group {name}: " + "; ".join(found) for name, found in problems.items()))


def _fake_docs(tmp_path: Path, monkeypatch) -> dict[str, list[tuple[str, str]]]:
    """The EP group's names in a docs/ of tmp_path, published from the checkout's record."""
    docs = tmp_path / "docs"
    docs.mkdir()
    chosen = {"ep": publish.groups("cifar10")["ep"]}
    for _, name in chosen["ep"]:
        (docs / name).write_text(f"{name}\n")
    monkeypatch.chdir(ROOT)
    publish.write_stamp(chosen, publish.paths.DEFAULT_CONFIG, docs=docs)
    return chosen


def test_a_stamped_group_names_a_hand_edit_a_template_edit_and_a_changed_result(
        tmp_path, monkeypatch):
    import json

    _fake_docs(tmp_path, monkeypatch)
    docs = tmp_path / "docs"
    stamped = json.loads((docs / publish.STAMP).read_text())["groups"]["ep"]
    assert publish.stale("ep", stamped, docs=docs) == []
    (docs / "ep_stack.md").write_text("edited\n")
    assert publish.stale("ep", stamped, docs=docs) == [
        f"{docs / 'ep_stack.md'} is not the file make publish copied (edited by hand?)"]
    (docs / "ep_stack.md").write_text("ep_stack.md\n")

    from credit_assign.planning import code

    real = code.report_digest
    monkeypatch.setattr(code, "report_digest",
                        lambda step: "0" * 64 if step == "ep_stack_summary" else real(step))
    assert publish.stale("ep", stamped, docs=docs) == [
        "report code of 1 step changed since the publish: ep_stack_summary"]
    monkeypatch.setattr(code, "report_digest", real)

    # a template the group renders with, edited: named by its file, then the steps that
    # render with it; another study's template stales nothing here
    original = code.file_digest

    def edited(template: str) -> list[str]:
        monkeypatch.setattr(code, "file_digest",
                            lambda rel: "0" * 64 if rel == template else original(rel))
        code.report_digest.cache_clear()
        try:
            return publish.stale("ep", stamped, docs=docs)
        finally:
            monkeypatch.setattr(code, "file_digest", original)
            code.report_digest.cache_clear()

    template = "studies/ep_probe/ep_stack.md.j2"
    found = edited(template)
    assert found[0] == f"report code src/credit_assign/{template} changed since the publish"
    assert len(found) == 2 and found[1].startswith("report code of ")
    assert "ep_stack_summary" in found[1]
    assert edited("studies/claims/claims.md.j2") == []
    assert edited("studies/primer/fig_primer_check.py") == []

    changed = json.loads(json.dumps(stamped))
    path = next(iter(changed["record"]))
    changed["record"][path] = "f" * 64
    assert publish.stale("ep", changed, docs=docs) == [
        f"record's result {path} changed since the publish"]


def test_the_report_digest_follows_a_templates_bytes(tmp_path, monkeypatch):
    """A template is part of the code param of each report step that renders with it:
    Snakemake rebuilds those pages after a template edit, so a publish never copies a
    page the old words made."""
    from credit_assign.planning import code

    assert "studies/claims/claims.md.j2" in code.report_files("claims_tables")
    before = code.report_digest("claims_tables")
    original = code.file_digest
    monkeypatch.setattr(code, "file_digest", lambda rel: "0" * 64
                        if rel == "studies/claims/claims.md.j2" else original(rel))
    code.report_digest.cache_clear()
    try:
        assert code.report_digest("claims_tables") != before
    finally:
        monkeypatch.undo()
        code.report_digest.cache_clear()
    assert code.report_digest("claims_tables") == before


def test_a_template_is_part_of_the_code_of_the_steps_that_name_it_only():
    """A data file of the report side joins a step's code where the step's modules (or
    a template they read) name it: another study's words are no part of it, and every
    data file is read by some step (the README blocks' by publish, a figure's caption by
    snakemake --report)."""
    from credit_assign.planning import code

    claims_page = "studies/claims/claims.md.j2"
    for step in ("dose_tables", "fig_dose", "ep_question", "fig_primer_phases", "aggregate"):
        assert claims_page not in code.report_files(step), step
    assert "studies/ep_question/ep_question.md.j2" not in code.report_files("claims_tables")
    assert "studies/ep_question/ep_question.md.j2" in code.report_files("ep_question")
    assert "reporting/templates/markdown.j2" in code.report_files("claims_tables")  # imported
    assert "analysis/verdicts/goal.md.j2" in code.report_files("reproduction_notes")
    assert "effects/log_ratio.md.j2" in code.report_files("claims_tables")  # a plugin's
    read = {f for step in code.report_steps() for f in code.report_files(step)}
    unread = sorted(set(code._template_files()) - read)
    # the README blocks are publish's; a figure's caption (fig_<name>.rst) is the report's
    assert all(f.startswith("reporting/templates/readme_")
               or re.fullmatch(r"studies/\w+/fig\w+\.rst", f) for f in unread), unread


def test_a_verdicts_module_is_part_of_the_code_of_the_steps_that_judge_it():
    """analysis/verdicts/ finds its modules at run time: each is part of the code of the
    steps that import the registry, so editing one reruns them and stales docs/."""
    from credit_assign.planning import code

    for step in ("findings", "paper_numbers", "reproduction_notes"):
        files = code.report_files(step)
        assert {"analysis/verdicts/headline.py", "analysis/verdicts/goal.py"} <= set(files), step


def test_a_figures_words_are_part_of_its_code_only():
    """A figure's words (the YAML file beside its module) are read at run time: editing
    them changes the code param of the step that draws it, so Snakemake redraws it, and
    of no other step (issue #58: a change touches only what it changes)."""
    from credit_assign.planning import code

    words = {step: {f for f in code.report_files(step) if f.startswith("studies/")
                    and f.endswith(".yaml")} for step in code.report_steps()}
    assert words["fig_ep_fixed_point"] == {"studies/ep_question/fig_ep_fixed_point.yaml"}
    assert words["fig_claims"] == {"studies/claims/fig_claims.yaml"}
    # gap_key and gap_measured draw with gap_map's shared words, and their own
    assert words["variants_gap_map"] == {"studies/variants/gap_map.yaml",
                                         "studies/variants/gap_key.yaml"}
    readers = {}
    for step, found in words.items():
        for f in found:
            readers.setdefault(f, set()).add(step)
    assert {f: s for f, s in readers.items() if len(s) > 1} == {
        "studies/variants/gap_map.yaml": {"variants_gap_map", "variants_measured_map"}}
    assert "schemas/result.schema.yaml" in code.report_files("aggregate")


# ---- the published paper's figures, as printed (issue #42: "174 words under 4 pt")
def test_the_published_papers_figures_are_printed_at_7_pt():
    """Every figure in docs/paper.pdf reads at its printed size: the smallest text of
    the figures' font on each page, measured in the PDF (a glyph's size times its drawing
    scale, a sub- or superscript at its base's), is at least 6.5 pt (drawn at 7 pt; a
    tight bounding box may widen a figure a little past the text width)."""
    from pdf_fonts import figure_text_pt

    pdf = ROOT / "docs" / "paper.pdf"
    if not pdf.exists():
        pytest.skip("no published paper")
    printed = figure_text_pt(pdf)
    assert len(printed) >= 4, printed  # fig4, the primer, the EP stack, the variants
    small = {page: round(pt, 2) for page, pt in printed.items() if pt < 6.5}
    assert not small, (f"docs/paper.pdf prints figure text below 6.5 pt (page: smallest "
                       f"pt): {small}; republish the paper (make manuscript publish)")


def test_each_group_is_stamped_from_what_it_reads_only():
    """Issue #58, 2: a group is stale only when something it reads changed. The paper's
    figure of the primer check and the paper's TeX source are the study group's alone
    (the paper); a study's plan is in its own group's stamp and no other's."""
    stamped = _stamped()
    def holding(key):
        return sorted(g for g, s in stamped.items() if key in s["code"])

    assert holding("src/credit_assign/studies/primer/fig_primer_check.py") == ["study"]
    assert holding("paper/ms.tex") == ["study"]
    # the dose study's plan: its own group's, and the paper's (its section reads it)
    assert holding("config/claims_dose.yaml") == sorted(
        {"study"} | ({"dose"} if "dose" in stamped else set()))
    assert holding("config/claims_ep.yaml") == ["ep_question", "study"]
    for name, s in stamped.items():  # every report step's code in a stamp is one it ran
        steps = {k.removeprefix("step ") for k in s["code"] if k.startswith("step ")}
        assert steps <= {publish._rule_script(step) for step in s["scope"]["steps"]}, name
