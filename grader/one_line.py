"""Long texts cut to fit one summary line without losing what they say happened: a reason or an
explanation ends with it ("..., put back the read-only and test cells it lacked, and graded
it"; "...; which dims does your formula leave that the input lacks?"), so the middle goes, not
the end."""

from .faults import SEPARATOR

ELLIPSIS = " … "


def cut(text: str, width: int = 200) -> str:
    """``text`` if it fits ``width``; else its start and its end, at word boundaries, the
    middle left out (the end gets two thirds: it says what happened)."""
    if len(text) <= width:
        return text
    tail_room = (width - len(ELLIPSIS)) * 2 // 3
    head_room = width - len(ELLIPSIS) - tail_room
    head = text[:head_room + 1].rsplit(" ", 1)[0] if " " in text[:head_room + 1] else \
        text[:head_room]
    tail = text[-tail_room - 1:]
    tail = tail.split(" ", 1)[1] if " " in tail else text[-tail_room:]
    return (head.rstrip() + ELLIPSIS + tail.lstrip())[:width]


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
