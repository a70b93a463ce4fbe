"""Source text edited at AST node positions, so a mutant keeps the answer's own formatting.

``ast`` gives each node's ``lineno``/``col_offset``/``end_lineno``/``end_col_offset``, the
columns in UTF-8 bytes; ``Text`` turns them into offsets in the string (an answer's comments may
hold ``²`` or ``✓``), and ``splice`` applies replacements of those spans.
"""

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Replacement:
    """``text`` in place of the characters ``start:end`` of the source."""

    start: int
    end: int
    text: str


class Text:
    """One source and the string offsets of its nodes."""

    def __init__(self, source: str):
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self._line_starts = [0]
        for line in self.lines:
            self._line_starts.append(self._line_starts[-1] + len(line))

    def offset(self, lineno: int, col_offset: int) -> int:
        """The string offset of (1-based line, UTF-8 byte column)."""
        line = self.lines[lineno - 1] if lineno <= len(self.lines) else ""
        return self._line_starts[lineno - 1] + len(line.encode()[:col_offset].decode())

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)

    def segment(self, node: ast.AST) -> str:
        """The node's own text, as written."""
        return self.source[self.start(node):self.end(node)]

    def between(self, left: ast.AST, right: ast.AST) -> tuple[int, int, str]:
        """(start, end, text) of what lies between two sibling nodes (an operator, brackets)."""
        start, end = self.end(left), self.start(right)
        return start, end, self.source[start:end]

    def replace(self, node: ast.AST, text: str) -> Replacement:
        """``text`` in place of the node."""
        return Replacement(self.start(node), self.end(node), text)

    def insert(self, offset: int, text: str) -> Replacement:
        return Replacement(offset, offset, text)

    def whole_lines(self, node: ast.AST) -> Replacement:
        """The node's lines removed, line ends included (a decorator, a statement)."""
        start = self._line_starts[node.lineno - 1]
        return Replacement(start, self._line_starts[node.end_lineno], "")


def splice(source: str, replacements: tuple[Replacement, ...]) -> str:
    """``source`` with every replacement applied (they must not overlap)."""
    ordered = sorted(replacements, key=lambda r: (r.start, r.end))  # insertions first
    for first, second in zip(ordered, ordered[1:]):
        if first.end > second.start:
            raise ValueError(f"overlapping replacements {first} and {second}")
    pieces, position = [], 0
    for replacement in ordered:
        pieces += [source[position:replacement.start], replacement.text]
        position = replacement.end
    return "".join(pieces) + source[position:]
