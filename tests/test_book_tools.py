"""Unit tests for the book's maintainer tools in tools/book.py (glossary check and friends)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jupytext
import pytest

from tools import book
from tools.core import ROOT

# -- glossary table ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def glossary() -> list[book.Term]:
    return book.load_glossary()


def test_glossary_table_has_enough_distinct_terms(glossary):
    assert len(glossary) >= 40
    assert len({t.en.lower() for t in glossary}) == len(glossary)
    assert all(book.HANGUL.search(t.ko) for t in glossary)


def test_glossary_has_the_book_s_core_terms(glossary):
    ko = {t.en: t.ko for t in glossary}
    expected = {
        "attention": "어텐션",
        "query": "쿼리",
        "key": "키",
        "value": "값",
        "hidden state": "은닉 상태",
        "positional encoding": "위치 인코딩",
        "layer normalization": "층 정규화",
        "residual connection": "잔차 연결",
        "vanishing gradient": "기울기 소실",
        "teacher forcing": "교사 강요",
    }
    assert {k: ko.get(k) for k in expected} == expected


def test_glossary_check_column_is_star_phrases_or_empty(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text(
        "en,ko,en_also,ko_also,check\n"
        "hidden state,은닉 상태,,,*\n"
        "key,키,,,keys;key vectors\n"
        "loss,손실,,,\n",
        encoding="utf-8",
    )
    terms = {t.en: t for t in book.load_glossary(path)}
    assert terms["hidden state"].check == ("hidden state",)
    assert terms["key"].check == ("keys", "key vectors")
    assert terms["loss"].check == ()


@pytest.mark.parametrize(
    "rows, message",
    [
        ("hidden state,은닉 상태,,,*\nhidden state,숨은 상태,,,*\n", "listed twice"),
        ("hidden state,hidden,,,*\n", "need an English and a Korean term"),
    ],
)
def test_glossary_table_rejects_bad_rows(tmp_path, rows, message):
    path = tmp_path / "g.csv"
    path.write_text("en,ko,en_also,ko_also,check\n" + rows, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        book.load_glossary(path)


def test_glossary_table_rejects_wrong_columns(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("english,korean\nquery,쿼리\n", encoding="utf-8")
    with pytest.raises(ValueError, match="columns must be"):
        book.load_glossary(path)


# -- glossary check ---------------------------------------------------------------------------


def flagged(ko: str, en: str, glossary) -> list[str]:
    """English terms of the glossary that the check reports for this pair."""
    found = []
    for message in book.glossary_problems(ko, en, glossary):
        found.append(re.search(r"says '([^']*)'", message).group(1))
    return found


def test_glossary_check_flags_a_korean_term_that_deviates(glossary):
    en = "The hidden state carries what the network has read so far."
    assert flagged("숨은 상태가 지금까지 읽은 것을 담습니다.", en, glossary) == ["hidden state"]
    assert flagged("은닉 상태가 지금까지 읽은 것을 담습니다.", en, glossary) == []


def test_glossary_check_accepts_the_english_term_or_a_variant(glossary):
    en = "Each query is compared with every key; queries and keys have the same size."
    assert (
        flagged("각 query를 모든 키와 비교합니다. 쿼리와 키는 크기가 같습니다.", en, glossary) == []
    )
    assert flagged(
        "각 질의를 모든 키와 비교합니다. 질의와 키는 크기가 같습니다.", en, glossary
    ) == ["query"]
    en = "A positional encoding is added to every token embedding."
    assert flagged("모든 토큰 임베딩에 위치 임베딩을 더합니다.", en, glossary) == []


def test_glossary_check_ignores_spacing_particles_and_english_glosses(glossary):
    en = "Nadaraya–Watson regression is attention pooling with a Gaussian kernel."
    ko = "나다라야–왓슨(Nadaraya–Watson) 회귀는 가우스 커널을 쓴 어텐션풀링입니다."
    assert flagged(ko, en, glossary) == []
    en = "Layer normalisation keeps the residual connections well scaled."
    assert flagged("층정규화는 잔차 연결의 크기를 고르게 합니다.", en, glossary) == []
    assert (
        flagged("RNN은 은닉 상태를 넘깁니다.", "The RNN hands on its hidden state.", glossary) == []
    )


def test_glossary_check_reports_the_longest_term_once(glossary):
    en = "Multi-head attention runs several heads; multi-head attention then concatenates them."
    ko = "다중 주의 메커니즘은 여러 머리를 돌린 뒤 결과를 이어 붙입니다."
    assert flagged(ko, en, glossary) == ["Multi-head attention"]


def test_glossary_check_skips_code_math_references_and_idioms(glossary):
    en = (
        "Call `masked_softmax(query)` as in {numref}`fig-attention`, with $\\text{key}$; "
        "pay close attention to the shapes."
    )
    assert (
        flagged("{numref}`fig-attention`처럼 호출하고 $\\text{key}$ 모양을 보세요.", en, glossary)
        == []
    )


def test_glossary_check_respects_phrase_triggers(glossary):
    # "key" alone is an everyday word ("the key idea"); only attention phrases trigger it.
    assert flagged("핵심 아이디어는 간단합니다.", "The key idea is simple.", glossary) == []
    found = flagged("질의와 열쇠를 비교합니다.", "Compare queries with keys.", glossary)
    assert sorted(found) == ["keys", "queries"]


def test_pair_problems_include_the_glossary_only_when_given(glossary):
    ko, en = "숨은 상태입니다.", "The hidden state."
    assert book.pair_problems(ko, en) == []
    assert any("glossary" in p for p in book.pair_problems(ko, en, glossary))


def test_check_sources_applies_the_glossary(tmp_path):
    page = tmp_path / "01_demo.md"
    page.write_text(
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
        "# 제목 · Title\n\n"
        '+++ {"lang": "ko"}\n\n교사 강제를 씁니다.\n\n'
        '+++ {"lang": "en"}\n\nWe use teacher forcing.\n',
        encoding="utf-8",
    )
    problems = book.check_sources([page])
    assert [p.cell for p in problems] == [1]
    assert "'교사 강요'" in problems[0].message
    assert book.check_sources([page], glossary=None) == []


def test_every_page_of_the_book_passes_the_glossary_check(glossary):
    problems = []
    for path in book.page_sources():
        nb = jupytext.read(path)
        problems += [
            str(p) for p in book.check_notebook(path, nb, glossary) if "glossary" in p.message
        ]
    assert problems == []


# -- references -------------------------------------------------------------------------------


def test_references_bib_has_unique_keys_and_the_issue_s_list():
    text = (ROOT / "references.bib").read_text(encoding="utf-8")
    keys = re.findall(r"^@\w+\{([^,\s]+),", text, flags=re.M)
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
    wanted = {
        "Vaswani2017", "Bahdanau2014", "Luong2015", "Dosovitskiy2021", "Hochreiter1997",
        "Werbos1990", "Jaeger2002", "Tallec2017", "Nadaraya1964", "Watson1964", "Devlin2019",
        "Ba2016", "He2016", "Sutskever2014", "Pascanu2013", "Bengio1994",
    }  # fmt: skip
    assert wanted <= set(keys), sorted(wanted - set(keys))
    # Every entry parses (an unbalanced brace would swallow the next entry).
    from pybtex.database import parse_string

    entries = parse_string(text, "bibtex").entries
    assert sorted(entries) == sorted(keys)
    assert all(e.fields.get("title") and e.fields.get("year") for e in entries.values())


# -- Sphinx extensions of the site (_ext/) ----------------------------------------------------


@pytest.fixture(scope="module")
def ext():
    """The local Sphinx extensions, imported from _ext/ as the site build does."""
    import importlib
    import sys

    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        yield {
            name: importlib.import_module(name)
            for name in ("korean_search", "book_site", "glossary_table")
        }
    finally:
        sys.path.remove(str(ROOT / "_ext"))


@pytest.mark.parametrize(
    "word, stem",
    [
        ("어텐션은", "어텐션"),
        ("쿼리를", "쿼리"),
        ("어텐션에서는", "어텐션"),
        ("계산합니다", "계산"),
        ("키", "키"),  # one syllable stays
        ("값이", "값"),
        ("트랜스포머", "트랜스포머"),
    ],
)
def test_korean_search_strips_one_trailing_particle(ext, word, stem):
    assert ext["korean_search"].strip_ending(word) == stem


def test_korean_search_indexes_words_as_written_and_without_particles(ext):
    words = ext["korean_search"].split_words("RNN은 은닉 상태를 넘깁니다. Attention(어텐션)!")
    for expected in ("RNN은", "RNN", "은닉", "상태를", "상태", "넘깁니다", "Attention", "어텐션"):
        assert expected in words, (expected, words)
    assert len(words) == len(set(words))


def test_korean_search_language_stems_english_and_keeps_hangul(ext):
    lang = ext["korean_search"].SearchKorean({})
    assert lang.lang == "ko"
    assert lang.stem("Attention") == lang.stem("attentions") == "attent"
    assert lang.stem("어텐션") == "어텐션"
    assert not lang.word_filter("은") and not lang.word_filter("the")
    assert lang.word_filter("키") and lang.word_filter("query")
    # The browser's stemmer knows the same endings as the index.
    js = lang.js_stemmer_code
    assert "var Stemmer = function" in js and "PorterStemmer" in js
    assert all(f'"{e}"' in js for e in ext["korean_search"].ENDINGS)


def test_colab_button_only_for_pages_with_reader_notebooks(ext):
    site = ext["book_site"]
    for chapter in book.chapter_sources():
        for lang in ("ko", "en"):
            assert site.reader_notebook(chapter, lang), f"{chapter.name}: run `make notebooks`"
    assert site.reader_notebook(ROOT / "book" / "glossary.md") is None
    buttons = [{"label": "launch-buttons", "buttons": [
        {"url": "https://colab.research.google.com/github/o/r/blob/main/book/04_x.md"},
        {"url": "https://mybinder.org/v2/gh/o/r/main"}]}]
    site._point_colab(buttons, "04_x")
    assert buttons[0]["buttons"][0]["url"] == (
        "https://colab.research.google.com/github/o/r/blob/main/notebooks/ko/04_x.ipynb")
    assert buttons[0]["buttons"][1]["url"] == "https://mybinder.org/v2/gh/o/r/main"


def test_glossary_table_anchors_are_unique(ext, glossary):
    anchors = [ext["glossary_table"].term_anchor(t.en) for t in glossary]
    assert len(anchors) == len(set(anchors))
    assert ext["glossary_table"].term_anchor("Nadaraya–Watson regression") == (
        "term-nadaraya-watson-regression"
    )


def test_language_wrapping_keeps_the_page_front_matter():
    """_ext/bilingual.py must not drop front-matter keys such as a page's `mystnb:` settings."""
    import sys

    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        import bilingual
    finally:
        sys.path.remove(str(ROOT / "_ext"))
    text = (ROOT / "book" / "d2l_compat.md").read_text(encoding="utf-8")
    wrapped = jupytext.reads(bilingual.wrap_language_cells(text), fmt="md:myst")
    assert wrapped.metadata["mystnb"] == {"execution_mode": "force"}
    assert wrapped.metadata["kernelspec"]["name"] == "python3"


