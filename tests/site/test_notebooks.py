"""The companion notebooks are executed by the build itself (no kernel per notebook):
the outputs must be what a Jupyter kernel records."""

from __future__ import annotations

import nbformat
import pytest

from simtdocs_site import notebook_runner, notebooks


def make(tmp_path, *cells):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, str(path))
    return path


def test_outputs_are_recorded_as_a_kernel_records_them(tmp_path):
    src = make(
        tmp_path,
        "from simtdocs.display import Table, _, show\nprint('hello')\nprint('again')",
        "show(Table([[1, 2]], ['a', _('blocks')]))\nx = 41",
        "x + 1",
        "import pathlib\nprint(pathlib.Path.cwd().name)",
    )
    out = tmp_path / "out.ipynb"
    notebook_runner.execute(src, out)
    cells = nbformat.read(str(out), as_version=4).cells
    assert [o["output_type"] for o in cells[0].outputs] == ["stream"]
    assert cells[0].outputs[0]["text"] == "hello\nagain\n"
    shown = cells[1].outputs[0]
    assert shown["output_type"] == "display_data" and "| a | blocks |" in shown["data"]["text/markdown"]
    assert cells[2].outputs[0]["output_type"] == "execute_result"
    assert cells[2].outputs[0]["data"]["text/plain"] == "42"
    assert cells[3].outputs[0]["text"] == tmp_path.name + "\n"  # the notebook's folder, as in a kernel
    assert [c.execution_count for c in cells] == [1, 2, 3, 4]


def test_a_failing_cell_raises(tmp_path):
    with pytest.raises(ZeroDivisionError):
        notebook_runner.execute(make(tmp_path, "x = 1", "1 / 0"), tmp_path / "out.ipynb")


# -- one notebook per language ----------------------------------------------------------

import re  # noqa: E402
from pathlib import Path  # noqa: E402

from simtdocs import i18n  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "snippets" / "home" / "01_first_launch.py"


def test_a_heading_is_split_per_language():
    split = notebooks.split_title
    assert split("第一次启动 · A first launch") == {"zh": "第一次启动", "en": "A first launch"}
    assert split("P2 · 代码 01：CUDA 编程模型 · Code 01: the CUDA programming model") == {
        "zh": "P2 · 代码 01：CUDA 编程模型", "en": "P2 · Code 01: the CUDA programming model"}
    assert split("演示 3：numpy 的调用开销（墙钟测量）· Demo 3: numpy's call overhead (wall clock)") == {
        "zh": "演示 3：numpy 的调用开销（墙钟测量）", "en": "Demo 3: numpy's call overhead (wall clock)"}
    assert split("Harris · 2013") == {"zh": "Harris · 2013", "en": "Harris · 2013"}
    with pytest.raises(notebooks.NotebookError, match=r"^a\.py: the heading '只有中文' has no English part"):
        split("只有中文", "a.py")


def test_markdown_is_cut_where_the_english_starts():
    source = ("# 标题 · Title\n\n中文第一行，\n第二行。\nEnglish line one,\nline two.\n\n"
              "`pip install simtdocs`\n\nRun it alone: `python snippets/a/01_x.py`")
    assert notebooks.localize_markdown(source, "zh") == (
        "# 标题\n\n中文第一行，\n第二行。\n\n`pip install simtdocs`\n\n单独运行：`python snippets/a/01_x.py`")
    assert notebooks.localize_markdown(source, "en") == (
        "# Title\n\nEnglish line one,\nline two.\n\n`pip install simtdocs`\n\n"
        "Run it alone: `python snippets/a/01_x.py`")
    with pytest.raises(notebooks.NotebookError, match="mixes the languages line by line"):
        notebooks.localize_markdown("中文\nEnglish\n又是中文", "en", "a.py")


def test_a_paragraph_of_english_prose_alone_is_refused():
    """The Chinese notebook would carry it in English (issue 27: "Sizes are H100 specifications...")."""
    with pytest.raises(notebooks.NotebookError, match="has no Chinese"):
        notebooks.localize_markdown("# 标题 · Title\n\nSizes are H100 specifications.", "zh", "a.py")
    # a command or a link alone is the same in both languages
    assert notebooks.localize_markdown("https://example.org/a-b-c", "zh") == "https://example.org/a-b-c"


