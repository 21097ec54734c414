"""What the lecture pages show, importable: one module per lecture (``simtdocs.lectures.exec_model``).

A lecture's code blocks run the experiment (kernel, launch, the line that shows the
result); the tables and figures that line shows are made here, with their labels in
English and their translations in the lecture's gettext catalog
(``locale/<lang>/LC_MESSAGES/<lecture>.po``, see :mod:`simtdocs_site.catalogs`). Being
importable, they let the visible code of a page run when a reader copies it alone into
a fresh ``python``; the page also shows each helper's source, folded under "How this
table is made".
"""
