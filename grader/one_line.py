"""Long texts cut to fit one summary line without losing what they say happened: a reason or an
explanation ends with it ("..., put back the read-only and test cells it lacked, and graded
it"; "...; which dims does your formula leave that the input lacks?"), so the middle goes, not
the end; and the subject at its start stays ("FusedLinearReLU saved ..."), so clauses go
whole."""

import re

from .faults import SEPARATOR

ELLIPSIS = " … "


def cut(text: str, width: int = 200) -> str:
    """``text`` if it fits ``width``; else its start, cut at a word, and its last whole clauses
    (after ", ", "; ", ": " or a sentence's end) in up to two thirds of the width, the middle
    left out; where not even the last clause fits, the start alone: a clause cut at both ends
    reads as nonsense ("...of shape (4,) (32 bytes) for … is meant to drop.")."""
    if len(text) <= width:
        return text
    tail_room = (width - len(ELLIPSIS)) * 2 // 3
    tails = [text[found.end():] for found in _CLAUSE_END.finditer(text)]
    tail = next((tail for tail in tails if len(tail) <= tail_room), "")
    head_room = width - len(ELLIPSIS) - len(tail) if tail else width - len(ELLIPSIS.rstrip())
    head = text[:head_room + 1].rsplit(" ", 1)[0] if " " in text[:head_room + 1] else \
        text[:head_room]
    return head.rstrip(" ,;:") + (ELLIPSIS + tail if tail else ELLIPSIS.rstrip())


_CLAUSE_END = re.compile(r"[,;:.?!] +")


def reason(text: str, width: int = 200) -> str:
    """A notebook's reason (its faults' messages, most serious first) in ``width``: the
    messages that fit whole, the first always (cut in its middle if it alone is too long: it
    is the status's), and how many more the reason column of `make grades` has."""
    if len(text) <= width:
        return text
    messages = text.split(SEPARATOR)

    def more(kept: int) -> str:
        return f" (+{len(messages) - kept} more: the reason column of make grades)"

    for kept in range(len(messages) - 1, 0, -1):
        if len(SEPARATOR.join(messages[:kept]) + more(kept)) <= width:
            return SEPARATOR.join(messages[:kept]) + more(kept)
    rest = more(1) if len(messages) > 1 else ""
    return cut(messages[0], width - len(rest)) + rest
