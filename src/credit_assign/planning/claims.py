"""The claims file (config/claims.yaml): read and checked against its schema, and the
runs it needs (the target `claims` builds them). The judging is
credit_assign.analysis.claims.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from credit_assign.planning import ConfigError
from credit_assign.planning.matrix import same_lam

Spec = dict[str, Any]
SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "claims.schema.yaml"
EP_SCHEMA = SCHEMA.with_name("claims_ep.schema.yaml")


class ClaimsError(ConfigError):
    """A claims file that does not say what a claim's decision needs, or tables that lack a
    run."""


# ---- the file ------------------------------------------------------------------------
def _with_kinds(schema: dict) -> dict:
    """The claims schema with each effect kind's fields (credit_assign.effects): an
    unknown kind is named with the kinds there are, a known one checked against its own
    schema."""
    from credit_assign import effects

    kinds = effects.kinds()
    effect = schema["properties"]["claims"]["items"]["properties"]["effect"]
    effect["properties"]["kind"] = {"enum": list(kinds)}
    effect["allOf"] = [{"if": {"properties": {"kind": {"const": name}}},
                        "then": kind.effect_schema()} for name, kind in kinds.items()]
    return schema


def _read_checked(path: Path, schema_path: Path, compose=None) -> Spec:
    """A claims file read (a key written twice, a seed like 042: named) and checked against
    its schema (``compose``: what completes it; the first wrong key named with its place)."""
    import jsonschema

    from credit_assign.planning.configfiles import check_yaml

    try:
        text = path.read_text(encoding="utf-8")
        check_yaml(text, str(path))
        spec = yaml.safe_load(text)
    except (OSError, yaml.YAMLError) as err:
        raise ClaimsError(f"{path}: cannot read the claims file: {err}") from None
    if isinstance(spec, dict) and None in spec:  # YAML 1.1 reads the key `null:` as None
        spec["null"] = spec.pop(None)
    schema = yaml.safe_load(schema_path.read_text(encoding="utf-8"))
    if compose:
        schema = compose(schema)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(spec),
                    key=lambda e: list(e.absolute_path))
    if errors:
        e = _deepest(errors[0])
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise ClaimsError(f"{path}: {where}: {e.message}")
    return spec


def _deepest(error):
    """Within a oneOf, what is wrong in the alternative the value meant — the one whose
    ``const``/``enum`` fields (the ``side`` of a claim) it matches: "'0.5' is not of type
    'number'", not "is not valid under any of the given schemas"."""
    if not error.context:
        return error
    branches: dict = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    meant = [errs for errs in branches.values()
             if not any(e.validator in ("const", "enum", "required") for e in errs)]
    return _deepest(meant[0][0]) if len(meant) == 1 else error


def load_ep(path: str | Path) -> Spec:
    """config/claims_ep.yaml (the EP question, issue #44), checked against its schema; a
    seed both fresh and seen is named."""
    path = Path(path)
    spec = _read_checked(path, EP_SCHEMA)
    both = sorted(set(spec["seeds"]["fresh"]) & set(spec["seeds"]["seen"]))
    if both:
        raise ClaimsError(f"{path}: seeds {both} are both fresh and seen")
    return spec


def load(path: str | Path) -> Spec:
    """config/claims.yaml, checked against its schema (a wrong key is named)."""
    path = Path(path)
    spec = _read_checked(path, SCHEMA, _with_kinds)
    ids = [c["id"] for c in spec["claims"]]
    if len(set(ids)) != len(ids):
        raise ClaimsError(f"{path}: claim ids repeat: {sorted(i for i in ids if ids.count(i) > 1)}")
    for c in spec["claims"]:
        if c.get("seeds", "fresh") not in spec["seeds"]:
            raise ClaimsError(f"{path}: claim {c['id']}: seeds '{c['seeds']}' is not a set "
                              f"of seeds.* ({', '.join(spec['seeds'])})")
    both = sorted(set(spec["seeds"]["fresh"]) & set(spec["seeds"]["study"]))
    if both:
        raise ClaimsError(f"{path}: seeds {both} are in both seeds.fresh and seeds.study: "
                          "the verdicts' seeds must be new (never run by the study)")
    if spec.get("version") == 2:
        check_rule(spec, str(path))
    else:
        check_version1(spec, str(path))
    return spec


BOOTSTRAP_MIN_SEEDS = 15
# a file without `version` is version 1, the rule of record (config/claims.yaml: BCa,
# committed with 8 fresh seeds); its bootstrap is accepted at that count, not below
VERSION1_MIN_SEEDS = 8


