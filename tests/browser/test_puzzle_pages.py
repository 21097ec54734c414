"""The puzzle pages as a reader uses them, in both languages: every puzzle of the lecture has
its section, every verdict of a kernel that ran carries a folded score card that opens to a
table in the page's language (the reader's kernel beside the solution), the warp-level
puzzles show a typical wrong answer with its verdict, and each puzzle states its random
inputs."""

from __future__ import annotations

import pytest

from simtdocs.puzzles import TRITON_PUZZLES, of_lecture, warp_level

PAGES = {
    ("zh", "p2"): "p2/puzzles/",
    ("en", "p2"): "en/p2/puzzles/",
    ("zh", "exec_model"): "exec-model-puzzles/",
    ("en", "exec_model"): "en/exec-model-puzzles/",
}
WORDS = {
    "zh": {"card": "计分卡", "yours": "你的内核", "solution": "参考解法", "reads": "每线程全局读", "random": "随机"},
    "en": {"card": "score card", "yours": "your kernel", "solution": "the solution", "reads": "global reads per thread",
           "random": "random"},
}

FACTS_JS = """() => {
  const sections = [...document.querySelectorAll('article h3[id]')].map(h => h.id);
  const cards = [...document.querySelectorAll('details.simt-score')];
  const failures = [...document.querySelectorAll('details.failure')].map(d => d.querySelector('summary').textContent);
  return {sections, cards: cards.length, failures, text: document.querySelector('article').textContent};
}"""

OPEN_CARD_JS = """(n) => {
  const card = document.querySelectorAll('details.simt-score')[n];
  card.querySelector('summary').click();
  const table = card.querySelector('table');
  const box = table ? table.getBoundingClientRect() : null;
  return {
    open: card.open,
    head: table ? [...table.querySelectorAll('th')].map(th => th.textContent.trim()) : [],
    rows: table ? [...table.querySelectorAll('tbody tr')].map(tr => [...tr.cells].map(c => c.textContent.trim())) : [],
    visible: box !== null && box.width > 0 && box.height > 0,
  };
}"""


@pytest.fixture(scope="module")
def puzzle_page(context, base_url):
    seen = {}

    def visit(lang, lecture):
        if (lang, lecture) not in seen:
            page = context.new_page()
            page.goto(f"{base_url}/{PAGES[(lang, lecture)]}", wait_until="load")
            facts = page.evaluate(FACTS_JS)
            seen[(lang, lecture)] = (page, facts)
        return seen[(lang, lecture)]

    yield visit
    for page, _facts in seen.values():
        page.close()


@pytest.mark.parametrize("lang, lecture", list(PAGES), ids=[f"{lang}-{lec}" for lang, lec in PAGES])
def test_every_puzzle_has_its_section_and_states_random_inputs(puzzle_page, lang, lecture):
    _page, facts = puzzle_page(lang, lecture)
    for puzzle in of_lecture(lecture):
        assert puzzle.name.replace("_", "-") in facts["sections"], puzzle.name
    assert facts["text"].count(WORDS[lang]["random"]) >= len([p for p in of_lecture(lecture) if p.inputs().drawn])


@pytest.mark.parametrize("lang, lecture", list(PAGES), ids=[f"{lang}-{lec}" for lang, lec in PAGES])
def test_score_cards_open_to_a_table_in_the_page_language(puzzle_page, lang, lecture):
    page, facts = puzzle_page(lang, lecture)
    # every solution ran to the end, so at least one card per puzzle (the skeletons' too, mostly)
    assert facts["cards"] >= len(of_lecture(lecture))
    card = page.evaluate(OPEN_CARD_JS, 0)
    words = WORDS[lang]
    assert card["open"] and card["visible"]
    assert card["head"] == [words["card"], words["yours"], words["solution"]]
    assert card["rows"][0][0] == words["reads"]
    assert all(len(row) == 3 and row[1] and row[2] for row in card["rows"])


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_warp_level_puzzles_show_a_typical_wrong_answer(puzzle_page, lang):
    _page, facts = puzzle_page(lang, "p2")
    title = {"zh": "一个常见的错误答案", "en": "A typical wrong answer"}[lang]
    # the six warp-level puzzles and the Triton puzzles of §15.18 each fold one
    assert [t.strip() for t in facts["failures"]].count(title) == len(warp_level.PUZZLES) + len(TRITON_PUZZLES)


TABS_JS = """() => {
  const shown = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const sets = [...document.querySelectorAll('article .tabbed-set')].filter(s =>
      [...s.querySelectorAll('.tabbed-labels label')].some(l => l.textContent.trim() === 'CUDA C'));
  return sets.map(set => {
    const names = [...set.querySelectorAll('.tabbed-labels label')].map(l => l.textContent.trim());
    const blocks = [...set.querySelectorAll(':scope > .tabbed-content > .tabbed-block')];
    const c = blocks[names.indexOf('CUDA C')];
    const fold = set.closest('details');
    return {names, folded: !!fold && !fold.open, shown: blocks.map(shown), c_code: !!c.querySelector('.language-cuda.highlight code'),
            copy: !!c.querySelector('.md-clipboard, .md-code__button'),
            text: (c.querySelector('code') || c).textContent.slice(0, 200)};
  });
}"""


@pytest.mark.parametrize("lang, lecture", list(PAGES), ids=[f"{lang}-{lec}" for lang, lec in PAGES])
def test_each_puzzle_offers_its_skeleton_in_c_in_a_tab(puzzle_page, lang, lecture):
    """Beside each skeleton's Python tab, a CUDA C tab. A reader's click on one CUDA C tab shows
    the C (with its copy button) in place of the Python in every skeleton of the page (the
    site links tabs of the same name), and a click on Python brings the Python back."""
    page, _facts = puzzle_page(lang, lecture)
    open_sets = lambda: [s for s in page.evaluate(TABS_JS) if not s["folded"]]  # noqa: E731 (solutions are folded)
    before = open_sets()
    assert len(before) >= len(of_lecture(lecture)), len(before)  # every skeleton's tabs at least
    assert all(s["names"] == ["Python", "CUDA C"] and s["shown"] == [True, False] for s in before), before[:2]
    page.locator("article .tabbed-labels label", has_text="CUDA C").first.click()
    for s in open_sets():
        assert s["shown"] == [False, True], s
        assert s["c_code"] and s["copy"] and "__global__" in s["text"], s
    page.locator("article .tabbed-labels label", has_text="Python").first.click()
    assert all(s["shown"] == [True, False] for s in open_sets())
