"""KaTeX's fonts for the offline file, cut to the glyphs the page's LaTeX can use (fontTools' subsetter).

What an offline file renders with KaTeX: every op's local derivative (the op table's LaTeX), the
inspector's chain-rule lines (`static/js/inspector.js`) and, inside them, numbers and program names in
`\\text{}`. So each font keeps printable ASCII (numbers, names, operator names such as `\\max`), the
characters KaTeX substitutes in math (`-` is U+2212 ...), Greek, and the symbol of every command that
LaTeX uses; a font only a command no LaTeX of ours uses selects (`\\mathcal`, `\\mathfrak`, `\\mathtt`,
...) is left out. A command this module does not know makes it keep every font whole (never a missing
glyph); tests/app/test_export_fonts.py checks that every command of the op table is known.
A character outside the subset (a program name in Cyrillic) is drawn by the browser's next font, not as a box.
The cutting (~3 s of pure-Python fontTools) runs once, in a child process at a lower priority: in the server it
would hold the GIL against the event loop (issue 22: the first export stalled /healthz and every answer for seconds).
"""

from __future__ import annotations

import io
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FONTS = ROOT / "static" / "vendor" / "katex" / "fonts"
INSPECTOR = ROOT / "static" / "js" / "inspector.js"

# the symbol KaTeX draws for each command of ours (its symbols table: src/symbols.js, src/macros.js)
COMMAND_GLYPHS = {
    "\\alpha": "α", "\\beta": "β", "\\gamma": "γ", "\\delta": "δ", "\\zeta": "ζ", "\\pi": "π", "\\sigma": "σ",
    "\\varphi": "φ", "\\psi": "ψ", "\\Phi": "Φ", "\\partial": "∂", "\\cdot": "⋅", "\\ge": "≥", "\\le": "≤", "\\ne": "≠",
    "\\notin": "∈∉/", "\\in": "∈", "\\lnot": "¬", "\\lVert": "∥", "\\rVert": "∥", "\\ldots": "…", "\\star": "⋆", "\\sum": "∑",
    "\\prod": "∏", "\\top": "⊤", "\\times": "×", "\\to": "→", "\\sqrt": "√", "\\hat": "^\u02c6", "\\bar": "\u00af\u02c9",
    "\\lfloor": "⌊", "\\rfloor": "⌋",
}
# commands drawn from letters of the kept fonts, rules or SVG (no glyph of their own)
STRUCTURAL = frozenset("""
\\frac \\tfrac \\textstyle \\displaystyle \\text \\mathrm \\mathbf \\mathbb \\operatorname \\underbrace \\quad
\\begin \\end \\arg \\max \\min \\det \\ln \\log \\exp \\sin \\cos \\tanh \\tan \\sinh \\cosh
""".split())
# fonts only these commands select: left out when no LaTeX of ours uses one of them
FONT_COMMANDS = {
    "Caligraphic": ("\\mathcal",), "Fraktur": ("\\mathfrak",), "Script": ("\\mathscr",),
    "SansSerif": ("\\mathsf", "\\textsf", "\\sf"), "Typewriter": ("\\mathtt", "\\texttt", "\\tt"),
    "Math-BoldItalic": ("\\boldsymbol", "\\bm", "\\pmb"), "Main-BoldItalic": ("\\boldsymbol", "\\bm", "\\textit"),
}
# what KaTeX draws for ASCII in math mode (minus, asterisk, prime), and Greek (program names, op LaTeX)
MATH_SUBSTITUTES = "\u2212\u2217\u2032\u00d7\u00b7\u2026\u2009\u2223"  # ... and | as U+2223
GREEK = "".join(chr(c) for c in range(0x391, 0x3CA)) + "\u03d1\u03d5\u03d6\u03f1\u03f5"
_COMMAND = re.compile(r"\\[A-Za-z]{2,}")  # (one letter: a regex class in JS source, \\d)


def page_latex() -> list[str]:
    """Every LaTeX text the offline page can render: the op table's, and the inspector's templates."""
    from engine.ops import OPS

    out = [latex for op in OPS.values() for latex in op.latex if latex]
    js = INSPECTOR.read_text(encoding="utf-8").replace("\\\\", "\\")  # "\\frac" in JS source is \frac
    out += [m.group(0) for m in _COMMAND.finditer(js)]
    return out


def unknown_commands(latex: list[str]) -> set[str]:
    known = STRUCTURAL | set(COMMAND_GLYPHS) | {c for cs in FONT_COMMANDS.values() for c in cs}
    return {c for text in latex for c in _COMMAND.findall(text)} - known


SUBSET_NICE = 10  # the child cutting the fonts: everything the server does goes first


@lru_cache(maxsize=1)
def subset_fonts() -> dict[str, bytes | None]:
    """{font file name: woff2 bytes, or None (left out)}; every font whole when a command is unknown. Cut in a
    child process (in this one when no child can be started)."""
    latex = page_latex()
    try:
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            return pool.submit(_cut_niced, latex).result()
    except (OSError, RuntimeError, EOFError):  # no processes here (a sandboxed notebook): cut in this process
        return cut_fonts(latex)


def _cut_niced(latex: list[str]) -> dict[str, bytes | None]:
    try:
        os.nice(SUBSET_NICE)
    except OSError:
        pass
    return cut_fonts(latex)


def cut_fonts(latex: list[str]) -> dict[str, bytes | None]:
    """``subset_fonts``' work, in this process, for the page's ``latex``."""
    names = sorted(p.name for p in FONTS.glob("*.woff2"))
    if unknown_commands(latex):
        return {n: (FONTS / n).read_bytes() for n in names}
    used = {c for text in latex for c in _COMMAND.findall(text)}
    chars = {chr(c) for c in range(0x20, 0x7F)} | set(MATH_SUBSTITUTES) | set(GREEK)
    for command in used & set(COMMAND_GLYPHS):
        chars |= set(COMMAND_GLYPHS[command])
    unicodes = sorted(ord(c) for c in chars)
    out = {}
    for n in names:
        stem = n.removeprefix("KaTeX_").removesuffix(".woff2")  # "Caligraphic-Bold", "Math-BoldItalic"
        selecting = FONT_COMMANDS.get(stem) or FONT_COMMANDS.get(stem.split("-")[0])
        if selecting is not None and not used & set(selecting):
            out[n] = None
            continue
        out[n] = _subset((FONTS / n).read_bytes(), unicodes)
    return out


def _subset(woff2: bytes, unicodes: list[int]) -> bytes:
    from fontTools import subset
    from fontTools.ttLib import TTFont

    font = TTFont(io.BytesIO(woff2))
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]  # KaTeX's fonts have no features it relies on, but keep what is there
    options.notdef_outline = True
    options.name_IDs = ["*"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=unicodes)
    subsetter.subset(font)
    buf = io.BytesIO()
    font.flavor = "woff2"
    font.save(buf)
    return buf.getvalue()
