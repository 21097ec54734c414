"""The strict site build, once per test run, shared by tests/site and tests/browser.

Under pytest-xdist every worker collects on its own, so "once per session" would be once
per worker, each writing the same ``.cache``. Instead the whole run shares one folder (made
by the controller, or by the only process of a serial run, and handed to each worker in
``workerinput``): the first process that needs the site builds it there while holding a
lock, and writes down how it went; every other process waits for the lock and reads that
(``once_per_run``, which the simtdocs wheel of tests/site uses too).

The build starts as soon as a process has collected a test that needs it, in the background
(:func:`start_site_build`), and the tests that do not need it run first (tests/conftest.py
orders them): the build's own slower half, rendering the pages in one process, no longer
leaves a core idle while every worker waits for it. The browser tests are collected from the
sources (:func:`source_pages`), not from the built site, so collecting waits for nothing;
``tests/site/test_site.py`` checks that the built site has exactly those pages. Nothing is
built when no collected test needs it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE_KEY = pytest.StashKey[dict]()
RUN_DIR = pytest.StashKey[Path]()
RUN_DIR_KEY = "simtdocs_run_dir"  # in xdist's workerinput: the folder the run shares


def run_mkdocs(*args: str, cwd: Path = ROOT, timeout: int = 1800) -> subprocess.CompletedProcess:
    """``mkdocs *args`` in a subprocess, output captured."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


IGNORE = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")  # copying sources for a wheel


def build_wheel(project: Path, out: Path) -> Path:
    """``pip wheel`` of ``project`` into ``out``: the path of the one wheel it made."""
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(project)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (found,) = out.glob("*.whl")
    return found


def is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def make_run_dir(config) -> Path:
    """The run's shared folder (controller or serial run; removed by :func:`remove_run_dir`)."""
    run_dir = Path(tempfile.mkdtemp(prefix="simtdocs-test-run-"))
    config.stash[RUN_DIR] = run_dir
    return run_dir


def remove_run_dir(config) -> None:
    run_dir = config.stash.get(RUN_DIR, None)
    if run_dir is not None:
        shutil.rmtree(run_dir, ignore_errors=True)


def _run_dir(config) -> Path:
    if is_worker(config) and RUN_DIR_KEY in config.workerinput:
        return Path(config.workerinput[RUN_DIR_KEY])
    run_dir = config.stash.get(RUN_DIR, None)
    return run_dir if run_dir is not None else make_run_dir(config)


def first_in_run(config, what: str) -> bool:
    """True for the first process of the run to ask about ``what`` (say, clearing a folder
    every worker then writes into), False for every later one."""
    asked = []
    once_per_run(config, what, lambda _: asked.append(1) or {})
    return bool(asked)


def screenshots_folder() -> Path:
    """Where the browser tests put their screenshots (``SIMTDOCS_SCREENSHOTS``)."""
    return Path(os.environ.get("SIMTDOCS_SCREENSHOTS") or ROOT / "build" / "screenshots").resolve()


def took_screenshots(config) -> bool:
    run_dir = config.stash.get(RUN_DIR, None)
    return run_dir is not None and (run_dir / "screenshots.json").exists()


def _say(config, line: str) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)


def _build(config, out: Path) -> dict:
    proc = run_mkdocs("build", "--strict", "-d", str(out))
    if proc.returncode == 0:
        return {"dir": str(out)}
    log = "\n".join(
        line if len(line) < 400 else line[:400] + " ..."
        for line in (proc.stdout + proc.stderr).splitlines()
        if "ERROR" in line or "WARNING" in line or "Error" in line
    )
    shutil.rmtree(out, ignore_errors=True)
    return {"error": "mkdocs build --strict failed (the site tests need the site):\n" + log[-4000:]}


def _record_paths(config, name: str) -> tuple[Path, Path, Path]:
    run_dir = _run_dir(config)
    name = re.sub(r"[^\w.-]", lambda m: "~" if m[0] == "/" else "_", name)  # "zh:/p2/" -> "zh_~p2~"
    return run_dir / name, run_dir / f"{name}.json", run_dir / f"{name}.lock"


def _make_record(folder: Path, record: Path, make) -> dict:
    text = json.dumps(make(folder), default=str)  # paths as text
    record.write_text(text, encoding="utf-8")
    return json.loads(text)  # the maker reads what every other process reads


