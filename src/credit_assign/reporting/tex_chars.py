"""How each character of a string from a config, a path or a result is set in TeX
(``tex_escape``), so that it prints as written and TeX reads it as text, never as markup;
the pages' ``tex`` filter (render.environment) and the paper's macros use it."""

from __future__ import annotations

# How each character is set: it prints as written (checked with pdftotext) and TeX reads
# it as text, never as markup: no brace, backslash or ^ survives (^^5c is TeX's notation
# for a backslash), no ligature forms (-- ,, !` ''), and the characters OT1 text fonts
# lack come from the typewriter font by code. Outside printable ASCII: the few symbols
# our own labels use, a Latin letter with an accent (é, ü, ç: TeX's accent command on the
# letter) and a Greek letter (µ, the micro sign, too) in math; any other character the
# fonts cannot set (CJK, an emoji, ...) is written by its Unicode name in brackets
# ([CJK UNIFIED IDEOGRAPH-4E2D], [GRINNING FACE]), never as a "?" that hides it.
_TT_CHARS = set('\\{}^~_"<>|')
_SYMBOLS = {"λ": "$\\lambda$", "‖": "$\\|$", "±": "$\\pm$", "Σ": "$\\Sigma$", "—": "---",
            "–": "--", "…": "\\dots{}", "≤": "$\\le$", "≥": "$\\ge$", "−": "$-$",
            "×": "$\\times$"}


# a letter with an accent (NFD: the letter, then a combining mark) as TeX's \accent on
# the letter, by the accent's slot in the OT1 text fonts (no ^, ~ or " is written), so
# that a name like 'données' prints as written; the cedilla is the \c macro
_ACCENTS = {"\u0301": 19, "\u0300": 18, "\u0302": 94, "\u0308": 127, "\u0303": 126,
            "\u030a": 23, "\u030c": 20, "\u0304": 22, "\u0306": 21}


def _accented(c: str) -> str | None:
    import unicodedata

    parts = unicodedata.normalize("NFD", c)
    if len(parts) != 2 or not (parts[0].isascii() and parts[0].isalpha()):
        return None
    if parts[1] == "\u0327":
        return f"\\c{{{parts[0]}}}"
    return f"{{\\accent{_ACCENTS[parts[1]]} {parts[0]}}}" if parts[1] in _ACCENTS else None


# a Greek letter, by the last word of its Unicode name, as TeX's math command (the
# capitals TeX has its own command for; the others are the Latin capital's shape)
_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
          "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon",
          "phi", "chi", "psi", "omega"}
_GREEK_CAPITALS = {"gamma", "delta", "theta", "lambda", "xi", "pi", "sigma", "upsilon",
                   "phi", "psi", "omega"}


def _by_name(c: str) -> str:
    """A character outside what the fonts set: a Greek letter in math, else its Unicode
    name (or code point) in brackets, in ASCII."""
    import unicodedata

    name = unicodedata.name(c, "")
    if name == "MICRO SIGN":
        return "$\\mu$"
    words = name.split()
    if len(words) == 4 and words[0] == "GREEK" and words[2] == "LETTER":
        letter = words[3].lower().replace("lamda", "lambda")
        if letter in _GREEK and words[1] == "SMALL":
            return f"$\\{letter}$"
        if letter in _GREEK_CAPITALS and words[1] == "CAPITAL":
            return f"$\\{letter.capitalize()}$"
    return "".join(_tex_char(ch) for ch in f"[{name or f'U+{ord(c):04X}'}]")


def _tex_char(c: str) -> str:
    if c.isascii() and (c.isalnum() or c == " "):
        return c
    if c in _TT_CHARS:
        return f"{{\\ttfamily\\char{ord(c)}}}"
    # the straight quote and the backquote from the typewriter font's own slots (OT1
    # cmtt: 13 and 18), not textcomp's \textquotesingle (a TS1 font: without cm-super it
    # is a bitmap, and microtype's font expansion stops the build on it)
    if c == "'":
        return "{\\ttfamily\\char13}"
    if c == "`":
        return "{\\ttfamily\\char18}"
    if c in "$&#%":
        return "\\" + c
    if c.isascii() and c.isprintable():
        return c + "{}"  # punctuation: the empty group stops a ligature with the next one
    if c in _SYMBOLS:
        return _SYMBOLS[c]
    if accented := _accented(c):
        return accented
    return " " if c.isspace() else _by_name(c)


def tex_escape(text: str) -> str:
    """Any string as TeX that prints it as written and cannot run as TeX (see above)."""
    return "".join(_tex_char(c) for c in str(text))
