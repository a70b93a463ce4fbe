"""Edits at AST positions: offsets in the string, whatever the characters before them."""

import ast

import pytest

from tools.mutants.edits import Replacement, Text, splice


def test_offsets_count_characters_not_utf8_bytes():
    """Does a node after a non-ASCII character map to its place in the string?"""
    source = "y = '²✓' + x\n"
    name = ast.parse(source).body[0].value.right
    assert Text(source).segment(name) == "x"


def test_splice_applies_every_replacement_insertions_first():
    """Do an insertion and a replacement at one offset both apply, the insertion first?"""
    assert splice("ab", (Replacement(0, 1, "X"), Replacement(0, 0, "<"))) == "<Xb"


def test_overlapping_replacements_are_refused():
    """Is an edit whose replacements overlap an error rather than a garbled source?"""
    with pytest.raises(ValueError, match="overlapping"):
        splice("abc", (Replacement(0, 2, "X"), Replacement(1, 3, "Y")))


def test_whole_lines_removes_the_node_lines():
    """Does removing a decorator take its whole line, newline included?"""
    source = "@once_differentiable\ndef f():\n    pass\n"
    decorator = ast.parse(source).body[0].decorator_list[0]
    text = Text(source)
    assert splice(source, (text.whole_lines(decorator),)) == "def f():\n    pass\n"
