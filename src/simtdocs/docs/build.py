"""Run the ```python fences of the pages at build time and put their output under them.

Which fences run, and in which namespace, is decided by pytest-codeblocks' own parser
(``pytest_codeblocks.main.extract_from_buffer``), so the site and
``pytest --codeblocks`` agree by construction:

- a fence whose info string is exactly ``python`` runs, in a fresh namespace with
  ``__name__ == "__main__"`` and the repository root as working directory;
- ``<!--pytest-codeblocks:cont-->`` appends a fence to the previous fence's block
  (whatever that block is: a skipped block's continuation is skipped too);
- ``<!--pytest.mark.skip(...)-->``, ``skipif(condition, ...)`` and
  ``pytest-codeblocks:importorskip(module)`` skip as pytest would; ``xfail`` is
  refused (a page shows what its code computed, not an expected failure).

Output is rendered while the block runs (see :mod:`simtdocs.docs.display`), for every
site language, and kept in a persistent cache (:class:`BlockCache`, JSON files under
``.cache/blocks``) keyed by the block's expanded code, the code of the blocks before
it in its ``cont`` chain, the simulator's source and the versions of numpy and
matplotlib. A build only runs the chains with a missing entry, in fresh worker
processes (two at a time), so a changed simulator is picked up by ``mkdocs serve``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from .display import LANGS, Recorder, recording
from .snippets import SnippetError, expand_with_map, repo_root

GLUE_REF = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
CACHE_VERSION = 2
DEFAULT_TIME_LIMIT = 60.0  # seconds per block; SIMTDOCS_BLOCK_TIME_LIMIT overrides


class BlockError(Exception):
    """A page cannot be built as written; the message starts with ``docs/<page>.md:<line>``."""


# -- which fences run ------------------------------------------------------------------

MARKER = re.compile(r"<!--[-\s]*(pytest-codeblocks:.*|pytest\.mark\..*)-->")


@dataclass
class Fence:
    start: int  # 0-based index of the opening fence line
    end: int  # 0-based index of the closing fence line
    indent: str
    info: str
    code: str
    cont: bool = False
    expected_output: bool = False


def find_fences(lines: list[str]) -> list[Fence]:
    """Backtick fences where pytest-codeblocks sees them, with their cont markers."""
    out: list[Fence] = []
    cont = expected = False
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        m = MARKER.fullmatch(stripped)
        if m and m.group(1).startswith("pytest-codeblocks:"):
            kw = m.group(1).split(":", 1)[1].strip("- ")
            cont = cont or kw == "cont"
            expected = expected or kw.startswith("expected-output")
        ls = lines[i].lstrip()
        if ls.startswith("```"):
            n = len(ls) - len(ls.lstrip("`"))
            indent = lines[i][: len(lines[i]) - len(ls)]
            j, body = i + 1, []
            while j < len(lines) and lines[j].lstrip()[:n] != "`" * n:
                line = lines[j]
                body.append(line[min(len(indent), len(line) - len(line.lstrip())):])
                j += 1
            out.append(Fence(i, j, indent, ls.strip()[n:], "".join(b + "\n" for b in body), cont, expected))
            cont = expected = False
            i = j + 1
            continue
        i += 1
    return out


@dataclass
class Chain:
    """One pytest-codeblocks block: a fence and the fences continued from it."""

    fences: list[Fence]
    syntax: str
    run: bool
    why_not: str = ""
    block: object = None  # pytest-codeblocks' CodeBlock


def _skip_reason(block, page: str) -> str:
    """Why pytest would skip this block ('' if it runs), evaluated as pytest does."""
    import pytest

    if block.importorskip:
        try:
            __import__(block.importorskip)
        except ImportError:
            return f"importorskip({block.importorskip})"
    for text in block.marks:
        try:
            mark = eval(text, {"sys": sys, "pytest": pytest}).mark  # noqa: S307 - pytest-codeblocks does the same
        except Exception as exc:  # noqa: BLE001
            raise BlockError(f"{page}:{block.lineno}: bad marker <!--{text}-->: {exc}") from None
        if mark.name == "skip":
            return "skip"
        if mark.name == "skipif":
            conds = mark.args or (mark.kwargs.get("condition"),)
            for c in conds:
                if isinstance(c, str):  # pytest cannot evaluate it for a code block either
                    raise BlockError(f"{page}:{block.lineno}: skipif with a string condition fails under "
                                     "pytest-codeblocks; write the condition as a Python expression")
                if c:
                    return "skipif"
        if mark.name == "xfail":
            raise BlockError(
                f"{page}:{block.lineno}: pytest.mark.xfail is not allowed on a page: a page shows what its "
                "code computed; catch the exception in the block and show() it instead"
            )
    return ""


def page_chains(markdown: str, page: str) -> list[Chain]:
    """The page's blocks as pytest-codeblocks collects them, with the fences each one spans."""
    from pytest_codeblocks.main import extract_from_buffer

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # skip/skipif spelled the old way
        try:
            blocks = extract_from_buffer(io.StringIO(markdown))
        except RuntimeError as exc:
            lines = markdown.split("\n")
            first = next((i + 1 for i, ln in enumerate(lines) if "pytest-codeblocks:cont" in ln), 1)
            where = first if "cont" in str(exc) else 1
            raise BlockError(f"{page}:{where}: pytest-codeblocks cannot read this page: {exc}") from None
    fences = [f for f in find_fences(markdown.split("\n")) if not f.expected_output]
    chains: list[Chain] = []
    it = iter(blocks)
    for f in fences:
        if f.cont and chains:
            chains[-1].fences.append(f)
            continue
        block = next(it, None)
        if block is None or block.lineno != f.start + 1:
            raise BlockError(f"{page}:{f.start + 1}: this fence is read differently by pytest-codeblocks")
        reason = _skip_reason(block, page) if block.syntax == "python" else "not python"
        chains.append(Chain([f], block.syntax, not reason, reason, block))
    def solid(code: str) -> list[str]:  # pytest-codeblocks drops blank lines of indented fences
        return [ln for ln in code.split("\n") if ln.strip()]

    for c in chains:
        if solid("".join(f.code for f in c.fences)) != solid(c.block.code):
            raise BlockError(f"{page}:{c.fences[0].start + 1}: this block is read differently by pytest-codeblocks")
    return chains


