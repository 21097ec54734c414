"""mkdocs hooks of the course site; the code lives in ``simtdocs.docs.mkdocs_hooks``."""

from simtdocs.docs.mkdocs_hooks import (  # noqa: F401
    on_config,
    on_files,
    on_page_content,
    on_page_context,
    on_page_markdown,
    on_post_build,
    on_post_page,
    on_pre_build,
    on_pre_page,
)
