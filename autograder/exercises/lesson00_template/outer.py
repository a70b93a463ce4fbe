"""Lesson 00's transfer exercise: Outer, y = outer(u, v), a Jacobian that is not diagonal."""

import torch

from ...checks import (Spec, case, check_backward_by_hand, check_is_function,
                      check_no_ctx_tensors, check_values_and_gradients, make_inputs, run_forward)
from ...contract import check_each_input_alone, covers
from ...domain import Domain, sampled
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...mistakes import RAISED, mistake_of
from ..shared.backward_reads import backward_reading
from ..shared.dead_work import unused_backward_work
from ..shared.call_state import (check_call_places, check_class_untouched,
                                 check_input_version_tracking, check_one_ctx_per_call)
from ..shared.grad_output import check_strided_grad_output, check_uses_grad_output
from ..shared.reuse import check_second_call_after_step
from .contracts import OUTER_LAYOUTS
from ..shared.saved_reads import check_backward_reads_saved
from .kept import gradcheck_named
from .large_inputs import check_large_sizes
from ..shared.jacobian_memory import check_backward_memory_linear

LATER_IN_LESSON = True

OUTER = Spec("Outer", ("u", "v"), lambda u, v: torch.outer(u, v))

# (m, n): m != n first, so that a gradient with u and v swapped cannot even have the right
# shape; then a square case, where it can; then a single entry on either side.
SIZES = [(4, 3), (3, 3), (1, 5), (5, 1)]
# "for any m and n": an empty u or v, where the table has no entry and the other gradient is
# all zeros (a loop over the rows that stacks them has nothing to stack at m = 0)
EMPTY_SIZES = [(0, 3), (4, 0)]


def _alone(values: dict, what: str, index: tuple, chunk: int = 4):
    """Small inputs holding what the worst entry of ``what`` reads (check_large_sizes): u_i and
    v_j for the output; u_i with v cut into pieces of ``chunk`` for grad_u, each piece's sum a
    part of the entry; likewise for grad_v."""
    u, v = values["u"], values["v"]
    if what == "output":
        pieces = [(u[index[0]:index[0] + 1], v[index[1]:index[1] + 1])]
    elif what == "gradient for u":
        pieces = [(u[index[0]:index[0] + 1], part) for part in v.split(chunk)]
    else:
        pieces = [(part, v[index[0]:index[0] + 1]) for part in u.split(chunk)]
    return [({"u": a, "v": b}, f"u of shape {tuple(a.shape)}, v of shape {tuple(b.shape)}")
            for a, b in pieces]


def _values(m, n, device, seed=0, dtype=torch.float64) -> dict:
    return {"u": sample((m,), device, seed=seed, dtype=dtype),
            "v": sample((n,), device, seed=seed + 50, dtype=dtype)}


def check_saves_only_inputs(forward) -> None:
    """What forward saved holds no memory but u's and v's (a view of either counts as it), which
    the caller holds anyway: not the output, not a copy."""
    others = [saved for saved in forward.saved if not saved.role.startswith("input")]
    if others:
        what = others[0]
        seen = (f"its output, of shape {what.shape} ({what.nbytes} bytes forward allocated): "
                "that keeps the (m, n) output alive until backward"
                if what.role == "output" else
                f"a{'n' if what.role[0] in 'aeiou' else ''} {what.role} of shape {what.shape} "
                f"({what.nbytes} bytes): a copy, or anything else forward computed, is memory "
                "forward allocated")
        question = " Which tensors does each gradient read?" if what.role == "output" else ""
        raise GradingError(f"Outer saved {seen}; the contract: forward saves no memory it "
                           f"allocated.{question}", mistake="Outer/saves-more-than-inputs")


def check_saves_only_strided_inputs(function, device) -> None:
    """check_saves_only_inputs on u and v that are every other element of a wider tensor: a
    copy made for them (``.contiguous()``, ``.clone()``) is no view of u or v there."""
    leaves = {name: torch.cat([value, value]).detach().requires_grad_()
              for name, value in _values(4, 3, device, seed=3).items()}
    inputs = {name: leaf[::2] for name, leaf in leaves.items()}
    with case("u and v every other element of a wider tensor"):
        check_saves_only_inputs(run_forward(function, OUTER, inputs))


