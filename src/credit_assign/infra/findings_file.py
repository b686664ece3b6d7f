"""The one findings file of what is published: ``docs/findings.json``, one section per
published group (``study``: the variant study's verdicts and the notes' findings;
``claims``: the claims judged; ``ep_question``: the EP question judged), each section the
findings its step wrote (``results/.../findings.json``) as data. ``make publish`` sets
the sections of the groups it publishes and keeps the others; README's blocks, the
claims rendered again from what was published, and the claims page's history read it.

Each step writes its own section in results/ because the groups' inputs differ by hours
of compute (one file there would make every page wait for every run); what a reader
gets, in docs/, is one file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from credit_assign.infra import paths
from credit_assign.infra.files import atomic_write_text

FILE = paths.PUBLISHED_FINDINGS
SECTIONS = ("study", "claims", "ep_question")  # in this order in the file
ABOUT = ("written by make publish (credit_assign.publish): one section per published "
         "group, each the findings its step wrote; never edited by hand")


class PublishedError(ValueError):
    """The published findings file is not what make publish writes (named)."""


def read(path: str | Path = FILE) -> dict:
    """Every section of the published findings file ({} where nothing is published);
    a file that is not one refuses by name. A file published before sections (the
    study's findings alone: step findings' ``kind: findings``) reads as the study's
    section, and the next write writes the sections."""
    path = Path(path)
    if not path.exists():
        return {}
    try:
        whole = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise PublishedError(f"{path}: not readable as JSON ({err}); publish again "
                             "(make publish)") from err
    if isinstance(whole, dict) and "about" not in whole and whole.get("kind") == "findings":
        return {"study": whole}  # published before sections: the study's findings alone
    if not isinstance(whole, dict) or not set(whole) - {"about"} <= set(SECTIONS):
        raise PublishedError(f"{path}: not the published findings file (its sections must "
                             f"be among {', '.join(SECTIONS)}); publish again (make publish)")
    return {k: whole[k] for k in SECTIONS if k in whole}


def _known(name: str) -> str:
    if name not in SECTIONS:
        raise KeyError(f"no published section {name!r} (sections: {', '.join(SECTIONS)})")
    return name


def section(name: str, path: str | Path = FILE) -> dict | None:
    """Section ``name`` of the published findings file, or None where it is not there."""
    return read(path).get(_known(name))


def section_digest(name: str, path: str | Path = FILE) -> str | None:
    """Section ``name``'s sha256 as make publish stamps it (digest), or None where it is
    not there."""
    data = section(name, path)
    return None if data is None else digest(data)


def text(sections: dict) -> str:
    """The file's text: ``about``, then the sections in SECTIONS' order."""
    whole = {"about": ABOUT, **{k: sections[k] for k in SECTIONS if k in sections}}
    return json.dumps(whole, indent=1, ensure_ascii=False) + "\n"


def write(name: str, data: dict, path: str | Path = FILE) -> None:
    """Set section ``name`` to ``data`` and keep the others (unchanged bytes are left
    alone, and their mtime)."""
    new = text({**read(path), _known(name): data})
    if not Path(path).exists() or Path(path).read_text(encoding="utf-8") != new:
        atomic_write_text(path, new)


def digest(data) -> str:
    """A section's sha256, as make publish stamps it (its data, keys sorted)."""
    canon = json.dumps(data, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()