def check_version1(spec: Spec, path: str) -> None:
    """A claims file of version 1 (or none stated) judges with the interval it names; a
    bootstrap only where its fresh seeds, the verdicts' default set, number at least
    VERSION1_MIN_SEEDS (the rule of record's own count; below, a BCa interval's coverage
    falls to 62-72 % at 3). The rule of record judged its FA and EP claims on 3 seeds
    each (seeds.study, seeds.ep_fresh), and says so on its pages; version 2 refuses that."""
    n = len(spec["seeds"]["fresh"])
    if spec["decision"]["method"] != "t" and n < VERSION1_MIN_SEEDS:
        raise ClaimsError(
            f"{path}: a claims file without version 2 (version 1, the rule of record) "
            f"judges with decision.method {spec['decision']['method']}, a bootstrap, only "
            f"on {VERSION1_MIN_SEEDS} fresh seeds or more, but seeds.fresh has {n}: write "
            "version: 2 with method t and a correction (config/README.md)")


def check_rule(spec: Spec, path: str) -> None:
    """A claims file of version 2 chooses its rule for coverage and multiplicity: a
    bootstrap interval only where every verdict set has BOOTSTRAP_MIN_SEEDS seeds (below,
    its coverage falls short of what it states: a 95 % BCa interval of the mean covers
    about 88 % at 8 normal seeds and 62-72 % at 3), and the correction named."""
    d = spec["decision"]
    if "correction" not in d:
        raise ClaimsError(f"{path}: decision.correction is required (version 2): name the "
                          "correction for the parts judged at once (holm, or none)")
    if d["correction"] == "holm" and d["method"] != "t":
        raise ClaimsError(f"{path}: decision.correction holm adjusts the t-tests' p-values: "
                          "use method t with it")
    if d["method"] != "t":
        few = {name: len(spec["seeds"][name]) for name in
               dict.fromkeys(verdict_set(c) for c in spec["claims"])
               if len(spec["seeds"][name]) < BOOTSTRAP_MIN_SEEDS}
        if few:
            raise ClaimsError(
                f"{path}: decision.method {d['method']} is a bootstrap, whose interval covers "
                f"less than it states below {BOOTSTRAP_MIN_SEEDS} seeds, but "
                + ", ".join(f"seeds.{k} has {n}" for k, n in few.items())
                + ": use method t (the Student-t interval)")


def verdict_set(claim: dict) -> str:
    """The seeds a claim's verdict is taken on (``fresh`` unless the claim names a set)."""
    return claim.get("seeds", "fresh")


def runs_needed(spec: Spec) -> list[tuple[str, float, int]]:
    """Every (method, λ, seed) the claims read: the spec's runs on the fresh and the
    study seeds, and each run a claim names on its own verdict set."""
    out = {(m, float(lam), int(s)) for m, lams in spec["runs"].items() for lam in lams
           for s in (*spec["seeds"]["fresh"], *spec["seeds"]["study"])}
    for c in spec["claims"]:  # by field: a kind that reads runs names them a and b
        for side in ("a", "b"):
            if side in c["effect"]:
                run = c["effect"][side]
                out |= {(run["method"], float(run["lam"]), int(s))
                        for s in spec["seeds"][verdict_set(c)]}
    # one run per (method, λ, seed) under λ's one equality: two spellings of one λ
    # (1e-4 and 0.0001) are one run, kept in the first spelling met
    kept: list[tuple[str, float, int]] = []
    for m, lam, s in sorted(out):
        if not any(m == km and s == ks and same_lam(lam, kl) for km, kl, ks in kept):
            kept.append((m, lam, s))
    return kept


def check_against(spec: Spec, config: dict, path: str) -> None:
    """What the claims read must be what the config runs: an EP claim's free-phase
    lengths are the probe's (config ep_stack.probe.free_steps), a null claim's layers
    the model's (0 … model.depth)."""
    ran = config["ep_stack"]["probe"]["free_steps"]
    depth = config["model"]["depth"]
    draws = config.get("fresh_b_null", {}).get("draws")
    # fresh seeds are seeds nobody has seen: not the seeds the config's own runs use
    seen = sorted(set(spec["seeds"]["fresh"]) & set(config.get("sweep", {}).get("seeds") or []))
    if seen:
        raise ClaimsError(f"{path}: seeds.fresh {seen} are the config's own seeds "
                          "(sweep.seeds), whose runs are already made and seen: fresh seeds "
                          "are seeds nobody has seen")
    if draws is not None and spec["null"]["draws"] != draws:
        raise ClaimsError(f"{path}: null.draws is {spec['null']['draws']}, but the config's "
                          f"fresh-B null draws {draws} (fresh_b_null.draws): make them agree")
    for c in spec["claims"]:
        beyond = [layer for layer in c["effect"].get("layers", [])
                  if layer != "deep" and layer > depth]
        if beyond:
            raise ClaimsError(f"{path}: claim {c['id']} reads layer(s) "
                              f"{', '.join(map(str, beyond))}, but the model has layers 0 … "
                              f"{depth} (model.depth: {depth})")
        missing = [t for t in c["effect"].get("free_steps", []) if t not in ran]
        if missing:  # by field: a kind that reads the EP probe names its T1s free_steps
            raise ClaimsError(f"{path}: claim {c['id']} reads the EP probe at T1 = "
                              f"{', '.join(map(str, missing))}, which the config's probe does "
                              f"not run (ep_stack.probe.free_steps: {ran})")
