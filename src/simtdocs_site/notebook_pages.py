"""The companion notebooks as pages of a MkDocs site, one notebook per language.

mkdocs-static-i18n rebuilds every page File from ``docs_dir`` and drops a page that lives
elsewhere ("Unhandled file case"), which is why it and mkdocs-jupyter do not combine
(mkdocs-static-i18n issue #198). So the notebooks (written by :mod:`.notebooks` under
``.cache/notebooks/<lang>/``) are added after it has run, already wrapped as mkdocs-jupyter
pages, under ``notebooks/`` for the default language and ``<lang>/notebooks/`` for the
others, with the i18n attributes its language switcher reads. This module is MkDocs- and
mkdocs-jupyter-specific; the notebooks themselves are not.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from mkdocs.structure.files import File

from . import notebooks

# nbconvert's template loads MathJax/Mermaid from CDNs; our notebooks have no formulas or
# diagrams that need them.
CDN_SCRIPT = re.compile(
    r"<script[^>]*>(?:(?!</script>).)*?(?:cdnjs\.cloudflare\.com|unpkg\.com|cdn\.jsdelivr\.net)(?:(?!</script>).)*?</script>|"
    r"<script[^>]*src=\"https?://[^\"]+\"[^>]*>\s*</script>",
    re.S,
)


def add_notebook_pages(files, config, made: list[str], cache: Path, used_cache: list[Path]):
    """Add the notebooks ``made`` (paths under ``cache/<lang>/``) of the language being built
    to ``files``. ``used_cache`` are mkdocs-jupyter's cache files of every language's notebook."""
    from mkdocs_jupyter.plugin import NotebookFile

    site_dir, urls = config["site_dir"], config["use_directory_urls"]
    i18n = config["plugins"].get("i18n")
    lang = getattr(i18n, "current_language", None) or config["theme"]["language"]
    default = getattr(i18n, "default_language", lang)
    langs = list(getattr(i18n, "build_languages", None) or [lang])
    # mkdocs-jupyter forgets, at each language's build, the cache entries it used, and evicts
    # the others at the end of that build: the other language's notebooks would run again
    # at every build. Count them as used.
    jupyter = config["plugins"]["mkdocs-jupyter"]
    if hasattr(jupyter, "_used_cache_paths"):
        jupyter._used_cache_paths.update(used_cache)
    for rel in made:
        nb = NotebookFile(File(rel, str(cache / lang), site_dir, urls), use_directory_urls=urls, site_dir=site_dir)
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


def hosted_url(page, config) -> str | None:
    """The "open in a hosted notebook" address of a notebook page (None for other pages, or
    when the site's repository is not on GitHub)."""
    if not getattr(page, "nb_url", None):
        return None
    folder = Path(page.file.dest_path).parent.as_posix()
    ipynb = f"{folder}/{Path(page.file.abs_src_path).name}"
    return notebooks.hosted_url(config.get("repo_url"), ipynb)


def without_cdn_scripts(output: str, page) -> str:
    """A notebook page without the script tags nbconvert points at CDNs."""
    return CDN_SCRIPT.sub("", output) if getattr(page, "nb_url", None) else output
