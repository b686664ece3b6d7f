"""The dose study's section of the paper: its numbers from the findings as TeX, and a
sentence whose verdict the findings no longer hold stops the build at that sentence."""

import pytest
from conftest import needs_tex
from test_dose_judge import PLAN, _table

from credit_assign.reporting.tex_build import build_pdf, typed_numbers
from credit_assign.studies.dose import judge, tex

NORM_WORLD = {("default", "dfa", 0.0): 0.34, ("default", "dfa", 1e-4): 0.42,
              ("default", "dfa", 1e-2): 0.40, ("cap50", "dfa_cap", 0.0): 0.40,
              ("cap250", "dfa_cap", 0.0): 0.42, ("redraw1", "dfa_redraw", 1e-2): 0.40,
              ("redraw1", "dfa_redraw", 1e-4): 0.42, ("default", "frozen", 0.0): 0.37}


def _macros(world=NORM_WORLD):
    table = _table(world)
    table["h_L_norm"] = 10 ** table.log10_h_L_norm
    return tex.macros(judge.findings(PLAN, table), table)


def test_keys_are_never_typed_numbers_and_lambdas_read_as_tex():
    assert [tex.key(x) for x in (0, 1e-5, 1e-4, 0.03)] == ["0", "1em05", "0p0001", "0p03"]
    assert typed_numbers(r"at \dosev{lam_1em05}{acc} and \doseguard{cap_equals_penalty_1e2}"
                         r"{holds}") == []
    assert [tex.lam_tex(x) for x in (0, 1e-4, 3e-5, 0.1)] == [
        "0", "$10^{-4}$", r"$3\times10^{-5}$", "$10^{-1}$"]


def test_the_macros_hold_each_verdict_and_number_of_the_findings():
    text = _macros()
    assert r"\csname dose@cap_rescues@verdict\endcsname{holds}" in text
    assert r"\csname dose@redraw_over_frozen@verdict\endcsname{holds}" in text
    assert r"\csname dose@best@lam\endcsname{$10^{-4}$}" in text
    assert r"\csname dose@tables@dose\endcsname{judged}" in text
    assert r"\csname dose@lam_0p01@acc\endcsname{0.40" in text


def _doc(folder, sentence):
    (folder / "dose.tex").write_text(_macros())
    (folder / "doc.tex").write_text(
        "\\documentclass{article}\n\\input{dose.tex}\n\\begin{document}\n"
        "The cap rescues by \\dosev{cap_rescues}{mean}.\n"
        f"{sentence}\n\\end{{document}}\n")
    return folder / "doc.tex"


@needs_tex
def test_a_sentence_whose_verdict_flipped_stops_the_build_naming_its_line(tmp_path):
    build_pdf(_doc(tmp_path, r"It holds\doseguard{cap_rescues}{holds}."), tmp_path / "a.pdf")
    assert (tmp_path / "a.pdf").stat().st_size > 0
    with pytest.raises(RuntimeError, match=r"doc.tex line 5: guard: says cap_rescues "
                                           r"contradicted, findings say holds"):
        build_pdf(_doc(tmp_path, r"It fails\doseguard{cap_rescues}{contradicted}."),
                  tmp_path / "b.pdf")
    with pytest.raises(RuntimeError, match=r"doc.tex line 5: dose.tex holds no mean for "
                                           r"no_such_part"):
        build_pdf(_doc(tmp_path, r"\dosev{no_such_part}{mean}"), tmp_path / "c.pdf")
