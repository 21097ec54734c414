# Two entry points for a fresh machine (see README.md):
#   make serve   set up everything, build the site and serve it on http://127.0.0.1:8000
#   make test    set up everything and run the whole test suite (what CI runs)
#   make check   the one-minute loop: engine, dialect, zoo, puzzles and one page (PAGE=...)
# Every step is idempotent and quick when already done.

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
export NO_MKDOCS_2_WARNING := 1

.PHONY: setup serve build test check clean translations
.DEFAULT_GOAL := serve

setup: $(STAMP) node_modules/.installed fonts

$(VENV)/bin/python:
	python3 -m venv $(VENV)

# Both distributions of the repository, editable: simtdocs (the simulator, the reader's API)
# and simtdocs-site (src/simtdocs_site: the site build and its MkDocs plugin), with the test
# extras and Triton (its interpreter is what tests/triton compares the Triton front end with).
# Re-install only when one of their pyproject.toml files changes.
$(STAMP): pyproject.toml src/simtdocs_site/pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,figures,triton]" -e src/simtdocs_site
	touch $@

# MathJax and Mermaid are served by the site itself, never by a CDN.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# A CJK font for Chinese figure labels (matplotlib would draw empty boxes).
fonts:
	@fc-list 2>/dev/null | grep -qi "WenQuanYi\|Noto Sans CJK" || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq fonts-wqy-microhei; \
	  else echo "Install a CJK font: sudo apt-get install fonts-wqy-microhei"; exit 1; fi; }

# The browser tests and the build's diagrams drive Debian's chromium-headless-shell, Chromium's
# own headless browser (simtdocs_site/chromium.py; Playwright cannot download its own here).
chromium:
	@command -v chromium-headless-shell >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell; \
	  else echo "chromium-headless-shell missing: sudo apt-get install chromium-headless-shell (browser tests use chromium if it is there, else skip)"; fi; }

# Chromium draws the Mermaid diagrams at build time (simtdocs_site.diagrams); without it
# the built pages fall back to drawing them in the reader's browser.
build: setup chromium
	$(VENV)/bin/mkdocs build --strict

serve: build
	$(VENV)/bin/mkdocs serve -a 127.0.0.1:8000

# pytest-xdist runs the tests in one worker per core (TEST_WORKERS=0: in one process, which
# must give the same pass/fail list); the strict site build is made once for the run and
# shared by the workers (tests/site_build.py); the page blocks (--codeblocks docs) run in the
# same session. The 25 slowest tests close the report.
TEST_WORKERS ?= auto
test: setup chromium
	$(VENV)/bin/pytest -q -n $(TEST_WORKERS) --durations=25 --codeblocks tests docs

# The contributor's loop, under a minute: the engines, the dialect, the zoo at the engine's own
# batching, the puzzles, and the page being edited run as the strict build runs it (both
# languages, glue included). The benchmarks' own smoke tests (tests/test_benchmarks.py) are
# left to `make test`. Run `make test` before sending a change: it is the whole suite.
PAGE ?= docs/p2/memory.md
CHECK_TESTS := $(filter-out tests/test_benchmarks.py,$(wildcard tests/test_*.py)) tests/analytic tests/cuda tests/puzzles tests/zoo
check: setup
	SIMTDOCS_ZOO_BATCHINGS=1 $(VENV)/bin/pytest -q -n $(TEST_WORKERS) $(CHECK_TESTS)
	$(PY) -m simtdocs_site.executor $(PAGE)

# After adding or changing a _("label"): merge the labels into the catalogs and compile
# them (src/simtdocs/locale/zh/LC_MESSAGES/*.po); then fill the new msgstr lines.
translations: setup
	$(PY) -m simtdocs_site.catalogs

clean:
	rm -rf site .cache
