"""Lesson 02's transfer exercise: Bilinear, F.bilinear with a three-index weight."""

import contextlib
import itertools
import linecache
import re

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from ...checks import (Spec, case, check_backward_by_hand, check_gradcheck, check_is_function,
                      check_no_ctx_tensors, check_values_and_gradients, make_inputs,
                      reference_gradients, run_backward, run_forward)
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient
from ...domain import Domain, sampled
from ...errors import GradingError
from ...exercise import Exercise, sample
from ..lesson01_sigmoid.sigmoid import check_class_untouched

LATER_IN_LESSON = True

BILINEAR = Spec("Bilinear", ("x1", "x2", "weight", "bias"),
                lambda x1, x2, weight, bias=None: F.bilinear(x1, x2, weight, bias))

OUT = 4
LEADING_SHAPES = [(5,), (2, 3), ()]
# n1 != n2 first, so that x1 and x2 mixed up cannot even have the right shapes; then n1 == n2,
# where a weight read as (out, n2, n1) runs and is wrong.
FEATURES = [(3, 2), (3, 3)]


def bilinear_values(leading, n1, n2, device, *, bias=True, seed=0) -> dict:
    values = {"x1": sample((*leading, n1), device, seed=seed),
              "x2": sample((*leading, n2), device, seed=seed + 1),
              "weight": sample((OUT, n1, n2), device, seed=seed + 2)}
    if bias:
        values["bias"] = sample((OUT,), device, seed=seed + 3)
    return values


# ops that read a tensor's shape, dtype or device, never its values
_SHAPE_ONLY = frozenset({"empty_like", "zeros_like", "ones_like", "full_like", "new_empty",
                         "new_empty_strided", "new_zeros", "new_ones", "new_full", "sym_size",
                         "sym_stride", "sym_numel", "sym_storage_offset", "is_contiguous",
                         "is_same_size"})


