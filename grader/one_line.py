"""Long texts cut to fit one summary line without losing what they say happened: a reason or an
explanation ends with it ("..., put back the read-only and test cells it lacked, and graded
it"; "...; which dims does your formula leave that the input lacks?"), so the middle goes, not
the end; and the subject at its start stays ("FusedLinearReLU saved ..."), so clauses go
whole."""

import re

from .faults import SEPARATOR

ELLIPSIS = " … "


def cut(text: str, width: int = 200) -> str:
    """``text`` if it fits ``width``; else its start and its last whole clauses (after ", ",
    "; ", ": " or a sentence's end, outside brackets) in up to two thirds of the width, the
    middle left out; the start ends at a clause end or before a bracket where one leaves room
    ("... for backward", not "... for backward: a"), else at a word. Where not even the last
    clause fits, the start alone: a clause cut at both ends reads as nonsense ("...of shape
    (4,) (32 bytes) for … is meant to drop.")."""
    if len(text) <= width:
        return text
    tail_room = (width - len(ELLIPSIS)) * 2 // 3
    tails = [text[found.end():] for found in _CLAUSE_END.finditer(text)]
    tails = [tail for tail in tails if len(tail) <= tail_room and _balanced(tail)]
    for tail in tails:  # the longest end whose start can also be cut at a clause end
        head = _clause_head(text, width - len(ELLIPSIS) - len(tail))
        if head:
            return head.rstrip(" ,;:") + ELLIPSIS + tail
    if tails:
        head = _word_head(text, width - len(ELLIPSIS) - len(tails[0]))
        return head.rstrip(" ,;:") + ELLIPSIS + tails[0]
    room = width - len(ELLIPSIS.rstrip())
    return (_clause_head(text, room) or _word_head(text, room)).rstrip(" ,;:") + \
        ELLIPSIS.rstrip()


def head(text: str, width: int) -> str:
    """``text`` if it fits ``width``; else its start, cut at its last clause end (outside
    brackets) or, where that would leave a quarter of the room unused, at a word, and "…": for
    a place that shows where the whole text is (a feedback table's hint, its test cell below)."""
    if len(text) <= width:
        return text
    room = width - 1
    clause = _clause_head(text, room)
    start = clause if len(clause) >= room * 3 // 4 else _word_head(text, room)
    return start.rstrip(" ,;:") + "…"


_CLAUSE_END = re.compile(r"[,;:.?!] +")
_ASIDE = re.compile(r" \(")  # a start may also end before a bracket's aside
SHORTEST_HEAD = 24  # a start cut at a clause end shorter than this says too little: cut at a word


def _clause_head(text: str, room: int) -> str:
    """The start of ``text`` up to its last clause end in ``room``, outside brackets ("... for
    backward:", not "... for backward: a"); "" where there is none long enough to say much."""
    for pattern in (_CLAUSE_END, _ASIDE):  # a clause end first, else before an aside
        ends = [found.start() + (pattern is _CLAUSE_END) for found in
                pattern.finditer(text[:room + 1]) if found.start() + 1 <= room
                and _balanced(text[:found.start()])]
        if ends and ends[-1] >= SHORTEST_HEAD:
            return text[:ends[-1]]
    return ""


def _word_head(text: str, room: int) -> str:
    return text[:room + 1].rsplit(" ", 1)[0] if " " in text[:room + 1] else text[:room]


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")") and text.count("[") == text.count("]")


def reason(text: str, width: int = 200) -> str:
    """A notebook's reason (its faults' messages, most serious first) in ``width``: the
    messages that fit whole, the first always (cut in its middle if it alone is too long: it
    is the status's), and how many more the reason column of grades.csv has."""
    if len(text) <= width:
        return text
    messages = text.split(SEPARATOR)

    def more(kept: int) -> str:
        return f" (+{len(messages) - kept} more: the reason column of grades.csv)"

    for kept in range(len(messages) - 1, 0, -1):
        if len(SEPARATOR.join(messages[:kept]) + more(kept)) <= width:
            return SEPARATOR.join(messages[:kept]) + more(kept)
    rest = more(1) if len(messages) > 1 else ""
    return cut(messages[0], width - len(rest)) + rest


_PACKAGES = re.compile(r"(?<![\w.])(?:[A-Za-z]:)?[/\\](?:[^\s'\"()<>,;|]*?[/\\])?"
                       r"(site-packages|dist-packages)(?=[/\\])")


def without_paths(text: str) -> str:
    """``text`` as a learner or grades.csv reads it: no absolute path of the grader's machine.
    A path into an environment's packages from ``.../site-packages/`` on (the rest names the
    module), and one under the course root ($COURSE_ROOT, else the repository's ``instructor/``)
    or the repository relative to it."""
    import os

    from .lessons import ROOT

    text = _PACKAGES.sub(r".../\1", text)
    course = os.path.realpath(os.environ.get("COURSE_ROOT", ROOT / "instructor"))
    for root in dict.fromkeys((course, str(ROOT), os.path.realpath(ROOT))):
        if len(root) > 1:
            text = re.sub(re.escape(root.rstrip("/\\")) + r"(?:([/\\])|(?![\w.-]))",
                          lambda found: "" if found[1] else ".", text)
    return text
