"""Lesson 11, SmoothedCrossEntropy: its reference, and the probe that says which term of a
wrong answer is wrong (the same logits with the z-loss or the smoothing set to 0)."""

import torch
import torch.nn.functional as F

from ...checks import Spec

NAME = "SmoothedCrossEntropy"


def smoothed_cross_entropy(logits, target, ignore_index, label_smoothing, z_loss):
    counted = target != ignore_index
    squares = torch.logsumexp(logits, dim=-1)[counted] ** 2
    return (F.cross_entropy(logits, target, ignore_index=ignore_index,
                            label_smoothing=label_smoothing) + z_loss * squares.mean())


SMOOTHED = Spec(NAME, ("logits", "target", "ignore_index", "label_smoothing", "z_loss"),
                smoothed_cross_entropy)


def loss_and_grad(function, values: dict, grad_output=1.0):
    logits = values["logits"].detach().clone().requires_grad_()
    try:
        loss = function.apply(logits, *list(values.values())[1:])
        grad, = torch.autograd.grad(loss, logits, torch.full_like(loss, grad_output))
    except Exception:  # the learner's code may raise anything: the first hint stands
        return None
    return loss.detach(), grad


def _matches(function, values: dict) -> bool:
    """The learner's loss and gradient equal the reference's on ``values``."""
    got = loss_and_grad(function, values)
    if got is None:
        return False
    logits = values["logits"].detach().clone().requires_grad_()
    truth = SMOOTHED.reference(logits, *list(values.values())[1:])
    true_grad, = torch.autograd.grad(truth, logits)
    return (got[0].shape == truth.shape and got[1].shape == true_grad.shape
            and torch.allclose(got[0], truth.detach()) and torch.allclose(got[1], true_grad))


def which_term(function, values: dict) -> str | None:
    """Where no named mistake fits: the same logits with the z-loss, the smoothing or both set
    to 0 (what Hint 3 asks the learner to do by hand) say which term is wrong."""
    eps, z = values["label_smoothing"], values["z_loss"]
    if not (eps or z) or _writes_input(function, values):
        return None  # no term to tell apart, or a write into the logits spoils every probe
    without_z = bool(z) and _matches(function, {**values, "z_loss": 0.0})
    without_eps = bool(eps) and _matches(function, {**values, "label_smoothing": 0.0})
    which = f"(label_smoothing={eps:g}, z_loss={z:g})"
    if without_z and without_eps:
        return (f"{NAME} is right without z-loss and right without label smoothing, wrong with "
                f"both {which}: your smoothing and z-loss terms do not add up as the loss's "
                "terms do")
    part = "gradient" if _loss_right(function, values) else "value"
    if without_z:
        return (f"{NAME} is right without z-loss and wrong with it {which}: your z-loss "
                f"term's {part} is off")
    if without_eps:
        return (f"{NAME} is right without label smoothing and wrong with it {which}: your "
                f"smoothing term's {part} is off")
    return None  # wrong without either term as well: no one term to name


def _loss_right(function, values: dict) -> bool:
    got = loss_and_grad(function, values)
    truth = SMOOTHED.reference(values["logits"].detach(), *list(values.values())[1:])
    return got is not None and got[0].shape == truth.shape and torch.allclose(got[0], truth)


def _writes_input(function, values: dict) -> bool:
    logits = values["logits"].detach().clone().requires_grad_()
    try:
        loss = function.apply(logits, *list(values.values())[1:])
        torch.autograd.grad(loss, logits)
    except Exception:  # the learner's code may raise anything: not this probe's to name
        return False
    return not torch.equal(logits.detach(), values["logits"].detach())
