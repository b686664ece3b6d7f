"""The printed size of every glyph in a PDF, read from the PDF itself (pdfminer.six).

A glyph's printed size is its font size times the scale of the matrix it is drawn with,
so a figure drawn at 12 in and shrunk into a 6.5-in column reports the size a reader
sees. The paper's figures are drawn by matplotlib in DejaVu Sans (figures/style.py) and
its text in TeX's fonts, so the font name tells a figure's text from the page's.

    python tests/pdf_fonts.py docs/paper.pdf     # per page: the figures' smallest text
"""

from __future__ import annotations

import math
import re
import sys
from collections import defaultdict

SCRIPT = 0.7  # matplotlib's mathtext (and TeX) set a sub- or superscript at 0.7 × its base


def glyph_sizes(pdf, scripts: bool = True) -> dict[int, list[tuple[str, float]]]:
    """Page number (1-based) → (font name, printed size in pt) of each glyph on it;
    without ``scripts``, a glyph that is a sub- or superscript of a neighbour (SCRIPT ×
    its size, within an em of it) is left out: the text's size is its base's."""
    import pdfminer.converter
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTChar, LTContainer

    class Char(LTChar):  # LTChar keeps the bounding box, not the font size: keep it
        def __init__(self, matrix, font, fontsize, *args, **kwargs):
            super().__init__(matrix, font, fontsize, *args, **kwargs)
            a, b, c, d, _, _ = matrix
            self.printed_pt = fontsize * math.sqrt(abs(a * d - b * c))

    def chars(item):
        if isinstance(item, LTChar):
            yield item
        elif isinstance(item, LTContainer):
            for child in item:
                yield from chars(child)

    def is_script(g, glyphs) -> bool:
        for h in glyphs:
            if h is g or abs(h.printed_pt * SCRIPT - g.printed_pt) > 0.03 * g.printed_pt:
                continue
            em = h.printed_pt
            if (g.x0 < h.x1 + em and h.x0 < g.x1 + em
                    and g.y0 < h.y1 + em and h.y0 < g.y1 + em):
                return True
        return False

    original = pdfminer.converter.LTChar
    pdfminer.converter.LTChar = Char
    try:
        out = {}
        for i, page in enumerate(extract_pages(str(pdf)), 1):
            glyphs = list(chars(page))
            out[i] = [(g.fontname.split("+")[-1], g.printed_pt) for g in glyphs
                      if scripts or not is_script(g, glyphs)]
        return out
    finally:
        pdfminer.converter.LTChar = original


def figure_text_pt(pdf, figure_font: str = "DejaVu") -> dict[int, float]:
    """Page → the smallest printed size of the figures' text on it (pages with a
    figure), a sub- or superscript counted at its base's size."""
    out: dict[int, float] = defaultdict(lambda: math.inf)
    for page, glyphs in glyph_sizes(pdf, scripts=False).items():
        for font, size in glyphs:
            if figure_font in font:
                out[page] = min(out[page], size)
    return dict(out)


def figure_numbers(pdf) -> dict[int, list[str]]:
    """Page → the figure numbers whose captions are on it ("Figure 3:")."""
    from pdfminer.high_level import extract_text

    return {i: re.findall(r"Figure (\d+):", extract_text(str(pdf), page_numbers=[i - 1]))
            for i in figure_text_pt(pdf)}


if __name__ == "__main__":
    pdf = sys.argv[1]
    numbers = figure_numbers(pdf)
    for page, pt in sorted(figure_text_pt(pdf).items()):
        print(f"page {page:>2}  figure(s) {', '.join(numbers[page]) or '?':<6}  "
              f"smallest text {pt:.1f} pt")
