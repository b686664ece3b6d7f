"""How long Snakemake takes to parse the workflow and plan the quick config, as ratios
measured in one run: `snakemake -n --configfile config/quick.yaml` against
`snakemake --version` (Snakemake starting, no workflow) and `python -c pass`; and
whether parsing imported torch (it must not: credit_assign.planning is torch-free).

    python bench/bench_parse.py [--repeats 5] [--out bench/parse.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def timed(cmd: list[str], env: dict | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    snakemake = str(BIN / "snakemake")
    # a sitecustomize that makes `import torch` fail: the dry run must still plan
    blocker = Path(tempfile.mkdtemp()) / "sitecustomize.py"
    blocker.write_text("import sys\nclass _No:\n    def find_spec(self, name, path=None,"
                       " target=None):\n        if name == 'torch':\n            raise "
                       "ImportError('torch is blocked while parsing')\nsys.meta_path.insert"
                       "(0, _No())\n")
    no_torch = {**os.environ, "PYTHONPATH": f"{blocker.parent}{os.pathsep}"
                f"{os.environ.get('PYTHONPATH', '')}"}
    commands = {
        "python -c pass": ([sys.executable, "-c", "pass"], None),
        "snakemake --version": ([snakemake, "--version"], None),
        "snakemake -n (quick)": ([snakemake, "-n", "--configfile", "config/quick.yaml"], None),
        "snakemake -n (quick), torch blocked": (
            [snakemake, "-n", "--configfile", "config/quick.yaml"], no_torch),
    }
    times = {name: [] for name in commands}
    for _ in range(args.repeats):  # interleaved, so that load changes hit every command
        for name, (cmd, env) in commands.items():
            times[name].append(timed(cmd, env))
    median = {name: statistics.median(t) for name, t in times.items()}
    report = {"repeats": args.repeats, "median_s": median,
              "ratio_to_python": {n: m / median["python -c pass"] for n, m in median.items()},
              "ratio_to_snakemake_version": {
                  n: m / median["snakemake --version"] for n, m in median.items()}}
    for name, m in median.items():
        print(f"{name:38s} {m:6.3f} s  ×{report['ratio_to_python'][name]:7.1f} python -c pass"
              f"  ×{report['ratio_to_snakemake_version'][name]:.2f} snakemake --version")
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
