"""Result files are data: every one is validated against the package's
schemas/result.schema.yaml
when written and again when read, so a truncated or hand-edited file stops the
step that reads it — with the file's name and what is wrong — before any figure."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from credit_assign.infra.files import atomic_write_text, dumps, sanitize
from credit_assign.infra.record import RecordError, check_file


def schema(name: str) -> dict:
    """A schema shipped with the package (``credit_assign/schemas/<name>.schema.yaml``),
    found through importlib.resources: from a checkout, an editable or a wheel install."""
    return yaml.safe_load(resources.files("credit_assign").joinpath(
        "schemas", f"{name}.schema.yaml").read_text(encoding="utf-8"))


class ResultError(ValueError):
    """A result file that is missing, unreadable, or does not match its schema."""


@cache
def _schema() -> dict:
    return schema("result")


def validate_result(obj: Any, kind: str, source: str = "<memory>") -> None:
    schema = _schema()
    if kind not in schema["$defs"]:
        raise ValueError(f"unknown result kind {kind!r}")
    sub = {"$ref": f"#/$defs/{kind}", "$defs": schema["$defs"]}
    errors = sorted(jsonschema.Draft202012Validator(sub).iter_errors(obj), key=lambda e: e.path)
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise ResultError(f"{source}: not a valid {kind} result at {where}: {e.message}"
                          + (f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""))
    if kind == "train":
        n = len(obj["history"]["epoch"])
        uneven = [k for k, v in obj["history"].items() if len(v) != n]
        if uneven:
            raise ResultError(f"{source}: history arrays {uneven} do not have one entry per epoch")


def write_result(result: dict[str, Any], kind: str, out: str | Path,
                 before_write=None) -> dict[str, Any]:
    """Store non-finite numbers as null + a flag, validate, and write atomically.
    ``before_write`` (if given) runs after validation and before the write: the files
    that must exist before this one does (training's model.pt beside its metrics)."""
    result, flags = sanitize(result)
    result["nonfinite"] = flags
    validate_result(result, kind, source=str(out))
    if before_write is not None:
        before_write()
    atomic_write_text(out, dumps(result))
    return result


def read_result(path: str | Path, kind: str) -> dict[str, Any]:
    path = Path(path)
    try:
        obj = json.loads(path.read_text())
    except FileNotFoundError as err:
        raise ResultError(f"{path}: result file is missing") from err
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ResultError(f"{path}: not valid JSON ({err}); the file is truncated or corrupt — "
                          f"delete it and rerun the job that writes it") from err
    try:
        check_file(path)  # a file of the record: the bytes its job wrote
    except RecordError as err:
        raise ResultError(str(err)) from None
    validate_result(obj, kind, source=str(path))
    return obj