class ReadsOf(TorchDispatchMode):
    """The ops run inside the block that read the values of the watched tensors, or of any
    view of their memory (a view itself reads nothing), as (name, op) pairs."""

    def __init__(self, watched: dict):
        super().__init__()
        self.watched = {t.untyped_storage().data_ptr(): n for n, t in watched.items()}
        self.reads: list[tuple[str, str]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        op = func.overloadpacket.__name__
        if not func.is_view and op not in _SHAPE_ONLY:
            for value in (*args, *kwargs.values()):
                for tensor in value if isinstance(value, (list, tuple)) else (value,):
                    if isinstance(tensor, torch.Tensor):
                        name = self.watched.get(tensor.untyped_storage().data_ptr())
                        if name is not None:
                            self.reads.append((name, op))
        return func(*args, **kwargs)


def backward_reading(spec: Spec, inputs: dict, output, grad_output, needs: dict):
    """run_backward, watching the inputs whose values no wanted gradient depends on (``needs``:
    each input's gradient -> the inputs its formula reads). Returns (trace, unneeded reads)."""
    wanted = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    allowed = set().union(*(needs[n] for n in wanted))
    watched = {n: v for n, v in inputs.items() if isinstance(v, torch.Tensor) and n not in allowed}
    with ReadsOf(watched) as reads:
        backward = run_backward(spec, output, inputs, grad_output)
    return backward, reads.reads


def raise_unneeded_read(spec: Spec, inputs: dict, backward, reads: list) -> None:
    """Name the first read of an input that no gradient asked for depends on: a backward that
    writes its gradients by hand did work for one nobody needs, however it wrote the products
    (FLOP counts see matmuls only). One that asks autograd (a recomputed forward) is left to
    check_backward_by_hand, which rejects it."""
    if not reads or backward.reentered_autograd:
        return
    name, op = reads[0]
    wanted = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    entries = " and ".join(f"entry {list(inputs).index(n)} ({n})" for n in wanted)
    raise GradingError(
        f"{spec.name}.backward used the values of {name} (in aten.{op}) when only "
        f"{' and '.join(wanted)} {'requires' if len(wanted) == 1 else 'require'} grad, yet no "
        f"gradient asked for depends on {name}'s values: compute each gradient only when its own "
        f"entry of ctx.needs_input_grad is True; here only {entries} "
        f"{'is' if len(wanted) == 1 else 'are'}", mistake=f"{spec.name}/computes-unneeded-gradient")


def check_noncontiguous_grad_output(function, spec: Spec, values: dict) -> None:
    """autograd may hand backward a grad_output that is not contiguous (a transpose's
    gradient is one): every gradient must still be right. ``.view`` raises on it."""
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    shape = tuple(forward.output.shape)
    grad_output = sample(shape[::-1], forward.output.device, seed=9).permute(
        *reversed(range(len(shape))))
    grads = run_backward(spec, forward.output, inputs, grad_output).grads
    truth = reference_gradients(spec, inputs, grad_output.contiguous())
    for name, grad in zip(inputs, grads):
        if name in truth:
            diagnose_gradient(name, grad, truth[name], rtol=1e-5, atol=1e-7)
    covers("non-contiguous grad_output")


# the inputs each gradient's formula reads (besides grad_output)
NEEDS = {"x1": {"weight", "x2"}, "x2": {"x1", "weight"}, "weight": {"x1", "x2"}, "bias": set()}


def check_computes_only_what_is_needed(function, spec: Spec, values: dict) -> None:
    """Each input alone requiring grad: backward may read only what that gradient needs. An
    answer that computes all four gradients and returns None for three returns the right
    thing; only what it reads shows the work."""
    for name in values:
        inputs = make_inputs(values, requires_grad={name})
        forward = run_forward(function, spec, inputs)
        backward, reads = backward_reading(spec, inputs, forward.output,
                                           torch.ones_like(forward.output), NEEDS)
        with case(f"{name} alone requiring grad"):
            raise_unneeded_read(spec, inputs, backward, reads)


@contextlib.contextmanager
def unsaved_input_named(function, make_values, needs: dict, wanted_names, advice: str,
                        exercise: str):
    """A backward that failed on a None is told what its forward left out, when a probe with
    one input requiring grad proves it: a None was saved and an input that gradient reads
    (``needs``) is not kept, or the inputs rightly not kept are still used by backward (a
    ``weight.shape``, say)."""
    try:
        yield
    except Exception as error:
        hint = (_none_read(function, make_values, needs, wanted_names, advice)
                if "NoneType" in str(error) else None)
        if hint is None:
            raise
        ids = {"did not save": f"{exercise}/drops-needed-input",  # the probes' two hints
               "but backward still uses": f"{exercise}/reads-unsaved-input"}
        raise GradingError(hint, str(error), mistake=ids) from error


def _none_read(function, make_values, needs: dict, wanted_names, advice: str) -> str | None:
    read_by_some = set().union(*needs.values())
    for wanted in wanted_names:
        inputs = make_inputs(make_values(), requires_grad={wanted})
        try:
            output = function.apply(*inputs.values())
            saved = output.grad_fn.saved_tensors
        except Exception:  # noqa: BLE001 - a probe: any failure proves nothing
            return None
        if None not in saved:
            continue
        kept = {t.untyped_storage().data_ptr() for t in saved if isinstance(t, torch.Tensor)}
        dropped = [n for n, v in inputs.items() if n in read_by_some and isinstance(
            v, torch.Tensor) and v.untyped_storage().data_ptr() not in kept]
        missing = [n for n in dropped if n in needs[wanted]]
        if missing:
            return (f"with only {wanted} requiring grad, your forward did not save {missing[0]}, "
                    f"and grad_{wanted} reads it: {advice}")
        try:
            output.grad_fn.apply(torch.ones_like(output))  # the user's backward, unchecked
        except Exception as error:  # noqa: BLE001 - only a failure on None proves it
            if isinstance(error, (AttributeError, TypeError)) and "NoneType" in str(error):
                them = "it" if len(dropped) == 1 else "them"
                names = " and ".join([", ".join(dropped[:-1]), dropped[-1]] if dropped[:-1]
                                     else dropped)
                return (f"with only {wanted} requiring grad, your forward saved None in place of "
                        f"{names}, as it may (grad_{wanted} does not read {them}), "
                        f"but backward still uses {them} ({error}): read each saved tensor only "
                        "in the branch that needs it, and take sizes from grad_output")
    return None


@contextlib.contextmanager
def bias_entry_named(function, values: dict):
    """Called without a bias, ctx.needs_input_grad has three entries: an IndexError is blamed
    on reading entry 3 only when a probe proves it, the line that raised indexing a local
    bound to ctx.needs_input_grad itself (``need = ctx.needs_input_grad``, then ``need[3]``)."""
    try:
        yield
    except GradingError as error:
        if "bias" in values or "raised IndexError" not in error.hint or not _reads_entry_3(
                function, values):
            raise
        raise GradingError(
            "Bilinear.backward read ctx.needs_input_grad[3] when called without a bias: "
            "ctx.needs_input_grad has one entry per argument passed to apply, 3 here (x1, x2, "
            "weight); remember in forward whether there was a bias (ctx.has_bias = bias is not "
            "None) and read entry 3 only then", error.details or error.hint,
            mistake="Bilinear/reads-missing-bias-flag") from error


def _reads_entry_3(function, values: dict) -> bool:
    try:
        inputs = make_inputs(values)
        output = function.apply(*inputs.values())
        output.grad_fn.apply(torch.ones_like(output))  # the user's backward, unchecked
    except IndexError as error:
        traceback = error.__traceback__
        while traceback.tb_next is not None:
            traceback = traceback.tb_next
        frame = traceback.tb_frame
        line = linecache.getline(frame.f_code.co_filename, traceback.tb_lineno)
        ctx = next((v for v in frame.f_locals.values() if hasattr(v, "needs_input_grad")),
                   None)
        if ctx is None or len(ctx.needs_input_grad) != 3:
            return False
        names = [n for n, v in frame.f_locals.items() if v is ctx.needs_input_grad]
        return any(re.search(rf"\b{re.escape(n)}\s*\[\s*3\s*\]", line) for n in names) \
            or re.search(r"needs_input_grad\s*\[\s*3\s*\]", line) is not None
    except Exception:  # noqa: BLE001 - a probe: any other failure proves nothing
        return False
    return False


def bilinear_full(Bilinear, device) -> None:
    function = check_is_function(Bilinear, BILINEAR)
    with unsaved_input_named(function, lambda: bilinear_values((5,), 3, 2, device), NEEDS,
                             ("x1", "x2", "weight", "bias"), SAVE_ADVICE, BILINEAR.name):
        _bilinear_checks(function, device)


# what a None saved in place of an input that a wanted gradient reads is told
SAVE_ADVICE = ("save each input that a wanted gradient reads (grad_x1 reads x2 and weight, "
               "grad_x2 reads x1 and weight, grad_weight reads x1 and x2)")


def _bilinear_checks(function, device) -> None:
    check_class_untouched(function, DOMAIN, device)
    # every leading shape, with and without a bias, for n1 != n2; n1 == n2 (where a weight read
    # as (out, n2, n1) runs) needs one case only
    cases = [*itertools.product(FEATURES[:1], LEADING_SHAPES, (True, False)),
             (FEATURES[1], LEADING_SHAPES[1], False)]
    for seed, ((n1, n2), leading, bias) in enumerate(cases):
        values = bilinear_values(leading, n1, n2, device, bias=bias, seed=seed)
        with case(f"x1 of shape {(*leading, n1)}, x2 of shape {(*leading, n2)}, "
                  f"bias={'a tensor' if bias else 'None'}"):
            with bias_entry_named(function, values), bias_sum_named(function, values, device):
                forward, backward = check_values_and_gradients(function, BILINEAR, values)
            check_no_ctx_tensors(BILINEAR, forward)
            # the derivation is the exercise: no autograd inside backward, as MyLinearFunction
            check_backward_by_hand(BILINEAR, backward)
    covers("x1 and x2 with no leading dimension")
    covers("bias=None")
    covers("n1 == n2")
    with case("grad_output not contiguous"):
        check_noncontiguous_grad_output(function, BILINEAR, bilinear_values((2, 3), 3, 2, device))
    for bias in (True, False):
        check_each_input_alone(function, BILINEAR,
                               bilinear_values((5,), 3, 2, device, bias=bias),
                               frozen_get_none=True)
    check_computes_only_what_is_needed(function, BILINEAR, bilinear_values((5,), 3, 2, device))
    covers("each gradient only when needed")
    check_gradcheck(function, BILINEAR, bilinear_values((2,), 2, 3, device))


@contextlib.contextmanager
def bias_sum_named(function, values: dict, device):
    """For x1 and x2 with no leading dimension, a wrong grad_bias shape is named when the probe
    proves it: right with leading dimensions, yet backward's own grad_bias (read before the
    engine checks its shape) is 0-d and the sum of every entry of the true one."""
    try:
        yield
    except GradingError as error:
        if values["x1"].dim() != 1 or not _bias_sums_features(function, values, device):
            raise
        raise GradingError(
            f"grad_bias has shape () but bias has shape ({OUT},) for x1 of shape "
            f"{tuple(values['x1'].shape)}, while your backward is right with leading dimensions: "
            "with none, your sum over the leading dimensions summed the output features "
            "(sum(0) of a 1-D tensor does, and so does sum(dim=()), which sums every dimension, "
            "not none); flatten every leading dimension into rows first, then sum the rows",
            error.details or error.hint, mistake="Bilinear/bias-sums-features") from error


def _bias_sums_features(function, values: dict, device) -> bool:
    if "bias" not in values:
        return False
    try:
        for leading in ((5,), (2, 3)):
            check_values_and_gradients(function, BILINEAR, bilinear_values(
                leading, values["x1"].shape[-1], values["x2"].shape[-1], device))
        inputs = make_inputs(values)
        output = function.apply(*inputs.values())
        grad_bias = output.grad_fn.apply(torch.ones_like(output))[3]  # unchecked
        truth = reference_gradients(BILINEAR, inputs, torch.ones_like(output))["bias"]
    except Exception:  # noqa: BLE001 - a probe: any failure proves nothing
        return False
    return (isinstance(grad_bias, torch.Tensor) and grad_bias.dim() == 0
            and torch.allclose(grad_bias.detach(), truth.sum()))


DOMAIN = Domain(BILINEAR, sampled(BILINEAR, {"x1": (2, 4, 3), "x2": (2, 4, 2), "weight": (5, 3, 2),
                                             "bias": (5,)}), optional=("bias",))

EXERCISES = [
    Exercise("Bilinear", "02_linear", bilinear_full,
             contract=("x1 and x2 with no leading dimension", "bias=None", "n1 == n2",
                       "non-contiguous grad_output", "each gradient only when needed"),
             example=lambda: tuple(bilinear_values((5,), 3, 2, "cpu").values()), domain=DOMAIN),
]