# -- the cache -----------------------------------------------------------------------


def environment_key(root: Path | None = None) -> str:
    """What every block result depends on besides its code: the simulator and the drawing libraries."""
    h = hashlib.sha256(f"v{CACHE_VERSION} {sys.version_info[:2]} {','.join(LANGS)}".encode())
    src = (root or repo_root()) / "src" / "simtdocs"
    if not src.is_dir():  # an installed package: hash what is installed
        src = Path(__file__).resolve().parents[1]
    for p in sorted(src.rglob("*.py")):
        h.update(str(p.relative_to(src)).encode() + b"\0" + p.read_bytes())
    for lib in ("numpy", "matplotlib"):
        try:
            from importlib.metadata import version

            h.update(f"{lib}={version(lib)}".encode())
        except Exception:  # noqa: BLE001 - not installed: no figures, no version
            h.update(f"{lib}=none".encode())
    return h.hexdigest()[:20]


class BlockCache:
    """One JSON file per block result; a missing, corrupt or partial file is a miss."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> dict | None:
        try:
            entry = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        ok = (
            isinstance(entry, dict) and entry.get("key") == key
            and all(isinstance(entry.get("out", {}).get(lang), list) for lang in LANGS)
            and isinstance(entry.get("glue"), dict)
        )
        return entry if ok else None

    def put(self, key: str, entry: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps({**entry, "key": key}, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, self.path(key))  # atomic: a reader never sees half a file

    def prune(self, keep: set[str]) -> int:
        """Delete every entry not in ``keep``; return how many."""
        n = 0
        for p in self.folder.glob("*.json"):
            if p.stem not in keep:
                p.unlink(missing_ok=True)
                n += 1
        for p in self.folder.glob(".*.tmp"):
            p.unlink(missing_ok=True)
        return n


# -- running a chain -------------------------------------------------------------------


@dataclass
class Block:
    """One fence of a chain, ready to run."""

    key: str
    code: str  # expanded
    where: list  # expanded line -> (path, line)
    name: str  # the filename tracebacks and linecache use
    page: str
    line: int  # the fence's line on the page (1-based)


@dataclass
class Job:
    blocks: list[Block]
    also: list[str] = field(default_factory=list)  # other pages with the same chain


class _TimeLimit(BaseException):
    """Raised inside a block that ran past its time limit (BaseException: `except Exception` can't eat it)."""


def _loc(where, page: str, line: int, n: int) -> str:
    """``page:line`` of line ``n`` of a block, or ``snippet:line (included at page:line)``."""
    path, ln, at = where[n - 1] if 0 < n <= len(where) else (page, line, line)
    return f"{path}:{ln}" if path == page else f"{path}:{ln} (included at {page}:{at})"


def describe(exc: BaseException, blocks: list[Block], current: Block, limit: float | None = None) -> str:
    """``docs/p.md:12: <error>`` and a traceback trimmed to the author's lines."""
    by_name = {b.name: b for b in blocks}
    here = f"{current.page}:{current.line}"
    trace = []
    frames = traceback.extract_tb(exc.__traceback__)
    for k, fr in enumerate(frames):
        b = by_name.get(fr.filename)
        if b is not None:
            here = _loc(b.where, b.page, b.line, fr.lineno)
            trace.append(f"  {here}: {(fr.line or '').strip()}")
        elif k == len(frames) - 1:  # where it was raised, if not in the author's code
            trace.append(f"  {fr.filename}:{fr.lineno} in {fr.name}: {(fr.line or '').strip()}")
    if isinstance(exc, SyntaxError) and exc.filename in by_name and exc.lineno:
        b = by_name[exc.filename]
        here = _loc(b.where, b.page, b.line, exc.lineno)
    if isinstance(exc, _TimeLimit):
        msg = f"the block ran longer than its time limit of {limit:g} s (SIMTDOCS_BLOCK_TIME_LIMIT)"
    else:
        msg = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    tail = "\nTraceback (page and snippet lines):\n" + "\n".join(trace[-12:]) if trace else ""
    return f"{here}: code block failed: {msg}{tail}"


def _on_alarm(signum, frame):
    raise _TimeLimit()


def run_job(job: Job, root: str, limit: float, langs=LANGS) -> dict:
    """Run one chain in a fresh namespace; return ``{"entries": {key: entry}}`` or ``{"error": msg}``.

    Runs in a worker process (or in-process in tests). The working directory is the
    repository root for the duration of the chain.
    """
    import linecache

    from .checks import check_printed

    os.environ.setdefault("MPLBACKEND", "Agg")
    old_cwd = os.getcwd()
    os.chdir(root)
    ns: dict = {"__name__": "__main__", "__builtins__": __builtins__}
    entries: dict = {}
    names = {b.name: i for i, b in enumerate(job.blocks)}
    timed = limit and limit > 0 and hasattr(signal, "setitimer") and _main_thread()
    old_handler = signal.signal(signal.SIGALRM, _on_alarm) if timed else None
    try:
        for b in job.blocks:
            linecache.cache[b.name] = (len(b.code), None, [ln + "\n" for ln in b.code.split("\n")], b.name)
            rec = Recorder(langs)
            t0 = time.perf_counter()
            try:
                compiled = compile(b.code, b.name, "exec")
                if timed:
                    signal.setitimer(signal.ITIMER_REAL, limit)
                try:
                    with recording(rec):
                        exec(compiled, ns)
                finally:
                    if timed:
                        signal.setitimer(signal.ITIMER_REAL, 0)
                out = {lang: [list(i) for i in rec.output(lang)] for lang in langs}
                for items in out.values():
                    for kind, text in items:
                        if kind == "print":
                            problem = check_printed(text)
                            if problem:
                                raise ValueError(f"printed output would break the page: {problem}")
            except BaseException as exc:  # noqa: BLE001 - reported with page and line
                if isinstance(exc, KeyboardInterrupt):
                    raise
                msg = describe(exc, job.blocks, b, limit)
                if job.also:
                    msg += f"\n(the same block is on {', '.join(job.also)})"
                return {"error": msg}
            glue = {}
            for name, g in rec.glue.items():
                fname, ln = g.line or ("", 0)
                glue[name] = {"text": g.text, "at": [names[fname], ln] if fname in names else None}
            entries[b.key] = {"out": out, "glue": glue, "seconds": round(time.perf_counter() - t0, 3)}
        return {"entries": entries}
    finally:
        if timed:
            signal.signal(signal.SIGALRM, old_handler)
        os.chdir(old_cwd)
        try:
            import matplotlib.pyplot as plt

            plt.close("all")
        except ImportError:
            pass


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _worker_init(root: str) -> None:
    os.chdir(root)
    os.environ.setdefault("MPLBACKEND", "Agg")


def run_jobs(jobs: list[Job], root: Path, limit: float, workers: int, extra=()) -> dict:
    """Run every job; ``workers`` > 0 uses that many fresh processes (so the simulator
    is imported anew: ``mkdocs serve`` sees an edited simulator). ``extra`` is more
    ``(function, args)`` work for the same processes (the notebooks); its failures are
    left to whoever needs the result. Raises BlockError."""
    entries: dict = {}
    if not jobs and not extra:
        return entries
    if workers <= 0:
        results = [run_job(j, str(root), limit) for j in jobs]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from concurrent.futures import TimeoutError as FutureTimeout

        ctx = multiprocessing.get_context("spawn")
        # Longest chains first: the build ends when the last task ends.
        jobs = sorted(jobs, key=lambda j: -len(j.blocks))
        pool = ProcessPoolExecutor(max(1, min(workers, len(jobs) + len(extra))), mp_context=ctx,
                                   initializer=_worker_init, initargs=(str(root),))
        # A block stuck where the time-limit signal cannot reach it (inside C code) must not
        # hang the build: give up on the whole pool after every block's limit plus a margin.
        deadline = time.monotonic() + (limit or DEFAULT_TIME_LIMIT) * sum(len(j.blocks) for j in jobs) + 300
        try:
            futures = [pool.submit(run_job, j, str(root), limit) for j in jobs]
            side = [pool.submit(fn, *args) for fn, args in extra]
            results = []
            for j, f in zip(jobs, futures):
                try:
                    results.append(f.result(timeout=max(deadline - time.monotonic(), 0)))
                except FutureTimeout:
                    for proc in list(getattr(pool, "_processes", {}).values()):
                        proc.terminate()
                    b = j.blocks[0]
                    raise BlockError(f"{b.page}:{b.line}: code block did not finish (the worker running it "
                                     "was stopped; is it stuck in a long computation?)") from None
            if not any("error" in r for r in results):
                for f in side:
                    f.exception()  # wait; mkdocs-jupyter reports a failing notebook itself
        finally:
            pool.shutdown(wait=True, cancel_futures=True)  # a failed block: don't wait for the notebooks
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        raise BlockError("\n\n".join(errors))
    for r in results:
        entries.update(r["entries"])
    return entries


# -- a whole site ------------------------------------------------------------------------


@dataclass
class PagePlan:
    page: str
    markdown: str
    chains: list[Chain]
    blocks: dict[int, Block]  # fence start -> Block (only fences that run)


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
        new = run_jobs(list(jobs.values()), self.root, self.limit, self.workers, extra)
        for k, e in new.items():
            self.cache.put(k, e)
            self.entries[k] = self.cache.get(k) or {**e, "key": k}
        if prune:
            keep = {b.key for p in self.plans.values() for b in p.blocks.values()}
            self.stats["pruned"] = self.cache.prune(keep)

    def render(self, page: str, lang: str, markdown: str | None = None) -> str:
        """The page in ``lang`` with outputs under their fences and ``{{ name }}`` filled in."""
        plan = self.plans.get(page)
        if plan is None or (markdown is not None and markdown != plan.markdown):
            self.prepare({page: markdown if markdown is not None else plan.markdown})
            plan = self.plans[page]
        from .checks import GlueError, substitute_glue

        glued: dict[str, tuple] = {}
        chain_of = {}
        for c in plan.chains:
            for f in c.fences:
                chain_of[f.start] = c
        for start, b in plan.blocks.items():
            entry = self.entries[b.key]
            chain = [plan.blocks[f.start] for f in chain_of[start].fences]
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
        lines = plan.markdown.split("\n")
        out_after = {}
        for start, b in plan.blocks.items():
            f = next(f for f in chain_of[start].fences if f.start == start)
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


_process_cache: Path | None = None


def process(markdown: str, page: str, lang: str, site: Site | None = None) -> str:
    """One page in one language (tests, and pages the hook did not plan ahead)."""
    if site is None:  # in-process, with a cache of this process's own (never the site's .cache/,
        global _process_cache  # nor one left in /tmp by an earlier run: its hits would skip blocks)
        if _process_cache is None:
            import tempfile

            _process_cache = Path(tempfile.mkdtemp(prefix="simtdocs-process-cache-"))
        site = Site(repo_root(), cache_dir=_process_cache, workers=0)
    site.prepare({page: markdown})
    return site.render(page, lang)
