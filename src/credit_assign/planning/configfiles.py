"""Checks of the YAML config files as written, before Snakemake validates the values:
what YAML itself would accept silently. Pure Python (no torch): the Snakefile runs it
first thing.

* A key that appears twice in one mapping (YAML keeps the last one).
* A seed that is not a plain decimal integer: YAML 1.1 reads ``042`` as 34 (octal),
  ``0x2a`` and ``4_2`` as 42, ``42.0`` as a float and ``true`` as a bool.
* A number in exponent form without a dot (``1e-2``): YAML 1.1 reads it as the string
  '1e-2' (the schema would then say only that it is not a number).

Each error names the file, the line, the key and the value as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

from credit_assign.planning import ConfigError

SEED_KEYS = ("seed", "seeds")
PLAIN_DECIMAL = re.compile(r"0|[1-9][0-9]*")
# what a reader takes for a float in exponent form; YAML 1.1 reads it as one only with
# a dot and a signed exponent (1.0e-2, 1.0e+5): 1e-2, 3E5 and 1.0e5 are strings to it
EXPONENT = re.compile(r"([-+]?[0-9][0-9_]*)(\.[0-9_]*)?[eE]([-+]?)([0-9]+)")


class ConfigFileError(ConfigError):
    """A config file that YAML reads differently from how it looks (a ConfigError: the
    workflow refuses it before any job)."""


def _where(node) -> str:
    m = node.start_mark
    return f"{m.name}, line {m.line + 1}"


def _check(node, key: str) -> None:
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for k, v in node.value:
            name = k.value
            if name in seen:
                raise ConfigFileError(f"{_where(k)}: the key {name!r} appears twice in one "
                                      f"mapping; keep one")
            seen.add(name)
            _check(v, f"{key}.{name}" if key else str(name))
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            _check(v, f"{key}[{i}]")
    elif (isinstance(node, yaml.ScalarNode) and node.style is None
          and (m := EXPONENT.fullmatch(node.value))
          and isinstance(yaml.safe_load(node.value), str)):
        raise ConfigFileError(
            f"{_where(node)}: {key} = {node.value} is read by YAML as the string "
            f"'{node.value}', not a number; write it with a dot and a signed exponent: "
            f"{_exponent_fix(m)}")
    elif isinstance(node, yaml.ScalarNode) and _is_seed(key):
        if node.style is None and not PLAIN_DECIMAL.fullmatch(node.value):
            raise ConfigFileError(
                f"{_where(node)}: {key} = {node.value} is not a plain decimal integer (YAML "
                f"reads it as {yaml.safe_load(node.value)!r}); a seed is ≥ 0, written as "
                f"digits without a leading zero, e.g. 42")


def _exponent_fix(m: re.Match) -> str:
    """A number in exponent form as YAML 1.1 reads it as a float: 1e-2 → 1.0e-2."""
    whole, frac, sign, digits = m.groups()
    return f"{whole}{frac if frac and frac != '.' else '.0'}e{sign or '+'}{digits}"


def exponent_strings(cfg: Any, key: str = "") -> Iterator[tuple[str, str, str]]:
    """(key, value, how to write it) of every string in a loaded config that looks like
    a number in exponent form but that YAML read as a string: what a nested ``--config``
    value such as ``training={'lr': 1.0e9}`` becomes (Snakemake reads it with YAML too,
    and no file's line is there to name)."""
    if isinstance(cfg, dict):
        for k, v in cfg.items():
            yield from exponent_strings(v, f"{key}.{k}" if key else str(k))
    elif isinstance(cfg, list):
        for i, v in enumerate(cfg):
            yield from exponent_strings(v, f"{key}[{i}]")
    elif isinstance(cfg, str) and (m := EXPONENT.fullmatch(cfg.strip())) \
            and isinstance(yaml.safe_load(cfg.strip()), str):
        yield key, cfg, _exponent_fix(m)


def _is_seed(key: str) -> bool:
    """A seed's place: the value of a key named seed, or an item of a list named seeds
    (a scalar named seeds is something else: a claim's set of seeds, by name)."""
    last = key.rsplit(".", 1)[-1]
    return last == "seed" or (last.startswith("seeds[") and last.endswith("]"))


def seed_values(cfg: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    """(key, value) of every seed in a loaded config: the values of keys named seed, and
    the items of lists named seeds (SEED_KEYS, as the spelling check reads the files)."""
    if isinstance(cfg, dict):
        for k, v in cfg.items():
            path = f"{key}.{k}" if key else str(k)
            if k == "seed":
                yield path, v
            elif k == "seeds" and isinstance(v, list):
                yield from ((f"{path}[{i}]", s) for i, s in enumerate(v))
            else:
                yield from seed_values(v, path)


def check_yaml(text: str, name: str = "<config>") -> None:
    """Raise ConfigFileError for a duplicate key, a seed not written as plain digits or
    a number in exponent form without a dot."""
    class Loader(yaml.SafeLoader):
        pass

    loader = Loader(text)
    loader.name = name
    try:
        node = loader.get_single_node()
    finally:
        loader.dispose()
    if node is not None:
        _check(node, "")


def check_files(paths: Iterable[str | Path]) -> None:
    for path in paths:
        check_yaml(Path(path).read_text(), str(path))