def _wrong_side(function, device) -> str | None:
    """After a failure at m != n: at a square size, where G @ u and G.T @ v have the right
    shapes, does a gradient equal that product with G on the wrong side? Returns the input
    whose gradient proves it, or None."""
    values = _values(3, 3, device, seed=7)
    u, v = (values[n].clone().requires_grad_() for n in ("u", "v"))
    grad_output = sample((3, 3), device, seed=8)
    try:
        grads = torch.autograd.grad(function.apply(u, v), (u, v), grad_output.clone())
    except Exception:  # noqa: BLE001 - any failure here proves nothing
        return None
    u, v, g = values["u"], values["v"], grad_output
    for name, got, wrong, right in (("u", grads[0], g.T @ v, g @ v),
                                    ("v", grads[1], g @ u, g.T @ u)):
        if (isinstance(got, torch.Tensor) and got.shape == wrong.shape
                and torch.allclose(got, wrong) and not torch.allclose(wrong, right)):
            return name
    return None


def _or_wrong_side(function, device, error: GradingError) -> GradingError:
    """The error to raise for a failure at m != n: the wrong-side hint when a probe proves it
    (never for a grad_output written in place, which that failure names already)."""
    if error.mistake == "Outer/writes-grad-output":
        return error
    name = _wrong_side(function, device)
    if name is None:
        return error
    return GradingError(
        f"Outer's gradient for {name} multiplies grad_output G from the wrong side: at shapes "
        "(4,) and (3,) it fails, and at (3,) and (3,), where the shapes fit, it equals the "
        f"product with G transposed: which index of G is {name}'s, and which one must the "
        f"product sum over? ({str(error).splitlines()[0]})",
        mistake="Outer/grad-output-on-wrong-side")


# the inputs each gradient's formula reads (besides grad_output)
NEEDS = {"u": {"v"}, "v": {"u"}}


def check_empty_sizes(function, device) -> None:
    """Values and gradients at m = 0 and at n = 0. An error the learner's code raises there
    comes after every non-empty size passed: named so, with its size."""
    for m, n in EMPTY_SIZES:
        shapes = f"u of shape ({m},), v of shape ({n},)"
        try:
            check_values_and_gradients(function, OUTER, _values(m, n, device, seed=9))
        except NotImplementedError:
            raise
        except Exception as error:  # noqa: BLE001 - the learner's error, named with its size
            if isinstance(error, GradingError) and not mistake_of(error).startswith(RAISED):
                raise GradingError(error.hint, error.details, shapes,
                                   mistake=error.mistake) from error
            said = (error.hint if isinstance(error, GradingError) else
                    f"Outer raised {type(error).__name__} with {shapes}: "
                    + (str(error).strip().splitlines() or [""])[0])
            raise GradingError(
                f"{said}. Every non-empty size passed: the contract holds for any m and n, "
                f"{'m' if m == 0 else 'n'} = 0 included, an empty table, whose gradients are an "
                "empty tensor and a tensor of zeros; tensor operations (*, @, .sum) take an "
                "empty dimension, and a loop over one runs zero times",
                getattr(error, "details", ""), mistake="Outer/fails-on-empty-input") from error


def check_computes_only_what_is_needed(function, device) -> None:
    """u alone requiring grad, then v alone: backward may read only what that gradient needs.
    One that computes both gradients and returns None for the other returns the right thing;
    only what it reads, or makes and never returns, shows the work."""
    for name in OUTER.input_names:
        inputs = make_inputs(_values(4, 3, device), requires_grad={name})
        forward = run_forward(function, OUTER, inputs)
        backward, reads = backward_reading(OUTER, inputs, forward.output,
                                           torch.ones_like(forward.output), NEEDS)
        if backward.reentered_autograd:
            continue  # a recomputed forward: check_backward_by_hand rejects it
        if not reads:
            _check_no_unused_work(function, inputs, name)
            continue
        read, op = reads[0]
        other = next(n for n, needs in NEEDS.items() if read in needs)
        raise GradingError(
            f"Outer.backward computed grad_{other}, which nothing asked for: with only {name} "
            f"requiring grad it read {read}'s values (in aten.{op}), and of the two gradients "
            f"only grad_{other} depends on them; compute each gradient only when its own entry "
            f"of ctx.needs_input_grad is True; here only entry "
            f"{OUTER.input_names.index(name)} ({name}) is", case=f"{name} alone requiring grad",
            mistake="Outer/computes-unneeded-gradient")


