"""A learning rule's options: a dataclass whose fields say, once, their default, their
meaning and their allowed values. The config's ``methods.<method>`` block is checked
against it when the workflow parses the config, and so is every options object made
in code. Pure Python.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, get_type_hints

from credit_assign.planning.catalog import check_conflicts, checked_value

_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string"}


def option(default: Any, doc: str, *, choices: tuple | None = None,
           minimum: float | None = None, exclusive_minimum: float | None = None):
    """A field of a rule's options dataclass: its default, one line saying what it does
    (with ``choices``: what each choice means), and its allowed values (``choices``, or
    bounds for a number)."""
    meta = {"doc": doc}
    if choices is not None:
        meta["choices"] = tuple(choices)
    if minimum is not None:
        meta["minimum"] = minimum
    if exclusive_minimum is not None:
        meta["exclusiveMinimum"] = exclusive_minimum
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass
class Options:
    """Base of every rule's options (a rule without options uses it as is). Checked
    when made: a wrong value raises ValueError naming the option. Values that are each
    allowed but not together are declared in ``conflicts``: (the values, the message)
    pairs, as data (not in code) so that the workflow's catalogue of the rules states
    them too (``schema``)."""

    conflicts: ClassVar[tuple[tuple[dict[str, Any], str], ...]] = ()

    def __post_init__(self):
        schema = self.schema()
        for name, allowed in schema.items():
            setattr(self, name, checked_value(name, getattr(self, name), allowed))
        check_conflicts({name: getattr(self, name) for name in schema}, self.conflicts)

    @classmethod
    def from_config(cls, block: dict | None, where: str = "options") -> Options:
        """The options from a config block (missing keys: their defaults); an unknown
        key or a wrong value is a ValueError naming ``where`` and the key."""
        block = dict(block or {})
        known = {f.name for f in dataclasses.fields(cls)}
        if unknown := sorted(set(block) - known):
            raise ValueError(f"{where}: unknown option(s) {unknown}; known: {sorted(known)}")
        try:
            return cls(**block)
        except ValueError as err:
            raise ValueError(f"{where}.{err}") from None

    def to_config(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def schema(cls) -> dict[str, dict[str, Any]]:
        """Each option's type and allowed values, JSON-schema-like (type, enum, minimum,
        exclusiveMinimum), in field order: with ``conflicts``, what the workflow checks
        ``methods.<method>`` against without importing the rules
        (credit_assign.planning.catalog). The checks of an options class are declared,
        not coded: one that overrides __post_init__ is refused."""
        if cls.__post_init__ is not Options.__post_init__:
            raise TypeError(f"{cls.__name__} overrides __post_init__: declare values that "
                            "may not go together in `conflicts` instead, so that the "
                            "workflow's catalogue of the rules can check them too")
        hints = get_type_hints(cls)
        out = {}
        for f in dataclasses.fields(cls):
            spec = {"type": _JSON_TYPES[hints[f.name]]}
            if "choices" in f.metadata:
                spec["enum"] = list(f.metadata["choices"])
            for key in ("minimum", "exclusiveMinimum"):
                if key in f.metadata:
                    spec[key] = f.metadata[key]
            out[f.name] = spec
        return out

    @classmethod
    def rows(cls) -> list[tuple[str, str, str]]:
        """(option, default as YAML writes it, meaning and allowed values): the rows
        config/README.md lists for this rule."""
        out = []
        for f in dataclasses.fields(cls):
            meta, default = f.metadata, f.default
            if isinstance(default, bool):
                shown = "`true`" if default else "`false`"
            elif isinstance(default, str):
                shown = f"`{default}`"
            elif isinstance(default, float) and default != 0 and abs(default) < 1e-2:
                mant, exp = f"{default:.1e}".split("e")  # YAML 1.1 needs the dot: 1.0e-3
                shown = f"{mant}e{int(exp)}"
            else:
                shown = f"{default}"
            allowed = ""  # a doc of choices says what each one means
            if "exclusiveMinimum" in meta:
                allowed = f" (> {meta['exclusiveMinimum']})"
            elif "minimum" in meta:
                allowed = f" (≥ {meta['minimum']})"
            out.append((f.name, shown, meta.get("doc", "") + allowed))
        return out
