"""Values a lesson-09 hint lists (got beside expected) are read, not parsed: 4 significant
digits each, more only where got and expected differ beyond them (learner trial 81, issue 68:
CumMax's scatter hint listed 16 digits per entry)."""

import re

import torch

from autograder.exercises.lesson09_patterns.pattern_cases import listed
from tests.autograder.catalogued import mistake


def test_values_are_listed_to_four_digits_nested_as_the_tensor():
    """Does a 2-D tensor read as nested lists of 4-digit values, a zero as 0 whatever its sign?"""
    assert listed(torch.tensor([[1.2177487917787642, -0.0], [5.180126370517429, 3.0]],
                               dtype=torch.float64)) == "[[1.218, 0], [5.18, 3]]"
    assert listed(torch.tensor(2.0 / 3.0)) == "0.6667"


def test_entries_that_differ_beyond_four_digits_keep_the_digits_that_tell_them_apart():
    """Does got beside expected keep as many digits as tell an entry pair apart, and no more?"""
    got = torch.tensor([1.000012, 2.5, 7.0], dtype=torch.float64)
    expected = torch.tensor([1.000034, 2.5, 7.0000001], dtype=torch.float64)
    assert listed(got, expected) == "[1.00001, 2.5, 7]"
    assert listed(expected, got) == "[1.00003, 2.5, 7.0000001]"


def test_the_cummax_scatter_hint_lists_values_to_four_digits():
    """Does the hint of CumMax's scatter without add list got and expected with no 16-digit
    entries?"""
    from autograder.exercises.lesson09_patterns.cummax import check_ties_and_repeats
    from autograder.errors import GradingError

    scatter = mistake("CumMax", "an assignment where outputs share an entry (scatter without add)")
    try:
        check_ties_and_repeats(scatter, "cpu")
    except GradingError as error:
        text = str(error)
    else:
        raise AssertionError("the scatter without add passed check_ties_and_repeats")
    assert "got [[" in text and "expected [[" in text
    assert not re.search(r"\d\.\d{6,}", text)
