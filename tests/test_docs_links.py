"""Every link of the README and the docs pages points somewhere: a file of the repository, and
the heading an anchor names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {_slug(m[1]) for m in re.finditer(r"^#+ (.*)$", text, re.M)}


def _links(page: Path) -> list[str]:
    text = re.sub(r"`[^`\n]*`", "", FENCE.sub("", page.read_text()))
    return [m[1] for m in LINK.finditer(text) if not re.match(r"[a-z]+:", m[1])]


def test_slug_is_githubs():
    assert _slug("`pulumi up` with a real cloud") == "pulumi-up-with-a-real-cloud"
    assert _slug("GKE node pool (`GkeGpuNodePool`)") == "gke-node-pool-gkegpunodepool"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_points_somewhere(page: Path):
    broken = []
    for link in _links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            broken.append(f"{link}: no heading #{anchor} in {target.relative_to(ROOT)}")
    assert broken == []


def test_the_readme_links_every_docs_page():
    readme = (ROOT / "README.md").read_text()
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md") if not p.name.endswith(".in.md"))
    assert [p for p in pages if f"docs/{p}" not in readme] == []


def test_the_readme_stays_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 300
