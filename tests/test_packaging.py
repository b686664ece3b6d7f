"""The package as a user installs it: a built wheel (not the editable checkout) carries
its schemas and validates a result; building it warns of nothing of ours."""

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.build  # builds and installs a wheel


def test_the_built_wheel_validates_results_with_its_own_schemas_and_finds_its_rules(tmp_path):
    source = tmp_path / "source"  # a copy: setuptools builds in the source tree
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "-w", str(tmp_path / "dist"), str(source)],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    assert "Deprecat" not in build.stdout + build.stderr  # e.g. a TOML-table license
    wheel = next((tmp_path / "dist").glob("credit_assign-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "credit_assign/schemas/result.schema.yaml" in names
    assert "credit_assign/planning/rules_catalog.json" in names  # the workflow's rules
    assert "credit_assign/studies/variants/gap_map.yaml" in names  # a figure's words
    assert "credit_assign/effects/diff.md.j2" in names  # an effect kind's words
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                    "--target", str(site), str(wheel)], check=True, capture_output=True)
    script = """
import json, sys
import credit_assign, credit_assign.infra.results as r
print(json.dumps({"file": credit_assign.__file__, "kinds": sorted(r.schema("result")["$defs"])}))
try:
    r.validate_result({"kind": "train"}, "train", source="x.json")
except r.ResultError as err:
    print("refused:", err)
# the registry finds its modules in the wheel too
import credit_assign.science.learning_rules as rules
print(json.dumps({"rules": list(rules.RULES), "file": rules.__file__}))
from credit_assign.planning import catalog  # its catalogue matches the wheel's rules
print(json.dumps(list(catalog.methods())))
from credit_assign.reporting import labels  # the figures' words, from the wheel's data file
print(json.dumps(labels.figure_text("credit_assign.studies.variants.gap_map")))
from credit_assign import effects  # the effect kinds, each with its words, from the wheel
print(json.dumps(sorted(effects.kinds())))
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, env={"PYTHONPATH": str(site), "PATH": ""}, timeout=120)
    assert out.returncode == 0, out.stderr
    first, refusal, registry = out.stdout.splitlines()[:3]
    info = json.loads(first)
    assert info["file"].startswith(str(site))  # the wheel's copy, not the checkout
    assert "train" in info["kinds"]
    assert refusal.startswith("refused: x.json: not a valid train result")
    registry = json.loads(registry)
    from credit_assign.science.learning_rules import RULES

    assert registry["rules"] == list(RULES)  # the same rules as the checkout's registry
    assert registry["file"].startswith(str(site))
    assert json.loads(out.stdout.splitlines()[3]) == list(RULES)
    from credit_assign.reporting import labels

    assert json.loads(out.stdout.splitlines()[4]) == labels.figure_text(
        "credit_assign.studies.variants.gap_map")
    from credit_assign import effects

    assert json.loads(out.stdout.splitlines()[5]) == sorted(effects.kinds())
