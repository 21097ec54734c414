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
    execute, so the build can run them in parallel with the page blocks: one task per
    companion script, which runs its code once for all its languages.

    mkdocs-jupyter executes its notebooks one after the other while it renders the
    pages; with its cache entry already written it only reads it.
    """
    groups: dict[str, dict[str, tuple[str, str]]] = {}
    for nb, path in cache_paths(plugin_config, notebooks).items():
        if not path.exists():
            lang, rest = _language_of(nb)
            groups.setdefault(rest, {})[lang] = (str(nb), str(path))
    return [(prewarm, (group, dict(plugin_config))) for group in groups.values()]


def _language_of(nb: Path) -> tuple[str, str]:
    """(language, path below it) of ``.cache/notebooks/<lang>/notebooks/...``."""
    parts = Path(nb).parts
    i = len(parts) - 1 - parts[::-1].index("notebooks")  # the last "notebooks": the site's folder
    return parts[i - 1], "/".join(parts[i:])


def prewarm(group: dict[str, tuple[str, str]], cfg: dict) -> None:
    """Execute one script's notebooks (``{lang: (notebook, cache file)}``) and write
    mkdocs-jupyter's cache entry for each.

    The cells run in this (worker) process by :func:`execute`, not in a Jupyter kernel:
    starting a kernel per notebook was most of a cold build's time; and they run once for
    every language (:func:`execute` renders what they show in each). The HTML is then
    made by mkdocs-jupyter's own converter from the executed notebook. If a cell fails,
    no entry is written and mkdocs-jupyter executes the notebook itself in a kernel
    (``allow_errors: false``), so the build fails with its report.
    """
    import json
    import tempfile

    from mkdocs_jupyter import convert
    from mkdocs_jupyter.plugin import _get_nb_toc_tokens

    with tempfile.TemporaryDirectory() as tmp:
        executed = {lang: Path(tmp) / lang / Path(nb).name for lang, (nb, _) in group.items()}
        for path in executed.values():
            path.parent.mkdir()
        execute({lang: Path(nb) for lang, (nb, _) in group.items()}, executed)
        for lang, (nb, cache_path) in group.items():
            body = convert.nb2html(
                str(executed[lang]), execute=False, kernel_name=cfg["kernel_name"], theme=cfg["theme"],
                allow_errors=cfg["allow_errors"], show_input=cfg["show_input"], no_input=cfg["no_input"],
                no_prompt=cfg["no_prompt"], remove_tag_config=cfg["remove_tag_config"],
                highlight_extra_classes=cfg["highlight_extra_classes"], include_requirejs=cfg["include_requirejs"],
                custom_mathjax_url=cfg["custom_mathjax_url"],
            )
            toc_tokens, title = _get_nb_toc_tokens(nb, cfg["toc_depth"])
            out = Path(cache_path)
            out.parent.mkdir(parents=True, exist_ok=True)
            part = out.with_suffix(".tmp")
            part.write_text(json.dumps({"content": body, "toc_tokens": toc_tokens, "title": title}), encoding="utf-8")
            part.replace(out)


def execute(notebooks, out_paths) -> None:
    """Run the code cells of a notebook in one namespace, in this process, and save the
    outputs as a Jupyter kernel would record them: printed text as ``stream`` outputs,
    ``show()`` as ``display_data`` (Markdown, or HTML for a figure, as in a kernel), a
    cell's last expression as ``execute_result``. The working directory is the
    notebook's folder, as in a kernel. A failing cell raises.

    ``notebooks`` is one path, or ``{lang: path}``: one script's notebooks in several
    languages, whose code differs only in the first cell (``set_language``). Then the code
    runs once: each language's first cell, then every other cell for all of them, with what
    it shows rendered in each language (as a page block is) and what it prints given to
    each. A notebook that turns a label into text itself (``print(label)``) cannot be
    shared that way, and runs once per language instead.

    As in a kernel, the notebook's own ``set_language`` cell chooses the language of what
    it shows (its setting is undone afterwards: the worker process goes on with other
    work); a label without a translation in that language is an error, as on the pages.
    IPython's ``%magic`` lines are turned into Python the way IPython does (the setup
    cell's ``%pip`` only runs when simtdocs is missing, never here)."""
    import nbformat

    if not isinstance(notebooks, dict):
        notebooks, out_paths = {None: Path(notebooks)}, {None: Path(out_paths)}
    nbs = {lang: nbformat.read(str(path), as_version=4) for lang, path in notebooks.items()}
    cells = {lang: [c for c in nb.cells if c.cell_type == "code"] for lang, nb in nbs.items()}
    sources = {lang: [c.source for c in code[1:]] for lang, code in cells.items()}
    if len(nbs) > 1:
        try:
            if len({tuple(v) for v in sources.values()}) != 1:
                raise _NotShared
            _run(notebooks, cells, shared=True)
        except _NotShared:
            for lang in nbs:
                execute(notebooks[lang], out_paths[lang])
            return
    else:
        _run(notebooks, cells, shared=False)
    for lang, nb in nbs.items():
        nbformat.write(nb, str(out_paths[lang]))


