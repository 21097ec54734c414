"""Companion scripts (``snippets/<lecture>/NN_topic.py``) as notebooks, one per language.

jupytext turns each script ("percent" cells ``# %%`` welcome) into an ``.ipynb`` per
site language under ``.cache/notebooks/<lang>/``; the site hook adds them as pages that
mkdocs-jupyter renders. Each notebook is written for its reader:

- its Markdown in the page's language: the scripts write each heading ``中文 · English``
  and each paragraph as Chinese lines followed by English lines (:func:`localize_markdown`);
- a first code cell that installs ``simtdocs`` when it is missing (a hosted notebook
  service, a fresh Jupyter) and sets the language of tables, figures and labels with
  ``set_language``, so a downloaded Chinese notebook re-run anywhere shows Chinese.

The notebook metadata carries a hash of the simulator so that mkdocs-jupyter's cache
(keyed by notebook content) is invalidated when the simulator changes; the build fills
that cache itself (:func:`prewarm`), running the cells in its worker processes instead of
one Jupyter kernel per notebook.
"""

from __future__ import annotations

import re
from pathlib import Path

from .snippets import SECTION_MARK, repo_root

LANGS = ("zh", "en")  # the site's languages, zh first (the default)
# The branch the deploy workflow pushes the site's .ipynb files to (.github/workflows/deploy.yml),
# so that a hosted notebook service that opens notebooks from GitHub can open them.
NOTEBOOK_BRANCH = "notebooks"
COLAB = "https://colab.research.google.com/github/{repo}/blob/{branch}/{path}"
# Chinese script (CJK ideographs, CJK and full-width punctuation): a line with any is Chinese.
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
TITLE_SEP = re.compile(r"\s*·\s*")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
RUN_ALONE = re.compile(r"^Run it alone: (`[^`]+`)$")
GITHUB = re.compile(r"^https://github\.com/([A-Za-z0-9][-A-Za-z0-9]*/[A-Za-z0-9._-]+?)(?:\.git)?/?$")


class NotebookError(ValueError):
    """A companion script whose Markdown cannot be split into the site's languages."""


def scripts() -> list[Path]:
    root = repo_root() / "snippets"
    return sorted(p for p in root.glob("*/[0-9]*.py") if p.is_file())


# -- the reader's language --------------------------------------------------------------


def split_title(title: str, where: str = "") -> dict[str, str]:
    """``{"zh": ..., "en": ...}`` of a heading written ``中文 · English``.

    Parts before the first Chinese part are shared (``P2 · 代码 01：… · Code 01: …`` gives
    ``P2 · 代码 01：…`` and ``P2 · Code 01: …``); a heading without Chinese is the same in
    both languages.
    """
    parts = [p for p in TITLE_SEP.split(title) if p]
    chinese = [i for i, p in enumerate(parts) if CJK.search(p)]
    if not chinese:
        return {"zh": title, "en": title}
    first, last = chinese[0], chinese[-1]
    shared, zh, en = parts[:first], parts[first:last + 1], parts[last + 1:]
    if not en:
        raise NotebookError(f"{where}: the heading {title!r} has no English part after its Chinese "
                            "(write it `中文 · English`)")
    return {"zh": " · ".join(shared + zh), "en": " · ".join(shared + en)}


def localize_markdown(source: str, lang: str, where: str = "") -> str:
    """A Markdown cell of a companion script in one language.

    Headings are split by :func:`split_title`. A paragraph that starts with Chinese lines
    and goes on in English is cut where the English starts; a paragraph without Chinese
    (a source note, a command) is kept in both languages; the line ``Run it alone: `…```
    is said in the notebook's language.
    """
    out: list[str] = []
    for para in re.split(r"\n[ \t]*\n", source.strip("\n")):
        lines = para.split("\n")
        if len(lines) == 1 and (m := HEADING.match(lines[0])):
            out.append(f"{m.group(1)} {split_title(m.group(2), where)[lang]}")
            continue
        if len(lines) == 1 and (m := RUN_ALONE.match(lines[0])):
            out.append(f"单独运行：{m.group(1)}" if lang == "zh" else lines[0])
            continue
        chinese = [bool(CJK.search(ln)) for ln in lines]
        if not any(chinese):
            out.append(para)
            continue
        cut = chinese.index(False) if False in chinese else len(lines)
        if cut == 0 or any(chinese[cut:]):
            raise NotebookError(
                f"{where}: a paragraph mixes the languages line by line; write its Chinese lines first, "
                f"then its English lines:\n{para}")
        part = lines[:cut] if lang == "zh" else lines[cut:]
        if part:
            out.append("\n".join(part))
    return "\n\n".join(out)


def install_spec(repo_url: str | None) -> str:
    """What ``pip install`` takes for simtdocs with figures: the site's repository when it
    has one, else the package index."""
    url = (repo_url or "").rstrip("/")
    return f"simtdocs[figures] @ git+{url}" if url else "simtdocs[figures]"


