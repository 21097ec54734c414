"""Material's search entries of a page, remembered between builds (``.cache/search/``).

Material's search plugin parses every page's HTML and segments its Chinese with jieba on
every build (6-12 s of each). :class:`SearchCache` wraps the plugin's index so that a page
whose HTML, URL, title and table of contents did not change gets its entries from the cache.
It relies on ``SearchIndex.add_entry_from_context(page)``; without it nothing is cached.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


class SearchCache:
    """The entries of every page, one JSON file per page version under ``folder``."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.used: set[str] = set()  # shared by every language's index

    def install(self, search) -> None:
        """Wrap the index of Material's search plugin ``search`` (idempotent)."""
        index = getattr(search, "search_index", None)
        if index is None or getattr(index, "_simtdocs_cached", False):
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        original = index.add_entry_from_context
        settings = json.dumps({k: search.config.get(k) for k in ("separator", "pipeline", "lang")}, default=str)

        def toc(items):
            return [(t.id, t.title, t.url, toc(t.children)) for t in items]

        def add_entry_from_context(page):
            h = hashlib.sha256()
            for part in (settings, page.url, str(page.title), json.dumps(toc(page.toc), default=str),
                         json.dumps(page.meta.get("search"), default=str),
                         json.dumps(page.meta.get("tags"), default=str), page.content or ""):
                h.update(part.encode("utf-8") + b"\0")
            key = h.hexdigest()[:32]
            self.used.add(key)
            path = self.folder / f"{key}.json"
            try:
                entries = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(entries, list) and all(isinstance(e, dict) and "location" in e for e in entries):
                    index.entries.extend(entries)
                    return
            except (OSError, ValueError):
                pass
            before = len(index.entries)
            original(page)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(index.entries[before:], ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, path)

        index.add_entry_from_context = add_entry_from_context
        index._simtdocs_cached = True

    def prune(self) -> None:
        """Delete the entries no page of this build used (after the last language)."""
        if not self.used:
            return
        for p in self.folder.glob("*.json"):
            if p.stem not in self.used:
                p.unlink(missing_ok=True)
