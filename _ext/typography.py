"""Sphinx extension: the Hangul web font that the site falls back to.

The site's font stack (``_static/book.css``) prefers the reader's own Korean fonts and ends
with "Book NanumGothic", an ``@font-face`` served from ``_static/fonts/``. The font files are
NanumGothic regular and bold, copied at build time from the ``koreanize-matplotlib`` package that
the figures already use (SIL Open Font License), so the repository holds no font binaries and a
system without Korean fonts still shows Hangul, in both weights.
"""

from __future__ import annotations

import shutil
from pathlib import Path

FONTS = ("NanumGothic.ttf", "NanumGothicBold.ttf")


def font_dir() -> Path:
    import koreanize_matplotlib

    return Path(koreanize_matplotlib.__file__).resolve().parent / "fonts"


def _copy_fonts(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "fonts"
    target.mkdir(parents=True, exist_ok=True)
    for name in FONTS:
        source = font_dir() / name
        if not source.is_file():
            raise FileNotFoundError(f"typography: {source} is missing (koreanize-matplotlib)")
        if not (target / name).is_file() or (target / name).stat().st_size != source.stat().st_size:
            shutil.copyfile(source, target / name)


def setup(app):
    app.connect("build-finished", _copy_fonts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
