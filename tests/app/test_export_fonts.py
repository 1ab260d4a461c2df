"""KaTeX's fonts in the offline file are subsets (app/export/fonts.py): every LaTeX command the op table and the
inspector use is known (else every font would stay whole), each kept font holds the glyphs those commands and
printable ASCII need, and only fonts no command of ours selects are left out. The browser check of the
rendered widths is tests/browser/test_offline_fonts_page.py."""
from __future__ import annotations

import io

from fontTools.ttLib import TTFont

from app.export import fonts


def _cmap(data: bytes) -> set[int]:
    return set(TTFont(io.BytesIO(data)).getBestCmap())


def test_every_command_of_the_page_latex_is_known():
    assert fonts.unknown_commands(fonts.page_latex()) == set()


def test_subsets_keep_what_the_latex_needs_and_are_small():
    subsets = fonts.subset_fonts()
    kept = {n: d for n, d in subsets.items() if d is not None}
    assert set(kept) == {"KaTeX_AMS-Regular.woff2", "KaTeX_Main-Bold.woff2", "KaTeX_Main-Italic.woff2",
                         "KaTeX_Main-Regular.woff2", "KaTeX_Math-Italic.woff2", *(f"KaTeX_Size{i}-Regular.woff2"
                                                                                  for i in range(1, 5))}
    assert sum(map(len, kept.values())) < 100_000  # (260 kB whole)
    used = {c for text in fonts.page_latex() for c in fonts._COMMAND.findall(text)}
    needed = {ord(c) for c in range(0x20, 0x7F) for c in [chr(c)]} | {ord(c) for cmd in used & set(fonts.COMMAND_GLYPHS)
                                                                    for c in fonts.COMMAND_GLYPHS[cmd]}
    for name, data in kept.items():
        whole = _cmap((fonts.FONTS / name).read_bytes())
        assert (whole & needed) <= _cmap(data), (name, sorted(chr(c) for c in (whole & needed) - _cmap(data)))


def test_an_unknown_command_keeps_every_font_whole(monkeypatch):
    monkeypatch.setattr(fonts, "page_latex", lambda: ["\\frac{a}{b}", "\\mathfrak{g} \\newthing"])
    fonts.subset_fonts.cache_clear()
    try:
        subsets = fonts.subset_fonts()
        assert all(data == (fonts.FONTS / name).read_bytes() for name, data in subsets.items())
    finally:
        fonts.subset_fonts.cache_clear()
