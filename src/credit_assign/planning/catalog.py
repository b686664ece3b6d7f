"""The learning rules as the workflow sees them, without importing them (or torch):
``rules_catalog.json`` beside this module, generated from the registry
(``python -m credit_assign.science.learning_rules --write``), holds per rule its label,
colour, whether
the alignment probes measure it, its options' defaults, each option's type and allowed
values, the values that may not go together, and the sha256 of the rule modules' sources
it was made from. A catalogue made from other sources than the package holds now is an
error naming the command that regenerates it.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from credit_assign.planning import ConfigError

CATALOG = Path(__file__).with_name("rules_catalog.json")
RULES_PACKAGE = "credit_assign.science.learning_rules"
REGENERATE = "python -m credit_assign.science.learning_rules --write"
_TYPES = {"boolean": bool, "integer": int, "number": float, "string": str}


def rules_dir() -> Path:
    """The rules package's folder, found without importing it."""
    return Path(find_spec(RULES_PACKAGE).submodule_search_locations[0])


def sources_digest(folder: str | Path | None = None) -> str:
    """sha256 over the rule package's modules (their names and what their code says, in
    name order): a comment, a docstring or a reformatting changes nothing, so it never
    stops a parse; a change to the code does (meaning)."""
    h = hashlib.sha256()
    for path in sorted(Path(folder or rules_dir()).glob("*.py")):
        h.update(path.name.encode() + b"\0" + meaning(path.read_text(encoding="utf-8"))
                 + b"\0")
    return h.hexdigest()


def meaning(source: str, name: str = "<source>") -> bytes:
    """What Python source says, without its comments, docstrings and layout: its syntax
    tree, docstrings removed, written without positions — and the same on every Python
    the package supports: a field that is empty or None is left out (a newer Python adds
    fields, such as a function's ``type_params``, empty in code that does not use them,
    and ``ast.dump`` writes them differently from version to version)."""
    tree = ast.parse(source, name)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                      | ast.AsyncFunctionDef) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return _written(tree).encode()


def _written(node) -> str:
    if isinstance(node, ast.AST):
        fields = ((f, getattr(node, f, None)) for f in node._fields)
        return type(node).__name__ + "(" + ",".join(
            f"{f}={_written(v)}" for f, v in fields if v is not None and v != []) + ")"
    if isinstance(node, list):
        return "[" + ",".join(map(_written, node)) + "]"
    return repr(node)


def render(rules: dict[str, dict[str, Any]], digest: str) -> str:
    """The catalogue file's text, from the registry's ``catalog()`` and the digest."""
    return json.dumps({"generated_by": REGENERATE, "sources_sha256": digest,
                       "rules": rules}, indent=2, ensure_ascii=False) + "\n"


@functools.cache
def load(path: str | Path = CATALOG, check: bool = True) -> dict[str, dict[str, Any]]:
    """name → {label, color, probed, defaults, options, conflicts}, in name order. With ``check``,
    a ConfigError when the rule modules changed since the catalogue was generated."""
    data = json.loads(Path(path).read_text())
    if check and data["sources_sha256"] != sources_digest():
        raise ConfigError(
            f"{Path(path).name} was generated from other learning-rule sources than "
            f"{rules_dir()} holds now (a rule added, removed or edited): regenerate it, "
            f"and the options table of config/README.md, with `{REGENERATE}` from the "
            f"repository root (docs/adding-a-rule.md)")
    return data["rules"]


def methods() -> tuple[str, ...]:
    """The registered rules' names, in name order: what sweep.<m> and methods.<m> take."""
    return tuple(load())


def styles() -> dict[str, dict[str, str]]:
    """Each rule's label and colour, as its module declares them."""
    return {m: {"label": r["label"], "color": r["color"]} for m, r in load().items()}


def options_of(method: str, block: dict | None = None) -> dict[str, Any]:
    """A rule's options from its config block, missing keys filled with their defaults,
    checked as the rule's Options dataclass checks them (the same ValueError messages:
    credit_assign.science.learning_rules.options)."""
    rules = load()
    if method not in rules:
        raise ValueError(f"unknown learning rule {method!r}; registered: {sorted(rules)} "
                         "(a rule is a module in src/credit_assign/science/learning_rules/, "
                         "docs/adding-a-rule.md)")
    where, spec, defaults = f"methods.{method}", rules[method]["options"], rules[method]["defaults"]
    block = dict(block or {})
    if unknown := sorted(set(block) - set(spec)):
        raise ValueError(f"{where}: unknown option(s) {unknown}; known: {sorted(spec)}")
    try:
        out = {name: checked_value(name, block[name] if name in block else defaults[name],
                                   allowed)
               for name, allowed in spec.items()}
        check_conflicts(out, [(c["values"], c["message"])
                              for c in rules[method]["conflicts"]])
    except ValueError as err:
        raise ValueError(f"{where}.{err}") from None
    return out


def checked_value(name: str, value: Any, allowed: dict[str, Any]) -> Any:
    """An option's value checked against its entry (type, enum, minimum,
    exclusiveMinimum, as Options.schema writes it), an int made a float where a number
    is asked for; a ValueError naming the option otherwise. The one check of an option:
    the rules' Options dataclasses (credit_assign.science.learning_rules.options) call it too."""
    kind = _TYPES[allowed["type"]]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{name} must be of type {allowed['type']}, got {value!r}")
    if "enum" in allowed and value not in allowed["enum"]:
        raise ValueError(f"{name} must be one of {list(allowed['enum'])}, got {value!r}")
    if "minimum" in allowed and value < allowed["minimum"]:
        raise ValueError(f"{name} must be >= {allowed['minimum']}, got {value!r}")
    if "exclusiveMinimum" in allowed and value <= allowed["exclusiveMinimum"]:
        raise ValueError(f"{name} must be > {allowed['exclusiveMinimum']}, got {value!r}")
    return value


def check_conflicts(values: dict[str, Any], conflicts) -> None:
    """A ValueError with the message of the first (values, message) whose values all hold."""
    for together, message in conflicts:
        if all(values[k] == v for k, v in together.items()):
            raise ValueError(message)
