"""The README is the front page; docs/ holds the rest. Every link between them must land."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "course" / "function_contract.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
FRONT_PAGE_LINES = 320


def anchors(page: Path) -> set[str]:
    """GitHub's anchor of each heading: lower case, punctuation but '-' dropped, spaces as '-'."""
    headings = re.findall(r"^#{1,6} +(.+?) *$", FENCE.sub("", page.read_text()), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def links(page: Path) -> list[str]:
    return [target for target in LINK.findall(FENCE.sub("", page.read_text()))
            if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_link_lands_on_a_file_and_heading(page):
    """Does every relative link of the page name a file that exists and, after '#', one of its
    headings (a section moved to docs/ leaves no link pointing at the README)?"""
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        landing = (page.parent / path).resolve() if path else page
        if not landing.exists() or (anchor and anchor not in anchors(landing)):
            broken.append(target)
    assert broken == []


def test_the_readme_stays_a_front_page():
    """Is the README short enough to read before a term (the instructors' guide, insight,
    grading and authors' pages hold the rest), and does it link each of them?"""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= FRONT_PAGE_LINES
    assert [page.name for page in PAGES[1:-1] if f"docs/{page.name}" not in readme] == []


def test_a_broken_anchor_is_found(tmp_path):
    """Would the link check see a link to a heading the target lacks?"""
    (tmp_path / "a.md").write_text("# Title\n\n## Grading a large class\n\nSee [b](a.md#nowhere).\n")
    assert "grading-a-large-class" in anchors(tmp_path / "a.md")
    assert "nowhere" not in anchors(tmp_path / "a.md")
    assert links(tmp_path / "a.md") == ["a.md#nowhere"]


def test_the_known_good_submission_is_made_in_a_trial_root_on_every_page():
    """Trial 82: the README's step 3 made the known-good submission in the term's own root,
    docs/grading.md in a trial root. Does every page that makes one say to make it in a trial
    root (`COURSE_ROOT=trial`), in the same paragraph?"""
    pages = [page for page in PAGES if "tools.submissions" in page.read_text()]
    assert {page.name for page in pages} >= {"README.md", "grading.md"}
    for page in pages:
        for paragraph in re.split(r"\n\s*\n|\n(?=\d+\. )", page.read_text()):
            if "tools.submissions" in paragraph:
                assert "COURSE_ROOT=trial" in paragraph and "trial root" in paragraph, (
                    page.name, paragraph)