# -- avoided variants, spelling, chapter references, glossary links ---------------------------


def test_glossary_reads_the_avoided_variants(glossary):
    terms = {t.en: t for t in glossary}
    assert terms["scaled dot-product attention"].ko == "스케일드 내적 어텐션"
    assert "점곱" in terms["dot product"].ko_avoid
    assert terms["parameter"].ko == "파라미터" and "매개변수" in terms["parameter"].ko_avoid
    assert "단어장" in terms["vocabulary"].ko_avoid
    assert "수열" in terms["sequence"].ko_avoid
    assert terms["sublayer"].ko == "부분층" and "하위 층" in terms["sublayer"].ko_avoid
    assert "시험" in terms["test set"].ko_avoid


def test_glossary_accepts_rows_without_the_avoid_column(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text(
        "en,ko,en_also,ko_also,check,ko_avoid\nparameter,파라미터,,,,매개변수\nloss,손실,,,\n",
        encoding="utf-8",
    )
    terms = {t.en: t for t in book.load_glossary(path)}
    assert terms["parameter"].ko_avoid == ("매개변수",)
    assert terms["loss"].ko_avoid == ()


def test_glossary_rejects_an_avoided_variant_inside_an_accepted_term(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text(
        "en,ko,en_also,ko_also,check,ko_avoid\n"
        "dot product,내적,,,*,점곱\n"
        "scaled dot-product attention,스케일드 점곱 어텐션,,,*,\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="contains it"):
        book.load_glossary(path)


@pytest.mark.parametrize(
    "ko, variant",
    [
        ("이 모델의 매개변수는 5000개입니다.", "매개변수"),
        ("스케일드 점곱 어텐션을 씁니다.", "점곱"),
        ("두 하위 층을 감쌉니다.", "하위 층"),
        ("두 하위층을 감쌉니다.", "하위층"),
        ("단어장 크기의 로짓", "단어장"),
        ("시험 BLEU가 0.9를 넘습니다.", "시험"),
    ],
)
def test_checker_refuses_avoided_korean_variants(glossary, ko, variant):
    problems = book.avoided_problems(ko, glossary)
    assert any(repr(variant) in p for p in problems), problems


def test_checker_ignores_avoided_variants_in_code_and_math(glossary):
    assert book.avoided_problems("`vocab  # 단어장` 과 $x$의 파라미터", glossary) == []


def test_checker_refuses_avoided_variants_in_headings(tmp_path):
    page = tmp_path / "01_demo.md"
    page.write_text(
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
        "# 스케일드 점곱 어텐션 · Scaled dot-product attention\n\n"
        '+++ {"lang": "ko"}\n\n내적을 씁니다.\n\n'
        '+++ {"lang": "en"}\n\nWe use the dot product.\n',
        encoding="utf-8",
    )
    problems = book.check_sources([page])
    assert problems and all(p.cell == 0 for p in problems)
    assert any("'점곱'" in p.message for p in problems)


@pytest.mark.parametrize(
    "en, bad",
    [
        ("The weights are normalised to sum to 1.", "normalised"),
        ("We initialise the embedding.", "initialise"),
        ("The colour shows the weight.", "colour"),
        ("Its behaviour changes.", "behaviour"),
        ("The signal travelled far.", "travelled"),
        ("grey digits", "grey"),
    ],
)
def test_checker_refuses_british_spelling(en, bad):
    problems = book.english_problems(en)
    assert any(repr(bad) in p for p in problems), problems


def test_checker_accepts_american_spelling_and_words_ending_in_ise():
    en = (
        "We normalize, initialize and color; otherwise the noise rises. This exercise raises "
        "a ValueError. The positionwise network is likewise elementwise. The `normalise` "
        "argument and $\\text{colour}$ in code or math do not count."
    )
    assert book.english_problems(en) == []


@pytest.mark.parametrize("en", ["As chapter 3 shows.", "Chapter 8 trains it.", "chapters 8 and 9"])
def test_checker_refuses_bare_chapter_numbers(en):
    assert any("numref" in p for p in book.english_problems(en))


def test_checker_accepts_numref_chapter_references():
    assert book.english_problems("As {numref}`Chapter %s <chap-rnn>` shows.") == []


def test_chapter_references_compare_by_label():
    ko = "{numref}`%s장 <chap-rnn>`에서 봤습니다."
    en = "We saw it in {numref}`Chapter %s <chap-rnn>`."
    assert book.pair_problems(ko, en) == []
    en_other = "We saw it in {numref}`Chapter %s <chap-bptt>`."
    assert any("references differ" in p for p in book.pair_problems(ko, en_other))


def test_english_rules_apply_to_chapters_only(tmp_path):
    body = (
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
        '+++ {"lang": "ko"}\n\n색입니다.\n\n'
        '+++ {"lang": "en"}\n\nA colour.\n'
    )
    chapter, page = tmp_path / "01_demo.md", tmp_path / "appendix.md"
    chapter.write_text(body, encoding="utf-8")
    page.write_text(body, encoding="utf-8")
    assert any("colour" in p.message for p in book.check_sources([chapter], glossary=None))
    assert book.check_sources([page], glossary=None) == []


def test_term_anchor_matches_the_glossary_table_extension(ext, glossary):
    for term in glossary:
        assert book.term_anchor(term.en) == ext["glossary_table"].term_anchor(term.en)


def test_glossary_links_must_name_a_row(glossary):
    ko = "{ref}`어텐션 <term-attention>`을 씁니다."
    en = "We use {ref}`attention <term-attention>`."
    assert book.pair_problems(ko, en, glossary) == []
    ko_bad = "{ref}`어텐션 <term-atention>`을 씁니다."
    en_bad = "We use {ref}`attention <term-atention>`."
    problems = book.pair_problems(ko_bad, en_bad, glossary)
    assert any("'term-atention'" in p and "no such row" in p for p in problems), problems
    md = "[어텐션](glossary.md#term-nonsense)"
    assert book.glossary_link_problems(md, {"term-attention"}) == [
        "glossary link to 'term-nonsense': no such row in book/glossary.csv"
    ]


def test_every_chapter_links_its_first_glossary_terms(glossary):
    """Each chapter links at least a few glossary terms to their rows, in both languages."""
    anchors = {book.term_anchor(t.en) for t in glossary}
    for path in book.chapter_sources():
        text = path.read_text(encoding="utf-8")
        linked = set(re.findall(r"<(term-[\w-]+)>`", text))
        assert linked, f"{path.name} links no glossary term: run python -m tools.book link-glossary"
        assert linked <= anchors, f"{path.name}: {sorted(linked - anchors)}"


MYST_HEADER = (
    "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
    "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
)
LINK_PAGE = (
    MYST_HEADER
    + "# 제목 · Title\n\n"
    '+++ {"lang": "ko"}\n\n`hidden state`와 $h$를 봅니다. 키우는 법은 없습니다.\n\n'
    '+++ {"lang": "en"}\n\nWe look at `hidden state` and $h$.\n\n'
    '+++ {"lang": "ko"}\n\n은닉 상태(hidden state)는 셀프 어텐션의 키와 다릅니다. '
    "은닉 상태는 또 나옵니다.\n\n"
    '+++ {"lang": "en"}\n\nThe hidden state differs from the keys of self-attention. The hidden '
    "state comes back.\n\n"
    "```{code-cell} ipython3\nhidden_state = 1\n```\n\n"
    "(sec-demo-exercises)=\n## 연습 문제 · Exercises\n\n"
    '+++ {"lang": "ko"}\n\n어텐션을 써 보세요.\n\n'
    '+++ {"lang": "en"}\n\nUse attention.\n'
)


def test_link_glossary_terms_links_first_uses_in_both_languages(tmp_path, glossary):
    page = tmp_path / "01_demo.md"
    page.write_text(LINK_PAGE, encoding="utf-8")
    assert book.link_glossary_terms(page, glossary) == 3  # hidden state, self-attention, key
    text = page.read_text(encoding="utf-8")
    assert "{ref}`은닉 상태 <term-hidden-state>`(hidden state)는" in text
    assert "The {ref}`hidden state <term-hidden-state>` differs" in text
    assert text.count("<term-hidden-state>`") == 2  # only the first use in each language
    assert "{ref}`셀프 어텐션 <term-self-attention>`의 {ref}`키 <term-key>`와" in text
    assert "{ref}`self-attention <term-self-attention>`" in text
    # attention occurs only inside self-attention and in the exercises, which stay as they are
    assert "<term-attention>" not in text
    assert "`hidden state`와 $h$" in text and "키우는" in text  # code, math and 키우다 untouched
    assert book.check_sources([page]) == []
    assert book.link_glossary_terms(page, glossary) == 0  # a second run changes nothing
    assert page.read_text(encoding="utf-8") == text


def test_exercise_directives_must_sit_in_a_shared_cell():
    # a solution-end inside the English cell would close the solution only in English mode
    ko, en = "정리하면 이렇습니다.", "In short, this.\n\n```{solution-end}\n```"
    assert any("shared cell" in p for p in book.pair_problems(ko, en))
    assert not any("shared cell" in p for p in book.pair_problems(ko, "In short, this."))


# -- seeding goes through d2l ------------------------------------------------------------------


@pytest.mark.parametrize("code", [
    "torch.manual_seed(0)", "g = torch.Generator().manual_seed(3)", "np.random.seed(1)",
    "rng = np.random.default_rng(2)", "random.seed(4)", "torch.cuda.manual_seed_all(0)",
    "r = random.Random(5)",
])
def test_raw_seeding_in_a_chapter_is_a_problem(code):
    assert book.seeding_problems(code) and "D2LITE_SEED_OFFSET" in book.seeding_problems(code)[0]


@pytest.mark.parametrize("code", ["d2l.set_seed(0)", "g = d2l.generator(3)", "x = torch.rand(2)"])
def test_seeding_through_d2l_is_fine(code):
    assert book.seeding_problems(code) == []


# -- tools.website: the one _toc.yml reader and the one static server --------------------------


def test_one_toc_reader_recurses_into_sections_for_every_tool(tmp_path):
    from tools import notebooks, pdf, website

    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/index\nparts:\n"
        "  - caption: A\n    chapters:\n      - file: book/01_a\n"
        "        sections:\n          - file: book/01_a_more.md\n"
        "      - file: book/02_b\nchapters:\n  - file: book/appendix.ipynb\n",
        encoding="utf-8",
    )
    assert website.toc_pages(tmp_path) == [
        "book/index", "book/01_a", "book/01_a_more", "book/02_b", "book/appendix"
    ]
    assert notebooks.toc_pages is website.toc_pages is pdf.toc_pages
    assert website.toc_pages()[0] == "book/index"


def test_the_static_server_serves_quietly(tmp_path, capsys):
    import urllib.request

    from tools import website

    (tmp_path / "index.html").write_text("<p>hi</p>", encoding="utf-8")
    with website.serve(tmp_path) as base:
        assert base.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(base + "/index.html", timeout=10) as response:
            assert response.read() == b"<p>hi</p>"
    assert capsys.readouterr().err == ""  # no request log


def test_changed_runs_a_chapter_again_only_when_its_inputs_change(tmp_path, monkeypatch):
    from tools import changed

    monkeypatch.setattr(changed, "library_digest", lambda root=changed.ROOT: "library-v1")
    first = changed.stale(stamps=tmp_path)
    assert [c for c, _, _ in first] == changed.chapters() and first
    chapter, fp, reason = first[0]
    assert reason == "never passed here"
    (tmp_path / f"{chapter.stem}.sha256").write_text(fp + "\n")  # it passed
    assert chapter not in [c for c, _, _ in changed.stale(stamps=tmp_path)]
    monkeypatch.setattr(changed, "library_digest", lambda root=changed.ROOT: "library-v2")
    again = {c: why for c, _, why in changed.stale(stamps=tmp_path)}
    assert again[chapter] == "chapter, library or environment changed"


# -- code for the column ------------------------------------------------------------------------


def test_long_code_lines_are_found_in_code_cells_only():
    long = "x = " + "1 + " * 30 + "1"
    text = (
        "# Title\n\n+++ {\"lang\": \"en\"}\n\n" + "prose " * 30 + "\n\n"
        "```{code-cell} ipython3\nshort = 1\n" + long + "\n```\n\n"
        "```python\n" + long + "\n```\n"
    )
    assert book.long_code_lines(text) == [(9, len(long))]
    assert book.long_code_lines(text, limit=len(long)) == []
    assert book.long_code_lines(text, limit=5) == [(8, 9), (9, len(long))]


def test_code_width_lists_the_long_lines(tmp_path, capsys):
    chapter = tmp_path / "01_x.md"
    chapter.write_text("```{code-cell} ipython3\n" + "y" * 90 + "\nz = 2\n```\n", "utf-8")
    assert book.main(["code-width", str(chapter)]) == 1
    out = capsys.readouterr().out
    assert f"{chapter}:2: 90 characters" in out and "1 code line(s)" in out
    assert book.main(["code-width", "--max", "90", str(chapter)]) == 0


def test_notation_checker_wants_rows():
    from tools.book import notation_problems

    assert notation_problems(r"$\mathrm{Var}(\mathbf{q}^\top \mathbf{k})$")
    assert notation_problems(r"$\mathbf{W}_q \mathbf{q}$ and $\mathbf{W}^{(h)} \mathbf{x}$")
    assert not notation_problems(r"$\mathbf{q}\mathbf{k}^\top$, $\mathbf{x}\mathbf{W}_q$")
    # an outer product of a row vector with itself is row notation too
    assert not notation_problems(r"$\mathrm{diag}(\mathbf{p}) - \mathbf{p}^\top\mathbf{p}$")
    assert not notation_problems(r"$\mathbf{q}\mathbf{W}_q\mathbf{W}_k^\top\mathbf{k}^\top$")


def test_bench_table_names_the_cpu_it_was_measured_on(tmp_path, monkeypatch):
    from tools import bench

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2445.406\n"
                    "processor\t: 1\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 3100.000\n")
    assert bench.cpu_name(info) == "AMD EPYC at 2.45 GHz"  # the first core's fields
    info.write_text("model name\t: Neoverse-N1\n")
    assert bench.cpu_name(info) == "Neoverse-N1"
    monkeypatch.setattr(bench.platform, "processor", lambda: "")
    assert bench.cpu_name(tmp_path / "missing") == "unknown CPU"


def test_bench_times_each_chapter_alone_and_the_book_two_at_a_time(tmp_path, monkeypatch):
    from tools import bench, execute

    sources = [Path("book/01_a.md"), Path("book/02_b.md")]
    calls = []

    def fake_run(source, env):
        calls.append(source.stem)
        alone = calls.count(source.stem) == 1
        return {"wall_s": {"01_a": 5.0, "02_b": 50.0}[source.stem] * (1 if alone else 1.2),
                "peak_mib": 100.0}

    monkeypatch.setattr(bench, "chapter_sources", lambda: sources)
    monkeypatch.setattr(bench, "run_chapter", fake_run)
    monkeypatch.setattr(bench, "longest_first", lambda s: s)
    monkeypatch.setattr(bench, "device_name", lambda: "cpu")
    out = tmp_path / "latest"
    assert bench.main(["--chapters-only", "--out", str(out)]) == 0
    assert sorted(calls) == ["01_a", "01_a", "02_b", "02_b"]  # alone, then two at a time
    table = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "| 02_b | 50.0 | 60.0 | 100 | cpu | yes |" in table
    # the schedule of make book and make test reads each chapter's time alone from the JSON
    assert execute.chapter_seconds(out.with_suffix(".json")) == {"01_a": 5.0, "02_b": 50.0}
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["jobs"] == 2 and [r["beside_s"] for r in summary["rows"]] == [6.0, 60.0]
    calls.clear()
    assert bench.main(["--chapters-only", "--jobs", "1", "--out", str(out)]) == 0
    assert sorted(calls) == ["01_a", "02_b"]  # one pass is both


_TINY = MYST_HEADER + "# A page\n\n```{code-cell} ipython3\nprint(6 * 7)\n```\n"


def test_execute_caches_a_stale_chapter_and_leaves_a_failing_one_out(tmp_path):
    from jupyter_cache import get_cache

    from tools import execute

    good, bad = tmp_path / "01_good.md", tmp_path / "02_bad.md"
    good.write_text(_TINY, encoding="utf-8")
    bad.write_text(_TINY.replace("print(6 * 7)", "raise ValueError('not this one')"),
                   encoding="utf-8")
    cache = tmp_path / "cache"
    assert execute.stale([good, bad], cache) == [good, bad]
    passed, seconds, error = execute.execute(good, cache)
    assert passed, error
    assert execute.stale([good, bad], cache) == [bad]
    record = get_cache(str(cache)).match_cache_notebook(jupytext.read(good))
    cell = get_cache(str(cache)).get_cache_bundle(record.pk).nb.cells[-1]
    assert cell.outputs[0]["text"] == "42\n"
    passed, _, error = execute.execute(bad, cache)
    assert not passed and "not this one" in error
    assert execute.stale([good, bad], cache) == [bad]
    # an edited code cell makes the chapter stale again
    good.write_text(_TINY.replace("6 * 7", "6 * 8"), encoding="utf-8")
    assert execute.stale([good], cache) == [good]


def test_execute_runs_the_longest_chapters_first(tmp_path):
    from tools import execute

    bench = tmp_path / "latest.json"  # tools.bench's results, as conftest.py's schedule reads them
    rows = [{"chapter": "01_a", "wall_s": 5.0}, {"chapter": "02_b", "wall_s": 50.0}]
    bench.write_text(json.dumps({"rows": rows}), encoding="utf-8")
    sources = [Path("book/01_a.md"), Path("book/02_b.md"), Path("book/03_new.md")]
    assert [s.stem for s in execute.longest_first(sources, bench)] == ["03_new", "02_b", "01_a"]
    # without a benchmark: the given order
    assert execute.longest_first(sources, tmp_path / "none.json") == sources