@pytest.mark.parametrize("script", notebooks.scripts(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_each_companion_notebook_reads_in_its_language(script):
    """The English notebook's Markdown has no Chinese; the Chinese one's title is the
    Chinese half of the script's heading; both begin with the setup cell."""
    zh, en = (notebooks.build_notebook(script, lang, "test") for lang in ("zh", "en"))
    first = script.read_text(encoding="utf-8").split("\n")[:2]
    assert first[0] == "# %% [markdown]" and first[1].startswith("# # "), first
    zh_title, en_title = notebooks.split_title(first[1][4:]).values()
    assert notebooks.CJK.search(zh_title) and not notebooks.CJK.search(en_title)
    assert zh.cells[0].source.split("\n")[0] == "# " + zh_title
    assert en.cells[0].source.split("\n")[0] == "# " + en_title
    en_markdown = "\n".join(c.source for c in en.cells if c.cell_type == "markdown")
    assert notebooks.CJK.findall(en_markdown) == []
    for nb, lang in ((zh, "zh"), (en, "en")):
        code = next(c for c in nb.cells if c.cell_type == "code")
        assert code.source.startswith(notebooks.setup_cell(lang, None) + "\n\n"), code.source[:300]
        assert nb.metadata["simtdocs"]["language"] == lang


def test_the_setup_cell_installs_only_when_simtdocs_is_missing():
    cell = notebooks.setup_cell("zh", "https://github.com/o/r/")
    assert cell.split("\n")[1:5] == [
        "try:", "    import simtdocs", "except ImportError:",
        '    %pip install -q "simtdocs[figures] @ git+https://github.com/o/r"']
    assert cell.endswith('set_language("zh")  # 表格、图和标签用中文；英文用 "en"')
    assert '%pip install -q "simtdocs[figures]"' in notebooks.setup_cell("en", None)  # the package index
    # IPython turns the magic into a call; the site build never makes it (simtdocs is importable).
    assert notebook_runner.python_source(cell).split("\n")[4] == (
        "    get_ipython().run_line_magic('pip', 'install -q \"simtdocs[figures] @ git+https://github.com/o/r\"')")
    assert notebook_runner.python_source("x = 1  # 100% plain") == "x = 1  # 100% plain"


@pytest.mark.parametrize(("lang", "header"), [("zh", "| 计数器 | 键 | 值 |"), ("en", "| Counter | Key | Value |")])
def test_the_executed_notebook_shows_its_language(tmp_path, lang, header):
    """The build runs the notebook as a kernel would, setup cell included (its pip branch
    would fail here: get_ipython is not defined), and leaves the process in English."""
    src = notebooks.write_notebook(SCRIPT, tmp_path / lang / "nb.ipynb", "test", lang, "https://github.com/o/r")
    notebook_runner.execute(src, tmp_path / "out.ipynb")
    cells = [c for c in nbformat.read(str(tmp_path / "out.ipynb"), as_version=4).cells if c.cell_type == "code"]
    shown = [o["data"]["text/markdown"] for c in cells for o in c.outputs if o["output_type"] == "display_data"]
    assert [s.split("\n")[0] for s in shown] == [header]
    assert i18n.current_language() == "en"


@pytest.mark.parametrize("script", ["snippets/p2/02_memory_coalescing.py", "snippets/p2/07_puzzles.py"])
def test_the_languages_of_a_script_run_once_with_the_same_outputs(tmp_path, script):
    """The build runs a script's zh and en notebooks together (the code once, what it shows
    rendered in each language): every output must be what running each alone gives."""
    script = notebooks.repo_root() / script
    src = {lang: notebooks.write_notebook(script, tmp_path / lang / "nb.ipynb", "t", lang) for lang in ("zh", "en")}
    apart = {lang: tmp_path / f"apart.{lang}.ipynb" for lang in src}
    together = {lang: tmp_path / lang / "together.ipynb" for lang in src}
    for lang in src:
        notebook_runner.execute(src[lang], apart[lang])
    notebook_runner.execute(src, together)

    def outputs(path):
        return [c.outputs for c in nbformat.read(str(path), as_version=4).cells if c.cell_type == "code"]

    for lang in src:
        assert outputs(together[lang]) == outputs(apart[lang]), lang
    assert outputs(together["zh"]) != outputs(together["en"])  # and each in its own language


def test_a_notebook_that_prints_a_label_runs_once_per_language(tmp_path):
    """print(label) gives one language's text: such a notebook is not shared, but run per language."""
    src = {}
    for lang in ("zh", "en"):
        (tmp_path / lang).mkdir()
        path = make(tmp_path / lang, f"from simtdocs.display import _, set_language\nset_language({lang!r})",
                    "from simtdocs import LABELS\nprint(LABELS['warps'])")
        src[lang] = path
    out = {lang: tmp_path / f"{lang}.out.ipynb" for lang in src}
    notebook_runner.execute(src, out)
    printed = {lang: nbformat.read(str(out[lang]), as_version=4).cells[1].outputs[0]["text"] for lang in src}
    assert printed == {"zh": "warp 数\n", "en": "warps\n"}


def test_code_read_from_other_scripts_is_written_into_the_notebook():
    """06_exercises loads the lecture's kernels from scripts 01-04 with expand_snippets, which
    needs the repository; its notebook carries that code instead."""
    nb = notebooks.build_notebook(ROOT / "snippets" / "p2" / "06_exercises.py", "en", "test")
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert [c for c in code if "expand_snippets(" in c] == []
    included = code[1]
    assert [ln.split("(")[0] for ln in included.split("\n") if ln.startswith("def ")] == [
        "def vector_add", "def pattern_kernel", "def bank_kernel", "def reduce_v2", "def reduce_v3"]
    assert "from simtdocs.lectures.p2 import occupancy as lecture" in included  # exercise 7's limiter_text


def test_hosted_notebook_link_only_for_a_github_repository():
    path = "en/notebooks/home/01_first_launch/01_first_launch.ipynb"
    colab = ("https://colab.research.google.com/github/o/r/blob/notebooks/"
             "en/notebooks/home/01_first_launch/01_first_launch.ipynb")
    for url in ("https://github.com/o/r", "https://github.com/o/r/", "https://github.com/o/r.git"):
        assert notebooks.hosted_url(url, path) == colab
    for url in (None, "", "https://gitlab.com/o/r", "https://github.com/o"):
        assert notebooks.hosted_url(url, path) is None


def test_the_deploy_workflow_publishes_what_the_site_links_to():
    import yaml

    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "deploy.yml").read_text(encoding="utf-8"))
    build = wf["jobs"]["build"]
    env = next(s["env"] for s in build["steps"] if s.get("run") == "make build")
    assert env["REPO_URL"] == "${{ github.server_url }}/${{ github.repository }}"
    push = next(s["run"] for s in build["steps"] if "NOTEBOOK_BRANCH" in s.get("run", ""))
    assert "from simtdocs_site.notebooks import NOTEBOOK_BRANCH" in push and 'git push -q -f origin "$branch"' in push
    assert wf[True]["push"]["tags"] == ["v*"]  # YAML reads the key `on` as True
    publish = wf["jobs"]["publish"]
    assert publish["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["steps"][-1]["uses"] == "pypa/gh-action-pypi-publish@release/v1"


def test_config_values_fill_the_install_page():
    import tomllib

    from simtdocs_site.config_values import fill_config

    python = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"].lstrip(">=")
    page = 'pip install "{{ config.install_spec }}"; git clone {{ config.repo_url }}; Python {{ config.python }}'
    assert fill_config(page, {"repo_url": "https://github.com/o/r/"}) == (
        f'pip install "simtdocs[figures] @ git+https://github.com/o/r"; git clone https://github.com/o/r; Python {python}')
    assert fill_config(page, {"repo_url": None}) == (
        'pip install "simtdocs[figures] @ git+https://github.com/<owner>/<repository>"; '
        f"git clone https://github.com/<owner>/<repository>; Python {python}")
    with pytest.raises(ValueError, match=r"\{\{ config\.site_url \}\}: a page can use only config\.repo_url"):
        fill_config("{{ config.site_url }}", {"repo_url": None})


def test_without_a_repository_address_the_install_page_says_how_to_get_one():
    """Issue 27: a local build showed `pip install "…@ git+https://github.com/<owner>/<repository>"` as a
    command to copy, and promised a Colab button it does not have."""
    from simtdocs_site.config_values import fill_config

    page = "a\n<!-- if repo_url -->\ngit clone {{ config.repo_url }}\n<!-- else -->\nask for it\n<!-- end if -->\nb\n"
    assert fill_config(page, {"repo_url": "https://github.com/o/r"}) == "a\ngit clone https://github.com/o/r\nb\n"
    assert fill_config(page, {"repo_url": None}) == "a\nask for it\nb\n"
    for name in ("install.md", "install.en.md"):
        local = fill_config((ROOT / "docs" / name).read_text(encoding="utf-8"), {"repo_url": None})
        assert "<owner>" not in local and "<!--" not in local and "REPO_URL" in local, name
        assert "Colab" in local and local.count("Colab") == 1, name  # named once, as what a published copy adds
        published = fill_config((ROOT / "docs" / name).read_text(encoding="utf-8"), {"repo_url": "https://github.com/o/r"})
        assert "git clone https://github.com/o/r simtdocs" in published and "REPO_URL" not in published, name


# -- the built site -----------------------------------------------------------------------


def nav_labels(html: str) -> list[str]:
    """The labels of the primary navigation (its ``md-ellipsis`` spans), tags dropped."""
    from html.parser import HTMLParser

    class Labels(HTMLParser):
        def __init__(self):
            super().__init__()
            self.labels, self.nav, self.depth = [], 0, 0

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "nav":
                self.nav += 1 if self.nav or "md-nav--primary" in (a.get("class") or "") else 0
            if self.nav and tag == "span":
                if self.depth:
                    self.depth += 1
                elif a.get("class") == "md-ellipsis":
                    self.depth = 1
                    self.labels.append("")

        def handle_endtag(self, tag):
            if tag == "nav" and self.nav:
                self.nav -= 1
            if tag == "span" and self.depth:
                self.depth -= 1

        def handle_data(self, data):
            if self.depth:
                self.labels[-1] += data

    parser = Labels()
    parser.feed(html)
    return [" ".join(label.split()) for label in parser.labels]


def test_navigation_in_the_language_of_its_side(site):
    en = nav_labels((site / "en" / "index.html").read_text(encoding="utf-8"))
    zh = nav_labels((site / "index.html").read_text(encoding="utf-8"))
    assert "A first launch" in en and "Install and run" in en and "P2 · Code 06: checking the exercises" in en
    assert [label for label in en if notebooks.CJK.search(label)] == []
    assert "第一次启动" in zh and "安装与运行" in zh
    assert [label for label in zh if not notebooks.CJK.search(label) and label != "simtdocs"] == []


def test_notebook_pages_and_downloads_follow_their_language(site):
    for prefix, lang, title, header, other in (("", "zh", "第一次启动", "计数器", "Counter"),
                                                ("en/", "en", "A first launch", "Counter", "计数器")):
        folder = site / prefix / "notebooks" / "home" / "01_first_launch"
        html = (folder / "index.html").read_text(encoding="utf-8")
        assert f"<title>{title} - simtdocs</title>" in html
        assert re.search(f"<th[^>]*>{header}</th>", html) and not re.search(f"<th[^>]*>{other}</th>", html)
        download = nbformat.read(str(folder / "01_first_launch.ipynb"), as_version=4)
        assert download.cells[0].source.split("\n")[0] == f"# {title}"
        assert f'set_language("{lang}")' in download.cells[1].source


def test_install_page_in_both_languages(site):
    for prefix, heading in (("", "安装与运行"), ("en/", "Install and run")):
        html = (site / prefix / "install" / "index.html").read_text(encoding="utf-8")
        assert heading in html
        assert "simtdocs[figures] @ git+" in html and "{{" not in html
        home = (site / prefix / "index.html").read_text(encoding="utf-8")
        assert 'href="install/"' in home[home.index("<article"):]  # the text links it, not only the nav


# -- a notebook service is not the build machine ------------------------------------------


def test_english_figures_draw_without_a_cjk_font(monkeypatch):
    """A fresh hosted notebook has no CJK font: English figures still draw, Chinese ones stop
    with the install hint (they would show empty boxes)."""
    from simtdocs.display import _, figures

    def draw():
        fig, ax = figures.figure()
        ax.set_xlabel(str(_("sectors")))
        return fig

    import matplotlib

    monkeypatch.setattr(figures, "CJK_FONTS", ("No Such CJK Font",))
    monkeypatch.setattr(figures, "_configured", None)
    # matplotlib's fonts back as they were after this test (rc_context), with figures marked
    # configured again (monkeypatch): else the tests after it would draw Chinese with a font
    # that has no Chinese (boxes, and a warning).
    with matplotlib.rc_context():
        fig = figures.Figure(draw, alt=_("sectors"))
        assert fig.svg("en").startswith(b"<?xml")
        with pytest.raises(RuntimeError, match=r"^No CJK font for Chinese figure labels\. Install one with "
                                               r"`apt-get install fonts-wqy-microhei`"):
            fig.svg("zh")


def test_rich_output_in_any_jupyter_shell(monkeypatch):
    """Colab's shell subclasses ipykernel's ZMQInteractiveShell under another name."""
    import sys
    from types import SimpleNamespace

    from simtdocs.display import recorder as display

    class ZMQInteractiveShell:
        pass

    class Shell(ZMQInteractiveShell):
        pass

    class TerminalInteractiveShell:
        pass

    for shell, rich in ((Shell(), True), (ZMQInteractiveShell(), True), (TerminalInteractiveShell(), False)):
        monkeypatch.setitem(sys.modules, "IPython", SimpleNamespace(get_ipython=lambda s=shell: s))
        assert display._in_notebook() is rich
