"""Values of the site's configuration a page may show: ``{{ config.repo_url }}`` and friends.

The install page gives commands with the repository's address in them. The address comes
from the build's configuration (``repo_url``, set by the deploy workflow from ``REPO_URL``);
a build without it shows what to do instead (``<!-- if repo_url -->`` blocks).
"""

from __future__ import annotations

import re
import tomllib

from simtdocs.snippets import repo_root

from .notebooks import install_spec

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
    with a placeholder in it. ``config`` is a mapping with ``repo_url``; an unknown name
    raises ValueError."""
    repo_url = (config.get("repo_url") or "").rstrip("/")
    if "<!-- if repo_url -->" in markdown:
        markdown = IF_REPO.sub(lambda m: m.group(1) if repo_url else (m.group(2) or ""), markdown)
    if "{{" not in markdown:
        return markdown
    project = tomllib.loads((repo_root() / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    values = {
        "repo_url": repo_url or NO_REPO_URL,
        "install_spec": install_spec(repo_url or NO_REPO_URL),
        "python": re.fullmatch(r">=\s*([\d.]+)", project["requires-python"].strip()).group(1),
    }

    def value(m):
        if m.group(1) not in values:
            raise ValueError(f"{{{{ config.{m.group(1)} }}}}: a page can use only "
                             + ", ".join(f"config.{k}" for k in values))
        return values[m.group(1)]

    return CONFIG_REF.sub(value, markdown)