def once_per_run(config, name: str, make, meanwhile=None) -> dict:
    """What ``make(folder)`` returns (a JSON-able dict), made once for the whole run: the first
    process to ask makes it in ``<run folder>/<name>/`` while holding a lock; every other one
    waits for the lock and reads the record it left.

    ``meanwhile()``, if given, is what a process does instead of only waiting while another
    one holds the lock: one other piece of the run's work (True), or False when none is left.
    Without it two xdist workers that need the same page at once would go on in lockstep,
    one of them always idle (``make_one_of``)."""
    folder, record, lockfile = _record_paths(config, name)
    with open(lockfile, "w") as lock:
        while meanwhile is not None:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not meanwhile():
                    meanwhile = None
        else:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be making it right now
        if record.is_file():
            return json.loads(record.read_text(encoding="utf-8"))
        return _make_record(folder, record, make)


def make_one_of(config, jobs) -> bool:
    """Make the first of ``jobs`` (``(name, make)`` pairs, as :func:`once_per_run` takes them)
    that no process has made or is making; False when there is none."""
    for name, make in jobs:
        folder, record, lockfile = _record_paths(config, name)
        if record.is_file():
            continue
        with open(lockfile, "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # someone is making it
            if record.is_file():
                continue
            _make_record(folder, record, make)
            return True
    return False


def page_of(index: Path) -> tuple[str, str]:
    """``(language, URL path)`` of a page's ``index.html``, given relative to the site's root."""
    folder = index.parent.as_posix()
    path = "/" if folder == "." else f"/{folder}/"
    return ("en" if path.startswith("/en/") else "zh", path)


def built_pages(site: Path) -> list[tuple[Path, tuple[str, str]]]:
    """Every page of the built ``site``: its ``index.html`` and :func:`page_of` it."""
    return [(index, page_of(index.relative_to(site))) for index in sorted(site.rglob("index.html"))]


def source_pages(root: Path = ROOT) -> list[tuple[str, str]]:
    """Every page the build makes, as :func:`page_of` its ``index.html``, from the sources:
    each ``docs/**/*.md`` (``x.md`` the Chinese page at the root, ``x.en.md`` the English one
    under ``en/``) and each companion script's notebook page in both languages, in the order of
    :func:`built_pages`."""
    from simtdocs_site.notebooks import scripts

    folders = []
    for md in (root / "docs").rglob("*.md"):
        rel = md.relative_to(root / "docs").as_posix()
        folder = "en/" + rel[:-len(".en.md")] if rel.endswith(".en.md") else rel[:-len(".md")]
        folders.append(folder[:-len("index")] if folder == "index" or folder.endswith("/index") else folder)
    folders += [f"{lang}notebooks/{s.parent.name}/{s.stem}" for s in scripts() for lang in ("", "en/")]
    return [page_of(index) for index in sorted(Path(folder) / "index.html" for folder in folders)]


def start_site_build(config) -> None:
    """Start building the site for the run in a background thread of this process: the first
    process's thread builds it while holding the build's lock, and :func:`built_site` (in any
    process) waits for that lock; a no-op when ``SIMTDOCS_SITE_DIR`` names a built site."""
    if os.environ.get("SIMTDOCS_SITE_DIR"):
        return
    _say(config, "building the site once for the run (mkdocs build --strict), in the background ...")
    thread = threading.Thread(target=once_per_run, args=(config, "site", lambda out: _build(config, out)),
                              name="site build", daemon=True)
    thread.start()


def built_site(config) -> dict:
    """Build the site once per run: ``{"dir": Path}`` or ``{"error": str}``."""
    state = config.stash.get(SITE_KEY, None)
    if state is not None:
        return state
    given = os.environ.get("SIMTDOCS_SITE_DIR")
    if given:
        state = {"dir": str(Path(given).resolve())}
        if not (Path(state["dir"]) / "index.html").is_file():
            state = {"error": f"SIMTDOCS_SITE_DIR={given} has no index.html"}
    else:
        state = once_per_run(config, "site", lambda out: _build(config, out))
    if "dir" in state:
        state = {"dir": Path(state["dir"])}
    config.stash[SITE_KEY] = state
    return state
