"""What a job computes with: a digest of the science's source files, a param of the job.

Snakemake reruns a job whose params change, so each computing step carries, as its
``code`` param, the sha256 of what exactly the source files its result depends on say
(their syntax trees: a comment or a docstring changes nothing): its
step's modules, its learning rule's module (a training run's method; every probed rule
for an alignment probe) and every module of the package these import, found from their
import statements (the model, how a rule is built, the data's decoding, ...). An edit
to ``science/learning_rules/dfa.py`` then reruns DFA's runs and what reads them, not BP's; a
change to plotting, reporting, the analysis or a job's shell (``credit_assign.jobs``)
reruns no computation. Torch-free: it reads files.

Only the entry modules are written here (ENTRY); a module added to the science joins
the digest of every step that imports it.

The report side (every other step: tables, findings, pages, figures, the paper) carries
its own ``code`` param, ``report_digest(step)``: its script (scripts/<step>.py), every
credit_assign module that imports, directly or not (plumbing included: a path changes
what is read), and the report side's data files those modules name (templates, the
figures' texts, the schemas: data_read; another study's template is not among them).
Snakemake then rebuilds a page whose template or analysis changed, so ``make publish``,
which copies nothing Snakemake would rebuild, never copies a stale one
(credit_assign.publish).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.machinery as machinery
import re
from pathlib import Path

from credit_assign.planning.catalog import meaning

PACKAGE = Path(__file__).resolve().parent.parent  # src/credit_assign

# step -> the modules it computes with: these and every credit_assign module they import
# (read from their import statements), but NOT_SCIENCE; a learning rule's own module is
# added per job (the rules package imports its modules by name, not by statement)
ENTRY: dict[str, tuple[str, ...]] = {
    "train": ("science/training.py",),
    "fresh_b_null": ("science/diagnostics.py", "science/assemble.py", "infra/data.py"),
    "measure": ("science/measurement.py", "science/assemble.py", "infra/data.py"),
    "alignment_probe": ("science/alignment_probes.py", "science/assemble.py",
                        "infra/data.py"),
    "ep_stack_probe": ("ep_stack/probe.py",),
    "ep_fixed_point": ("ep_stack/probe.py", "ep_stack/implicit.py"),
    "ep_estimator": ("ep_stack/estimator.py",),
    "ep_question2": ("ep_stack/question2.py",),
}

# what computes nothing a result holds: where and how files are written, the paths, the
# provenance a result records, the device's name, the resume state (a resumed run
# equals one run through: tests/test_results_and_training.py), the checks of a rule's
# options (the options themselves are in the run's config, a param of its own)
NOT_SCIENCE = frozenset({
    "infra/paths.py", "infra/checkpoints.py", "infra/files.py", "infra/provenance.py",
    "infra/resume.py", "infra/device.py", "infra/hardware.py", "infra/__init__.py",
    "science/__init__.py", "ep_stack/__init__.py", "__init__.py", "planning/__init__.py",
    "planning/catalog.py",
})

RULES_DIR = "science/learning_rules"


ROOT = PACKAGE.parent.parent  # the checkout: scripts/ and workflow/ lie here
SCRIPTS = ROOT / "scripts"
DATA_STEPS = ("prepare_data", "prepare_corpus")  # compute nothing a result holds but data


@functools.cache
def _tree(relpath: str) -> ast.Module:
    """A package module's syntax tree, parsed once per process (every closure and
    data_read walk the same modules). Read only: never modify it."""
    return ast.parse((PACKAGE / relpath).read_text(encoding="utf-8"), relpath)


def imports(relpath: str) -> set[str]:
    """The credit_assign modules a source file imports, as package-relative files."""
    return _imports_in(_tree(relpath))


def _imports_of(text: str, name: str) -> set[str]:
    return _imports_in(ast.parse(text, name))


def _imports_in(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "credit_assign":
                names.add(node.module)
                names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.split(".")[0] == "credit_assign")
    found = set()
    for name in names:
        rel = "/".join(name.split(".")[1:])
        for candidate in (f"{rel}.py", f"{rel}/__init__.py"):
            if rel and (PACKAGE / candidate).is_file():
                found.add(candidate)
    return found


@functools.cache
def closure(entry: tuple[str, ...], skip: frozenset[str] = NOT_SCIENCE) -> tuple[str, ...]:
    """``entry`` and every module they import, directly or not, but ``skip``."""
    seen: set[str] = set()
    todo = [e for e in entry if e not in skip]
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        found = imports(rel)
        if rel.endswith("/__init__.py") and rel.removesuffix("/__init__.py") in PLUGIN_FOLDERS:
            found |= {str(p.relative_to(PACKAGE)) for p in (PACKAGE / rel).parent.glob("*.py")}
        todo.extend(m for m in found - seen if m not in skip)
    return tuple(sorted(seen))


@functools.cache
def file_digest(relpath: str) -> str:
    """sha256 of one source file of the package: of what a Python module says
    (:func:`meaning`: a comment, a docstring or a reformatting changes nothing), of any
    other file's bytes."""
    path = PACKAGE / relpath
    if not path.is_file():
        raise FileNotFoundError(f"credit_assign.planning.code names {relpath}, which is not a "
                                f"file of {PACKAGE}: update its lists")
    if path.suffix == ".py":
        _imported_as_read(relpath)
        return hashlib.sha256(meaning(path.read_text(encoding="utf-8"), relpath)).hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


