"""The executor: run a page's ```python fences and put their output under them. No MkDocs.

Given a page's Markdown, the executor runs its blocks once for every site language (what a
block shows is rendered for each at that moment), keeps the results in a persistent cache,
runs what is missing in worker processes, and gives back the page per language with each
block's output under its fence and every ``{{ name }}`` of the prose filled in. A page that
cannot be built as written raises :class:`BlockError`, whose message starts with
``docs/<page>.md:<line>`` (or the snippet line and where it is included).

Three ways in, one code path:

- :func:`execute_page`: a plain function, one page, its Markdown per language and its glue;
- :class:`Site`: many pages planned and run together (the MkDocs plugin runs the whole site
  before rendering any page, so the workers run every missing block at once);
- :mod:`simtdocs_site.markdown_extension`: a Python-Markdown extension over the same.

:mod:`simtdocs_site.fences` decides which fences run and how they chain (as
``pytest --codeblocks`` does); :mod:`simtdocs_site.runner` runs the chains in worker
processes behind the cache; :mod:`simtdocs_site.checks` fills in the glue.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from simtdocs.display.recorder import LANGS
from simtdocs.snippets import SnippetError, expand_with_map, repo_root

from .checks import GlueError, substitute_glue
from .fences import BlockError, Chain, page_chains
from .runner import DEFAULT_TIME_LIMIT, Block, BlockCache, Job, _loc, environment_key, run_jobs


# -- a whole site ------------------------------------------------------------------------


@dataclass
class PagePlan:
    page: str
    markdown: str
    chains: list[Chain]
    blocks: dict[int, Block]  # fence start -> Block (only fences that run)

    def chain_of(self, start: int) -> Chain:
        """The chain the fence opening at line ``start`` belongs to."""
        return next(c for c in self.chains if any(f.start == start for f in c.fences))


def plan_page(markdown: str, page: str, env: str, root: Path) -> PagePlan:
    chains = page_chains(markdown, page)
    blocks: dict[int, Block] = {}
    for c in chains:
        if not c.run:
            continue
        prefix = env
        for f in c.fences:
            try:
                code, where = expand_with_map(f.code.rstrip("\n"), (page, f.start + 2), root)
            except SnippetError as exc:
                raise BlockError(f"{page}:{f.start + 1}: {exc}") from None
            prefix = hashlib.sha256(f"{prefix}\0{code}".encode()).hexdigest()
            blocks[f.start] = Block(prefix[:32], code, where, f"<{page}:{f.start + 1}>", page, f.start + 1)
    return PagePlan(page, markdown, chains, blocks)


class Site:
    """The block results of a set of pages: plan, run what is missing, then render pages."""

    def __init__(self, root: Path, cache_dir: Path | None = None, workers: int | None = None,
                 limit: float | None = None, env: str | None = None):
        self.root = Path(root)
        self.cache = BlockCache(cache_dir or self.root / ".cache" / "blocks")
        self.workers = (os.cpu_count() or 1) if workers is None else workers
        self.limit = float(os.environ.get("SIMTDOCS_BLOCK_TIME_LIMIT", DEFAULT_TIME_LIMIT)) if limit is None else limit
        self.env = env or environment_key(self.root)
        self.plans: dict[str, PagePlan] = {}
        self.entries: dict[str, dict] = {}
        self.stats = {"blocks": 0, "ran": 0, "jobs": 0, "pruned": 0}
        #: Waits for the work that ran beside the blocks (the notebooks); pages render meanwhile.
        self.wait_for_extra = lambda: None

    def prepare(self, pages: dict[str, str], prune: bool = False, extra=()) -> None:
        """Plan ``{page: markdown}``, load cached results, run the chains that miss one."""
        jobs: dict[tuple, Job] = {}
        for page, md in pages.items():
            plan = self.plans[page] = plan_page(md, page, self.env, self.root)
            for c in plan.chains:
                if not c.run:
                    continue
                blocks = [plan.blocks[f.start] for f in c.fences]
                keys = tuple(b.key for b in blocks)
                missing = False
                for k in keys:
                    if k not in self.entries:
                        hit = self.cache.get(k)
                        if hit is None:
                            missing = True
                        else:
                            self.entries[k] = hit
                self.stats["blocks"] += len(keys)
                if missing:
                    if keys in jobs:
                        jobs[keys].also.append(page)
                    else:
                        jobs[keys] = Job(blocks)
        self.stats["jobs"] = len(jobs)
        self.stats["ran"] = sum(len(j.blocks) for j in jobs.values())
        new, self.wait_for_extra = run_jobs(list(jobs.values()), self.root, self.limit, self.workers, extra)
        for k, e in new.items():
            self.cache.put(k, e)
            self.entries[k] = self.cache.get(k) or {**e, "key": k}
        if prune:
            keep = {b.key for p in self.plans.values() for b in p.blocks.values()}
            self.stats["pruned"] = self.cache.prune(keep)

    def _plan(self, page: str, markdown: str | None) -> PagePlan:
        plan = self.plans.get(page)
        if plan is None or (markdown is not None and markdown != plan.markdown):
            self.prepare({page: markdown if markdown is not None else plan.markdown})
            plan = self.plans[page]
        return plan

    def glued(self, page: str, markdown: str | None = None) -> dict[str, tuple[dict[str, str], str]]:
        """``{name: ({lang: text}, where it was glued)}`` of one page; a name glued twice is an error."""
        plan = self._plan(page, markdown)
        glued: dict[str, tuple] = {}
        for start, b in plan.blocks.items():
            entry = self.entries[b.key]
            chain = [plan.blocks[f.start] for f in plan.chain_of(start).fences]
            for name, g in entry["glue"].items():
                at = g.get("at")
                src = chain[at[0]] if at and at[0] < len(chain) else b
                where = _loc(src.where, src.page, src.line, at[1]) if at else f"{b.page}:{b.line}"
                if name in glued and glued[name][1] != where:
                    same = "the same value" if glued[name][0] == g["text"] else "another value"
                    raise BlockError(
                        f"{where}: glue({name!r}) again, with {same}: already glued at "
                        f"{glued[name][1]}; a page shows one value per name, so glue it once"
                    )
                glued[name] = (g["text"], where)
        return glued

    def render(self, page: str, lang: str, markdown: str | None = None) -> str:
        """The page in ``lang`` with outputs under their fences and ``{{ name }}`` filled in."""
        plan = self._plan(page, markdown)
        glued = self.glued(page)
        lines = plan.markdown.split("\n")
        out_after = {}
        for start, b in plan.blocks.items():
            f = next(f for f in plan.chain_of(start).fences if f.start == start)
            items = self.entries[b.key]["out"][lang]
            out_after[f.end] = (f.indent, [t for _, t in items if t.strip()])
        try:
            body = substitute_glue(lines, {n: (t[lang], w) for n, (t, w) in glued.items()}, plan.page)
        except GlueError as exc:
            raise BlockError(str(exc)) from None
        out = []
        for i, line in enumerate(body):
            out.append(line)
            if i in out_after:
                indent, items = out_after[i]
                for item in items:  # each item is its own Markdown block
                    out.append("")
                    out.extend((indent + r) if r.strip() else "" for r in item.strip("\n").split("\n"))
                if items:
                    out.append("")
        return "\n".join(out)


# -- one page -------------------------------------------------------------------------------


@dataclass
class PageResult:
    """One executed page: its Markdown per language (outputs in place, glue filled in) and
    the text of each glued value per language."""

    page: str
    markdown: dict[str, str]
    glue: dict[str, dict[str, str]]  # name -> {lang: text}


_sites: dict[tuple, Site] = {}


def site_for(root: Path | None = None, cache_dir: Path | None = None, workers: int | None = None) -> Site:
    """One :class:`Site` per root, cache and worker count in this process, so that the two
    languages of a page (two calls) share what ran."""
    root = Path(root or repo_root()).resolve()
    cache = Path(cache_dir or root / ".cache" / "blocks").resolve()
    key = (root, cache, workers)
    if key not in _sites:
        _sites[key] = Site(root, cache_dir=cache, workers=workers)
    return _sites[key]


def execute_page(markdown: str, page: str, langs: tuple[str, ...] = LANGS, *, root: Path | None = None,
                 cache_dir: Path | None = None, workers: int | None = None) -> PageResult:
    """Run the blocks of one page that have no cached result and render it in ``langs``.

    ``page`` names the page in errors (``docs/p2/memory.md``); ``root`` is the folder that
    ``--8<--`` paths are relative to and the blocks' working directory (default: the
    repository); results are kept in ``cache_dir`` (default ``<root>/.cache/blocks``, the
    site build's cache); ``workers`` processes run them (default: one per core; 0 runs them
    in this process). Raises :class:`BlockError` with ``page:line``."""
    site = site_for(root, cache_dir, workers)
    site.prepare({page: markdown})
    glued = site.glued(page)
    return PageResult(page, {lang: site.render(page, lang) for lang in langs},
                      {name: {lang: texts[lang] for lang in langs} for name, (texts, _) in glued.items()})


_process_cache: Path | None = None


def process(markdown: str, page: str, lang: str, site: Site | None = None) -> str:
    """One page in one language, run in this process with a private cache (the tests)."""
    if site is None:  # in-process, with a cache of this process's own (never the site's .cache/,
        global _process_cache  # nor one left in /tmp by an earlier run: its hits would skip blocks)
        if _process_cache is None:
            import tempfile

            _process_cache = Path(tempfile.mkdtemp(prefix="simtdocs-process-cache-"))
        site = Site(repo_root(), cache_dir=_process_cache, workers=0)
    site.prepare({page: markdown})
    return site.render(page, lang)


# -- from the command line ------------------------------------------------------------------


def check_pages(paths: list[str], root: Path | None = None, cache_dir: Path | None = None,
                workers: int | None = None) -> list[str]:
    """Run the pages at ``paths`` (each with its other-language twin: ``p.md`` and ``p.en.md``)
    as the strict build runs them, behind the site's own block cache, and render each in its
    language with its glue; return the error messages (none: the pages build)."""
    root = Path(root or repo_root()).resolve()
    files: dict[str, Path] = {}
    for given in paths:
        path = Path(given).resolve()
        stem = path.name[:-len(".en.md")] if path.name.endswith(".en.md") else path.name[:-len(".md")]
        for twin in (path.with_name(f"{stem}.md"), path.with_name(f"{stem}.en.md")):
            if twin.is_file():
                files[twin.relative_to(root).as_posix()] = twin
    if not files:
        return [f"no page at {', '.join(paths)}"]
    site = site_for(root, cache_dir, workers)
    errors = []
    try:
        site.prepare({name: p.read_text(encoding="utf-8") for name, p in files.items()})
        for name in files:
            site.render(name, "en" if name.endswith(".en.md") else LANGS[0])
    except (BlockError, SnippetError) as exc:
        errors.append(str(exc))
    site.wait_for_extra()
    return errors


if __name__ == "__main__":
    import sys
    import time

    if len(sys.argv) < 2:
        sys.exit("usage: python -m simtdocs_site.executor docs/<page>.md [...]  "
                 "(runs the page and its translation as the strict build does)")
    start = time.perf_counter()
    problems = check_pages(sys.argv[1:])
    for problem in problems:
        print(problem, file=sys.stderr)
    s = next(iter(_sites.values()), None)
    ran = f"{s.stats['ran']} of {s.stats['blocks']} blocks ran" if s else ""
    print(f"{'FAILED' if problems else 'ok'}: {' '.join(sys.argv[1:])} ({ran}, {time.perf_counter() - start:.1f} s)")
    sys.exit(1 if problems else 0)
