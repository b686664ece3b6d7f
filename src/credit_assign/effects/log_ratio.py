"""log10(metric(a) / metric(b)) on one seed (how many orders of magnitude apart)."""

from credit_assign.effects import Kind, Row, Tables, log10
from credit_assign.effects.diff import RUNS


def rows(e: dict, seed: int, data: Tables) -> list[Row]:
    a, b = (data.scalar(e[k], seed, e["metric"]) for k in ("a", "b"))
    return [("", log10(a) - log10(b),
             data.diverged(e["a"], seed) or data.diverged(e["b"], seed), None)]


KIND = Kind(name="log_ratio", panel="norm", rows=rows,
            schema={"required": ["metric", "a", "b"],
                    "properties": {"metric": {"enum": ["test_acc", "h_L_norm_median"]},
                                   **RUNS}})
