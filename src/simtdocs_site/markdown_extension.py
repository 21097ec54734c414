"""The executor as a Python-Markdown extension: a page's blocks run as it is converted.

::

    import markdown
    from simtdocs_site.markdown_extension import ExecuteExtension

    html = markdown.markdown(text, extensions=[
        ExecuteExtension(page="docs/p2/memory.en.md", lang="en"),
        "tables", "attr_list", "md_in_html", "pymdownx.superfences", "pymdownx.snippets", ...])

Its preprocessor runs first, on the page as written (before ``pymdownx.snippets`` expands
the ``--8<--`` lines, whose line numbers the errors name): the blocks run through
:mod:`simtdocs_site.executor` (cached, in worker processes, once for both languages of a
page) and each block's output is put under its fence, the prose's ``{{ name }}`` filled in.
What follows is plain Markdown for the other extensions. An error raises
:class:`simtdocs_site.fences.BlockError` with the page and line.

The MkDocs plugin does not use this extension: it runs every page of the site before the
first is rendered, so that the workers share all the work.
"""

from __future__ import annotations

from markdown import Extension
from markdown.preprocessors import Preprocessor

from .executor import site_for

# Above pymdownx.snippets (32) and Python-Markdown's own whitespace normalisation (30).
PRIORITY = 40


class ExecutePreprocessor(Preprocessor):
    """Put each block's output under its fence and fill in the glue (see the module)."""

    def __init__(self, md, extension: "ExecuteExtension"):
        super().__init__(md)
        self.extension = extension

    def run(self, lines: list[str]) -> list[str]:
        cfg = self.extension.getConfigs()
        site = site_for(cfg["root"] or None, cfg["cache_dir"] or None,
                        None if cfg["workers"] < 0 else cfg["workers"])
        return site.render(cfg["page"], cfg["lang"], "\n".join(lines)).split("\n")


class ExecuteExtension(Extension):
    """Run the page's python blocks and show their output (options: see ``config``)."""

    def __init__(self, **kwargs):
        self.config = {
            "page": ["page.md", "the page's name in error messages, e.g. docs/p2/memory.md"],
            "lang": ["en", "the page's language (a site language: zh or en)"],
            "root": ["", "the folder --8<-- paths are relative to and the blocks run in (default: the repository)"],
            "cache_dir": ["", "where block results are kept (default: <root>/.cache/blocks)"],
            "workers": [-1, "worker processes (default -1: one per core; 0 runs the blocks in this process)"],
        }
        super().__init__(**kwargs)

    def extendMarkdown(self, md) -> None:
        md.preprocessors.register(ExecutePreprocessor(md, self), "simtdocs_execute", PRIORITY)


def makeExtension(**kwargs) -> ExecuteExtension:  # noqa: N802 - Python-Markdown's name
    return ExecuteExtension(**kwargs)
