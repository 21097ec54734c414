"""Executing the companion notebooks for the site, in the build's worker processes.

mkdocs-jupyter executes its notebooks one after the other while it renders the pages, one
Jupyter kernel each. The build instead fills mkdocs-jupyter's cache beforehand
(:func:`prewarm_tasks`, :func:`prewarm`): the cells run in a worker process by
:func:`execute`, which records outputs as a kernel would, and mkdocs-jupyter's own
converter makes the HTML.
"""

from __future__ import annotations

import re
from pathlib import Path


def cache_paths(plugin_config: dict, notebooks: list[Path]) -> dict[Path, Path]:
    """mkdocs-jupyter's cache file of each notebook (empty when it cannot tell).

    This relies on its cache layout (``_compute_cache_key``); if that changes, nothing is
    prewarmed and mkdocs-jupyter does the work itself."""
    try:
        from mkdocs_jupyter.plugin import _compute_cache_key, _get_cache_path
    except ImportError:
        return {}
    if not plugin_config.get("cache") or not plugin_config.get("execute"):
        return {}
    root = Path(plugin_config["cache_dir"]).resolve()
    return {nb: _get_cache_path(root, _compute_cache_key(str(nb), plugin_config, True)) for nb in notebooks}


def prewarm_tasks(plugin_config: dict, notebooks: list[Path]) -> list[tuple]:
    """(function, args) that fill mkdocs-jupyter's cache for the notebooks it would
    execute, so the build can run them in parallel with the page blocks.

    mkdocs-jupyter executes its notebooks one after the other while it renders the
    pages; with its cache entry already written it only reads it.
    """
    tasks = []
    for nb, path in cache_paths(plugin_config, notebooks).items():
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
    notebook's folder, as in a kernel. A failing cell raises.

    As in a kernel, the notebook's own ``set_language`` cell chooses the language of what
    it shows (its setting is undone afterwards: the worker process goes on with other
    work); a label without a translation in that language is an error, as on the pages.
    IPython's ``%magic`` lines are turned into Python the way IPython does (the setup
    cell's ``%pip`` only runs when simtdocs is missing, never here)."""
    import ast
    import contextlib
    import linecache
    import os

    import nbformat

    from simtdocs import i18n

    from . import display

    nb = nbformat.read(str(nb_path), as_version=4)
    ns: dict = {"__name__": "__main__"}
    old_cwd = os.getcwd()
    old_language = i18n._default
    strict = i18n._strict.set(True)
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
                md = display.render(obj, i18n.current_language())
                data = {"text/html": md} if isinstance(obj, display.Figure) else {"text/markdown": md}
                outputs.append(nbformat.v4.new_output("display_data", data={**data, "text/plain": repr(obj)}))

            source = python_source(cell.source)
            name = f"<{nb_path.name}: cell {n + 1}>"
            tree = ast.parse(source, filename=name)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            # Like IPython: the cell's lines are readable by linecache (the simulator quotes kernel lines).
            linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
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
        i18n._default = old_language
        i18n._strict.reset(strict)
        with contextlib.suppress(ImportError):
            import matplotlib.pyplot as plt

            plt.close("all")
    nbformat.write(nb, str(out_path))


def python_source(cell: str) -> str:
    """A code cell as plain Python: IPython's ``%magic``/``!shell`` lines become calls of
    ``get_ipython()``, as IPython itself rewrites them."""
    if not re.search(r"^[ \t]*[%!]", cell, re.M):
        return cell
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell)
