"""The insight page and CSV as parts, one per lesson, so that a run over some lessons
(``make insight LESSONS=...``) replaces only those lessons' parts and keeps the others as an
earlier run wrote them. Each lesson's part of the page is a ``<section>`` that names its lesson,
when it was read and whether it shows learner ids; the lessons nobody had handed in are listed
in one line. Both are read back from the page itself, the CSV's rows by their lesson column."""

import csv
import html
import re
from pathlib import Path

_SECTION = re.compile(r'<section class="lesson" data-lesson="([^"]+)" data-read="[^"]*" '
                      r'data-names="(yes|no)">.*?</section>', re.DOTALL)
_SKIPPED = re.compile(r'data-skipped="([^"]*)"')


def section(lesson: str, body: str, read: str, names: bool) -> str:
    """``body`` as the part of the page for ``lesson``, read at ``read``."""
    return (f'<section class="lesson" data-lesson="{html.escape(lesson)}" '
            f'data-read="{html.escape(read)}" data-names="{"yes" if names else "no"}">\n'
            f'{body}\n<p class="note">Read from the records {html.escape(read)}.</p>\n'
            "</section>")


def names_shown(sections: dict[str, str]) -> list[str]:
    """The lessons whose parts show learner ids, in order."""
    return sorted(lesson for lesson, part in sections.items()
                  if (found := _SECTION.fullmatch(part)) and found[2] == "yes")


def earlier_sections(page: Path) -> dict[str, str]:
    """Lesson -> its part of the page an earlier run wrote (none if there is no page)."""
    text = page.read_text() if page.exists() else ""
    return {html.unescape(found[1]): found[0] for found in _SECTION.finditer(text)}


def earlier_skipped(page: Path) -> list[str]:
    """The lessons an earlier run found nobody had handed in."""
    found = _SKIPPED.search(page.read_text()) if page.exists() else None
    return html.unescape(found[1]).split() if found else []


def earlier_rows(table: Path) -> list[dict]:
    """The rows of the CSV an earlier run wrote (none if there is none)."""
    if not table.exists():
        return []
    with open(table, newline="") as handle:
        return list(csv.DictReader(handle))
