"""The paper's words as a reader reads them, without TeX: paper/ms.tex's macros beside
numbers.tex's numbers (``\\freshnull`` …) expanded with its flags and macros, and a
verdict's words on the pages for a finding (``said``). A small
expander of the TeX those definitions use:
``\\newcommand`` with arguments, ``\\if<flag> … \\else … \\fi`` of numbers.tex's
``\\newif`` flags, groups; any other command is left as written (``\\texttt{x}``), the
line breaks and a command's following space as TeX reads them, an empty group after a
command dropped. TeX itself builds the paper in test_workflow and test_trust."""

from __future__ import annotations

import re
from pathlib import Path

from credit_assign.reporting import render

MS_TEX = Path(__file__).resolve().parents[1] / "paper" / "ms.tex"
TOKEN = re.compile(r"\\[A-Za-z]+|\\.|#\d|%[^\n]*(?:\n[ \t]*)?|[ \t]*\n[ \t]*|[ \t]+|.", re.S)


def tokens(text: str, source: bool = True) -> list[str]:
    """TeX's tokens, roughly: a comment and its line end vanish, a line end is a space,
    a space after a command word is skipped (in ms.tex's ``source``: a macro's value
    keeps it, to be printed as written), and so is an empty group after one."""
    out: list[str] = []
    for t in TOKEN.findall(text):
        if t.startswith("%"):
            continue
        if t.isspace():
            if source and out and re.fullmatch(r"\\[A-Za-z]+", out[-1]):
                continue
            t = " "
        out.append(t)
    # "\fi{}", "\goalGoal{}": the group only ends the command word
    kept: list[str] = []
    i = 0
    while i < len(out):
        if out[i] == "{" and i + 1 < len(out) and out[i + 1] == "}" and kept \
                and re.fullmatch(r"\\[A-Za-z]+", kept[-1]):
            i += 2
            continue
        kept.append(out[i])
        i += 1
    return kept


def group(toks: list[str], i: int) -> tuple[list[str], int]:
    """The argument at ``toks[i]``: a balanced group's inside, or one token."""
    while toks[i] == " ":
        i += 1
    if toks[i] != "{":
        return [toks[i]], i + 1
    depth, j = 0, i
    while True:
        depth += {"{": 1, "}": -1}.get(toks[j], 0)
        if depth == 0:
            return toks[i + 1:j], j + 1
        j += 1


def definitions(text: str) -> dict[str, tuple[int, list[str]]]:
    """ms.tex's ``\\newcommand{\\name}[n]{body}``: name → (n, body's tokens)."""
    toks, out, i = tokens(text), {}, 0
    while i < len(toks):
        if toks[i] == "\\newcommand":
            name, i = group(toks, i + 1)
            n = 0
            if toks[i] == "[":
                n, i = int(toks[i + 1]), i + 3
            body, i = group(toks, i)
            out[name[0][1:]] = (n, body)
        else:
            i += 1
    return out


def branches(toks: list[str], i: int, flags) -> tuple[list[str], list[str], int]:
    """After an ``\\if<flag>`` at ``toks[i - 1]``: its then and else tokens, and the
    index after its ``\\fi`` (nested conditionals are numbers.tex's flags)."""
    depth, parts, start, j = 0, [], i, i
    while True:
        t = toks[j]
        if t.startswith("\\if") and t[3:] in flags:
            depth += 1
        elif t == "\\else" and depth == 0:
            parts.append(toks[start:j])
            start = j + 1
        elif t == "\\fi":
            if depth == 0:
                parts.append(toks[start:j])
                return parts[0], parts[1] if len(parts) > 1 else [], j + 1
            depth -= 1
        j += 1


def expand(toks: list[str], macros: dict, flags: dict, defs: dict) -> list[str]:
    out, toks, i = [], list(toks), 0
    while i < len(toks):
        t = toks[i]
        name = t[1:]
        if t.startswith("\\if") and t[3:] in flags:
            yes, no, end = branches(toks, i + 1, flags)
            toks[i:end] = yes if flags[t[3:]] else no
            continue
        if name in macros:
            toks[i:i + 1] = tokens(macros[name], source=False)
            continue
        if name in defs:
            n, body = defs[name]
            args, j = [], i + 1
            for _ in range(n):
                arg, j = group(toks, j)
                args.append(arg)
            filled = [x for b in body for x in (args[int(b[1]) - 1] if re.fullmatch(
                r"#\d", b) else [b])]
            toks[i:j] = filled
            continue
        out.append(t)
        i += 1
    return out


def text(toks: list[str]) -> str:
    said = "".join(t + (" " if re.fullmatch(r"\\[A-Za-z]+", t) and k + 1 < len(toks)
                        and toks[k + 1][:1].isalpha() else "")
                   for k, t in enumerate(toks))
    return " ".join(said.split())


# the paper's flags a verdict's words may turn on besides its own (the paper config's)
PAPER_FLAGS = {"hasclaims": True}


def words(name: str, macros: dict, flags: dict) -> str:
    """ms.tex's ``\\<name>`` as read with numbers.tex's ``macros`` and ``flags`` (and the
    paper's PAPER_FLAGS where ``flags`` does not set them)."""
    defs = definitions(MS_TEX.read_text())
    return text(expand(["\\" + name], macros, {**PAPER_FLAGS, **flags}, defs))


def said(found: dict[str, dict]) -> dict[str, str]:
    """Verdict name (``<name>verdict``) → its words on the pages for these findings
    (analysis/verdicts/<name>.md.j2: the sentence of record, or the plain facts)."""
    words = render.environment().globals["verdict"]
    return {name: words(name.removesuffix("verdict"), f) for name, f in found.items()}
