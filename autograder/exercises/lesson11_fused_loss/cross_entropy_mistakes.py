"""What a wrong CrossEntropy gives away: probes on the loss and gradient it returns that prove
which mistake it made (each with its stable id for insight), and the spec they compare with."""

import torch
import torch.nn.functional as F

from ...checks import Spec

CE = Spec("CrossEntropy", ("logits", "target", "ignore_index"),
          lambda logits, target, ignore_index: F.cross_entropy(logits, target,
                                                               ignore_index=ignore_index))


def _loss_and_grad(function, values: dict, grad_output: float = 1.0):
    """CrossEntropy's loss and grad_logits for ``grad_output``, or None if it raises."""
    logits = values["logits"].detach().clone().requires_grad_()
    try:
        loss = function.apply(logits, values["target"], values["ignore_index"])
        grad, = torch.autograd.grad(loss * grad_output, logits)
    except Exception:  # the learner's code may raise anything: the first hint stands
        return None
    return loss.detach(), grad


def ignore_index_past_classes(name: str, values: dict) -> str | None:
    """The hint for an answer that fails only when ignore_index is not a class (such as C):
    the ignored rows' targets were made valid with ``clamp(min=0)`` or not at all."""
    classes = values["logits"].shape[1]
    ignore_index = values["ignore_index"]
    if ignore_index < classes or not (values["target"] == ignore_index).any():
        return None
    return (f"{name} fails when ignore_index={ignore_index} is past the last class (C={classes}), "
            "as a padding id one past the vocabulary is: the ignored rows' targets are never "
            "valid indices, whatever their sign: which class does your gather or indexing "
            "read for an ignored row?")


CE_MISTAKES = {  # a phrase of each hint recognise_ce proves, and its stable id
    "divides by N, all the rows": "CrossEntropy/divides-by-all-rows",
    "gives ignored rows": "CrossEntropy/ignored-rows-get-gradient",
    "ignores grad_output": "CrossEntropy/ignores-grad-output",
    "the softmax term alone": "CrossEntropy/softmax-term-only",
}


def recognise_ce(function, values: dict) -> str | None:
    """The named mistakes about ignored rows, from the loss and gradient they give."""
    got = _loss_and_grad(function, values)
    if got is None:
        return ignore_index_past_classes("CrossEntropy", values)
    loss, grad = got
    if loss.dtype != values["logits"].dtype or grad.dtype != values["logits"].dtype:
        return None  # the dtype hint stands
    logits = values["logits"].detach().clone().requires_grad_()
    true_loss = CE.reference(logits, values["target"], values["ignore_index"])
    true_grad, = torch.autograd.grad(true_loss, logits)
    counted = values["target"] != values["ignore_index"]
    fraction = counted.sum().item() / len(counted)
    if fraction < 1 and (torch.allclose(loss, fraction * true_loss.detach())
                         or torch.allclose(grad, fraction * true_grad)):
        return ("CrossEntropy divides by N, all the rows, instead of the number of counted rows "
                "(target != ignore_index): the mean is over the rows that count")
    if grad[~counted].abs().sum() > 0:
        return ("CrossEntropy gives ignored rows (target == ignore_index) a gradient: their rows "
                "of grad_logits must be 0")
    probs = torch.softmax(logits.detach(), dim=1)
    if torch.allclose(grad, probs * (counted / counted.sum())[:, None]):
        return ("CrossEntropy's gradient is the softmax term alone, the derivative of the "
                "log-sum-exp: what does the target term -z_{i y_i} contribute (Step 2)?")
    tripled = _loss_and_grad(function, values, 3.0)
    if tripled is not None and grad.abs().sum() > 0 and torch.allclose(tripled[1], grad):
        return ("CrossEntropy's backward ignores grad_output: a loss multiplied by 3 must give "
                "three times the gradient, so scale by grad_output")
    return None
