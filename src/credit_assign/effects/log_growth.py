"""log10(metric at the last epoch / at epoch 1) of one run on one seed (its growth)."""

import math

from credit_assign.effects import Kind, Row, Tables, log10


def rows(e: dict, seed: int, data: Tables) -> list[Row]:
    hist = data.history(e["a"], seed).sort_values("epoch")
    first = hist[hist.epoch == 1][e["metric"]]
    value = (log10(float(hist[e["metric"]].iloc[-1])) - log10(float(first.iloc[0]))
             if len(first) else math.nan)
    return [("", value, data.diverged(e["a"], seed), None)]


KIND = Kind(name="log_growth", panel="norm", rows=rows,
            schema={"required": ["metric", "a"],
                    "properties": {"metric": {"enum": ["h_L_norm_median"]},
                                   "a": {"$ref": "#/$defs/run"}}})
