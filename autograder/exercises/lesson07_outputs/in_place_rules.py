"""What every in-place Function of lesson 07 owes, whatever it computes (ReLUInPlace and
AbsInPlace alike): PyTorch's error for a leaf that requires grad, gradients with one input
requiring grad, the gradient through a view of a non-leaf, the write on a plain tensor, the
version counter bumped, what forward allocates, and gradcheck on a copy."""

import torch

from ...checks import Spec, backward_outputs, gradcheck_callable
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample
from .forward_memory import check_forward_memory
from .leaf_probes import check_leaf_error
from .quoting import quoting_case


def check_in_place_rules(function, spec: Spec, device, marked) -> None:
    """What every in-place Function of the lesson owes, whatever it computes: the leaf error,
    gradients with one input requiring grad, a view of a non-leaf, a plain tensor, the version
    counter, what forward allocates (x made by ``marked``), and gradcheck on a copy."""
    check_leaf_error(function, spec, device)
    covers("a leaf that requires grad")
    check_each_input_alone(Cloned(function), spec, {"x": sample((3, 4), device, seed=5,
                                                                  away_from_zero=0.1)})
    with quoting_case(spec, "x a view, b[1:], of a tensor b that is not a leaf"):
        check_on_view(function, spec, device)
    covers("a view of a non-leaf")
    check_plain_tensor(function, spec, device)
    check_version_tracking(function, spec, device)
    covers("version counter")
    with quoting_case(spec, "x of shape (4, 16): what forward allocates"):
        check_forward_memory(function, spec, device, marked)
    gradcheck_callable(spec, lambda t: function.apply(t.clone()),
                       sample((2, 4), device, seed=1, away_from_zero=0.1))


def check_on_view(function, spec: Spec, device) -> None:
    """Writing through a view of a non-leaf: the base's gradient sees the write."""
    a = torch.tensor([-1.0, 3.0, -2.0, 0.5, 0.0], dtype=torch.float64, device=device,
                     requires_grad=True)
    b = a.clone()
    function.apply(b[1:])
    weights = torch.arange(1.0, 6.0, dtype=torch.float64, device=device)
    got = backward_outputs(spec, (b,), a, (weights,))
    fresh = a.detach().clone().requires_grad_()
    expected, = torch.autograd.grad(torch.cat([fresh[:1], spec.reference(fresh[1:])]), fresh,
                                    weights)
    diagnose_gradient("x", got, expected)


def check_plain_tensor(function, spec: Spec, device) -> None:
    """On a tensor that requires no grad the write still happens, and x comes back."""
    plain = torch.tensor([-1.0, 2.0], device=device)
    if function.apply(plain) is not plain or not torch.equal(
            plain, spec.reference(torch.tensor([-1.0, 2.0], device=device))):
        raise GradingError(f"{spec.name} on a tensor that requires no grad must still write it in "
                           "place and return it")


def check_version_tracking(function, spec: Spec, device) -> None:
    """An op that saved x before the in-place write must refuse to backpropagate."""
    b = sample((4,), device, seed=9).requires_grad_().clone()
    saved_by_sin = b.sin()
    function.apply(b)
    try:
        saved_by_sin.sum().backward()
    except RuntimeError as error:
        if "modified by an inplace operation" in str(error):
            return
        raise
    raise GradingError(f"sin(x) computed before {spec.name} backpropagated without an error: "
                       f"{spec.name} must write into x with an in-place op, which bumps its "
                       "version counter")


class Cloned:
    """An in-place Function applied to a clone of x: a function of a leaf x, for the contract
    checks that make each input a leaf requiring grad."""

    def __init__(self, function):
        self.function = function

    def apply(self, x):
        return self.function.apply(x.clone())
