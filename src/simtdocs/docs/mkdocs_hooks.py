"""The mkdocs hook functions; ``hooks/site_hooks.py`` re-exports them.

- ``on_config``: the self-hosted JavaScript (Mermaid) must be installed.
- ``on_files``: serve that JavaScript from the site, and add the companion
  notebooks as pages, each language its own notebook (after mkdocs-static-i18n).
- ``on_config`` also runs every page's python fences that have no cached result,
  in fresh worker processes (:class:`simtdocs.docs.build.Site`), once per build for
  both languages, and makes Material's search index reuse the entries of pages
  whose HTML did not change (Chinese segmentation by jieba is the costly part).
- ``on_page_markdown``: put the block outputs under their fences and fill ``{{ name }}``,
  and ``{{ config.repo_url }}`` (the install page's commands) from the configuration.
- ``on_page_content``: the page's code blocks have been highlighted, their comments in the
  page's language (:mod:`simtdocs.docs.comments`, set in ``on_page_markdown``).
- ``on_page_context``: the "open in a hosted notebook" address of a notebook page.
- ``on_post_page``: drop the CDN script tags nbconvert puts in notebook pages.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from types import SimpleNamespace

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

from . import build, comments, highlight_cache, notebook_runner, notebooks
from .snippets import repo_root

# (package folder under node_modules, file, where the site serves it). Formulas are typeset
# at build time (hooks/page_weight.py), so no MathJax is served; Mermaid stays for the
# fallback when the build has no Chromium to draw the diagrams.
VENDOR = [
    ("mermaid/dist", "mermaid.min.js", "assets/vendor/mermaid/mermaid.min.js"),
]
CACHE = ".cache/notebooks"
_state: dict = {}


def on_config(config, **kwargs):
    missing = [f"node_modules/{d}/{f}" for d, f, _ in VENDOR if not (repo_root() / "node_modules" / d / f).is_file()]
    if missing:
        raise PluginError(
            "Self-hosted JavaScript is missing: " + ", ".join(missing)
            + ". Run `make setup` (it runs `npm ci`) before building the site."
        )
    # mkdocs-static-i18n builds the other languages by calling mkdocs' build() again, and
    # that runs on_config again: the blocks and notebooks are run (if they must) in the
    # first call only, once for every language.
    i18n = config["plugins"].get("i18n")
    if getattr(i18n, "building", False) and "site" in _state:
        _cache_search_entries(config, _state["root"])
        return config
    root = Path(config["config_file_path"]).parent
    highlight_cache.install(root / ".cache" / "highlight")
    comments.install()  # a Chinese page shows its code's comments in Chinese (after the cache: it keeps them)
    site = build.Site(root, workers=int(os.environ.get("SIMTDOCS_BUILD_WORKERS", os.cpu_count() or 1)))
    docs = Path(config["docs_dir"])
    # A page before its translations (p.md, then p.en.md): errors name the default language first.
    order = sorted(docs.rglob("*.md"), key=lambda p: (re.sub(r"(\.[a-z]{2})?\.md$", "", str(p)), p.name.count(".")))
    pages = {_page_name(p, root): p.read_text(encoding="utf-8") for p in order}
    scripts = notebooks.scripts()
    # The companion notebooks run in the same worker pool as the page blocks.
    # Each language has its own notebook (its Markdown and the language of its outputs).
    jupyter = config["plugins"].get("mkdocs-jupyter")
    extra, made, cached = [], [], []
    if jupyter is not None:
        try:
            made = notebooks.generate(root / CACHE, site.env, scripts, repo_url=config.get("repo_url"),
                                      langs=_languages(config))
        except (notebooks.NotebookError, comments.MissingCommentTranslation) as exc:
            raise PluginError(str(exc)) from None
        paths = [root / CACHE / lang / m for lang in _languages(config) for m in made]
        extra = notebook_runner.prewarm_tasks(dict(jupyter.config), paths)
        # As mkdocs-jupyter names them (its cache_dir as configured, relative or not).
        cached = [Path(jupyter.config["cache_dir"]) / p.name
                  for p in notebook_runner.cache_paths(dict(jupyter.config), paths).values()]
    try:
        site.prepare(pages, prune=True, extra=extra)
    except build.BlockError as exc:
        raise PluginError(str(exc)) from None
    _state.clear()
    _state.update(site=site, sim_hash=site.env, scripts=scripts, root=root, notebooks=made, search_used=set(),
                  notebook_cache=cached)
    _cache_search_entries(config, root)
    return config


def _languages(config) -> tuple[str, ...]:
    i18n = config["plugins"].get("i18n")
    langs = tuple(getattr(i18n, "build_languages", None) or ())
    return langs or (config["theme"]["language"],)


def _page_name(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def on_pre_build(config, **kwargs):
    _state.setdefault("sim_hash", build.environment_key())


@event_priority(-110)  # after mkdocs-static-i18n (-100): see below
def on_files(files, config, **kwargs):
    """Add the self-hosted JavaScript and the companion notebooks to the site.

    mkdocs-static-i18n rebuilds every page File from ``docs_dir`` and drops a
    page that lives elsewhere ("Unhandled file case"), which is why it and
    mkdocs-jupyter do not combine (mkdocs-static-i18n issue #198). So the
    notebooks are added after it has run, already wrapped as mkdocs-jupyter
    pages, under ``notebooks/`` for the default language and ``<lang>/notebooks/``
    for the others, with the i18n attributes its language switcher reads.
    """
    from mkdocs_jupyter.plugin import NotebookFile

    root = repo_root()
    site_dir, urls = config["site_dir"], config["use_directory_urls"]
    for d, f, dest in VENDOR:
        file = File(f, str(root / "node_modules" / d), site_dir, urls, dest_uri=dest)
        files.append(file)

    if config["plugins"].get("mkdocs-jupyter") is None:
        return files  # a site without the notebook plugin (the tests' probe sites)
    i18n = config["plugins"].get("i18n")
    lang = getattr(i18n, "current_language", None) or config["theme"]["language"]
    default = getattr(i18n, "default_language", lang)
    langs = list(getattr(i18n, "build_languages", None) or [lang])
    cache = root / CACHE / lang
    made = _state.get("notebooks")
    if made is None:
        made = notebooks.generate(root / CACHE, _state["sim_hash"], _state.get("scripts"),
                                  repo_url=config.get("repo_url"), langs=(lang,))
    # mkdocs-jupyter forgets, at each language's build, the cache entries it used, and evicts
    # the others at the end of that build: the other language's notebooks would run again
    # at every build. Count them as used.
    jupyter = config["plugins"]["mkdocs-jupyter"]
    if hasattr(jupyter, "_used_cache_paths"):
        jupyter._used_cache_paths.update(_state.get("notebook_cache", ()))
    for rel in made:
        nb = NotebookFile(File(rel, str(cache), site_dir, urls), use_directory_urls=urls, site_dir=site_dir)
        plain_dest, plain_url = nb.dest_path, nb.url

        def localize(path, code):
            return path if code == default else f"{code}/{path}"

        nb.dest_path = localize(plain_dest, lang)
        nb.abs_dest_path = str(Path(site_dir) / nb.dest_path)
        nb.url = localize(plain_url, lang)
        nb.locale = nb.locale_alternate_of = lang
        nb.localization = None if lang == default else lang
        nb.norm_src_uri = rel
        nb.alternates = {code: SimpleNamespace(url=localize(plain_url, code)) for code in langs}
        nb.alternates[lang] = nb
        files.append(nb)
    return files


def on_page_markdown(markdown, page, config, files, **kwargs):
    if not page.file.src_uri.endswith(".md"):
        return markdown
    lang = getattr(page.file, "locale", None) or config["theme"]["language"] or "en"
    root = _state.get("root") or Path(config["config_file_path"]).parent
    where = _page_name(Path(page.file.abs_src_path), root)
    site = _state.get("site") or build.Site(root, workers=0)
    # Plan from the whole file so that lines are file lines; mkdocs has cut the front matter.
    full = Path(page.file.abs_src_path).read_text(encoding="utf-8")
    same = full.rstrip().endswith(markdown.rstrip())  # mkdocs drops the final newline
    head = full.rstrip()[: len(full.rstrip()) - len(markdown.rstrip())] if same else ""
    try:
        out = site.render(where, lang, full if same else markdown)
    except (build.BlockError, ValueError) as exc:
        raise PluginError(str(exc)) from None
    out = fill_config(out, config)
    comments.page_language.set(lang)  # the comments of its code blocks, as pymdownx highlights them
    return "\n".join(out.split("\n")[head.count("\n"):]) if head else out


def on_page_content(html, page, config, files, **kwargs):
    comments.page_language.set(None)
    return html


CONFIG_REF = re.compile(r"\{\{\s*config\.(\w+)\s*\}\}")
# What a page shows for the repository's address when the build has none (REPO_URL unset,
# see mkdocs.yml): plainly a placeholder, and a command copied with it fails at once.
NO_REPO_URL = "https://github.com/<owner>/<repository>"


# What a page says only when the build knows the repository's address, and what it says instead:
#   <!-- if repo_url --> … <!-- else --> … <!-- end if -->
IF_REPO = re.compile(r"^[ \t]*<!-- if repo_url -->[ \t]*\n(.*?)"
                     r"(?:^[ \t]*<!-- else -->[ \t]*\n(.*?))?^[ \t]*<!-- end if -->[ \t]*$\n?", re.S | re.M)


def fill_config(markdown: str, config) -> str:
    """``{{ config.repo_url }}``, ``{{ config.install_spec }}`` (what ``pip install`` takes)
    and ``{{ config.python }}`` (the oldest Python the package supports, from pyproject.toml)
    filled in, in prose and in code blocks alike; ``<!-- if repo_url -->`` blocks kept or
    swapped for their ``<!-- else -->`` part, so a build without the address shows no command
    with a placeholder in it."""
    repo_url = (config.get("repo_url") or "").rstrip("/")
    if "<!-- if repo_url -->" in markdown:
        markdown = IF_REPO.sub(lambda m: m.group(1) if repo_url else (m.group(2) or ""), markdown)
    if "{{" not in markdown:
        return markdown
    import tomllib

    project = tomllib.loads((repo_root() / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    values = {
        "repo_url": repo_url or NO_REPO_URL,
        "install_spec": notebooks.install_spec(repo_url or NO_REPO_URL),
        "python": re.fullmatch(r">=\s*([\d.]+)", project["requires-python"].strip()).group(1),
    }

    def value(m):
        if m.group(1) not in values:
            raise PluginError(f"{{{{ config.{m.group(1)} }}}}: a page can use only "
                              + ", ".join(f"config.{k}" for k in values))
        return values[m.group(1)]

    return CONFIG_REF.sub(value, markdown)


def on_page_context(context, page, config, **kwargs):
    """A notebook page gets ``page.hosted_url`` (its .ipynb opened in Colab) when the site's
    repository is on GitHub; overrides/main.html shows it beside the download button."""
    if getattr(page, "nb_url", None):
        folder = Path(page.file.dest_path).parent.as_posix()
        ipynb = f"{folder}/{Path(page.file.abs_src_path).name}"
        page.hosted_url = notebooks.hosted_url(config.get("repo_url"), ipynb)
    return context


CDN_SCRIPT = re.compile(
    r"<script[^>]*>(?:(?!</script>).)*?(?:cdnjs\.cloudflare\.com|unpkg\.com|cdn\.jsdelivr\.net)(?:(?!</script>).)*?</script>|"
    r"<script[^>]*src=\"https?://[^\"]+\"[^>]*>\s*</script>",
    re.S,
)


# -- search index: reuse the entries of unchanged pages ------------------------------------


def _cache_search_entries(config, root: Path) -> None:
    """Material's search plugin parses every page's HTML and segments its Chinese with
    jieba on every build; reuse the entries of a page whose HTML, URL, title and
    table of contents did not change (``.cache/search/``)."""
    search = config["plugins"].get("material/search") or config["plugins"].get("search")
    index = getattr(search, "search_index", None)
    if index is None or getattr(index, "_simtdocs_cached", False):
        return
    folder = root / ".cache" / "search"
    folder.mkdir(parents=True, exist_ok=True)
    original = index.add_entry_from_context
    used: set[str] = _state.setdefault("search_used", set())  # shared by every language's index
    settings = json.dumps({k: search.config.get(k) for k in ("separator", "pipeline", "lang")}, default=str)

    def toc(items):
        return [(t.id, t.title, t.url, toc(t.children)) for t in items]

    def add_entry_from_context(page):
        h = hashlib.sha256()
        for part in (settings, page.url, str(page.title), json.dumps(toc(page.toc), default=str),
                     json.dumps(page.meta.get("search"), default=str), json.dumps(page.meta.get("tags"), default=str),
                     page.content or ""):
            h.update(part.encode("utf-8") + b"\0")
        key = h.hexdigest()[:32]
        used.add(key)
        path = folder / f"{key}.json"
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(entries, list) and all(isinstance(e, dict) and "location" in e for e in entries):
                index.entries.extend(entries)
                return
        except (OSError, ValueError):
            pass
        before = len(index.entries)
        original(page)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(index.entries[before:], ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)

    index.add_entry_from_context = add_entry_from_context
    index._simtdocs_cached = True
    _state["search_dir"] = folder


def on_pre_page(page, config, files, **kwargs):
    # The notebooks run in the workers while the lecture pages render; mkdocs-jupyter
    # reads a notebook's result when it renders its page.
    if page.file.src_uri.endswith(".ipynb") and "site" in _state:
        _state["site"].wait_for_extra()
    return page


@event_priority(-200)  # after mkdocs-static-i18n (-100) has built the other languages
def on_post_build(config, **kwargs):
    if "site" in _state:
        _state["site"].wait_for_extra()  # a build with no notebook page: the workers end here
    i18n = config["plugins"].get("i18n")
    if i18n is not None and getattr(i18n, "building", False):
        return  # a nested per-language build; the outer call comes last
    used, folder = _state.get("search_used"), _state.get("search_dir")
    if used and folder is not None:
        for p in folder.glob("*.json"):
            if p.stem not in used:
                p.unlink(missing_ok=True)


def on_post_page(output, page, config, **kwargs):
    if getattr(page, "nb_url", None):
        # nbconvert's template loads MathJax/Mermaid from CDNs; our notebooks have
        # no formulas or diagrams that need them.
        output = CDN_SCRIPT.sub("", output)
    return output
