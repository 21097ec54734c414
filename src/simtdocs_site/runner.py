"""Running a page's chains of blocks: the persistent block cache and the worker processes.

Output is rendered while the block runs (see :mod:`simtdocs.display.recorder`), for every
site language, and kept in a persistent cache (:class:`BlockCache`, JSON files under
``.cache/blocks``) keyed by the block's expanded code, the code of the blocks before
it in its ``cont`` chain, the simulator's source and the versions of numpy and
matplotlib. A build only runs the chains with a missing entry, in fresh worker
processes (two at a time), so a changed simulator is picked up by ``mkdocs serve``.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from simtdocs.display.recorder import LANGS, Recorder, recording
from simtdocs.snippets import repo_root
from .fences import BlockError

CACHE_VERSION = 2
DEFAULT_TIME_LIMIT = 60.0  # seconds per block; SIMTDOCS_BLOCK_TIME_LIMIT overrides


# -- the cache -----------------------------------------------------------------------


def environment_key(root: Path | None = None) -> str:
    """What every block result depends on besides its code: the simulator and the drawing libraries."""
    import simtdocs

    h = hashlib.sha256(f"v{CACHE_VERSION} {sys.version_info[:2]} {','.join(LANGS)}".encode())
    src = (root or repo_root()) / "src" / "simtdocs"
    if not src.is_dir():  # an installed package: hash what is installed
        src = Path(simtdocs.__file__).resolve().parent
    for p in sorted(src.rglob("*.py")):
        h.update(str(p.relative_to(src)).encode() + b"\0" + p.read_bytes())
    # This module records what a block shows: a change to it is a change to every entry.
    h.update(Path(__file__).read_bytes())
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


def _done() -> None:
    pass


def run_jobs(jobs: list[Job], root: Path, limit: float, workers: int, extra=()):
    """Run every job; ``workers`` > 0 uses that many fresh processes (so the simulator
    is imported anew: ``mkdocs serve`` sees an edited simulator). ``extra`` is more
    ``(function, args)`` work for the same processes (the notebooks); its failures are
    left to whoever needs the result. Returns the jobs' entries as soon as the jobs are
    done, and a function that waits for the extra work (the pages can be rendered
    meanwhile; the notebooks are needed only by their own pages). Raises BlockError."""
    entries: dict = {}
    if not jobs and not extra:
        return entries, _done
    wait = _done
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
        finished = False
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
            finished = not any("error" in r for r in results)
        finally:
            if not finished:
                pool.shutdown(wait=True, cancel_futures=True)  # a failed block: don't wait for the notebooks

        def wait_for_side() -> None:
            for f in side:
                f.exception()  # mkdocs-jupyter reports a failing notebook itself
            pool.shutdown(wait=True)

        wait = wait_for_side
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        raise BlockError("\n\n".join(errors))
    for r in results:
        entries.update(r["entries"])
    return entries, wait
