"""Page weight on a slow link: every page of the built site, both languages.

Serves the built site with gzip (as GitHub Pages does), opens each page in a fresh
Chromium context (empty cache) throttled through the DevTools protocol to
1.6 Mbit/s down, 750 kbit/s up and 150 ms round trips, and reports per page:

- transferred: compressed bytes of every response the page caused, including the
  search index its worker fetches (waits until the network is quiet);
- FCP: first contentful paint;
- math ready: when every formula on the page is typeset (the document is parsed
  and each ``.arithmatex`` holds its ``mjx-container``), "—" on a page without math;
- all its images: the gzip bytes of every image file the page links, also those a
  lazy ``<img>`` fetches only when the reader scrolls to it (not in "transferred").

Targets (issue 14): ≤ 1 MB transferred, FCP ≤ 3 s, math ready ≤ 6 s.

    .venv/bin/python benchmarks/page_weight.py                # builds the site first
    .venv/bin/python benchmarks/page_weight.py --site site    # an already built site
    .venv/bin/python benchmarks/page_weight.py --only p2 --json weights.json

The pages come from the built site (every ``index.html``), never from a fixed list.
Exits 1 when a page misses a target. Needs Debian's chromium and Playwright's Python
client (never ``playwright install``).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import io
import json
import mimetypes
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from simtdocs_site.chromium import chromium, launch

ROOT = Path(__file__).resolve().parents[1]
DOWN_BPS, UP_BPS, RTT_MS = 1.6e6, 750e3, 150
LIMIT_BYTES, LIMIT_FCP, LIMIT_MATH = 1_000_000, 3.0, 6.0
COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg+xml", "application/xml")

# Runs before the page's own scripts: records when the formulas are all typeset.
MATH_PROBE = """(() => {
  const ready = () => [...document.querySelectorAll('.arithmatex')].every(e => e.querySelector('mjx-container'));
  const mark = () => {
    if (window.__mathReady !== undefined) return;
    if (!document.querySelector('.arithmatex')) { window.__mathReady = null; return; }
    if (ready()) window.__mathReady = performance.now();
  };
  document.addEventListener('DOMContentLoaded', () => {
    mark();
    if (window.__mathReady === undefined)
      new MutationObserver(mark).observe(document.body, {childList: true, subtree: true});
  });
})();"""


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    """Static files, gzip-compressed when the client accepts it and the type compresses."""

    _cache: dict[str, bytes] = {}
    enabled = True  # --no-gzip: a server that sends everything as is

    def log_message(self, *args):
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not self.path.split("?")[0].endswith("/"):
                return super().send_head()  # the redirect to the slash URL
            path = path / "index.html"
        ctype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if (not self.enabled or not path.is_file() or "gzip" not in self.headers.get("Accept-Encoding", "")
                or not ctype.startswith(COMPRESSIBLE)):
            return super().send_head()
        key = str(path)
        if key not in self._cache:
            self._cache[key] = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        body = self._cache[key]
        self.send_response(200)
        self.send_header("Content-Type", ctype + ("; charset=utf-8" if ctype.startswith("text/") else ""))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


def serve(site: Path):
    """(server, base_url): the site on 127.0.0.1 with gzip, in a daemon thread."""
    server = _Server(("127.0.0.1", 0), functools.partial(GzipHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def pages(site: Path) -> list[tuple[str, str]]:
    """(lang, url path) of every page of the built site; English under /en/."""
    out = []
    for index in sorted(site.rglob("index.html")):
        rel = index.parent.relative_to(site).as_posix()
        path = "/" if rel == "." else f"/{rel}/"
        out.append(("en" if path.startswith("/en/") else "zh", path))
    return out


def lazy_images_bytes(site: Path, path: str) -> int:
    """Gzip bytes of every image file the page links (lazy ones arrive as the reader scrolls)."""
    import re

    page = site / path.lstrip("/") / "index.html"
    total = 0
    for src in set(re.findall(r'<img\b[^>]*\bsrc="([^"#?]+)"', page.read_text(encoding="utf-8"))):
        target = (page.parent / src).resolve()
        if target.is_file() and site.resolve() in target.parents:
            data = target.read_bytes()
            total += len(gzip.compress(data, mtime=0)) if target.suffix == ".svg" else len(data)
    return total


def throttle(context, tab) -> None:
    cdp = context.new_cdp_session(tab)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", {
        "offline": False, "latency": RTT_MS,
        "downloadThroughput": DOWN_BPS / 8, "uploadThroughput": UP_BPS / 8,
    })


def measure(browser, url: str, quiet_ms: int = 1500, timeout_s: float = 180) -> dict:
    """Open ``url`` throttled in a fresh context; what it cost and when it was readable. A page
    that has not loaded after ``timeout_s`` (a 1 MB page needs about 6 s on this link; the
    margin is for a host under load) raises ``TimeoutError`` naming the requests still open."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    context.add_init_script(MATH_PROBE)
    transferred, requests, pending = [0], [0], set()
    last = [time.monotonic()]

    def finished(req):
        pending.discard(req)
        last[0] = time.monotonic()
        try:
            s = req.sizes()
            body = s["responseBodySize"]
            if not body:  # a worker's script can report 0: take the length the server sent
                body = int((req.response().headers or {}).get("content-length", 0))
            transferred[0] += body + s["responseHeadersSize"]
        except Exception:
            pass

    def started(req):
        pending.add(req)
        requests[0] += 1
        last[0] = time.monotonic()

    context.on("request", started)
    context.on("requestfinished", finished)
    context.on("requestfailed", lambda req: (pending.discard(req), last.__setitem__(0, time.monotonic())))
    tab = context.new_page()
    throttle(context, tab)
    try:
        tab.goto(url, wait_until="commit", timeout=timeout_s * 1000)
        try:
            tab.wait_for_load_state("load", timeout=timeout_s * 1000)
        except Exception as exc:
            open_ones = sorted(r.url for r in pending)
            raise TimeoutError(f"{url}: not loaded after {timeout_s:.0f} s on the throttled link, "
                               f"{transferred[0]:,} bytes in; {len(open_ones)} requests still open: "
                               f"{open_ones[:5]}") from exc
        end = time.monotonic() + timeout_s
        while time.monotonic() < end and (pending or time.monotonic() - last[0] < quiet_ms / 1000):
            tab.wait_for_timeout(100)
        fcp = tab.evaluate("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime ?? null")
        math = tab.evaluate("window.__mathReady === undefined ? -1 : window.__mathReady")
    finally:
        context.close()
    return {
        "bytes": transferred[0],
        "requests": requests[0],
        "fcp_s": None if fcp is None else fcp / 1000,
        # -1: the page has formulas that never got typeset
        "math_s": None if math is None else (float("inf") if math == -1 else math / 1000),
    }


