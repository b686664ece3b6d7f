"""Each rule's conda environment (envs/*.yaml) provides every third-party package that
its script imports when it runs, directly or through the library (the import closure:
every import, at module level or inside a function, followed through credit_assign's own
modules and the packages' __init__ files). Needs no conda: `--software-deployment-method
conda` would otherwise be the first to find a figures job that imports torch."""

import ast
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
# import name -> conda-forge package name, where they differ
CONDA_NAMES = {"torch": "pytorch", "PIL": "pillow", "yaml": "pyyaml", "sklearn": "scikit-learn",
               "matplotlib": "matplotlib-base", "seaborn": "seaborn-base",
               "pandera": "pandera-base"}


def rule_blocks() -> dict[str, tuple[Path, str]]:
    """rule name -> (its .smk file, its text), every rule of workflow/rules/*.smk."""
    out = {}
    for smk in sorted((ROOT / "workflow/rules").glob("*.smk")):
        for block in re.split(r"^(?=rule \w+:)", smk.read_text(), flags=re.M)[1:]:
            out[re.match(r"rule (\w+):", block).group(1)] = (smk, block)
    return out


def rule_environments() -> dict[str, tuple[Path, Path]]:
    """rule name -> (its script, its conda env file), from workflow/rules/*.smk."""
    out = {}
    for name, (smk, block) in rule_blocks().items():
        script = re.search(r'^    script:\s*\n\s*"([^"]+)"', block, re.M)
        conda = re.search(r'^    conda:\s*\n\s*"([^"]+)"', block, re.M)
        if script and conda:
            out[name] = ((smk.parent / script.group(1)).resolve(),
                         (smk.parent / conda.group(1)).resolve())
    return out


def rule_code(rule: str, script: Path) -> list[Path]:
    """What a rule's job runs: its script, and for the figures' shared script the
    module of the rule's name it loads (studies/<study>/<rule>.py)."""
    if script.name != "figure.py":
        return [script]
    modules = sorted((SRC / "credit_assign" / "studies").glob(f"*/{rule}.py"))
    assert len(modules) == 1, (rule, modules)
    return [script, *modules]


def _module_file(name: str) -> Path | None:
    base = SRC.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imports(tree: ast.Module) -> list[tuple[str, list[str]]]:
    """(module, names) of every absolute import anywhere in the module: at the top, and
    inside a function or class body too (a lazy import runs when the job calls it, in
    the same environment: scikit-learn, pooch and PIL in infra/data.py)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, [a.name for a in node.names]))
    return found


def third_party_closure(*scripts: Path) -> set[str]:
    seen, todo, third = set(), list(scripts), set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for module, names in _imports(ast.parse(path.read_text())):
            top = module.split(".")[0]
            if top != "credit_assign":
                if top not in sys.stdlib_module_names and top != "__future__":
                    third.add(top)
                continue
            parts = module.split(".")
            # importing a submodule runs every package __init__ above it
            todo += [f for i in range(1, len(parts) + 1)
                     if (f := _module_file(".".join(parts[:i])))]
            todo += [f for n in names if (f := _module_file(f"{module}.{n}"))]
    return third


def env_packages(env: Path) -> set[str]:
    deps = yaml.safe_load(env.read_text())["dependencies"]
    return {re.split(r"[<>=!~ ]", d)[0] for d in deps if isinstance(d, str)}


@pytest.mark.parametrize("rule", sorted(rule_environments()))
def test_each_rules_environment_provides_what_its_code_imports(rule):
    script, env = rule_environments()[rule]
    needed = {CONDA_NAMES.get(m, m) for m in third_party_closure(*rule_code(rule, script))}
    missing = needed - env_packages(env)
    assert not missing, (f"rule {rule} ({script.name}) imports {sorted(missing)}, which "
                         f"{env.name} does not provide")


def test_a_figure_rules_closure_holds_its_modules_imports():
    """A figure rule runs the shared scripts/figure.py, which loads its module at run
    time: the closure follows that module too (matplotlib, not only the script's)."""
    script, _ = rule_environments()["fig_claims"]
    assert {"matplotlib", "numpy"} <= third_party_closure(*rule_code("fig_claims", script))


def test_the_closure_sees_through_the_library():
    """It can fail: the training script reaches torch only through credit_assign."""
    script, _ = rule_environments()["train"]
    assert "torch" not in {m for m, _ in _imports(ast.parse(script.read_text()))}
    assert "torch" in third_party_closure(script)
    assert len(rule_environments()) >= 15
