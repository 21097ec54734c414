"""The mkdocs hook functions; ``hooks/site_hooks.py`` re-exports them.

- ``on_config``: the self-hosted JavaScript (MathJax, Mermaid) must be installed.
- ``on_files``: serve that JavaScript from the site, and add the companion
  notebooks as pages (before mkdocs-jupyter and mkdocs-static-i18n see the files).
- ``on_page_markdown``: run the page's python fences and fill ``{{ name }}``.
- ``on_post_page``: drop the CDN script tags nbconvert puts in notebook pages.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

from . import build, notebooks
from .snippets import repo_root

# (package folder under node_modules, file, where the site serves it)
VENDOR = [
    ("mathjax/es5", "tex-svg-full.js", "assets/vendor/mathjax/tex-svg-full.js"),
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
    # Once per `mkdocs build` (mkdocs-static-i18n re-runs the build, not on_config,
    # for each language): every language sees the same simulator and notebooks.
    _state["sim_hash"] = build.simulator_hash()
    _state["scripts"] = notebooks.scripts()
    return config


def on_pre_build(config, **kwargs):
    _state.setdefault("sim_hash", build.simulator_hash())


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

    i18n = config["plugins"].get("i18n")
    lang = getattr(i18n, "current_language", None) or config["theme"]["language"]
    default = getattr(i18n, "default_language", lang)
    langs = list(getattr(i18n, "build_languages", None) or [lang])
    cache = root / CACHE
    for rel in notebooks.generate(cache, _state["sim_hash"], _state.get("scripts")):
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
    where = f"docs/{page.file.src_uri}"
    try:
        return build.process(markdown, where, lang, _state.get("sim_hash", ""))
    except build.BlockError as exc:
        raise PluginError(str(exc)) from None


CDN_SCRIPT = re.compile(
    r"<script[^>]*>(?:(?!</script>).)*?(?:cdnjs\.cloudflare\.com|unpkg\.com|cdn\.jsdelivr\.net)(?:(?!</script>).)*?</script>|"
    r"<script[^>]*src=\"https?://[^\"]+\"[^>]*>\s*</script>",
    re.S,
)


def on_post_page(output, page, config, **kwargs):
    if getattr(page, "nb_url", None):
        # nbconvert's template loads MathJax/Mermaid from CDNs; the site already
        # serves its own MathJax, and our notebooks draw no Mermaid.
        output = CDN_SCRIPT.sub("", output)
    return output
