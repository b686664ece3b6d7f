"""Learning rules, one module each, and the registry the pipeline reads them from.

Every module of this package that registers a rule (``@register``, see
:mod:`credit_assign.science.learning_rules.base`) is imported here, so a new file is all a new rule
needs (docs/adding-a-rule.md). The workflow takes the list of methods, their
options, labels and colours from :data:`RULES`; ``methods.<name>`` in the config holds
a rule's options, ``sweep.<name>`` its λ values.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path
from typing import Any

import torch

from credit_assign.science.learning_rules.base import (
    _REGISTRY,
    LearningRule,
    RuleOutput,
    feedback_generator,
    output_error,
    param_grads,
    register,
)
from credit_assign.science.learning_rules.options import Options
from credit_assign.science.model import ResidualMLP

__all__ = ["RULES", "LearningRule", "Options", "RuleOutput", "catalog", "feedback_generator",
           "make_rule", "options_of", "output_error", "param_grads", "register",
           "rule_class"]

_INFRASTRUCTURE = {"base", "options"}
for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _INFRASTRUCTURE and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

# name → rule class, in name order (the order of the sweep, the tables and the legends)
RULES: dict[str, type[LearningRule]] = dict(sorted(_REGISTRY.items()))


def rule_class(method: str) -> type[LearningRule]:
    if method not in RULES:
        raise ValueError(f"unknown learning rule {method!r}; registered: {sorted(RULES)} "
                         "(a rule is a module in src/credit_assign/science/learning_rules/, "
                         "docs/adding-a-rule.md)")
    return RULES[method]


def options_of(method: str, block: dict | Options | None = None) -> Options:
    """A rule's options from its config block (missing keys: defaults), checked."""
    cls = rule_class(method).Options
    if isinstance(block, cls):
        return block
    return cls.from_config(block, f"methods.{method}")


def make_rule(
    method: str,
    model: ResidualMLP,
    lam: float,
    options: dict | Options | None = None,
    generator: torch.Generator | None = None,
) -> LearningRule:
    """Build a rule (options: its Options, or a config block) and draw its random
    feedback from ``generator``."""
    cls = rule_class(method)
    if lam < 0:
        raise ValueError(f"penalty λ must be >= 0, got {lam}")
    rule = cls(model, lam, options_of(method, options))
    rule.draw_feedback(model, generator if generator is not None else torch.Generator())
    p = next(model.parameters())
    return rule.to(p.device, p.dtype)


def catalog() -> dict[str, dict[str, Any]]:
    """What the workflow reads of every rule, as plain data (written to
    credit_assign/planning/rules_catalog.json by ``python -m credit_assign.science.learning_rules
    --write``): label, colour, whether the alignment probes measure it, its module's
    file (``source``: planning.code hashes it into the code param of the rule's runs), its options'
    defaults, each option's type and allowed values, and the values that may not go
    together."""
    return {name: {"label": cls.label, "color": cls.color, "probed": cls.probed,
                   "source": Path(sys.modules[cls.__module__].__file__).name,
                   "defaults": cls.Options().to_config(), "options": cls.Options.schema(),
                   "conflicts": [{"values": values, "message": message}
                                 for values, message in cls.Options.conflicts]}
            for name, cls in RULES.items()}


def options_table() -> str:
    """The rules and their options as the markdown rows of config/README.md (a test
    keeps that file in step: ``python -m credit_assign.science.learning_rules`` prints them)."""
    lines = []
    for name, cls in RULES.items():
        rows = cls.Options.rows()
        if not rows:
            lines.append(f"| `methods.{name}` | `{{}}` | {cls.label}: no options |")
        for option, default, doc in rows:
            lines.append(f"| `methods.{name}.{option}` | {default} | {cls.label}: {doc} |")
    return "\n".join(lines)
