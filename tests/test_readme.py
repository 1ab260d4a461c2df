"""The README stays a README: short, no dated figures or commit hashes, and every document it links exists."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_is_short():
    assert len(README.splitlines()) <= 150


def test_readme_has_no_dates_or_commit_hashes():
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", README), "dated figures belong in bench/RESULTS.md"
    assert not re.search(r"\b[0-9a-f]{7,40}\b", README), "commit hashes belong in commit messages and bench/RESULTS.md"


def test_every_linked_document_exists():
    links = re.findall(r"\]\(([^)#]+)\)", README)
    assert links
    for link in links:
        assert (ROOT / link).exists(), link
    for doc in (ROOT / "docs").glob("*.md"):
        for link in re.findall(r"\]\(([^)#:]+)\)", doc.read_text(encoding="utf-8")):
            assert (doc.parent / link).exists(), f"{doc.name}: {link}"