class _NotShared(Exception):
    """The languages' notebooks cannot run as one."""


def _run(notebooks: dict, cells: dict, shared: bool) -> None:
    import ast
    import contextlib
    import linecache
    import os

    import nbformat

    from simtdocs import i18n

    from simtdocs.display import recorder as display

    langs = list(cells)
    first = notebooks[langs[0]]
    ns: dict = {"__name__": "__main__"}
    old_cwd = os.getcwd()
    old_language = i18n._default
    strict = i18n._strict.set(True)
    os.chdir(first.parent)
    try:
        for n in range(len(cells[langs[0]])):
            # The first cell (the language) runs per notebook; with one notebook, every cell.
            runs = [[lang] for lang in langs] if n == 0 or not shared else [langs]
            for targets in runs:
                cell = cells[targets[0]][n]
                outputs: dict = {lang: [] for lang in targets}

                def stream(name, outputs=outputs):
                    class Writer:
                        def write(self, text):
                            for out in outputs.values():
                                if out and out[-1].get("name") == name:
                                    out[-1]["text"] += text
                                elif text:
                                    out.append(nbformat.v4.new_output("stream", name=name, text=text))
                            return len(text)

                        def flush(self):
                            pass

                    return Writer()

                def shown(obj, outputs=outputs, targets=targets):
                    for lang in targets:
                        md = display.render(obj, lang if lang else i18n.current_language())
                        data = {"text/html": md} if isinstance(obj, display.Figure) else {"text/markdown": md}
                        # A figure's repr names its draw function's address: not the same twice.
                        with i18n.language(lang) if lang else contextlib.nullcontext():
                            plain = f"<{type(obj).__name__}>" if isinstance(obj, display.Figure) else repr(obj)
                        outputs[lang].append(nbformat.v4.new_output("display_data", data={**data, "text/plain": plain}))

                source = python_source(cell.source)
                name = f"<{first.name}: cell {n + 1}>"
                tree = ast.parse(source, filename=name)
                last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
                # Like IPython: the cell's lines are readable by linecache (the simulator quotes kernel lines).
                linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
                tokens = [display._display_sink.set(shown)]
                if len(targets) > 1:  # text of a label would be one language for all: not shareable
                    tokens.append(i18n._plain_str_error.set("in a notebook run for several languages"))
                try:
                    with contextlib.redirect_stdout(stream("stdout")), contextlib.redirect_stderr(stream("stderr")):
                        try:
                            exec(compile(tree, name, "exec"), ns)
                            value = None if last is None else eval(compile(ast.Expression(last.value), name, "eval"), ns)
                        except i18n.LabelAsText as exc:
                            if len(targets) > 1:
                                raise _NotShared from exc
                            raise
                    if value is not None:  # IPython's formatters: plain, plus any rich repr
                        for lang in targets:
                            with i18n.language(lang) if lang else contextlib.nullcontext():
                                data = {"text/plain": repr(value)}
                                for method, mime in (("_repr_html_", "text/html"), ("_repr_markdown_", "text/markdown")):
                                    rich = getattr(value, method, None)
                                    rich = rich() if callable(rich) else None
                                    if rich is not None:
                                        data[mime] = rich
                            outputs[lang].append(nbformat.v4.new_output("execute_result", data=data,
                                                                        execution_count=n + 1))
                finally:
                    for t in reversed(tokens):
                        t.var.reset(t)
                for lang in targets:
                    cells[lang][n].outputs = outputs[lang]
                    cells[lang][n].execution_count = n + 1
    finally:
        os.chdir(old_cwd)
        i18n._default = old_language
        i18n._strict.reset(strict)
        with contextlib.suppress(ImportError):
            import matplotlib.pyplot as plt

            plt.close("all")


def python_source(cell: str) -> str:
    """A code cell as plain Python: IPython's ``%magic``/``!shell`` lines become calls of
    ``get_ipython()``, as IPython itself rewrites them."""
    if not re.search(r"^[ \t]*[%!]", cell, re.M):
        return cell
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell)
