"""The printed-size measurement the paper test relies on (tests/pdf_fonts.py)."""

import pytest
from pdf_fonts import figure_text_pt, glyph_sizes


def _pdf(tmp_path, texts):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context({"pdf.fonttype": 42, "font.family": "DejaVu Sans"}):
        fig = plt.figure(figsize=(3, 1.5))
        for i, (text, size) in enumerate(texts):
            fig.text(0.05, 0.1 + 0.3 * i, text, fontsize=size)
        fig.savefig(tmp_path / "f.pdf")
        plt.close(fig)
    return tmp_path / "f.pdf"


@pytest.mark.figure
def test_a_glyphs_printed_size_is_read_and_a_script_counts_at_its_base(tmp_path):
    pdf = _pdf(tmp_path, [(r"median $\|h_L\|$ and $10^{-4}$", 7)])
    sizes = {round(s, 2) for _, s in glyph_sizes(pdf)[1]}
    assert sizes == {7.0, 4.9}  # the subscript L and the exponent: 0.7 × 7
    assert figure_text_pt(pdf) == {1: pytest.approx(7.0)}


@pytest.mark.figure
def test_small_text_is_found_beside_large_text(tmp_path):
    pdf = _pdf(tmp_path, [("tick 5", 5), (r"label $x_1$", 9)])
    assert figure_text_pt(pdf) == {1: pytest.approx(5.0)}
