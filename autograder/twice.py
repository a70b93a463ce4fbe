"""Backward run twice on one graph, as gradcheck, ``retain_graph=True`` and
``torch.autograd.functional.jacobian`` do. A backward that changes what forward saved, in place
(``s.mul_(g)`` on a saved softmax, ``mask.mul_(grad_output)``), is right the first time and
wrong, or refused by the saved tensor's version counter, the second."""

import torch

from .errors import GradingError
from .function_contract import rule_reference

INPLACE = "modified by an inplace operation"
FREED = "Trying to backward through the graph a second time"


def _fix(name: str) -> str:
    return (f"{name}.backward changes a tensor that forward saved, in place: build new "
            "tensors from the saved ones (x * y, not x.mul_(y)); gradcheck, retain_graph=True "
            "and a Jacobian taken row by row run backward more than once on one graph")


def _saved_copies(outputs: list) -> list | None:
    """Copies of what forward saved for backward (each output's node's saved tensors), or None
    where they cannot be read: a saved tensor changed in place refuses to be unpacked."""
    copies = []
    for output in outputs:
        try:
            saved = getattr(output.grad_fn, "saved_tensors", ())
        except RuntimeError:
            return None
        copies += [t.detach().clone() for t in saved if isinstance(t, torch.Tensor)]
    return copies


def _unchanged(before: list | None, after: list | None) -> bool:
    return (before is not None and after is not None and len(before) == len(after)
            and all(a.shape == b.shape and torch.equal(a.nan_to_num(), b.nan_to_num())
                    for a, b in zip(before, after)))


def _leaves(values: dict) -> dict:
    return {name: (value.detach().clone().requires_grad_(value.is_floating_point())
                   if isinstance(value, torch.Tensor) else value)
            for name, value in values.items()}


def check_backward_twice(function, spec, values: dict, where: str = "", *,
                         may_raise: bool = False) -> None:
    """Forward once on fresh leaves of ``values``, then backward twice with
    ``retain_graph=True``: the second runs and gives the first's gradients (or, where
    ``may_raise``, raises for anything but a saved tensor changed in place). Only a first
    backward that ran is judged (other checks name its errors)."""
    inputs = _leaves(values)
    case = f"{where + ', ' if where else ''}backward run twice on one graph (retain_graph=True)"
    try:  # no probe's saved-tensor hooks: the copies they keep no in-place change reaches
        output = function.apply(*inputs.values())
        outputs = [o for o in (output if isinstance(output, (tuple, list)) else (output,))
                   if isinstance(o, torch.Tensor) and o.requires_grad]
        wanted = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
        generator = torch.Generator().manual_seed(3)
        grad_outputs = [torch.randn(o.shape, generator=generator, dtype=torch.float64).to(o)
                        for o in outputs]
        if not outputs or not wanted:
            return
        saved = _saved_copies(outputs)
        # copies: a gradient tensor backward keeps (a leaf's .grad kept on ctx) would be
        # changed in place by the second run, and the two runs would always agree
        first = [None if g is None else g.detach().clone()
                 for g in torch.autograd.grad(outputs, wanted, grad_outputs,
                                              retain_graph=True, allow_unused=True)]
    except Exception:  # the learner's code may raise anything: other checks name it
        return
    try:
        second = torch.autograd.grad(outputs, wanted, grad_outputs, retain_graph=True,
                                     allow_unused=True)
    except Exception as error:  # the learner's code may raise anything the second time
        if INPLACE in str(error):
            raise GradingError(f"{_fix(spec.name)} (the second backward found a saved tensor "
                               "modified: 'one of the variables needed for gradient computation "
                               "has been modified by an inplace operation') "
                               f"{rule_reference('unwritten')}", str(error), case,
                               mistake=f"{spec.name}/backward-modifies-saved-tensor") from error
        if may_raise or FREED in str(error):  # a graph the op builds and frees (a wrapper's)
            return
        detail = str(error).splitlines()[0] if str(error) else ""
        raise GradingError(
            f"{spec.name}.backward raised {type(error).__name__} when run a second time on one "
            f"graph, after a first run that succeeded: {detail}; backward may run more than once "
            "(retain_graph=True, gradcheck, a Jacobian row by row): leave ctx and what forward "
            "saved as forward left them (what backward pops from a global or a dict keyed by "
            f"id(ctx) is gone the second time: keep it on ctx) {rule_reference('ctx')}",
            str(error), case,
            mistake=f"{spec.name}/second-backward-fails") from error
    names = [name for name, value in inputs.items() if any(value is w for w in wanted)]
    for name, one, two in zip(names, first, second):
        if one is None or two is None or torch.allclose(one, two, rtol=1e-6, atol=1e-12,
                                                        equal_nan=True):
            continue
        changes = (f"{spec.name}'s gradient for {name} changes when backward runs a second "
                   "time on one graph")
        if _unchanged(saved, _saved_copies(outputs)):
            raise GradingError(
                f"{changes}, while what forward saved is unchanged: {spec.name}.backward "
                "changes state it reads between runs (an attribute of ctx, a module global, a "
                "list it pops or appends to); gradcheck, retain_graph=True and a Jacobian taken "
                "row by row run backward more than once on one graph, so leave ctx and what "
                f"backward reads as forward left them {rule_reference('ctx')}", "", case,
                mistake=f"{spec.name}/backward-changes-state-it-reads")
        raise GradingError(f"{changes}: {_fix(spec.name)} {rule_reference('unwritten')}", "", case,
                           mistake=f"{spec.name}/backward-modifies-saved-tensor")
