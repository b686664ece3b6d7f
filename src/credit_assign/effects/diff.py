"""metric(a) − metric(b) on one seed (an accuracy gain)."""

from credit_assign.effects import Kind, Row, Tables

RUNS = {"a": {"$ref": "#/$defs/run"}, "b": {"$ref": "#/$defs/run"}}


def rows(e: dict, seed: int, data: Tables) -> list[Row]:
    a, b = (data.scalar(e[k], seed, e["metric"]) for k in ("a", "b"))
    return [("", a - b, data.diverged(e["a"], seed) or data.diverged(e["b"], seed), None)]


KIND = Kind(name="diff", panel="acc", rows=rows,
            schema={"required": ["metric", "a", "b"],
                    "properties": {"metric": {"enum": ["test_acc", "h_L_norm_median"]},
                                   **RUNS}})
