"""Properties of the committed files themselves."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# a home, work or scratch folder of the machine that wrote a file
MACHINE_PATH = re.compile(r"(?:^|[^\w.])/(?:work|home|Users|root|scratch)/\w")


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
    for name in ("README.md", "docs/performance.md"):
        text = (ROOT / name).read_text()
        found = re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])|\d+\s?%", text)
        assert found == [], f"{name} types {found}"
