"""A table's cells as the findings read them: missing (None, NaN, NA), a row's field, a
boolean cell as a CSV read back holds it."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import pandas as pd


def missing(x) -> bool:
    """None or a NaN (any real NaN: float, numpy, float32)."""
    return x is None or (isinstance(x, numbers.Real) and math.isnan(x))


def flag(x) -> bool:
    """A boolean cell, also as a CSV read back may hold it ("True", "False"); missing is
    False."""
    if isinstance(x, str):
        return x.strip().lower() == "true"
    return False if x is None or (isinstance(x, float) and math.isnan(x)) else bool(x)


def field(row, name: str):
    """A row's field, the row a dict (a finding, a template's), a pandas row or a tuple of
    itertuples; a missing field or value (None, NaN, NA) is None."""
    value = row.get(name) if isinstance(row, Mapping) else getattr(row, name, None)
    return None if value is pd.NA or missing(value) else value