def setup_cell(lang: str, repo_url: str | None) -> str:
    """The first code cell: install simtdocs when missing (never during the site build,
    where it is importable), then the language of tables, figures and labels."""
    if lang == "zh":
        why, choose = ("# 缺少 simtdocs 时先安装它（Colab 等托管笔记本、新的 Jupyter 环境）",
                       'set_language("zh")  # 表格、图和标签用中文；英文用 "en"')
    else:
        why, choose = ("# Installs simtdocs when it is missing (Colab and other hosted notebooks, a fresh Jupyter)",
                       'set_language("en")  # tables, figures and labels in English; "zh" for Chinese')
    return "\n".join([
        why,
        "try:",
        "    import simtdocs",
        "except ImportError:",
        f'    %pip install -q "{install_spec(repo_url)}"',
        "",
        "from simtdocs.docs import set_language",
        "",
        choose,
    ])


def hosted_url(repo_url: str | None, ipynb: str) -> str | None:
    """Colab's address of a notebook the site serves at ``ipynb`` (a path in the built site),
    when the site's repository is on GitHub: the deploy workflow pushes the site's notebooks,
    at the same paths, to the branch :data:`NOTEBOOK_BRANCH` of that repository."""
    m = GITHUB.match((repo_url or "").strip())
    if not m:
        return None
    return COLAB.format(repo=m.group(1), branch=NOTEBOOK_BRANCH, path=ipynb.lstrip("/"))


# -- writing the notebooks ----------------------------------------------------------------


def build_notebook(script: Path, lang: str, sim_hash: str, repo_url: str | None = None):
    """The notebook of ``script`` for readers of ``lang`` (an nbformat notebook)."""
    import jupytext

    where = script.relative_to(repo_root()).as_posix() if script.is_relative_to(repo_root()) else str(script)
    nb = jupytext.read(script, fmt="py:percent")
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["simtdocs"] = {"source": where, "simulator": sim_hash, "language": lang}
    nb.metadata.pop("jupytext", None)
    for cell in nb.cells:  # section markers are for the pages, not for notebook readers
        lines = cell["source"].split("\n")
        cell["source"] = "\n".join(ln for ln in lines if not SECTION_MARK.match(ln)).strip("\n")
        if cell["cell_type"] == "markdown":
            cell["source"] = localize_markdown(cell["source"], lang, where)
    nb.cells = [c for c in nb.cells if c["source"].strip()]
    for cell in nb.cells:
        if cell["cell_type"] == "code" and "expand_snippets(" in cell["source"]:
            cell["source"] = inline_includes(cell["source"], where)
    # The setup goes at the top of the first code cell (the imports): the cells keep their
    # count, so "the second cell below" in a script's text still points at the right one.
    code = next((c for c in nb.cells if c["cell_type"] == "code"), None)
    if code is None:
        import nbformat

        code = nbformat.v4.new_code_cell("")
        nb.cells.insert(1 if nb.cells else 0, code)
    code["source"] = (setup_cell(lang, repo_url) + "\n\n" + code["source"]).rstrip("\n")
    for i, cell in enumerate(nb.cells):  # nbformat would draw random ids: keep the file stable
        cell["id"] = f"cell-{i}"
    return nb


def inline_includes(source: str, where: str = "") -> str:
    """A cell that loads the lecture's code from the other scripts with
    ``exec(expand_snippets(...))`` (it needs the repository's ``snippets/``), with that code
    written out instead, so the notebook runs anywhere. The cell runs here with ``exec``
    recording what it would execute; its leading comments are kept."""
    from .snippets import expand_snippets

    recorded: list[str] = []
    namespace = {"__name__": "__notebook_include__", "exec": recorded.append, "expand_snippets": expand_snippets}
    try:
        exec(compile(source, f"<{where}: includes>", "exec"), namespace)
    except Exception as exc:
        raise NotebookError(f"{where}: the cell that includes code with expand_snippets could not be "
                            f"written out for the notebook: {exc}") from exc
    if not recorded:
        return source
    lines = source.split("\n")
    head = []
    for ln in lines:
        if not ln.startswith("#"):
            break
        head.append(ln)
    body = "\n\n".join(r.strip("\n") for r in recorded)
    return "\n".join(head + [body]) if head else body


def write_notebook(script: Path, out: Path, sim_hash: str, lang: str = "en", repo_url: str | None = None) -> Path:
    import hashlib

    included = b"".join(p.read_bytes() for p in sorted((repo_root() / "snippets").rglob("*.py")))
    stamp = hashlib.sha256(script.read_bytes() + included + "\0".join(
        [sim_hash, lang, repo_url or "", Path(__file__).read_text(encoding="utf-8")]).encode()).hexdigest()
    stamp_file = out.with_suffix(".stamp")
    if out.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
        return out  # jupytext is slow to import and to read: skip an unchanged script
    import jupytext

    text = jupytext.writes(build_notebook(script, lang, sim_hash, repo_url), fmt="ipynb")
    out.parent.mkdir(parents=True, exist_ok=True)
    # Rewrite only on change: mtimes stay put and `mkdocs serve` does not loop.
    if not out.exists() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")
    stamp_file.write_text(stamp)
    return out


def generate(cache_dir: Path, sim_hash: str, only: list[Path] | None = None, repo_url: str | None = None,
             langs: tuple[str, ...] = LANGS) -> list[str]:
    """Write every companion notebook in every language, ``cache_dir/<lang>/<path>``; return
    the paths (the same in every language), relative to ``cache_dir/<lang>``."""
    made = []
    for script in scripts() if only is None else only:
        rel = Path("notebooks") / script.parent.name / (script.stem + ".ipynb")
        for lang in langs:
            write_notebook(script, cache_dir / lang / rel, sim_hash, lang, repo_url)
        made.append(rel.as_posix())
    return made


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
