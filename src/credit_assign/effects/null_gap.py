"""Per layer: the cosine with the trained-with B minus the mean over the fresh draws of
B, of one run on one seed (the fresh-B null)."""

import math

from credit_assign.effects import EffectError, Kind, Row, Tables


def part(layer: str) -> str:
    """A layer's part label: ``l0`` … or ``deep``."""
    return layer if layer == "deep" else f"l{layer}"


def rows(e: dict, seed: int, data: Tables) -> list[Row]:
    sel, out = data.nulls(e["a"], seed), []
    for layer in map(str, e["layers"]):
        at = sel[sel.layer.astype(str) == layer]
        if at.empty:
            raise EffectError(f"no layer {layer} in the null of {e['a']['method']} seed "
                              f"{seed} (a deeper model?)")
        trained = at[at.feedback == "trained"].cosine.astype(float)
        fresh = at[at.feedback == "fresh"].cosine.astype(float)
        # a non-finite cosine anywhere (trained or any draw) makes the effect non-finite:
        # never a mean over the draws that happened to stay finite
        value = (float(trained.iloc[0]) - float(fresh.mean(skipna=False))
                 if len(trained) and len(fresh) else math.nan)
        out.append((part(layer), value, data.diverged(e["a"], seed), None))
    return out


KIND = Kind(name="null_gap", panel="null", rows=rows,
            schema={"required": ["a", "layers"],
                    "properties": {"a": {"$ref": "#/$defs/run"},
                                   "layers": {"type": "array", "minItems": 1, "items": {
                                       "oneOf": [{"type": "integer", "minimum": 0},
                                                 {"const": "deep"}]}}}})
