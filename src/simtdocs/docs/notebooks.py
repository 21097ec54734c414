"""Companion scripts (``snippets/<lecture>/NN_topic.py``) as notebooks.

jupytext turns each script ("percent" cells ``# %%`` welcome) into an
``.ipynb`` under ``.cache/notebooks/``; the site hook adds them as pages that
mkdocs-jupyter renders. The notebook metadata carries a hash of the simulator
so that mkdocs-jupyter's cache (keyed by notebook content) is invalidated when
the simulator changes; the build fills that cache itself (:func:`prewarm`), running
the cells in its worker processes instead of one Jupyter kernel per notebook.
"""

from __future__ import annotations

from pathlib import Path

from .snippets import SECTION_MARK, repo_root


def scripts() -> list[Path]:
    root = repo_root() / "snippets"
    return sorted(p for p in root.glob("*/[0-9]*.py") if p.is_file())


def write_notebook(script: Path, out: Path, sim_hash: str) -> Path:
    import hashlib

    stamp = hashlib.sha256(script.read_bytes() + sim_hash.encode()).hexdigest()
    stamp_file = out.with_suffix(".stamp")
    if out.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
        return out  # jupytext is slow to import and to read: skip an unchanged script
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
    stamp_file.write_text(stamp)
    return out


def generate(cache_dir: Path, sim_hash: str, only: list[Path] | None = None) -> list[str]:
    """Write every companion notebook; return their paths relative to ``cache_dir``."""
    made = []
    for script in scripts() if only is None else only:
        rel = Path("notebooks") / script.parent.name / (script.stem + ".ipynb")
        write_notebook(script, cache_dir / rel, sim_hash)
        made.append(rel.as_posix())
    return made


def prewarm_tasks(plugin_config: dict, notebooks: list[Path]) -> list[tuple]:
    """(function, args) that fill mkdocs-jupyter's cache for the notebooks it would
    execute, so the build can run them in parallel with the page blocks.

    mkdocs-jupyter executes its notebooks one after the other while it renders the
    pages; with its cache entry already written it only reads it. This relies on
    its cache layout (``_compute_cache_key``); if that changes, nothing is
    prewarmed and mkdocs-jupyter does the work itself.
    """
    try:
        from mkdocs_jupyter.plugin import _compute_cache_key, _get_cache_path
    except ImportError:
        return []
    if not plugin_config.get("cache") or not plugin_config.get("execute"):
        return []
    tasks = []
    for nb in notebooks:
        key = _compute_cache_key(str(nb), plugin_config, True)
        path = _get_cache_path(Path(plugin_config["cache_dir"]).resolve(), key)
        if not path.exists():
            tasks.append((prewarm, (str(nb), str(path), dict(plugin_config))))
    return tasks


def prewarm(nb: str, cache_path: str, cfg: dict) -> None:
    """Execute one notebook and write mkdocs-jupyter's cache entry for it.

    The cells run in this (worker) process by :func:`execute`, not in a Jupyter kernel:
    starting a kernel per notebook was most of a cold build's time. The HTML is then
    made by mkdocs-jupyter's own converter from the executed notebook. If a cell fails,
    no entry is written and mkdocs-jupyter executes the notebook itself in a kernel
    (``allow_errors: false``), so the build fails with its report.
    """
    import json
    import tempfile

    from mkdocs_jupyter import convert
    from mkdocs_jupyter.plugin import _get_nb_toc_tokens

    with tempfile.TemporaryDirectory() as tmp:
        executed = Path(tmp) / Path(nb).name
        execute(Path(nb), executed)
        body = convert.nb2html(
            str(executed), execute=False, kernel_name=cfg["kernel_name"], theme=cfg["theme"],
            allow_errors=cfg["allow_errors"], show_input=cfg["show_input"], no_input=cfg["no_input"],
            no_prompt=cfg["no_prompt"], remove_tag_config=cfg["remove_tag_config"],
            highlight_extra_classes=cfg["highlight_extra_classes"], include_requirejs=cfg["include_requirejs"],
            custom_mathjax_url=cfg["custom_mathjax_url"],
        )
    toc_tokens, title = _get_nb_toc_tokens(nb, cfg["toc_depth"])
    out = Path(cache_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps({"content": body, "toc_tokens": toc_tokens, "title": title}), encoding="utf-8")
    tmp.replace(out)


def execute(nb_path: Path, out_path: Path) -> None:
    """Run the code cells of a notebook in one namespace, in this process, and save the
    outputs as a Jupyter kernel would record them: printed text as ``stream`` outputs,
    ``show()`` as ``display_data`` (Markdown, or HTML for a figure, as in a kernel), a
    cell's last expression as ``execute_result``. The working directory is the
    notebook's folder, as in a kernel. A failing cell raises."""
    import ast
    import contextlib
    import linecache
    import os

    import nbformat

    from . import display

    nb = nbformat.read(str(nb_path), as_version=4)
    ns: dict = {"__name__": "__main__"}
    old_cwd = os.getcwd()
    os.chdir(nb_path.parent)
    try:
        for n, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
            outputs: list = []

            def stream(name):
                class Writer:
                    def write(self, text):
                        if outputs and outputs[-1].get("name") == name:
                            outputs[-1]["text"] += text
                        elif text:
                            outputs.append(nbformat.v4.new_output("stream", name=name, text=text))
                        return len(text)

                    def flush(self):
                        pass

                return Writer()

            def shown(obj):
                md = display.render(obj, "en")
                data = {"text/html": md} if isinstance(obj, display.Figure) else {"text/markdown": md}
                outputs.append(nbformat.v4.new_output("display_data", data={**data, "text/plain": repr(obj)}))

            tree = ast.parse(cell.source, filename=f"<{nb_path.name}: cell {n + 1}>")
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            name = f"<{nb_path.name}: cell {n + 1}>"
            # Like IPython: the cell's lines are readable by linecache (the simulator quotes kernel lines).
            linecache.cache[name] = (len(cell.source), None, cell.source.splitlines(keepends=True), name)
            token = display._display_sink.set(shown)
            try:
                with contextlib.redirect_stdout(stream("stdout")), contextlib.redirect_stderr(stream("stderr")):
                    exec(compile(tree, name, "exec"), ns)
                    if last is not None:
                        value = eval(compile(ast.Expression(last.value), name, "eval"), ns)
                        if value is not None:  # IPython's formatters: plain, plus any rich repr
                            data = {"text/plain": repr(value)}
                            for method, mime in (("_repr_html_", "text/html"), ("_repr_markdown_", "text/markdown")):
                                rich = getattr(value, method, None)
                                rich = rich() if callable(rich) else None
                                if rich is not None:
                                    data[mime] = rich
                            outputs.append(nbformat.v4.new_output("execute_result", data=data, execution_count=n + 1))
            finally:
                display._display_sink.reset(token)
            cell.outputs = outputs
            cell.execution_count = n + 1
    finally:
        os.chdir(old_cwd)
        with contextlib.suppress(ImportError):
            import matplotlib.pyplot as plt

            plt.close("all")
    nbformat.write(nb, str(out_path))
