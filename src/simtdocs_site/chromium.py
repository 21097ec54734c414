"""Which Chromium the build (Mermaid diagrams), the browser tests and the page-weight
benchmark drive, and the flags they start it with: one place for all three.

Debian's ``chromium-headless-shell`` comes first: it is Chromium's own headless browser
(the one Playwright itself uses for headless runs), the same Blink and V8 as ``chromium``
without the desktop browser around them, and it spends about a sixth less CPU on the same
visit of a page (``tests/browser``: 56 against 66 CPU seconds for nine long pages, measured
on a 2-core machine). ``chromium`` in its new headless mode is the fallback.
Playwright cannot download a browser here, so ``playwright install`` is never needed.
"""

from __future__ import annotations

import os
import shutil

#: Tried in order when ``SIMTDOCS_CHROMIUM`` is not set.
CANDIDATES = ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium", "/usr/bin/google-chrome")

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Any host but localhost fails to resolve: a CDN request is recorded and fails at once
    # instead of leaving the machine (or hanging offline).
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
]


def chromium() -> str | None:
    """The Chromium to drive: only ``SIMTDOCS_CHROMIUM`` if it is set, else the first of
    :data:`CANDIDATES` (or ``chromium`` on the PATH) that can run; None if there is none."""
    named = os.environ.get("SIMTDOCS_CHROMIUM")
    if named:
        return named if os.access(named, os.X_OK) else None
    for path in (*CANDIDATES, shutil.which("chromium"), shutil.which("chromium-browser")):
        if path and os.access(path, os.X_OK):
            return path
    return None


def launch_args(exe: str) -> list[str]:
    """The flags for ``exe``: the headless shell is headless already, a full Chromium is told
    to use its new headless mode."""
    return FLAGS if "headless-shell" in os.path.basename(exe) else ["--headless=new", *FLAGS]


def launch(playwright, exe: str | None = None):
    """Start ``exe`` (default :func:`chromium`) with Playwright's ``chromium`` driver."""
    exe = exe or chromium()
    return playwright.chromium.launch(executable_path=exe, args=launch_args(exe))
