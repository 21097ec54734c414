"""What a lecture page or companion script uses to put computed output on the page.

Public surface (needs numpy, and matplotlib for figures; nothing of the site build):

- ``show(obj)``: put a :class:`Table`, :class:`Figure`, :class:`T`, text, a number or
  a numpy array under the code block.
- ``glue(name, value, fmt=None)``: make a computed value available to the prose
  as ``{{ name }}``.
- ``_("English label")``: a label, shown in the page's language (gettext catalogs,
  see :mod:`simtdocs.i18n`); ``set_language("zh")`` for Chinese outside the site.
- ``figure(...)``: ``plt.subplots`` with the site's font and SVG settings.
- ``expand_snippets(code)``: what the site makes of ``--8<--`` include lines.

The site build (running the pages' fences, the block cache, the mkdocs hooks,
notebooks, the translation check) lives in :mod:`simtdocs.docs.build`,
:mod:`simtdocs.docs.mkdocs_hooks` and friends, which only ``hooks/site_hooks.py``
and the tests import.
"""

from simtdocs.i18n import _, set_language

from .display import Figure, Table, figure, glue, show
from .snippets import expand_snippets

__all__ = ["show", "glue", "_", "set_language", "Table", "Figure", "figure", "expand_snippets"]
