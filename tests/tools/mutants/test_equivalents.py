"""Listed equivalents: a reason is required, a listing matches a mutant by its edit, and a
listing nothing matches any more (or that grading now fails) is reported."""

import pytest

from tools.mutants.listed import EquivalentMutant, collected
from tools.mutants import equivalents
from tools.mutants.generate import Mutant


def _mutant(before: str, after: str) -> Mutant:
    return Mutant("Square", "solution", "save_widened", "autograd", 1, (), before, after)


LISTED = EquivalentMutant("Square", "save_widened", "ctx.save_for_backward(x)",
                          "ctx.save_for_backward(x.double())", "every input is float64 here")


def test_a_listing_needs_a_reason():
    """Is an equivalent listed without a reason refused?"""
    with pytest.raises(ValueError, match="gives no reason"):
        EquivalentMutant("Square", "save_copy", "a", "b", " ")


def test_every_lesson_listing_is_an_equivalent_mutant():
    """Does every lesson's EQUIVALENTS hold EquivalentMutant entries?"""
    assert all(isinstance(entry, EquivalentMutant) for entry in collected())


def test_listings_match_by_exercise_operator_and_lines(monkeypatch):
    """Does a listing match the mutant with its edit, and only for the exercises run?"""
    monkeypatch.setattr(equivalents, "collected", lambda: [LISTED])
    listing = equivalents.listed(["Square"])
    assert _mutant(LISTED.before, LISTED.after).key in listing
    assert equivalents.listed(["Outer"]) == {}


def test_unknown_operators_and_double_listings_are_errors(monkeypatch):
    """Is a listing of an unknown operator, or the same edit twice, an error?"""
    wrong = EquivalentMutant("Square", "no_such_operator", "a", "b", "reason")
    monkeypatch.setattr(equivalents, "collected", lambda: [wrong])
    with pytest.raises(ValueError, match="unknown exercise or operator"):
        equivalents.listed(["Square"])
    monkeypatch.setattr(equivalents, "collected", lambda: [LISTED, LISTED])
    with pytest.raises(ValueError, match="listed twice"):
        equivalents.listed(["Square"])


def test_stale_listings_are_reported(monkeypatch):
    """Is a listing that no mutant makes, or whose mutant grading fails, reported stale?"""
    monkeypatch.setattr(equivalents, "collected", lambda: [LISTED])
    listing = equivalents.listed(["Square"])
    same = _mutant(LISTED.before, LISTED.after)
    assert equivalents.stale(listing, [same], failed={}) == []
    assert [why for _, why in equivalents.stale(listing, [], failed={})] == [
        "no mutant makes this edit any more"]
    assert "grading now fails it (Square/saves-a-copy)" in equivalents.stale(
        listing, [same], {same.key: "Square/saves-a-copy"})[0][1]
