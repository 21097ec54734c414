"""The install page and the notebook pages as a reader meets them in Chromium: reached from
the home page's text, the commands to copy, a notebook's output in the page's language, its
download in that language, and the "open in Colab" button when the site has a GitHub
repository (the deploy sets REPO_URL; a local build has none and shows no button).

Every page, these included, also goes through the checks of test_pages.py, test_a11y.py
(axe) and the other per-page tests, which discover the pages from the built site.
"""

from __future__ import annotations

from urllib.parse import urljoin

import pytest

LANGS = {
    "zh": {"root": "/", "install": "安装与运行", "notebook": "第一次启动", "counter": "计数器",
           "download": "下载 .ipynb", "colab": "在 Colab 中打开"},
    "en": {"root": "/en/", "install": "Install and run", "notebook": "A first launch", "counter": "Counter",
           "download": "Download .ipynb", "colab": "Open in Colab"},
}


@pytest.fixture
def tab(context):
    page = context.new_page()
    yield page
    page.close()


@pytest.mark.parametrize("lang", LANGS)
def test_the_home_page_text_leads_to_the_install_page(tab, base_url, lang):
    words = LANGS[lang]
    tab.goto(base_url + words["root"])
    link = tab.locator("article a[href='install/']")
    assert link.count() == 1, "the home page's text has no link to the install page"
    link.click()
    tab.wait_for_load_state()
    assert tab.url == f"{base_url}{words['root']}install/"
    assert tab.locator("article h1").inner_text().strip().rstrip("¶") == words["install"]
    commands = tab.locator("article pre code").all_inner_texts()
    if tab.locator("a.md-source").count():  # the build knew the repository (REPO_URL)
        assert any('pip install "simtdocs[figures] @ git+' in c for c in commands), commands
    else:  # no command with a placeholder address: the page says how to get the address
        assert not any("<owner>" in c or "git+" in c for c in commands), commands
        assert "REPO_URL" in tab.locator("article .admonition").first.inner_text()
    assert any("set_language('zh')" in c for c in commands) and any("SIMTDOCS_LANG=zh" in c for c in commands)
    assert not any("{{" in c for c in commands)


@pytest.mark.parametrize("lang", LANGS)
def test_a_notebook_page_speaks_its_language(tab, base_url, context, lang):
    words, other = LANGS[lang], LANGS["en" if lang == "zh" else "zh"]
    tab.goto(f"{base_url}{words['root']}notebooks/home/01_first_launch/")
    assert tab.locator("article h1").first.inner_text().strip() == words["notebook"]
    headers = tab.locator("article th").all_inner_texts()
    assert words["counter"] in headers and other["counter"] not in headers, headers
    active = tab.locator(".md-nav--primary .md-nav__link--active").first.inner_text().strip()
    assert active == words["notebook"]

    download = tab.locator(f"a.md-content__button[download][title='{words['download']}']")
    assert download.count() == 1
    response = context.request.get(urljoin(tab.url, download.get_attribute("href")))
    assert response.status == 200
    notebook = response.json()
    assert "".join(notebook["cells"][0]["source"]).startswith(f"# {words['notebook']}")
    assert f'set_language("{lang}")' in "".join(notebook["cells"][1]["source"])

    colab = tab.locator("a[data-simt-hosted]")
    has_repo = tab.locator("a.md-source").count() > 0  # the header's source link: REPO_URL was set
    if has_repo:
        assert colab.get_attribute("title") == words["colab"]
        prefix = "" if lang == "zh" else "en/"
        assert colab.get_attribute("href").startswith("https://colab.research.google.com/github/")
        assert colab.get_attribute("href").endswith(
            f"/blob/notebooks/{prefix}notebooks/home/01_first_launch/01_first_launch.ipynb")
    else:
        assert colab.count() == 0
