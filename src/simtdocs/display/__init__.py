"""What a lecture page or companion script uses to put computed output on the page.

The reader's API, one import path: ``from simtdocs.display import show, glue, _, Table, Figure``.
It needs numpy, and matplotlib for figures; nothing of the site build.

- ``show(obj)``: put a :class:`Table`, :class:`Figure`, a label ``_(...)``, text, a number
  or a numpy array under the code block.
- ``glue(name, value, fmt=None)``: make a computed value available to the prose
  as ``{{ name }}``.
- ``_("English label")``: a label, shown in the page's language (gettext catalogs,
  see :mod:`simtdocs.i18n`); ``set_language("zh")`` for Chinese outside the site.
- ``figure(...)``: ``plt.subplots`` with the site's font and SVG settings.
- ``expand_snippets(code)``: what the site makes of ``--8<--`` include lines
  (:mod:`simtdocs.snippets`).

Inside: :mod:`~simtdocs.display.recorder` (``show``/``glue`` and the recording the site's
executor runs a block under), :mod:`~simtdocs.display.text` (values as page text, tables)
and :mod:`~simtdocs.display.figures` (figures drawn per language). The site build itself
(running the pages, the block cache, the MkDocs plugin) is the separate package
``simtdocs_site``.
"""

from simtdocs.i18n import _, set_language
from simtdocs.snippets import expand_snippets

from .figures import Figure, figure
from .recorder import glue, show
from .text import Table

__all__ = ["show", "glue", "_", "set_language", "Table", "Figure", "figure", "expand_snippets"]
