"""Sphinx extension: a search language for Korean pages that also holds English prose.

Sphinx has no Korean search support: with ``language = "ko"`` it falls back to English, whose
index keeps each space-separated word whole. Korean attaches particles and endings to words
(어텐션**은**, 쿼리**를**, 계산**합니다**), so a reader's search for 어텐션 or 쿼리 would miss most
of the pages that use them. This search language

* indexes every word as written and, for a Hangul word, also without its trailing particle or
  ending (어텐션은 → 어텐션), and splits words that mix scripts (RNN은 → RNN, 은);
* strips the same endings from the reader's query in the browser (a JavaScript stemmer that
  mirrors :func:`strip_ending`), so 어텐션을 finds pages that say 어텐션은;
* stems Latin words with the English Porter stemmer, as Sphinx's English search does.
"""

from __future__ import annotations

import re

import snowballstemmer
from sphinx.search import SearchLanguage
from sphinx.search.en import english_stopwords, js_porter_stemmer

HANGUL = re.compile(r"[\uac00-\ud7a3]")
HANGUL_WORD = re.compile(r"[\uac00-\ud7a3]+")
WORD = re.compile(r"\w+")
SCRIPT_RUN = re.compile(r"[\uac00-\ud7a3]+|[^\uac00-\ud7a3]+")

# Trailing particles (조사) and the endings of 하다/되다 verbs, longest first. Stripping one
# that was really part of the word (평가 → 평) only adds an index entry; it never removes one.
ENDINGS = sorted(
    """
    에서는 에서도 으로는 으로도 에게서 이라는 이라고 입니다 합니다 됩니다 했습니다 하였다
    에서 에게 으로 까지 부터 보다 처럼 마다 라는 이나 이고 이며 이다 이면 에는 에도 와는 과는
    하는 하고 하면 하여 해서 했다 한다 하기 된다 되는 되어 되면 된 할 한 들은 들이 들을 들의
    은 는 이 가 을 를 의 에 와 과 도 로 만
    """.split(),
    key=len,
    reverse=True,
)
PARTICLES = frozenset(ENDINGS)


def strip_ending(word: str) -> str:
    """The Hangul word without its longest trailing particle or ending (one syllable stays)."""
    for end in ENDINGS:
        if len(word) > len(end) and word.endswith(end):
            return word[: -len(end)]
    return word


def split_words(text: str) -> list[str]:
    """Index terms of a text: each word, its script runs, and Hangul runs without endings."""
    out: list[str] = []
    for token in WORD.findall(text):
        forms = [token]
        runs = SCRIPT_RUN.findall(token)
        if len(runs) > 1:
            forms += runs
        for form in list(forms):
            if HANGUL_WORD.fullmatch(form):
                stripped = strip_ending(form)
                if stripped != form:
                    forms.append(stripped)
        out += [f for f in dict.fromkeys(forms) if f]
    return out


_JS_ENDINGS = "[" + ", ".join(f'"{e}"' for e in ENDINGS) + "]"

JS_STEMMER = (
    js_porter_stemmer.replace("var Stemmer = function", "var PorterStemmer = function")
    + """
/**
 * Korean-aware stemmer: Hangul words lose one trailing particle or ending (as in the index);
 * Latin words go through the Porter stemmer.
 */
var Stemmer = function() {
  var porter = new PorterStemmer();
  var endings = """
    + _JS_ENDINGS
    + """;
  this.stemWord = function(w) {
    if (/^[\\uac00-\\ud7a3]+$/.test(w)) {
      for (var i = 0; i < endings.length; i++) {
        var e = endings[i];
        if (w.length > e.length && w.slice(-e.length) === e) return w.slice(0, -e.length);
      }
      return w;
    }
    if (/[\\uac00-\\ud7a3]/.test(w)) return w;
    return porter.stemWord(w);
  };
};
"""
)


class SearchKorean(SearchLanguage):
    """Korean and English words in one index (see the module docstring)."""

    lang = "ko"
    language_name = "Korean"
    stopwords = english_stopwords
    js_stemmer_code = JS_STEMMER

    def init(self, options: dict[str, str]) -> None:
        self.stemmer = snowballstemmer.stemmer("english")

    def split(self, input: str) -> list[str]:
        return split_words(input)

    def stem(self, word: str) -> str:
        word = word.lower()
        if HANGUL.search(word):
            return word
        return self.stemmer.stemWord(word)

    def word_filter(self, word: str) -> bool:
        if not word or word in PARTICLES:
            return False
        return word not in self.stopwords


def setup(app):
    app.add_search_language(SearchKorean)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
