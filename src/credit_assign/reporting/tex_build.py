"""The paper's build: ms.tex with numbers.tex and the figures → ms.pdf (latexmk and
pdflatex, hardened), the arXiv bundle, and the check that ms.tex types no result.
Split from credit_assign.reporting.paper, which writes numbers.tex."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

from credit_assign.infra.files import atomic_open

TEX_ENGINES = ("latexmk", "pdflatex")
TEX_HELP = ("the paper needs latexmk and pdflatex. Install them: Debian/Ubuntu "
            "`apt-get install texlive-latex-base texlive-latex-recommended "
            "texlive-fonts-recommended latexmk`; Fedora `dnf install texlive-scheme-medium "
            "latexmk`; macOS `brew install --cask mactex-no-gui`; conda "
            "`conda install -c conda-forge texlive-core latexmk`. Nothing else in the "
            "pipeline needs TeX.")


# ---- the build -----------------------------------------------------------------------
def missing_tex() -> str | None:
    """What is missing to build the paper, with what to install; None if nothing is."""
    missing = [t for t in TEX_ENGINES if shutil.which(t) is None]
    return f"{' and '.join(missing)} not found: {TEX_HELP}" if missing else None


def check_tex() -> None:
    """Fail at once, naming what to install, when no TeX engine is on PATH."""
    if problem := missing_tex():
        raise RuntimeError(problem)


# pdflatex as the paper runs it: no shell escape at all (not even the restricted list),
# file:line: errors, and a record of every file read (build/<name>.fls)
PDFLATEX = "pdflatex %O -no-shell-escape -file-line-error -recorder %S"


def build_pdf(tex: str | Path, out_pdf: str | Path) -> Path:
    """latexmk + pdflatex in the tex file's folder (auxiliary files and latexmk's own
    output in ``build/``), with a fixed SOURCE_DATE_EPOCH so that the same sources give
    the same PDF bytes. TeX runs without shell escape and may open for reading only files
    below the build folder and its own installation (kpathsea's openin_any=p: no
    absolute or parent paths), whatever numbers.tex says. A failure names the file and
    line TeX stopped at. Returns the path of latexmk's output."""
    check_tex()
    tex = Path(tex).resolve()
    env = {**os.environ, "SOURCE_DATE_EPOCH": "0", "FORCE_SOURCE_DATE": "1",
           "openin_any": "p", "openout_any": "p", "shell_escape": "f"}
    cmd = ["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error",
           f"-pdflatex={PDFLATEX}", "-outdir=build", tex.name]
    proc = subprocess.run(cmd, cwd=tex.parent, env=env, capture_output=True, text=True)
    (tex.parent / "build").mkdir(exist_ok=True)
    log = tex.parent / "build" / (tex.stem + ".latexmk.log")
    log.write_text(proc.stdout + proc.stderr)
    built = tex.parent / "build" / (tex.stem + ".pdf")
    if proc.returncode != 0 or not built.exists():
        # latexmk keeps what it last saw (build/<stem>.fdb_latexmk) and, with sources it
        # thinks unchanged, answers a rerun "Nothing to do … gave an error" for ever: the
        # next build starts clean instead
        for state in ("fdb_latexmk", "aux", "pdf"):
            (tex.parent / "build" / f"{tex.stem}.{state}").unlink(missing_ok=True)
        raise RuntimeError(f"latexmk failed on {tex.name} (exit {proc.returncode}): "
                           f"{tex_error(proc.stdout + proc.stderr, tex.parent)} "
                           f"(latexmk's state in {tex.parent.name}/build/ is cleared: the next "
                           f"build starts clean; if the same error comes back, it is in "
                           f"the sources, or delete {tex.parent.name}/build/)")
    with open(built, "rb") as src, atomic_open(out_pdf, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return log


def tex_error(output: str, folder: Path) -> str:
    """Where TeX stopped and why, from its file:line:error lines (or the log's ``!``
    line), with the source line; else the output's last lines."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\S+\.tex):(\d+): (.*)$", line)
        if m:
            name, number, message = m.group(1), int(m.group(2)), m.group(3)
            cause = next((c[1:].strip() for c in reversed(lines[max(0, i - 12):i])
                          if c.startswith("!")), "")
            if cause and message.strip(". ") in ("Emergency stop", ""):
                message = f"{cause} ({message.strip()})"
            source = folder / name
            text = ""
            if source.is_file():
                src_lines = source.read_text(errors="replace").splitlines()
                if 0 < number <= len(src_lines):
                    text = f"\n  {Path(name).name}, line {number}: {src_lines[number - 1][:200]}"
            return f"{Path(name).name} line {number}: {message}{text}"
    tail = "\n".join(lines[-25:])
    return f"(TeX named no file and line)\n{tail}"


def figure_names(tex_text: str) -> list[str]:
    """The figure files ``\\includegraphics`` names in a manuscript."""
    return sorted(set(re.findall(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]+)\}", tex_text)))


def bundle(tex: str | Path, numbers_files, figures: list[str | Path],
           out: str | Path) -> None:
    """arxiv.tar.gz: the manuscript, its generated TeX (numbers.tex, claims.tex: a path
    or a list) and the figure PDFs, laid out so that
    ``latexmk -pdf ms.tex`` compiles in the unpacked folder (same mtime on every member,
    so the same inputs give the same archive)."""
    def add(tar, path, arcname):
        info = tar.gettarinfo(str(path), arcname)
        info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
        with open(path, "rb") as f:
            tar.addfile(info, f)

    # the block reads the sources: a missing figure names itself, not the archive
    with atomic_open(out, "wb", errors=()) as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz, \
                tarfile.open(fileobj=gz, mode="w") as tar:
            add(tar, tex, Path(tex).name)
            for generated in ([numbers_files] if isinstance(numbers_files, str | Path)
                              else numbers_files):
                add(tar, generated, Path(generated).name)
            for fig in sorted(map(Path, figures)):
                add(tar, fig, f"figures/{fig.name}")


# ---- the typed-number check --------------------------------------------------------
_RESULT_LIKE = re.compile(
    r"(?<![\w.])[-+−]?\d+\.\d+"              # a decimal: 0.36, 4.0
    r"|\d+(?:\.\d+)?\s*\\%"                  # a percentage: 36\%
    r"|\d+(?:\.\d+)?\s*(?:\\times|×)\s*10"   # scientific notation: 4 \times 10^8
    r"|10\^\{?[-−]?\d"                       # a power of ten: 10^{-2}
    r"|\d+(?:\.\d+)?e[-+]?\d+"               # 4e8, 1.0e-4
)


def typed_numbers(tex_text: str) -> list[str]:
    """Result-like numbers typed into a manuscript's prose (outside macros): what the
    manuscript must take from numbers.tex instead. Comments, optional arguments
    (``[width=…]``, ``[margin=25mm]``), the arguments of file, label and citation
    commands, the keys of the guards and of the dose study's numbers
    (``\\dosev{<key>}``, ``\\claimguard{<id>}``) and the bibliography (volumes,
    pages, arXiv numbers) are not prose and are skipped."""
    text = re.sub(r"(?<!\\)%.*", "", tex_text)  # comments
    text = re.sub(r"\\begin\{thebibliography\}.*?\\end\{thebibliography\}", "", text,
                  flags=re.S)
    text = re.sub(r"\[[^\]]*\]", "", text)  # optional arguments
    text = re.sub(r"\\(?:includegraphics|input|label|ref|cite|bibitem|usepackage|"
                  r"documentclass|graphicspath|begin|end|dosev|doseguard|claimguard)"
                  r"\s*\{[^}]*\}", "", text)
    return [m.group() for m in _RESULT_LIKE.finditer(text)]
