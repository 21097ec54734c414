"""Repository-wide pytest configuration: ``pytest --codeblocks docs/`` runs a page's
python blocks exactly as the site build does; ``SIMTDOCS_TEST_TIMES`` records what each test
took (``benchmarks/test_suite.py``).

pytest-codeblocks collects the blocks and applies the markers (skip, skipif,
importorskip, cont). Each python block then runs through the site's own runner
(:func:`simtdocs_site.runner.run_job`): ``--8<--`` lines expanded by the same function,
``__name__ == "__main__"``, the repository root as working directory, the same time
limit, and the same checks on what the block prints and shows. Errors name the page
line (or the snippet line and where it is included).
"""

import json
import os
import resource
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
TIMES = os.environ.get("SIMTDOCS_TEST_TIMES")  # benchmarks/test_suite.py: one JSON line per test


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With ``SIMTDOCS_TEST_TIMES=<file>``, append each test's wall and CPU seconds (set-up and
    tear-down included; CPU of this process and of the subprocesses it waited for) and its
    outcome to the file, with when it started (Unix time) and which xdist worker ran it."""
    if not TIMES:
        yield
        return
    start, wall, cpu = time.time(), time.perf_counter(), _cpu()
    yield
    line = json.dumps({"test": item.nodeid, "wall": time.perf_counter() - wall, "cpu": _cpu() - cpu,
                       "outcome": item.stash.get(OUTCOME, "passed"), "start": start,
                       "worker": os.environ.get("PYTEST_XDIST_WORKER", "main")})
    with open(TIMES, "a", encoding="utf-8") as out:  # one short append per test: whole lines
        out.write(line + "\n")


OUTCOME = pytest.StashKey[str]()


def _record_event(event: str) -> None:
    if TIMES:
        line = json.dumps({"event": event, "at": time.time(), "worker": os.environ.get("PYTEST_XDIST_WORKER", "main")})
        with open(TIMES, "a", encoding="utf-8") as out:
            out.write(line + "\n")


def pytest_sessionstart(session):
    """The session's start and end for ``SIMTDOCS_TEST_TIMES`` (``benchmarks/test_suite.py``
    splits a run into set-up, collection, tests and the end of the session with them)."""
    _record_event("session start")


def pytest_sessionfinish(session, exitstatus):
    _record_event("session end")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if TIMES and (report.failed or (report.skipped and item.stash.get(OUTCOME, "") != "failed")):
        item.stash[OUTCOME] = "failed" if report.failed else "skipped"


def _cpu() -> float:
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def _is_python_block(item) -> bool:
    block = getattr(item, "obj", None)
    return type(item).__name__ == "TestBlock" and getattr(block, "syntax", None) == "python"


def _run_like_the_site(item):
    import pytest

    from simtdocs_site import fences, runner
    from simtdocs.snippets import SnippetError, expand_with_map

    if item.obj.importorskip is not None:  # what pytest-codeblocks' own runtest does first
        pytest.importorskip(item.obj.importorskip)

    page = Path(item.path).resolve()
    try:
        name = page.relative_to(ROOT).as_posix()
    except ValueError:
        name = page.as_posix()
    line = item.obj.lineno
    # The fences of this block (a cont chain is several), each with its own page lines.
    chain = next(c for c in fences.page_chains(page.read_text(encoding="utf-8"), name)
                 if c.fences[0].start + 1 == line)
    blocks = []
    for f in chain.fences:
        try:
            code, where = expand_with_map(f.code.rstrip("\n"), (name, f.start + 2), ROOT)
        except SnippetError as exc:
            raise RuntimeError(f"{name}:{f.start + 1}: {exc}") from None
        blocks.append(runner.Block(f"test{f.start}", code, where, f"<{name}:{f.start + 1}>", name, f.start + 1))
    limit = float(os.environ.get("SIMTDOCS_BLOCK_TIME_LIMIT", runner.DEFAULT_TIME_LIMIT))
    result = runner.run_job(runner.Job(blocks), str(ROOT), limit)
    if "error" in result:
        raise RuntimeError(result["error"])


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        if _is_python_block(item):
            item.runtest = (lambda it: lambda: _run_like_the_site(it))(item)
