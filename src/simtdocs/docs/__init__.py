"""The small glue between the lecture pages and the simulator.

Public surface, for page and snippet authors:

- ``show(obj)``: put a :class:`Table`, :class:`Figure`, :class:`T` or any object
  with ``_repr_markdown_()`` under the code block.
- ``glue(name, value, fmt=None)``: make a computed value available to the prose
  as ``{{ name }}``.
- ``T(zh, en)``: a bilingual string.
- ``figure(...)``: ``plt.subplots`` with the site's font and SVG settings.
- ``expand_snippets(code)``: what pymdownx.snippets makes of ``--8<--`` lines.

The mkdocs side (executing fences, caching, notebooks) lives in
:mod:`simtdocs.docs.build` and is wired in by ``hooks/site_hooks.py``.
"""

from .display import Figure, T, Table, figure, glue, show
from .snippets import expand_snippets

__all__ = ["show", "glue", "T", "Table", "Figure", "figure", "expand_snippets"]
