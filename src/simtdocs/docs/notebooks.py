"""Companion scripts (``snippets/<lecture>/NN_topic.py``) as notebooks.

jupytext turns each script ("percent" cells ``# %%`` welcome) into an
``.ipynb`` under ``.cache/notebooks/``; the site hook adds them as pages that
mkdocs-jupyter executes. The notebook metadata carries a hash of the simulator
so that mkdocs-jupyter's cache (keyed by notebook content) is invalidated when
the simulator changes.
"""

from __future__ import annotations

from pathlib import Path

from .snippets import SECTION_MARK, repo_root


def scripts() -> list[Path]:
    root = repo_root() / "snippets"
    return sorted(p for p in root.glob("*/[0-9]*.py") if p.is_file())


def write_notebook(script: Path, out: Path, sim_hash: str) -> Path:
    import jupytext

    nb = jupytext.read(script, fmt="py:percent")
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["simtdocs"] = {"source": script.relative_to(repo_root()).as_posix(), "simulator": sim_hash}
    nb.metadata.pop("jupytext", None)
    for cell in nb.cells:  # section markers are for the pages, not for notebook readers
        lines = cell["source"].split("\n")
        cell["source"] = "\n".join(ln for ln in lines if not SECTION_MARK.match(ln)).strip("\n")
    for i, cell in enumerate(nb.cells):  # nbformat would draw random ids: keep the file stable
        cell["id"] = f"cell-{i}"
    text = jupytext.writes(nb, fmt="ipynb")
    out.parent.mkdir(parents=True, exist_ok=True)
    # Rewrite only on change: mtimes stay put and `mkdocs serve` does not loop.
    if not out.exists() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")
    return out


def generate(cache_dir: Path, sim_hash: str, only: list[Path] | None = None) -> list[str]:
    """Write every companion notebook; return their paths relative to ``cache_dir``."""
    made = []
    for script in scripts() if only is None else only:
        rel = Path("notebooks") / script.parent.name / (script.stem + ".ipynb")
        write_notebook(script, cache_dir / rel, sim_hash)
        made.append(rel.as_posix())
    return made
