"""The second EP question's result files (step ep_question2, ep_stack.question2): their
schema and a reader that names a wrong file. Torch-free: the findings step reads them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

CELL = {"type": "object", "required": ["precision", "r", "nudged_steps_max"],
        "additionalProperties": False,
        "properties": {"precision": {"enum": ["float32", "float64"]},
                       "r": {"type": "number", "exclusiveMinimum": 0},
                       "nudged_steps_max": {"type": "integer", "minimum": 1}}}
_COS = {"type": "object", "additionalProperties": {"type": ["number", "null"]}}
SCHEMA = {
    "type": "object",
    "required": ["kind", "corpus", "seed", "settings", "estimator", "pretrain", "batches",
                 "diverged", "provenance", "nonfinite"],
    "properties": {
        "kind": {"const": "ep_question2"},
        "seed": {"type": "integer"},
        "diverged": {"type": ["string", "null"]},
        "batches": {"type": "array", "items": {
            "type": "object", "required": ["batch", "free", "eigenvalues"],
            "properties": {
                "free": {"type": "object", "required": ["converged", "steps", "residual"]},
                "eigenvalues": {"type": "array", "items": {
                    "type": "object", "required": ["real", "imag"]}},
                "reference": {"type": "object", "required": [
                    "residual", "converged", "steps", "adjoint_residual"]},
                "estimates": {"type": "array", "items": {
                    "type": "object", "required": [*CELL["required"], "cosine",
                                                   "nudge_ulps_block0"],
                    "properties": {"cosine": _COS}}}}}},
    },
}


def read(path: str | Path) -> dict:
    """A result of step ep_question2, checked against SCHEMA (a wrong file is named)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    try:
        jsonschema.validate(data, SCHEMA)
    except jsonschema.ValidationError as err:
        raise ValueError(f"{path}: not an ep_question2 result ({err.message})") from None
    return data
