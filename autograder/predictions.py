"""Does a learner's prediction say what PyTorch did? Judged on meaning, not spelling: a list
and a tuple of the same entries agree, numbers agree to a relative tolerance (1 and 1.0 do;
1e-20 and 0 do not), text that reads as a number is that number (the answer "0" and 0.0 agree),
other text agrees whatever its case and spacing, a tensor is read as its list, and where
PyTorch's answer is a set the prediction must name the same members, in any order (one member:
the prediction may be that member alone). ``written``, ``compare`` and ``compare_all`` are what
every predict-then-run cell of the lessons calls."""

import math
from collections.abc import Mapping

import torch


def same_answer(predicted, observed, *, rel_tol: float = 1e-6, abs_tol: float = 0.0) -> bool:
    """Whether ``predicted`` says what ``observed`` says; never raises (a prediction of the
    wrong kind is simply not the same answer)."""
    try:
        return _same(predicted, observed, rel_tol, abs_tol)
    except (TypeError, ValueError):
        return False


def _plain(value):
    return value.tolist() if isinstance(value, torch.Tensor) else value


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_number(value):
    """A number, or text that reads as one ("0", "0.5", "nan"), as a number; else None."""
    if _is_number(value):
        return value
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _text(value: str) -> str:
    return " ".join(value.casefold().split())


def _same(predicted, observed, rel_tol: float, abs_tol: float) -> bool:
    predicted, observed = _plain(predicted), _plain(observed)
    if isinstance(observed, (set, frozenset)):
        chosen = [predicted] if isinstance(predicted, (str, int, float, bool)) else list(predicted)
        return (all(any(_same(one, answer, rel_tol, abs_tol) for answer in observed)
                    for one in chosen)
                and all(any(_same(one, answer, rel_tol, abs_tol) for one in chosen)
                        for answer in observed))
    if isinstance(observed, str) != isinstance(predicted, str):  # "0" against 0.0: as numbers
        as_numbers = _as_number(predicted), _as_number(observed)
        if None not in as_numbers:
            predicted, observed = as_numbers
    if _is_number(observed) and _is_number(predicted):
        return math.isclose(predicted, observed, rel_tol=rel_tol, abs_tol=abs_tol) or (
            math.isnan(predicted) and math.isnan(observed))
    if isinstance(observed, str) and isinstance(predicted, str):
        return _text(predicted) == _text(observed)
    if isinstance(observed, (list, tuple)) and isinstance(predicted, (list, tuple)):
        return len(predicted) == len(observed) and all(
            _same(p, o, rel_tol, abs_tol) for p, o in zip(predicted, observed))
    if isinstance(observed, Mapping) and isinstance(predicted, Mapping):
        return predicted.keys() == observed.keys() and all(
            _same(predicted[key], observed[key], rel_tol, abs_tol) for key in observed)
    if isinstance(observed, bool) or isinstance(predicted, bool):
        return type(predicted) is type(observed) and predicted == observed
    return predicted == observed


# A predict-then-run cell shows what it measured only once the learner has written every
# prediction: Run All would otherwise hand the answers over before anyone predicts.

def written(*predictions) -> bool:
    """Whether every prediction is written: none is None or blank text, nor holds one (the
    entries of a dict, tuple or list of them)."""
    def one(prediction) -> bool:
        if isinstance(prediction, Mapping):
            return all(one(answer) for answer in prediction.values())
        if isinstance(prediction, (tuple, list)):
            return all(one(answer) for answer in prediction)
        return prediction is not None and not (isinstance(prediction, str)
                                               and not prediction.strip())
    return all(one(prediction) for prediction in predictions)


def compare(what: str, predicted, observed, *, who: str = "PyTorch", if_wrong: str = "",
            abs_tol: float = 0.0) -> None:
    """Print a prediction beside what ``who`` did, with ✓ or ✗ (and ``if_wrong`` after a ✗;
    numbers agree within ``abs_tol`` too); without a prediction, not the answer."""
    if predicted is None:
        print(f"{what}: no prediction written: write yours, then run this again")
        return
    verdict = ("✓" if same_answer(predicted, observed, abs_tol=abs_tol)
               else f"✗ {if_wrong}".rstrip())
    print(f"{what}: you said {predicted!r}, {who}: {observed!r}  {verdict}")


def compare_all(predicted: dict, actual: dict) -> None:
    """Print each prediction beside what PyTorch did, one question a line, as a table; without
    a prediction, not the answer."""
    width = max(map(len, actual))
    answer_width = max(len(repr(truth)) for truth in actual.values())
    for question, truth in actual.items():
        guess = predicted.get(question)
        if guess is None:
            print(f"{question:<{width}}  {'?':<{answer_width}}  no prediction written: write "
                  "yours, then run this again")
            continue
        verdict = ("✓ as you predicted" if same_answer(guess, truth)
                   else f"✗ you predicted {guess!r}")
        print(f"{question:<{width}}  {truth!r:<{answer_width}}  {verdict}")
