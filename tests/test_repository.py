"""Properties of the committed files themselves."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# a home, work or scratch folder of the machine that wrote a file
MACHINE_PATH = re.compile(r"(?:^|[^\w.])/(?:work|home|Users|root|scratch)/\w")


@pytest.mark.process
def test_no_committed_file_names_a_path_of_the_machine_that_made_it():
    """Results and docs name a data source by file name and checksum, never by where it
    lay on the machine that ran the pipeline."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    hits = []
    for name in files:
        path = ROOT / name
        if name.startswith("tests/") or not path.is_file() or path.stat().st_size > 5_000_000:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        hits += [f"{name}:{i}" for i, line in enumerate(text.splitlines(), 1)
                 if MACHINE_PATH.search(line)]
    assert hits == [], f"machine paths in committed files: {hits}"


def test_hand_written_pages_type_no_measured_number():
    """README and docs/performance.md point to generated pages for every measurement
    (docs: numbers come from generated files, never typed)."""
    from credit_assign.reporting import publish

    for name in ("README.md", "docs/performance.md"):
        text = (ROOT / name).read_text()
        if publish.BEGIN in text:  # README's claims block: generated (the test below)
            head, rest = text.split(publish.BEGIN, 1)
            text = head + rest.split(publish.END, 1)[1]
        found = re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])|\d+\s?%", text)
        assert found == [], f"{name} types {found}"


def test_readmes_claims_block_is_the_published_findings_rendered():
    """README's claims block is what `make publish` renders from docs/claims_findings.json
    (no number in it typed, none stale)."""
    from credit_assign.reporting import publish

    text = (ROOT / "README.md").read_text()
    findings = ROOT / "docs" / "claims_findings.json"
    if not findings.exists():
        assert publish.BEGIN not in text  # no block before there are findings to render
        return
    assert publish.BEGIN in text and publish.END in text
    block = text.split(publish.BEGIN, 1)[1].split(publish.END, 1)[0].strip()
    assert block == publish.claims_block(findings)


def test_resources_are_stated_once_in_the_rules_and_the_profiles_only_add_a_clusters():
    """Each rule states its threads, memory and minutes (workflow/rules/*.smk); a profile
    sets none of them (it would contradict the rule), only what a cluster adds."""
    import yaml

    cluster = {"slurm_partition", "slurm_account", "gpu", "gpu_model", "gres", "constraint",
               "qos", "slurm_extra"}
    for profile in sorted((ROOT / "profiles").glob("*/profile.yaml")):
        cfg = yaml.safe_load(profile.read_text())
        assert "set-threads" not in cfg, profile
        for rule, res in (cfg.get("set-resources") or {}).items():
            assert set(res) <= cluster, f"{profile}: {rule} sets {sorted(set(res) - cluster)}"
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=rule )", smk.read_text())[1:]:
            name = block.split(":")[0].removeprefix("rule ")
            if "output:" not in block:
                continue  # a target rule (all, variants, claims): no job of its own
            for key in ("threads:", "mem_mb=", "runtime="):
                assert key in block, f"{smk.name}: rule {name} does not state {key}"
