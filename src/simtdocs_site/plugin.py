"""The MkDocs plugin: the executor and the post-processing steps on MkDocs' events.

Configured in ``mkdocs.yml`` (registered as ``simtdocs`` in the ``mkdocs.plugins`` entry
points), listed **after** ``search``, ``i18n``, ``mkdocs-jupyter`` and ``glightbox``::

    plugins:
      - search
      - i18n: ...
      - mkdocs-jupyter: ...
      - glightbox: ...
      - simtdocs:
          numbering: true        # every step is on unless turned off
          workers: 2             # default: SIMTDOCS_BUILD_WORKERS, else one per core

Where it is listed matters: events of one priority run in ``plugins:`` order, and each step
below must see what the other plugins made of the page first (the search index Material
wrote, the languages mkdocs-static-i18n built, the lightbox glightbox added). Where a step
must run after mkdocs-static-i18n's own events (priority -100), its handler says so with
``event_priority``. Per event, in order:

=================  =======================================================================
on_config          executor: run every page's missing blocks and the notebooks (workers)
on_files (-110)    the self-hosted Mermaid; notebooks: each language's notebook pages
on_page_markdown   executor: outputs and glue in place, config values; numbering: output boxes
on_pre_page        notebooks: wait for a notebook page's run
on_page_content    numbering: figure and table numbers, reading time; page weight: figures,
                   math, search exclusion
on_page_context    notebooks: the hosted-notebook link
on_post_page       notebooks: no CDN scripts; numbering: cross-references; page weight:
                   lightbox, math stylesheet, Mermaid; language marks: lang, quotes, search
on_post_build      per-language search indexes (-110, after i18n wrote the combined one);
                   the notebooks' workers, the search cache and the browser (-200)
=================  =======================================================================

Each step is a module with one name: :mod:`.executor`, :mod:`.notebooks`,
:mod:`.numbering`, :mod:`.page_weight`, :mod:`.language_marks` (and :mod:`.typography`),
:mod:`.search_languages`; this module only translates MkDocs' objects for them.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

from mkdocs.config import config_options as c
from mkdocs.config.base import Config
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority, get_plugin_logger
from mkdocs.structure.files import File
from simtdocs.snippets import repo_root

from . import (cache_files, comments, diagrams, highlight_cache, language_marks, notebook_pages, notebook_runner,
               notebooks, numbering, page_weight, search_languages, typography)
from .config_values import fill_config
from .executor import BlockError, Site
from .search_cache import SearchCache

log = get_plugin_logger(__name__)


class SimtdocsConfig(Config):
    cache_dir = c.Type(str, default=".cache")  # relative to mkdocs.yml
    workers = c.Optional(c.Type(int))  # worker processes for blocks and notebooks; 0: none
    notebooks = c.Type(bool, default=True)  # the companion notebooks (with mkdocs-jupyter)
    numbering = c.Type(bool, default=True)
    page_weight = c.Type(bool, default=True)
    language_marks = c.Type(bool, default=True)
    search_per_language = c.Type(bool, default=True)


class SimtdocsPlugin(BasePlugin[SimtdocsConfig]):
    """One build's state: the executed site, the notebooks made, the numbering labels."""

    def __init__(self):
        self.site: Site | None = None
        self.made: list[str] = []  # the notebooks, as paths under <cache>/notebooks/<lang>/
        self.used_cache: list[Path] = []  # mkdocs-jupyter's cache files of those notebooks
        self.search: SearchCache | None = None
        self.labels: dict[tuple[str, str], dict[str, str]] = {}  # (language, page url) -> {label: "Figure 5.2"}

    # -- the executor ------------------------------------------------------------------------

    def on_config(self, config):
        missing = [f"node_modules/{d}/{f}" for d, f, _ in diagrams.VENDOR
                   if not (repo_root() / "node_modules" / d / f).is_file()]
        if missing:
            raise PluginError("Self-hosted JavaScript is missing: " + ", ".join(missing)
                              + ". Run `make setup` (it runs `npm ci`) before building the site.")
        # mkdocs-static-i18n builds the other languages by calling mkdocs' build() again, and
        # that runs on_config again: blocks and notebooks run in the first call only.
        if getattr(config.plugins.get("i18n"), "building", False) and self.site is not None:
            self.search.install(_search_plugin(config))
            return config
        root = Path(config.config_file_path).parent
        cache = root / self.config.cache_dir
        cache_files.configure(root, cache / "page-weight")
        highlight_cache.install(cache / "highlight")
        comments.install()  # Chinese pages show their code's comments in Chinese (after the cache: it keeps them)
        workers = self.config.workers
        if workers is None:
            workers = int(os.environ.get("SIMTDOCS_BUILD_WORKERS", os.cpu_count() or 1))
        site = Site(root, cache_dir=cache / "blocks", workers=workers)
        docs = Path(config.docs_dir)
        # A page before its translations (p.md, then p.en.md): errors name the default language first.
        order = sorted(docs.rglob("*.md"), key=lambda p: (re.sub(r"(\.[a-z]{2})?\.md$", "", str(p)), p.name.count(".")))
        pages = {_page_name(p, root): p.read_text(encoding="utf-8") for p in order}
        # The companion notebooks run in the same worker pool as the page blocks, each
        # script once for its notebooks in every language.
        jupyter = config.plugins.get("mkdocs-jupyter") if self.config.notebooks else None
        extra, self.made, self.used_cache = [], [], []
        if jupyter is not None:
            langs = _languages(config)
            try:
                self.made = notebooks.generate(cache / "notebooks", site.env, notebooks.scripts(),
                                               repo_url=config.get("repo_url"), langs=langs)
            except (notebooks.NotebookError, comments.MissingCommentTranslation) as exc:
                raise PluginError(str(exc)) from None
            paths = [cache / "notebooks" / lang / m for lang in langs for m in self.made]
            extra = notebook_runner.prewarm_tasks(dict(jupyter.config), paths)
            # As mkdocs-jupyter names them (its cache_dir as configured, relative or not).
            self.used_cache = [Path(jupyter.config["cache_dir"]) / p.name
                               for p in notebook_runner.cache_paths(dict(jupyter.config), paths).values()]
        try:
            site.prepare(pages, prune=True, extra=extra)
        except BlockError as exc:
            raise PluginError(str(exc)) from None
        self.site, self.labels = site, {}
        self.search = SearchCache(cache / "search")
        self.search.install(_search_plugin(config))
        return config

    @event_priority(-110)  # after mkdocs-static-i18n (-100), which drops files outside docs_dir
    def on_files(self, files, config):
        for d, f, dest in diagrams.VENDOR:
            files.append(File(f, str(repo_root() / "node_modules" / d), config.site_dir,
                              config.use_directory_urls, dest_uri=dest))
        if self.made:
            notebook_pages.add_notebook_pages(files, config, self.made, self.site.root / self.config.cache_dir
                                              / "notebooks", self.used_cache)
        return files

    def _execute(self, markdown, page, config):
        lang = _lang(page, config)
        root = self.site.root
        where = _page_name(Path(page.file.abs_src_path), root)
        # Plan from the whole file so that lines are file lines; mkdocs has cut the front matter.
        full = Path(page.file.abs_src_path).read_text(encoding="utf-8")
        same = full.rstrip().endswith(markdown.rstrip())  # mkdocs drops the final newline
        head = full.rstrip()[: len(full.rstrip()) - len(markdown.rstrip())] if same else ""
        try:
            out = fill_config(self.site.render(where, lang, full if same else markdown), config)
        except (BlockError, ValueError) as exc:
            raise PluginError(str(exc)) from None
        comments.page_language.set(lang)  # the comments of its code blocks, as pymdownx highlights them
        return "\n".join(out.split("\n")[head.count("\n"):]) if head else out

    def on_page_markdown(self, markdown, page, config, files):
        if not page.file.src_uri.endswith(".md"):
            return markdown
        markdown = self._execute(markdown, page, config)
        if self.config.numbering:  # what each block printed or showed, in an output box
            source = Path(page.file.abs_src_path).read_text("utf-8")
            markdown = numbering.mark_output(source, markdown, _lang(page, config))
        return markdown

    def on_pre_page(self, page, config, files):
        # The notebooks run in the workers while the lecture pages render; mkdocs-jupyter
        # reads a notebook's result when it renders its page.
        if page.file.src_uri.endswith(".ipynb") and self.site is not None:
            self.site.wait_for_extra()
        return page

    # -- the page's HTML -------------------------------------------------------------------

    def on_page_content(self, html, page, config, files):
        comments.page_language.set(None)
        where = f"docs/{page.file.src_uri}"
        if self.config.numbering and page.file.src_uri.endswith(".md"):
            html = self._number(html, page, config, where)
        if self.config.page_weight:  # every page, the notebooks too
            try:
                html = page_weight.page_content(html, page.url, Path(config.site_dir), where)
            except page_weight.PageWeightError as exc:
                raise PluginError(str(exc)) from None
        return html

    def _number(self, html, page, config, where):
        lang = _lang(page, config)
        try:
            html, self.labels[(lang, page.url)] = numbering.number(html, lang)
        except ValueError as exc:
            raise PluginError(f"{where}: {exc}") from None
        en = numbering.english_source(page.file.abs_src_path) if _lecture(page) else None
        if en is not None:
            html = html.replace("</h1>", "</h1>\n" + numbering.reading_time_html(numbering.reading_minutes(en), lang), 1)
        return html

    def on_page_context(self, context, page, config, nav):
        """A notebook page gets ``page.hosted_url`` (its .ipynb opened in Colab) when the site's
        repository is on GitHub; overrides/main.html shows it beside the download button."""
        if getattr(page, "nb_url", None):
            page.hosted_url = notebook_pages.hosted_url(page, config)
        return context

    def on_post_page(self, output, page, config):
        output = notebook_pages.without_cdn_scripts(output, page)
        where = f"docs/{page.file.src_uri}"
        if self.config.numbering and page.file.src_uri.endswith(".md"):
            try:
                output = numbering.fill_refs(output, lambda href: self._resolve(href, page, config))
            except ValueError as exc:
                raise PluginError(f"{where}: {exc}") from None
        if self.config.page_weight:
            try:
                output = page_weight.finished_page(output, (Path(config.site_dir) / page.file.dest_uri).parent, where)
            except page_weight.PageWeightError as exc:
                raise PluginError(str(exc)) from None
        lang = language_marks.page_language(output)
        if self.config.language_marks:
            output = language_marks.mark_languages(typography.curly_quotes(output), lang)
        if self.config.search_per_language and lang in _default_and_others(config)[1] and page.url.startswith(f"{lang}/"):
            output = search_languages.point_search_at_language(output, lang)
        return output

    def _resolve(self, href: str, page, config) -> str | None:
        """The name of the label an empty link points to, on this page or another (all pages
        of this language are rendered by now)."""
        path, _, label = href.partition("#")
        if not path:
            url = page.url
        else:
            base = page.url if page.url.endswith("/") else posixpath.dirname(page.url) + "/"
            url = posixpath.normpath(posixpath.join(base, path)).lstrip("./") + "/"
            url = "" if url in ("/", "./") else url
        return self.labels.get((_lang(page, config), url), {}).get(label)

    # -- the end of the build ------------------------------------------------------------

    @event_priority(-110)  # after mkdocs-static-i18n (-100) wrote the index of all languages
    def _search_indexes(self, config):
        if _nested(config) or not self.config.search_per_language:
            return  # an inner build of one language: the combined index is not written yet
        default, others = _default_and_others(config)
        counts = search_languages.write_search_indexes(Path(config.site_dir), default, others)
        if counts:
            log.info("search index per language: %s", ", ".join(f"{k} {v} entries" for k, v in counts.items()))

    @event_priority(-200)  # after mkdocs-static-i18n (-100) has built the other languages
    def _finish(self, config):
        if self.site is not None:
            self.site.wait_for_extra()  # a build with no notebook page: the workers end here
        if _nested(config):
            return  # a nested per-language build; the outer call comes last
        if self.search is not None:
            self.search.prune()
        page_weight.close(log.info)

    on_post_build = CombinedEvent(_search_indexes, _finish)

    def on_build_error(self, error):
        page_weight.close()


def _search_plugin(config):
    return config.plugins.get("material/search") or config.plugins.get("search")


def _nested(config) -> bool:
    """True inside mkdocs-static-i18n's build of another language."""
    return bool(getattr(config.plugins.get("i18n"), "building", False))


def _languages(config) -> tuple[str, ...]:
    langs = tuple(getattr(config.plugins.get("i18n"), "build_languages", None) or ())
    return langs or (config.theme["language"],)


def _default_and_others(config) -> tuple[str, list[str]]:
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return config.theme.get("language", "en"), []
    return i18n.default_language, [lang for lang in i18n.build_languages if lang != i18n.default_language]


def _lang(page, config) -> str:
    return getattr(page.file, "locale", None) or config.theme["language"] or "en"


def _lecture(page) -> bool:
    src = page.file.src_uri
    return src.endswith(".md") and not src.startswith(("index", "glossary"))


def _page_name(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
