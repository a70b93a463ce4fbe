"""Lesson 10: what backward's logged ops (``norm_checks._FromGradOutput``) may not make when an
input needs no gradient: with x frozen, nothing from the weight, and with only the bias wanted,
nothing from x (``check_frozen_x_work``); whatever is wanted, no full-size tensor that none of
the gradients backward returns reads (``check_dead_work``: grad_output * x_hat, grad_weight's
product, made with the weight frozen), and nothing smaller made from grad_output either (a
(D,) sum for a frozen weight or bias, beside the work of the gradients it returns)."""

from ...checks import Spec
from ...errors import GradingError


def check_frozen_x_work(spec: Spec, ops: list, full: int, needed: str, requires: str,
                        wanted: frozenset) -> None:
    """With x frozen, no full-size tensor written from the weight (grad_output * weight is
    dL/dx_hat, which only grad_x reads); with only the bias wanted, no full-size tensor written
    from anything but grad_output (x_hat, made from x, is for grad_weight and grad_x)."""
    for op in ops:
        if full not in op.written:
            continue
        if op.weight:
            raise GradingError(
                f"{spec.name}.backward makes a full-size tensor from the weight ({op.name}) "
                f"when only {needed} {requires} grad: the weight enters grad_x alone (as "
                "grad_output * weight), and x needs no gradient here; compute it only when "
                "ctx.needs_input_grad[0] is True", mistake=f"{spec.name}/g-hat-for-frozen-x")
        if wanted == {"bias"} and op.other == full:
            raise GradingError(
                f"{spec.name}.backward makes a full-size tensor from x ({op.name}, x_hat's "
                "work) when only bias requires grad: the bias gradient reads grad_output "
                "alone, and x_hat serves grad_weight and grad_x; build it only when "
                "ctx.needs_input_grad asks for one of those", mistake=f"{spec.name}/x-hat-for-bias-only")


def dead_ops(ops: list, sinks: set) -> list:
    """The ops none of whose outputs any returned gradient depends on, read off the storages
    each op read and wrote, last op first (a storage once live stays live: never a false
    alarm from a buffer reused with out= or in place)."""
    live, dead = set(sinks), []
    for op in reversed(ops):
        if op.writes & live:
            live |= op.reads
        else:
            dead.append(op)
    return dead[::-1]


def check_dead_work(spec: Spec, ops: list, sinks: set, full: int, needed: str, wanted: frozenset,
                    names: list) -> None:
    """With some input frozen, no full-size tensor written that none of the returned gradients
    reads: a tensor that only unrequested gradients use is never made."""
    if not set(names) - wanted:
        return
    requires = f"require{'s' if len(wanted) == 1 else ''}"
    for op in dead_ops(ops, sinks):
        if not any(op.written):  # a view, or a Python number read off a tensor: nothing made
            continue
        if full not in op.written:
            if op.derived:  # smaller: graded when made from grad_output (a gradient's sum)
                _dead_small(spec, op, needed, requires, wanted, names)
            continue
        if "weight" in names and "weight" not in wanted and op.derived == full and \
                op.other == full:
            raise GradingError(
                f"{spec.name}.backward makes grad_output * x_hat ({op.name}), a full-size "
                f"tensor only grad_weight reads, when only {needed} {requires} grad: no "
                "gradient it returns reads that product, and the weight needs none here; make "
                "it only when ctx.needs_input_grad says the weight needs a gradient",
                mistake=f"{spec.name}/grad-weight-work-for-frozen-weight")
        raise GradingError(
            f"{spec.name}.backward makes a full-size tensor ({op.name}) that no gradient it "
            f"returns reads, when only {needed} {requires} grad: a tensor that only unrequested "
            "gradients use is never made; which gradient is it for, and does ctx.needs_input_grad "
            "ask for it?", mistake=f"{spec.name}/work-for-unrequested-gradient")


def _unrequested(op, wanted: frozenset, names: list) -> str:
    """The unrequested gradient a dead op most likely serves: the only one, else (x and one
    parameter unrequested) that parameter, else the bias for an op of grad_output alone (a
    sum), else the weight."""
    unwanted = [n for n in names if n not in wanted]
    params = [n for n in unwanted if n != "x"]
    if len(unwanted) == 1 or not params:
        return unwanted[0]
    if "bias" in params and (op.other == 0 or "weight" not in params):
        return "bias"
    return "weight" if "weight" in params else params[0]


def _dead_small(spec: Spec, op, needed: str, requires: str, wanted: frozenset,
                names: list) -> None:
    """A dead op that makes less than a full-size tensor: a reduction for a gradient nobody
    asked for (a (D,) sum of grad_output with the bias frozen), named by ``_unrequested``."""
    name = _unrequested(op, wanted, names)
    size = max(op.written)
    raise GradingError(
        f"{spec.name}.backward computes part of grad_{name} ({op.name}, a tensor of {size} "
        f"numbers that no gradient it returns reads) when only {needed} {requires} grad: "
        f"{name} needs no gradient here, so nothing of grad_{name} is computed; is every line "
        f"of grad_{name}'s work under the test of ctx.needs_input_grad for {name}?", mistake=f"{spec.name}/dead-work-for-unrequested-gradient")
