"""The reader notebooks (tools/notebooks.py): one per chapter and language, plain Jupyter."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import jupytext
import nbformat
import pytest
from test_pipeline import HEADER

from tools import notebooks

HANGUL = re.compile(r"[\uac00-\ud7a3]")
MYST_LEFT = [
    (re.compile(r"\{[a-z:]+\}`"), "a MyST role"),
    (re.compile(r"^\s*(`{3,}|:{3,})\{", re.M), "a directive fence"),
    (re.compile(r"^\s*:::", re.M), "a colon fence"),
    (re.compile(r"^\([\w\-:.]+\)=\s*$", re.M), "a label"),
    (re.compile(r"^\+\+\+", re.M), "a jupytext cell marker"),
]
SAMPLE = HEADER + """
(chap-sample)=
# 예시 · Sample

+++ {"lang": "ko"}

{numref}`%s장 <chap-transformer>`과 {ref}`어텐션 <term-attention>`을 봅니다 {cite:p}`Vaswani2017`.

```{admonition} 흔한 오해
$x$는 벡터입니다.
```

+++ {"lang": "en"}

See {numref}`Chapter %s <chap-transformer>` and {ref}`attention <term-attention>`
{cite:p}`Vaswani2017`.

```{admonition} Common pitfall
$x$ is a vector.
```

+++

## 연습문제 · Exercises

```{exercise-start}
:label: ex-sample-1
```

+++ {"lang": "ko"}

$1+1$을 계산하세요.

+++ {"lang": "en"}

Compute $1+1$.

+++

```{exercise-end}
```

```{solution-start} ex-sample-1
:class: dropdown
```

+++ {"lang": "ko"}

답은 2입니다.

+++ {"lang": "en"}

The answer is 2.

```{code-cell} ipython3
assert 1 + 1 == 2
```

+++

```{solution-end}
```

+++ {"lang": "ko"}

끝.

+++ {"lang": "en"}

The end.
"""


def markdown(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "markdown"]


def code(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


def read(lang: str, source: Path):
    return nbformat.reads(notebooks.reader_notebook(source, lang), as_version=4)


def test_reader_notebooks_are_committed_and_in_sync():
    stale = notebooks.sync(check=True)
    assert not stale, "run `make notebooks`:\n" + "\n".join(stale)


@pytest.mark.parametrize("source", notebooks.chapter_sources(), ids=lambda p: p.stem)
def test_notebooks_are_plain_jupyter_in_one_language(source):
    chapter = [c.source for c in jupytext.read(source).cells if c.cell_type == "code"]
    nbs = {}
    for lang in notebooks.LANGS:
        path = notebooks.notebook_paths(source)[lang]
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        nbs[lang] = nb
        assert all(not c.outputs and c.execution_count is None
                   for c in nb.cells if c.cell_type == "code"), f"{path.name} has outputs"
        for text in markdown(nb):
            for pattern, what in MYST_LEFT:
                assert not pattern.search(text), f"{path.name}: {what} in {text[:200]!r}"
        headings = [line for text in markdown(nb) for line in text.splitlines()
                    if line.startswith("#")]
        assert headings and all(notebooks.SEPARATOR not in h for h in headings), headings
        if lang == "en":
            assert not [h for h in headings if HANGUL.search(h)], "Korean in English headings"
        else:
            assert HANGUL.search(headings[0]), headings[0]
        assert Counter(code(nb)[1:]) == Counter(chapter), f"{path.name}: code differs from source"
    assert code(nbs["ko"])[1:] == code(nbs["en"])[1:], "the two languages' code cells differ"


@pytest.mark.parametrize("lang", notebooks.LANGS)
def test_setup_cell_installs_the_pinned_release_in_colab_only(lang):
    src = notebooks.setup_source(lang)
    assert f"@v{notebooks.version()}" in src and notebooks.repository_url() in src
    assert 'if "google.colab" in sys.modules:' in src and "print(" in src
    assert f'os.environ["D2LITE_FIG_LANG"] = "{lang}"' in src
    compile(src, "setup", "exec")


def test_myst_becomes_links_citations_and_block_quotes(tmp_path):
    source = tmp_path / "98_sample.md"
    source.write_text(SAMPLE, encoding="utf-8")
    ko, en = read("ko", source), read("en", source)
    base = notebooks.base_url()
    chapter = notebooks.targets()["chap-transformer"]
    ko_text, en_text = "\n".join(markdown(ko)), "\n".join(markdown(en))
    assert f"[{chapter.number}장]({base}/book/08_transformer.html)" in ko_text
    assert f"[Chapter {chapter.number}]({base}/book/08_transformer.html)" in en_text
    assert f"[attention]({base}/book/glossary.html#term-attention)" in en_text
    assert "(Vaswani et al., 2017)" in en_text and "## References" in en_text
    assert "> **Common pitfall**" in en_text and "> $x$ is a vector." in en_text
    assert "> **흔한 오해**" in ko_text and "The end." not in ko_text
    # exercises stay in place; their solutions follow all exercises, under their own heading
    cells = markdown(en)
    # the heading that shares a cell with the first exercise-start stays, in the reader's language
    assert cells.index("## Exercises") < cells.index("**Exercise 1**") < cells.index("## Solutions")
    assert "## 연습문제" in markdown(ko) and "## 연습문제 · Exercises" not in markdown(ko)
    assert cells.index("## Solutions") < cells.index("### Solution to exercise 1")
    assert cells.index("The end.") < cells.index("## Solutions")
    assert code(en)[-1] == "assert 1 + 1 == 2"
    assert code(ko)[1:] == code(en)[1:]


def test_unknown_reference_is_an_error(tmp_path):
    source = tmp_path / "98_bad.md"
    source.write_text(SAMPLE.replace("chap-transformer", "chap-nowhere"), encoding="utf-8")
    with pytest.raises(ValueError, match="chap-nowhere"):
        notebooks.reader_notebook(source, "en")


def test_bilingual_test_notebooks_keep_both_languages(tmp_path):
    written = notebooks.write_test_notebooks(tmp_path)
    assert [p.stem for p in written] == [s.stem for s in notebooks.chapter_sources()]
    nb = nbformat.read(written[1], as_version=4)
    langs = {c.metadata.get("lang") for c in nb.cells if c.cell_type == "markdown"}
    assert {"ko", "en"} <= langs
    assert "D2LITE_FIG_LANG" not in nb.cells[0].source  # nbval draws both languages' figures
