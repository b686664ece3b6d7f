"""What a local data source holds, as one digest of its bytes (torch-free).

A param of ``prepare_data``: a source whose bytes change (edited in place, replaced at the
same path, a file added to a folder) reruns it and everything that reads the data; a
source that is only copied, touched or re-extracted (same bytes, new mtimes) reruns
nothing. Hashing a 170 MB archive or 60 000 small files takes seconds, so the digest is
kept in a small cache file keyed by what the source looks like on disk: each file's
name, size, mtime, ctime and inode. It is hashed again when any of them changes — ctime
and the inode are what ``touch -r``, ``cp -p`` and ``rsync -a`` cannot set back, so an
overwrite that keeps the size and restores the mtime is still seen (and a re-hash that
finds the same bytes reruns nothing).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from credit_assign.infra.files import atomic_write_text, sha256_file


def _listing(path: str) -> tuple[str, list[str]]:
    """(a digest of every file's relative path, size, mtime, ctime and inode; the files,
    sorted)."""
    if not os.path.isdir(path):
        return _stat_key(os.stat(path)), [path]
    digest, files = hashlib.sha256(), []
    for root, dirs, names in os.walk(path):
        dirs.sort()
        for name in sorted(names):
            full = os.path.join(root, name)
            st = os.stat(full)
            rel = os.path.relpath(full, path)
            digest.update(f"{rel}\0{_stat_key(st)}\n".encode())
            files.append(full)
    return f"{len(files)} files:{digest.hexdigest()}", files


def _stat_key(st: os.stat_result) -> str:
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


def _content(path: str, files: list[str]) -> str:
    if not os.path.isdir(path):
        return sha256_file(path)
    digest = hashlib.sha256()
    for full in files:
        digest.update(f"{os.path.relpath(full, path)}\0{sha256_file(full)}\n".encode())
    return digest.hexdigest()


def source_digest(path: str | os.PathLike, cache: str | os.PathLike | None = None,
                  write: bool = True) -> str:
    """``sha256:<hex>`` of a file's bytes, or of a folder's relative paths and file bytes.

    ``cache``: a JSON file remembering each source's on-disk listing and digest; the
    source is read again only when its listing (names, sizes, mtimes, ctimes, inodes)
    differs. A cache
    that cannot be read is ignored (and rewritten). ``write=False``: read the cache,
    never write it (a dry run writes nothing).
    """
    path = str(Path(path).expanduser().resolve())
    listing, files = _listing(path)
    known: dict = {}
    if cache is not None:
        try:
            known = json.loads(Path(cache).read_text())
            if not isinstance(known, dict):
                known = {}
        except (OSError, ValueError):
            known = {}
        entry = known.get(path)
        if isinstance(entry, dict) and entry.get("listing") == listing:
            return str(entry["digest"])
    digest = f"sha256:{_content(path, files)}"
    if cache is not None and write:
        known[path] = {"listing": listing, "digest": digest}
        atomic_write_text(cache, json.dumps(known, indent=1, sort_keys=True) + "\n")
    return digest
