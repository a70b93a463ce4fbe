"""Lesson 09: ProdOverDim called twice in one graph, on a 2-D x then a 1-D x (its domain's dims
keep both calls at one rank): each call's dim and shape are its own."""

import torch

from ...checks import (make_inputs)
from ...errors import GradingError
from ...exercise import sample


def check_1d_beside_2d(function, device) -> None:
    """Two calls in one graph, a 2-D x then a 1-D x (the domain's per-call check holds x's
    number of dims, which its dims need): each call's gradient is its own. An error is left to
    the per-call check, which names what it can."""
    calls = [{"x": sample((3, 4), device, seed=22, away_from_zero=0.3), "dim": 1},
             {"x": sample((4,), device, seed=21, away_from_zero=0.3), "dim": 0}]
    leaves = [make_inputs(values) for values in calls]
    try:
        outputs = []
        for inputs in leaves:
            before = dict(vars(function))
            outputs.append(function.apply(inputs["x"], inputs["dim"]))
            if _class_changed(function, before):
                return  # a class attribute set: the per-call check names it
        grads = torch.autograd.grad([o.sum() for o in outputs], [i["x"] for i in leaves])
    except Exception as error:  # the learner's code may raise anything: shared state if alone
        if _each_alone(function, calls):
            raise GradingError(
                "ProdOverDim is right for each call alone but not for a 2-D x and a 1-D x in "
                f"one graph, where backward raised {type(error).__name__}: the second call's "
                "forward overwrote what the first call's backward reads (kept on the class or "
                "in a global, not on its own ctx)", str(error),
                mistake="ProdOverDim/state-shared-between-calls") from error
        return
    for values, grad in zip(calls, grads):
        if grad.shape != values["x"].shape:
            return
        fresh = values["x"].detach().clone().requires_grad_()
        truth, = torch.autograd.grad(torch.prod(fresh, values["dim"]).sum(), fresh)
        if not torch.allclose(grad, truth):
            raise GradingError(
                "ProdOverDim is right for each call alone but not for a 2-D x and a 1-D x in one "
                "graph: the second call's forward overwrote what the first call's backward "
                "reads (kept on the class or in a global, not on its own ctx)",
                mistake="ProdOverDim/state-shared-between-calls")


def _class_changed(function, before: dict) -> bool:
    after = dict(vars(function))
    return after.keys() != before.keys() or any(after[k] is not v for k, v in before.items())


def _each_alone(function, calls: list) -> bool:
    """Does each call, alone in its graph, give autograd's gradient?"""
    for values in calls:
        inputs = make_inputs(values)
        try:
            grad, = torch.autograd.grad(function.apply(inputs["x"], inputs["dim"]).sum(),
                                        inputs["x"])
        except Exception:  # the learner's code may raise anything
            return False
        fresh = values["x"].detach().clone().requires_grad_()
        truth, = torch.autograd.grad(torch.prod(fresh, values["dim"]).sum(), fresh)
        if grad.shape != truth.shape or not torch.allclose(grad, truth):
            return False
    return True
