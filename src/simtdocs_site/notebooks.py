"""Companion scripts (``snippets/<lecture>/NN_topic.py``) as notebooks, one per language.

jupytext turns each script ("percent" cells ``# %%`` welcome) into an ``.ipynb`` per
site language under ``.cache/notebooks/<lang>/``; the MkDocs plugin adds them as pages
(:mod:`.notebook_pages`) that mkdocs-jupyter renders. Each notebook is written for its reader:

- its Markdown in the page's language: the scripts write each heading ``中文 · English``
  and each paragraph as Chinese lines followed by English lines (:func:`localize_markdown`);
- a first code cell that installs ``simtdocs`` when it is missing (a hosted notebook
  service, a fresh Jupyter) and sets the language of tables, figures and labels with
  ``set_language``, so a downloaded Chinese notebook re-run anywhere shows Chinese.

The notebook metadata carries a hash of the simulator so that mkdocs-jupyter's cache
(keyed by notebook content) is invalidated when the simulator changes; the build fills
that cache itself (:mod:`simtdocs_site.notebook_runner`), running the cells in its worker
processes instead of one Jupyter kernel per notebook.
"""

from __future__ import annotations

import re
from pathlib import Path

from simtdocs.i18n import SOURCE_LANGUAGE
from simtdocs.snippets import SECTION_MARK, repo_root

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
# Prose words, counted outside code spans and addresses: a paragraph of three or more has to be
# written in both languages.
ENGLISH_WORDS = re.compile(r"\b[A-Za-z]{2,}\b")
CODE_OR_LINK = re.compile(r"`[^`]*`|\S+://\S+")
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
    and goes on in English is cut where the English starts; a paragraph of prose without
    Chinese is an error (the Chinese notebook would show it in English), while one that is
    only a command, a formula or a link is kept in both languages; the line
    ``Run it alone: `…``` is said in the notebook's language.
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
            if len(ENGLISH_WORDS.findall(CODE_OR_LINK.sub(" ", para))) >= 3:
                raise NotebookError(
                    f"{where}: a paragraph has no Chinese, so the Chinese notebook would show it in "
                    f"English; write its Chinese lines first, then its English lines:\n{para}")
            out.append(para)  # a command, a formula, a link: the same in both languages
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
        "from simtdocs.display import set_language",
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


def build_notebook(script: Path, lang: str, sim_hash: str, repo_url: str | None = None,
                   translate_comments: bool = True):
    """The notebook of ``script`` for readers of ``lang`` (an nbformat notebook); the comments of
    its code cells are in ``lang`` (:mod:`simtdocs_site.comments`), its code is the script's."""
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
        if cell["cell_type"] == "code" and C_PATH.search(cell["source"]):
            cell["source"] = inline_c(cell["source"], lang if translate_comments else SOURCE_LANGUAGE, where)
    if translate_comments:
        from . import comments

        for i, cell in enumerate(nb.cells):
            if cell["cell_type"] == "code":
                cell["source"] = comments.localize(cell["source"], lang, f"{where} (cell {i})")
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


C_PATH = re.compile(r"""RawModule\(path=(?P<q>["'])(?P<path>snippets/[^"']+\.cu)(?P=q)""")


def inline_c(source: str, lang: str, where: str = "") -> str:
    """A cell that compiles a ``.cu`` file of the repository (``RawModule(path="snippets/…")``)
    with the C written out as a string it compiles instead (``RawModule(code=NAME_CU)``), as a
    CuPy user would, so the notebook runs anywhere; the C's ``//`` comments in ``lang``."""
    from . import comments

    names = {}
    for m in C_PATH.finditer(source):
        path = m["path"]
        name = re.sub(r"\W", "_", Path(path).stem).upper() + "_CU"
        if not name.isidentifier() or name[0].isdigit():
            raise NotebookError(f"{where}: {path}: name the .cu file so that {name} is a Python name")
        text = (repo_root() / path).read_text(encoding="utf-8")
        text = "\n".join(ln for ln in text.split("\n") if not SECTION_MARK.match(ln))  # page notation
        if '"""' in text:
            raise NotebookError(f'{where}: {path} holds """: it cannot be a raw Python string')
        names[path] = (name, comments.localize(text, lang, f"{where}: {path}", "//"))
    body = C_PATH.sub(lambda m: f"RawModule(code={names[m['path']][0]}", source)
    lines = body.split("\n")
    head = 0
    while head < len(lines) and lines[head].startswith("#"):
        head += 1
    strings = [f'{name} = r"""\n{text.rstrip()}\n"""\n' for name, text in names.values()]
    return "\n".join(lines[:head] + strings + lines[head:])


def inline_includes(source: str, where: str = "") -> str:
    """A cell that loads the lecture's code from the other scripts with
    ``exec(expand_snippets(...))`` (it needs the repository's ``snippets/``), with that code
    written out instead, so the notebook runs anywhere. The cell runs here with ``exec``
    recording what it would execute; its leading comments are kept."""
    from simtdocs.snippets import expand_snippets

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

    from . import comments

    included = b"".join(p.read_bytes() for p in sorted((repo_root() / "snippets").rglob("*.py"))
                        + sorted((repo_root() / "snippets").rglob("*.cu")))
    mo = comments.po_path(lang).with_suffix(".mo")
    included += mo.read_bytes() if mo.is_file() else b""
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
