"""What a job computes with: a digest of the science's source files, a param of the job.

Snakemake reruns a job whose params change, so each computing step carries, as its
``code`` param, the sha256 of exactly the source files its result depends on: its
step's modules, its learning rule's module (a training run's method; every probed rule
for an alignment probe) and every module of the package these import, found from their
import statements (the model, how a rule is built, the data's decoding, ...). An edit
to ``science/rules/dfa.py`` then reruns DFA's runs and what reads them, not BP's; a
change to plotting, reporting, the analysis or a job's shell (``credit_assign.jobs``)
reruns no computation. Torch-free: it reads files.

Only the entry modules are written here (ENTRY); a module added to the science joins
the digest of every step that imports it.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

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
}

# what computes nothing a result holds: where and how files are written, the paths, the
# provenance a result records, the device's name, the resume state (a resumed run
# equals one run through: tests/test_results_and_training.py), the checks of a rule's
# options (the options themselves are in the run's config, a param of its own)
NOT_SCIENCE = frozenset({
    "infra/paths.py", "infra/checkpoints.py", "infra/files.py", "infra/provenance.py",
    "infra/resume.py", "infra/device.py", "infra/hardware.py", "infra/__init__.py",
    "science/__init__.py", "ep_stack/__init__.py", "__init__.py", "spec/__init__.py",
    "spec/catalog.py",
})

RULES_DIR = "science/rules"


def imports(relpath: str) -> set[str]:
    """The credit_assign modules a source file imports, as package-relative files."""
    tree = ast.parse((PACKAGE / relpath).read_text(encoding="utf-8"), relpath)
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
def closure(entry: tuple[str, ...]) -> tuple[str, ...]:
    """``entry`` and every module they import, directly or not, but NOT_SCIENCE."""
    seen: set[str] = set()
    todo = [e for e in entry if e not in NOT_SCIENCE]
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        todo.extend(m for m in imports(rel) - seen if m not in NOT_SCIENCE)
    return tuple(sorted(seen))


@functools.cache
def file_digest(relpath: str) -> str:
    """sha256 of one source file of the package (its bytes)."""
    path = PACKAGE / relpath
    if not path.is_file():
        raise FileNotFoundError(f"credit_assign.spec.code names {relpath}, which is not a "
                                f"file of {PACKAGE}: update its lists")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rule_module(method: str, catalogue: dict) -> str:
    """The source file of a learning rule (the catalogue's ``source``)."""
    try:
        return f"{RULES_DIR}/{catalogue[method]['source']}"
    except KeyError:
        raise KeyError(f"the rules' catalogue has no source file for {method!r}; "
                       "regenerate it: python -m credit_assign.science.rules --write") from None


def files(step: str, methods: tuple[str, ...] = (), catalogue: dict | None = None
          ) -> tuple[str, ...]:
    """The files a ``step`` job of ``methods`` computes with, sorted, once each."""
    if step not in ENTRY:
        raise KeyError(f"no code list for step {step!r}; steps: {sorted(ENTRY)}")
    if methods and catalogue is None:
        from credit_assign.spec import catalog

        catalogue = catalog.load()
    own = tuple(rule_module(m, catalogue) for m in methods)
    return closure(tuple(sorted(set(ENTRY[step] + own))))


@functools.cache
def digest(step: str, methods: tuple[str, ...] = ()) -> str:
    """The ``code`` param of a ``step`` job of ``methods``: sha256 over each file's path
    and digest (a renamed file changes it too)."""
    lines = "".join(f"{f} {file_digest(f)}\n" for f in files(step, methods))
    return hashlib.sha256(lines.encode()).hexdigest()
