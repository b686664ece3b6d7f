"""Block 0's cosine to BPTT of the EP probe, per free-phase length T1, on one seed (a
value, not a difference: the threshold is the claim); an estimate whose free phase did not
settle is ``unsettled``, left out by the claim's own criterion."""

import math

from credit_assign.effects import Kind, Row, Tables


def rows(e: dict, seed: int, data: Tables) -> list[Row]:
    out = []
    for t1 in e["free_steps"]:
        at = data.ep(seed, t1)
        value = float(at.cosine.iloc[0])
        settled = bool(at.settled.iloc[0])
        out.append((f"T1={t1}", value, False,
                    None if settled or not math.isfinite(value) else "unsettled"))
    return out


KIND = Kind(name="value", panel="ep", rows=rows,
            schema={"required": ["metric", "free_steps"],
                    "properties": {"metric": {"const": "ep_block0_cosine"},
                                   "free_steps": {"type": "array", "minItems": 1,
                                                  "items": {"type": "integer", "minimum": 1}}}})