def verdict(m: dict) -> list[str]:
    missed = []
    if m["bytes"] > LIMIT_BYTES:
        missed.append("bytes")
    if m["fcp_s"] is None or m["fcp_s"] > LIMIT_FCP:
        missed.append("FCP")
    if m["math_s"] is not None and m["math_s"] > LIMIT_MATH:
        missed.append("math")
    return missed


def table(rows: list[dict]) -> str:
    lines = [
        "| page | lang | transferred | requests | FCP | math ready | within budget | all its images (gzip) |",
        "|---|---|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        math = "—" if r["math_s"] is None else ("never" if r["math_s"] == float("inf") else f"{r['math_s']:.1f} s")
        fcp = "—" if r["fcp_s"] is None else f"{r['fcp_s']:.1f} s"
        missed = verdict(r)
        lines.append(f"| {r['path']} | {r['lang']} | {r['bytes'] / 1e6:.2f} MB | {r['requests']} | {fcp} | {math} | "
                     f"{'yes' if not missed else 'NO: ' + ', '.join(missed)} | {r.get('images', 0) / 1e6:.2f} MB |")
    return "\n".join(lines)


def build_site() -> Path:
    out = Path(tempfile.mkdtemp(prefix="simtdocs-page-weight-"))
    print(f"building the site (mkdocs build --strict -d {out}) ...", file=sys.stderr)
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=ROOT,
                          env=dict(os.environ, NO_MKDOCS_2_WARNING="1"), capture_output=True, text=True)
    if proc.returncode:
        sys.exit("mkdocs build failed:\n" + (proc.stdout + proc.stderr)[-3000:])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", type=Path, help="an already built site (default: build one)")
    ap.add_argument("--only", default="", help="only pages whose URL path contains this")
    ap.add_argument("--json", type=Path, help="also write the measurements here")
    ap.add_argument("--no-gzip", action="store_true", help="serve uncompressed (a server without gzip)")
    args = ap.parse_args(argv)
    GzipHandler.enabled = not args.no_gzip

    exe = chromium()
    if exe is None:
        sys.exit("Chromium not found (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    site = args.site.resolve() if args.site else build_site()
    server, base = serve(site)
    rows = []
    try:
        with sync_playwright() as pw:
            browser = launch(pw, exe)
            for lang, path in pages(site):
                if args.only and args.only not in path:
                    continue
                m = measure(browser, base + path)
                rows.append({"path": path, "lang": lang, **m, "images": lazy_images_bytes(site, path)})
                print(f"{path:60s} {m['bytes'] / 1e6:5.2f} MB  FCP {m['fcp_s'] or 0:4.1f} s", file=sys.stderr)
            browser.close()
    finally:
        server.shutdown()
        if not args.site:
            shutil.rmtree(site, ignore_errors=True)
    print(f"Throttled to {DOWN_BPS / 1e6:g} Mbit/s down, {RTT_MS} ms RTT, "
          f"{'no gzip' if args.no_gzip else 'gzip'}; targets: "
          f"≤ {LIMIT_BYTES / 1e6:g} MB, FCP ≤ {LIMIT_FCP:g} s, math ready ≤ {LIMIT_MATH:g} s.\n")
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str), encoding="utf-8")
    return 1 if any(verdict(r) for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
