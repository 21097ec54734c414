"""Shared fixtures and the run's set-up. This folder is on sys.path, so tests import
``kernels`` and ``site_build`` from it.

The suite runs under pytest-xdist (``make test`` passes ``-n``) as well as serially; both
must give the same pass/fail list. What the processes of one run share is the strictly
built site (``site_build``: built once, in the background from the end of collection, while
the tests that do not need it run first) and the hypothesis profile below.
"""

import os
from pathlib import Path

import pytest
from hypothesis import settings

import site_build
from site_build import built_site

# Derandomised: every run draws the same examples, so a serial run and a parallel one (or
# two machines) can be compared test by test. No example database: what a run finds is
# printed as a reproducible blob instead of being replayed from a file only one machine has.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("random", print_blob=True)  # new examples every run (a local search)
settings.load_profile(os.environ.get("SIMTDOCS_HYPOTHESIS_PROFILE", "ci"))

# `make test` runs `--codeblocks tests docs` in one session: the Markdown files here are the
# site tests' inputs (tests/site/probes), not pages whose blocks should run.
collect_ignore_glob = ["*.md"]


def pytest_configure(config):
    if not site_build.is_worker(config):
        site_build.make_run_dir(config)


def _needs_site(item) -> bool:
    return "site" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config, items):
    """The tests that need the built site run last (in collection order otherwise), so the
    workers have other tests to run while it is built."""
    items.sort(key=_needs_site)


def pytest_collection_finish(session):
    """Start building the site as soon as a collected test needs it (``site_build``)."""
    if any(_needs_site(item) for item in session.items):
        site_build.start_site_build(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist: the controller hands each worker the run's shared folder."""
    node.workerinput[site_build.RUN_DIR_KEY] = str(node.config.stash[site_build.RUN_DIR])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    folder = site_build.screenshots_folder()
    shots = list(folder.rglob("*.jpg")) if site_build.took_screenshots(config) else []
    if shots:
        terminalreporter.write_sep("-", "browser screenshots")
        terminalreporter.write_line(
            f"{len(shots)} screenshots (light full-page, dark full-page on lecture pages and the first screens of notebooks) in {folder}/ ; open {folder}/index.html"
        )


def pytest_unconfigure(config):
    site_build.remove_run_dir(config)


@pytest.fixture(scope="session")
def site(request) -> Path:
    """The strictly built site (built once per run, also used by the browser tests)."""
    state = built_site(request.config)
    assert "error" not in state, state["error"]
    return state["dir"]
