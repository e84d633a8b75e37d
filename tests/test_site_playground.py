"""The built website's GPT playground (book/playground.html and chapter 10's embed), offline,
at phone width; the engine and widget themselves are tested in tests/test_playground.py."""

from __future__ import annotations

import json

import pytest

from tests.test_playground import STATIC, _check_widget, _open

pytestmark = pytest.mark.book


def test_built_site_playground_generates_offline(browser, server):
    """The website's playground page (and chapter 10's embed), from the built site."""
    for page_name in ("book/playground.html", "book/10_language_models.html"):
        ctx = browser.new_context()
        try:
            ctx.add_init_script("localStorage.setItem('d2lite-book-lang', 'en')")
            page = _open(ctx, f"{server}/{page_name}", 390)
            _check_widget(page, "en", 390)
        finally:
            ctx.close()
    assert json.loads((STATIC / "model.json").read_text(encoding="utf-8"))["format"]