def _check_no_unused_work(function, inputs: dict, wanted: str) -> None:
    """Work on grad_output alone for the gradient nobody asked for (a copy of its transpose,
    say) reads neither input: what it made reaches no gradient backward returns."""
    forward = run_forward(function, OUTER, inputs)
    unused = unused_backward_work(forward.output, torch.ones_like(forward.output))
    if unused:
        op, shape = unused[0]
        raise GradingError(
            f"Outer.backward did work nobody needed: with only {wanted} requiring grad it ran "
            f"aten.{op}, whose result (of shape {shape}) reaches no gradient it returned",
            case=f"{wanted} alone requiring grad", mistake="Outer/does-unneeded-work")


def outer_full(Outer, device) -> None:
    function = check_is_function(Outer, OUTER)
    check_class_untouched(function, DOMAIN, device)
    # before any backward: v hung on u (u.partner = v) is lost under saved-tensor hooks, and
    # backward's AttributeError would not say why (rule 4: nothing kept on an input tensor)
    check_call_places(function, OUTER, _values(4, 3, device, seed=12))
    try:
        check_uses_grad_output(function, OUTER, _values(4, 3, device))
    except GradingError as error:
        raise _or_wrong_side(function, device, error) from error
    for seed, (m, n) in enumerate(SIZES):
        with case(f"u of shape ({m},), v of shape ({n},)"):
            try:
                forward, backward = check_values_and_gradients(function, OUTER,
                                                               _values(m, n, device, seed))
            except GradingError as error:
                if m == n:
                    raise
                raise _or_wrong_side(function, device, error) from error
            check_no_ctx_tensors(OUTER, forward)
            check_saves_only_inputs(forward)
            # the derivation is the exercise: no autograd inside backward (one asking it for
            # both gradients is left by check_computes_only_what_is_needed to this check)
            check_backward_by_hand(OUTER, backward)
    check_backward_memory_linear(function, OUTER, _values(32, 32, device, seed=4),
                                 "u and v of shape (32,)")
    covers("memory linear in the sizes")
    check_saves_only_strided_inputs(function, device)
    covers("saves only u and v")
    covers("m != n")
    check_strided_grad_output(function, OUTER, _values(4, 3, device, seed=5))
    with case("u of shape (4,), v of shape (3,)"):
        check_one_ctx_per_call(function, OUTER, _values(4, 3, device),
                               _values(4, 3, device, seed=1))
        for name in ("u", "v"):
            check_input_version_tracking(function, OUTER, _values(4, 3, device), name)
        check_backward_reads_saved(function, OUTER, _values(4, 3, device, seed=2), "u and v")
        check_second_call_after_step(function, OUTER, _values(4, 3, device, seed=7))
    try:
        check_each_input_alone(function, OUTER, _values(4, 3, device), frozen_get_none=True)
    except GradingError as error:  # the shared wording gives the fix; ask instead
        said = ": test ctx.needs_input_grad and return None"
        if error.mistake != "Outer/computes-frozen-gradient" or said not in error.hint:
            raise
        raise GradingError(error.hint.split(said)[0] + ": which attribute of ctx tells backward "
                           "what is wanted, and what stands for no gradient?", error.details,
                           error.case, mistake=error.mistake) from error
    check_computes_only_what_is_needed(function, device)
    covers("gradient only when needed")
    # last but gradcheck: a failure there is one no other size or probe showed
    check_empty_sizes(function, device)
    covers("m or n = 0")
    # "any m and n": every digit past m, n = 64 too (a narrower dtype above some size)
    check_large_sizes(function, OUTER, _values(4, 3, device, seed=10),
                      _values(130, 100, device, seed=11), "u of shape (130,), v of shape (100,)",
                      alone=_alone)
    gradcheck_named(function, OUTER, _values(3, 2, device))


# u and v are 1-D by contract: no transposed layout exists (a column slice of a 1-D tensor is
# every other element, a stride of 2)
DOMAIN = Domain(OUTER, sampled(OUTER, {"u": (4,), "v": (3,)}), layouts=("column slice", "expanded"),
                layout_clause=OUTER_LAYOUTS)


EXERCISES = [
    Exercise("Outer", "00_template", outer_full,
             contract=("saves only u and v", "m != n", "m or n = 0",
                       "memory linear in the sizes", "non-contiguous grad_output",
                       "gradient only when needed"),
             example=lambda: tuple(_values(4, 3, "cpu").values()), domain=DOMAIN),
]
