"""simtdocs_site: what builds the course site, and nothing a reader needs.

The simulator and the reader's display API are the package ``simtdocs`` (``pip install
simtdocs``); this package is the second distribution of the repository, ``simtdocs-site``
(``pip install -e src/simtdocs_site``, which ``make setup`` runs), and only the site build,
the tests and the translation tools import it.

- The executor, no MkDocs: :mod:`.fences` (which blocks run, as ``pytest --codeblocks``
  reads them), :mod:`.runner` (the block cache, worker processes), :mod:`.executor` (a page
  or a site: run, then render per language; :func:`.executor.execute_page`),
  :mod:`.checks` (printed output and glue rules), :mod:`.markdown_extension` (the executor
  as a Python-Markdown extension).
- The steps after it, no MkDocs: :mod:`.numbering` (figure and table numbers, references,
  output boxes, reading time), :mod:`.notebooks` and :mod:`.notebook_runner` (the
  companion notebooks per language), :mod:`.page_weight` (:mod:`.figure_files`,
  :mod:`.math_svg` with ``tex2svg.js``, :mod:`.diagrams`, :mod:`.search_exclusion`,
  :mod:`.cache_files`), :mod:`.language_marks` and :mod:`.typography`,
  :mod:`.search_languages` (one search index per language), :mod:`.config_values`.
- MkDocs and its plugins: :mod:`.plugin` (the ``simtdocs`` plugin, every step on its
  events), :mod:`.notebook_pages` (notebooks as mkdocs-jupyter pages),
  :mod:`.search_cache` (Material's search entries kept between builds),
  :mod:`.highlight_cache` and :mod:`.comments` (pymdownx's highlighted code, cached, with
  its comments in the page's language).
- Authors' tools, ``python -m simtdocs_site.<name>``: :mod:`.catalogs` (``make
  translations``), :mod:`.translations`, :mod:`.numbers`, :mod:`.terms`.
"""
