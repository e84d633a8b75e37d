"""The website build: executed chapters, both languages marked for the switch, Colab links."""

from __future__ import annotations

import re

import pytest
import yaml

from tools.book import chapter_sources
from tools.core import ROOT
from tools.notebooks import repository_url
from tools.website import toc_pages as toc_files

pytestmark = pytest.mark.book


def test_every_chapter_is_in_the_toc():
    listed = set(toc_files())
    missing = [p.stem for p in chapter_sources() if f"book/{p.stem}" not in listed]
    assert not missing, f"chapters missing from _toc.yml: {missing}"


@pytest.mark.parametrize("source", chapter_sources(), ids=lambda p: p.stem)
def test_chapter_page_has_both_languages_and_the_switch(site, source):
    html = (site / "book" / f"{source.stem}.html").read_text(encoding="utf-8")
    assert html.count('class="lang-ko') > 0 and html.count('class="lang-en') > 0
    assert html.count('class="lang-ko') == html.count('class="lang-en'), "unpaired prose"
    assert "lang-switch.js" in html and "lang-switch.css" in html
    assert "Traceback (most recent call last)" not in html, "a cell raised while building"


@pytest.mark.parametrize("source", chapter_sources(), ids=lambda p: p.stem)
def test_colab_button_opens_the_korean_reader_notebook(site, source):
    html = (site / "book" / f"{source.stem}.html").read_text(encoding="utf-8")
    links = re.findall(r'href="(https://colab\.research\.google\.com/github/[^"]+)"', html)
    assert links, "no Open-in-Colab link on the page"
    branch = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"].get(
        "branch", "main")
    org_repo = repository_url().removeprefix("https://github.com/")
    prefix = f"https://colab.research.google.com/github/{org_repo}/blob/{branch}/"
    assert links[0] == f"{prefix}notebooks/ko/{source.stem}.ipynb", links[0]
    assert (ROOT / links[0].removeprefix(prefix)).is_file()
    assert "colab-lang.js" in html, "the button would not follow the language switch"


def test_page_titles_show_both_languages(site):
    for source in chapter_sources():
        html = (site / "book" / f"{source.stem}.html").read_text(encoding="utf-8")
        title = re.search(r"<title>(.*?)</title>", html, re.S).group(1)
        assert re.search(r"[\uac00-\ud7a3]", title) and re.search(r"[A-Za-z]{3}", title), title


@pytest.mark.parametrize("source", chapter_sources(), ids=lambda p: p.stem)
def test_element_ids_are_unique_on_each_chapter_page(site, source):
    """An id names one element (sphinx-exercise gave every exercise body the same one)."""
    html = (site / "book" / f"{source.stem}.html").read_text(encoding="utf-8")
    ids = re.findall(r'\sid="([^"]+)"', html)
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    assert not repeated, repeated