_FINDER_LOADERS = ((machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
                   (machinery.SourceFileLoader, machinery.SOURCE_SUFFIXES),
                   (machinery.SourcelessFileLoader, machinery.BYTECODE_SUFFIXES))


def _imported_as_read(relpath: str) -> None:
    """Refuse a module whose import Python would resolve to another file (a package
    folder ``x/__init__.py`` or a compiled ``x.*.so`` beside ``x.py`` wins): the digest
    would be of code the job never runs."""
    path = PACKAGE / relpath
    if path.name == "__init__.py":
        if path.parent == PACKAGE:
            return
        folder, name = path.parent.parent, path.parent.name
    else:
        folder, name = path.parent, path.stem
    spec = machinery.FileFinder(str(folder), *_FINDER_LOADERS).find_spec(name)
    origin = Path(spec.origin) if spec is not None and spec.origin else None
    if origin is not None and origin.resolve() != path.resolve():
        raise RuntimeError(f"{origin.relative_to(PACKAGE)} shadows {relpath}: Python imports "
                           f"the former, the code digest reads the latter; remove one")


def rule_module(method: str, catalogue: dict) -> str:
    """The source file of a learning rule (the catalogue's ``source``)."""
    try:
        return f"{RULES_DIR}/{catalogue[method]['source']}"
    except KeyError:
        raise KeyError(f"the rules' catalogue has no source file for {method!r}; regenerate "
                       "it: python -m credit_assign.science.learning_rules --write") from None


def files(step: str, methods: tuple[str, ...] = (), catalogue: dict | None = None
          ) -> tuple[str, ...]:
    """The files a ``step`` job of ``methods`` computes with, sorted, once each."""
    if step not in ENTRY:
        raise KeyError(f"no code list for step {step!r}; steps: {sorted(ENTRY)}")
    if methods and catalogue is None:
        from credit_assign.planning import catalog

        catalogue = catalog.load()
    own = tuple(rule_module(m, catalogue) for m in methods)
    return closure(tuple(sorted(set(ENTRY[step] + own))))


@functools.cache
def digest(step: str, methods: tuple[str, ...] = ()) -> str:
    """The ``code`` param of a ``step`` job of ``methods``: sha256 over each file's path
    and digest (a renamed file changes it too)."""
    lines = "".join(f"{f} {file_digest(f)}\n" for f in files(step, methods))
    return hashlib.sha256(lines.encode()).hexdigest()


# ---- the report side: every step that is not computing (ENTRY) or preparing data
# the script of every figure step; each figure is its room's module of the step's name
FIGURE_SCRIPT = "figure"


def figure_steps() -> tuple[str, ...]:
    """Every figure step: a module studies/<study>/fig_<name>.py (or fig<n>_<name>.py)
    of a study's room."""
    return tuple(sorted(p.stem for p in (PACKAGE / "studies").glob("*/fig*.py")
                        if re.fullmatch(r"fig\d*_\w+", p.stem)))


def figure_module(step: str) -> str:
    """The module that draws figure ``step`` (credit_assign.studies.<study>.<step>)."""
    found = sorted((PACKAGE / "studies").glob(f"*/{step}.py"))
    if len(found) != 1:
        raise KeyError(f"figure step {step!r} needs one module studies/<study>/{step}.py, "
                       f"found {len(found)}")
    return f"credit_assign.studies.{found[0].parent.name}.{step}"


def _script(step: str) -> Path:
    """The script a report step runs: its own, or a figure's shared one."""
    return SCRIPTS / f"{FIGURE_SCRIPT if step in figure_steps() else step}.py"


def report_steps() -> tuple[str, ...]:
    """The steps that read results and write tables, findings, pages, figures or the
    paper: every script under scripts/ but the computing and data steps' and the
    figures' shared one, and every figure step."""
    return tuple(sorted({p.stem for p in SCRIPTS.glob("*.py")
                         if p.stem not in (*ENTRY, *DATA_STEPS, FIGURE_SCRIPT)}
                        | set(figure_steps())))


# the report side's data files, read at run time: the templates, the figures' texts
# (a YAML file beside each figure's module), the schemas results and claims files are
# checked against
DATA_FOLDERS = ("reporting", "figures", "analysis", "schemas", "effects", "studies")
# folders whose modules are found at run time, not imported by name (the effect kinds,
# credit_assign.effects; the verdicts, credit_assign.analysis.verdicts: each discovers
# its modules): each is part of any closure holding its __init__
PLUGIN_FOLDERS = ("effects", "analysis/verdicts")


@functools.cache
def _tracked(folder: Path) -> tuple[Path, ...] | None:
    """The files git tracks under ``folder`` (None outside a git checkout): an editor's
    swap file or a local config is no part of what a step computes with."""
    import subprocess

    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--", str(folder)],
                             capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return tuple(ROOT / f for f in out.decode().split("\0") if f)


def data_files(folder: Path, suffixes: tuple[str, ...] = (".j2", ".yaml", ".yml", ".json")
               ) -> tuple[Path, ...]:
    """The data files under ``folder`` that git tracks (outside a checkout: those with
    ``suffixes``), sorted."""
    found = _tracked(folder)
    if found is None:
        found = tuple(p for p in folder.rglob("*") if p.suffix in suffixes)
    return tuple(sorted(p for p in found if p.is_file() and p.suffix not in (".py", ".pyc")
                        and "__pycache__" not in p.parts))


@functools.cache
def _template_files() -> tuple[str, ...]:
    """Every data file (not Python source) under DATA_FOLDERS."""
    return tuple(str(p.relative_to(PACKAGE)) for folder in DATA_FOLDERS
                 for p in data_files(PACKAGE / folder))


# folders whose files are read by a name their code builds (a template's
# verdict("goal", f): analysis/verdicts/goal.md.j2, a verdict's words beside it;
# results.read_result(p, "result"): result.schema.yaml)
BY_STEM = {"verdicts": ".md.j2", "schemas": ".schema.yaml"}


def _stem(relpath: str) -> str | None:
    """The name a BY_STEM folder's file is read by (None elsewhere)."""
    path = Path(relpath)
    suffix = BY_STEM.get(path.parent.name)
    return path.name.removesuffix(suffix) if suffix and path.name.endswith(suffix) else None


_QUOTED = re.compile(r"""["']([\w./-]+)["']""")


@functools.cache
def _names(relpath: str) -> frozenset[str]:
    """The strings a package file names: a module's string constants, a data file's
    quoted words (a template's ``{% import "x.j2" %}``, its ``verdict("goal", f)``)."""
    if relpath.endswith(".py"):
        return frozenset(n.value for n in ast.walk(_tree(relpath))
                         if isinstance(n, ast.Constant) and isinstance(n.value, str))
    return frozenset(_QUOTED.findall((PACKAGE / relpath).read_text(encoding="utf-8")))


def data_read(modules: tuple[str, ...]) -> tuple[str, ...]:
    """The report side's data files ``modules`` read: each named by its file name in
    one of them or in a data file already read (in BY_STEM folders, by its stem), a
    module's own file beside it (studies/claims/fig_claims.yaml: fig_claims.py's words; a
    figure's caption, fig_<name>.rst, is the report's, not the step's), and every
    data file of a plugin folder whose registry is among them (an effect kind's words). A
    file no module names is read by none: another study's template or figure's words
    changes no step's code here."""
    plugins = {f for f in PLUGIN_FOLDERS if f"{f}/__init__.py" in modules}
    names = set().union(*(_names(m) for m in modules))
    found: set[str] = set()
    while True:
        new = {f for f in _template_files() if f not in found and (
            Path(f).name in names or Path(f).parent.as_posix() in plugins
            or _stem(f) in names or (Path(f).with_suffix(".py").as_posix() in modules
                                     and not f.endswith(".rst")))}
        if not new:
            return tuple(sorted(found))
        found |= new
        names |= set().union(*(_names(f) for f in new))


# what writes nothing a page, table or figure holds: the record's integrity checks (a
# file that fails them stops the step; one that passes is read as it is) and the job's
# threads
NOT_REPORT = frozenset({"infra/record.py", "infra/hardware.py"})


@functools.cache
def report_files(step: str) -> tuple[str, ...]:
    """The package files a report ``step`` writes with: the modules its script imports
    (a figure's: its module too), with theirs, and the report side's data files they
    name (data_read: the templates, the figures' texts, the schemas; package-relative,
    sorted)."""
    script = _script(step)
    if step in ENTRY or step in DATA_STEPS or not script.is_file() or step == FIGURE_SCRIPT:
        raise KeyError(f"{step!r} is not a report step (scripts/{step}.py, not computing; "
                       f"or a figure's module studies/<study>/{step}.py); "
                       f"report steps: {', '.join(report_steps())}")
    entry = _imports_of(script.read_text(encoding="utf-8"), str(script.name))
    if step in figure_steps():  # its module, as the shared script imports it
        module = figure_module(step).removeprefix("credit_assign.").replace(".", "/")
        entry |= {f"{module}.py", f"{module.rpartition('/')[0]}/__init__.py"}
    modules = closure(tuple(sorted(entry)), NOT_REPORT)
    return tuple(sorted(set(modules) | set(data_read(modules))))


@functools.cache
def report_digest(step: str) -> str:
    """The ``code`` param of a report ``step`` job: sha256 over its script's bytes and each
    of report_files' path and digest."""
    script = _script(step).read_bytes()
    lines = "".join(f"{f} {file_digest(f)}\n" for f in report_files(step))
    return hashlib.sha256(script + b"\0" + lines.encode()).hexdigest()
