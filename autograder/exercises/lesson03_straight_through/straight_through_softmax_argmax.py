"""Lesson 03: which argmax StraightThroughSoftmax's one-hot took, where it is not the logits'
own: of a narrowed copy, of logits / tau, of the softmax."""

import torch
import torch.nn.functional as F

from ...errors import GradingError


def one_hot_argmax(logits: torch.Tensor) -> torch.Tensor:
    return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)


def first_row(mask: torch.Tensor) -> tuple:
    """The leading indices of the first row where ``mask`` holds somewhere."""
    return tuple(int(i) for i in torch.nonzero(mask.any(-1))[0])


def check_narrowed_argmax(got, logits, expected) -> None:
    """A one-hot that is exactly the argmax of the logits rounded to a narrower dtype, on rows
    where that rounding ties two logits the true argmax tells apart."""
    for narrow in (torch.float32, torch.bfloat16):
        if torch.finfo(narrow).bits >= torch.finfo(logits.dtype).bits:
            continue
        candidate = one_hot_argmax(logits.to(narrow)).to(logits.dtype)
        if torch.equal(got, candidate) and not torch.equal(candidate, expected):
            row = first_row(candidate != expected)
            values_ = ", ".join(repr(v) for v in logits[row].tolist())
            raise GradingError(
                f"StraightThroughSoftmax's output picks another maximum in row {list(row)} "
                f"(logits {values_}): it is the one-hot of argmax over the logits rounded to a "
                f"narrower dtype (exactly what {str(narrow).removeprefix('torch.')} gives), "
                "where maxima one ulp apart tie; take argmax of the logits, in their own dtype")


def check_argmax_of_scaled(got, logits, tau, expected) -> None:
    """A one-hot exactly the argmax of logits / tau (or logits * (1 / tau)), where dividing
    rounds two logits to one value: division by a positive tau never reorders, it only merges."""
    check_argmax_of(got, logits, tau, expected,
                     {"logits / tau": logits / tau, "logits * (1 / tau)": logits * (1 / tau)},
                     "; dividing rounds logits this close to equal values, of which argmax "
                     "picks the first; take argmax of the logits themselves",
                     "StraightThroughSoftmax/argmax-of-scaled-logits")


def check_argmax_of_softmax(got, logits, tau, expected) -> None:
    """A one-hot exactly the argmax of softmax(logits / tau), or of softmax(logits), where that
    softmax ties; both named where both give it."""
    check_argmax_of(got, logits, tau, expected,
                     {"softmax(logits / tau)": torch.softmax(logits / tau, -1),
                      "softmax(logits)": torch.softmax(logits, -1)},
                     ", where logits this close round to equal probabilities, of which argmax "
                     "picks the first; take argmax of the logits",
                     "StraightThroughSoftmax/argmax-of-softmax")


def check_argmax_of(got, logits, tau, expected, candidates: dict, why: str, mistake: str):
    """``got`` is not ``expected`` but exactly the one-hot argmax of one of ``candidates``
    (what it was taken over, by name): named, with the first row where it picks another and
    ``why`` (its punctuation included)."""
    over = [name for name, z in candidates.items() if torch.equal(got, one_hot_argmax(z))]
    if over and not torch.equal(got, expected):
        row = first_row(got != expected)
        raise GradingError(
            f"StraightThroughSoftmax's output picks another maximum in row {list(row)} (logits "
            f"{', '.join(repr(v) for v in logits[row].tolist())}, tau={tau:g}): it is the one-hot "
            f"of argmax over {' or '.join(over)}{why}", mistake=mistake)
