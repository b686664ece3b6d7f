"""The claims' effect kinds: one module per kind in this folder, its words beside it.

A kind module defines ``KIND = Kind(...)``: the fields a claim's ``effect`` of that kind
holds (a JSON-schema fragment, composed into ``schemas/claims.schema.yaml`` when a claims
file is read), the claims figure's panel that draws it, and ``rows``: the effect seed by
seed, from the tables the claims read (an accessor: :class:`Tables`). Its words are
``<kind>.md.j2`` in this folder, a macro ``words(e, names, draws)`` the claims page
calls. Adding a kind is adding those two files (docs/adding.md): the claims file's
schema, the analysis, the page and the figure find it here, and nothing else changes.

This package imports nothing of credit_assign: planning (the schema), the analysis (the
effects), the pages and the figure read it, so it lies below them all.
"""

from __future__ import annotations

import functools
import importlib
import math
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

FOLDER = Path(__file__).resolve().parent
# the claims figure's panels, in the order drawn (their axes: axis_<panel> in
# studies/claims/fig_claims.yaml)
PANELS = ("norm", "acc", "null", "ep")


class EffectError(ValueError):
    """An effect the tables cannot give (a layer the model lacks, an EP cell not run)."""


class Tables(Protocol):
    """What a kind reads (analysis.claims.ClaimTables implements it): a run is a
    ``{method, lam}`` mapping of the claims file."""

    def scalar(self, run: dict, seed: int, metric: str) -> float: ...
    def diverged(self, run: dict, seed: int) -> bool: ...
    def history(self, run: dict, seed: int) -> Any: ...  # the run's epochs, a DataFrame
    def nulls(self, run: dict, seed: int) -> Any: ...  # its fresh-B null, a DataFrame
    def ep(self, seed: int, free_steps: int) -> Any: ...  # its EP probe's block-0 row


# one row of an effect: (part, value, a run it read diverged, status or None); status
# None is "ok" or "diverged" as the value and the runs say; "unsettled" is a kind's own
Row = tuple[str, float, bool, str | None]


@dataclass(frozen=True)
class Kind:
    name: str
    schema: dict  # the effect's fields beside ``kind`` (JSON schema: properties, required)
    panel: str  # one of PANELS
    rows: Callable[[dict, int, Tables], list[Row]]

    def effect_schema(self) -> dict:
        """The JSON schema of an ``effect`` of this kind."""
        return {"type": "object", "additionalProperties": False,
                "required": ["kind", *self.schema.get("required", [])],
                "properties": {"kind": {"const": self.name},
                               **self.schema.get("properties", {})}}


@functools.cache
def kinds() -> dict[str, Kind]:
    """Every kind in this folder, by name (a module without KIND, or a KIND that names
    another module or an unknown panel, stops here, naming it)."""
    out = {}
    for info in sorted(pkgutil.iter_modules([str(FOLDER)]), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        try:
            module = importlib.import_module(f"{__name__}.{info.name}")
        except Exception as err:  # a kind that does not import is named, not swallowed
            raise EffectError(f"credit_assign/effects/{info.name}.py does not import: "
                              f"{type(err).__name__}: {err}") from err
        kind = getattr(module, "KIND", None)
        if not isinstance(kind, Kind) or kind.name != info.name:
            raise EffectError(f"credit_assign/effects/{info.name}.py must define KIND = "
                              f"Kind(name={info.name!r}, ...)")
        if kind.panel not in PANELS:
            raise EffectError(f"effect kind {kind.name}: panel {kind.panel!r} is not one of "
                              f"{', '.join(PANELS)}")
        if not (FOLDER / f"{info.name}.md.j2").is_file():
            raise EffectError(f"effect kind {kind.name} has no words: write "
                              f"credit_assign/effects/{info.name}.md.j2")
        out[kind.name] = kind
    words = {p.name.removesuffix(".md.j2") for p in FOLDER.glob("*.md.j2")}
    if stray := sorted(words - set(out)):
        raise EffectError(f"words without a kind: {', '.join(f'{w}.md.j2' for w in stray)} "
                          "in credit_assign/effects/ (write the kind's module, or remove it)")
    return out


def get(name: str) -> Kind:
    try:
        return kinds()[name]
    except KeyError:
        raise EffectError(f"unknown effect kind {name!r}; the kinds: "
                          f"{', '.join(kinds())} (credit_assign/effects/)") from None


def log10(x: float) -> float:
    """log10, NaN where it is not defined (a norm of 0 or a diverged one)."""
    return math.log10(x) if x > 0 and math.isfinite(x) else math.nan
