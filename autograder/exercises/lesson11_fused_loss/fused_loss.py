"""Lesson 11: CrossEntropy, and linear_cross_entropy on its Function LinearCrossEntropy.

CrossEntropy is graded against F.cross_entropy (values, gradients, ignored rows, logits of
magnitude 1e4, what it saves). linear_cross_entropy is a function, not a Function: the shared
checks call it through ``Called``, and the work it does (largest tensor, counted FLOPs, its
gradients saved and scaled, low precision) is graded in ``fused_loss_work``.
"""

import inspect
from types import SimpleNamespace

import torch
from torch.autograd.graph import saved_tensors_hooks

from ...checks import (Spec, case, check_backward_by_hand, check_gradcheck, check_is_function,
                      check_no_ctx_tensors, check_values_and_gradients, make_inputs,
                      run_forward)
from ...contract import check_each_input_alone, covers
from ...domain import Case, Constant, Domain, Operator
from ...errors import GradingError
from ...comparison import check_saved_dtypes
from ...exercise import Exercise, sample
from ...probes import _shares_memory
from .cross_entropy_mistakes import CE, CE_MISTAKES, recognise_ce
from .fused_loss_precision import (ACCUMULATION, ACCUMULATION_TOLERANCE, accumulation_values,
                                   check_float16_range, check_g_range, check_low_precision,
                                   float16_range_values, g_range_values)
from .fused_loss_calls import (check_returns_new_tensors, check_two_calls,
                               check_weight_changed_between_calls)
from .fused_loss_memory import check_forward_peak, check_largest_tensor
from .fused_loss_work import (LCE, Called, check_backward_only_scales, check_grad_mode,
                              check_lce_saved, check_one_gradient,
                              check_retained_backward, check_scaling,
                              lce_values, naming_chunk_means)

def ce_values(rows: int, classes: int, device, *, seed=0, ignored=(), ignore_index=-100,
              magnitude=3.0, dtype=torch.float64) -> dict:
    """Logits, targets in [0, classes) with the rows ``ignored`` set to ``ignore_index``."""
    target = torch.randint(0, classes, (rows,), generator=torch.Generator().manual_seed(seed))
    target[list(ignored)] = ignore_index
    return {"logits": magnitude * sample((rows, classes), device, seed=seed + 1, dtype=dtype),
            "target": target.to(device), "ignore_index": ignore_index}


def strided_logits(values: dict) -> dict:
    """``values`` with logits of the same shape and values laid out transposed (a view of
    their transpose, as a matmul's output often is): forward saves them, not a copy."""
    logits = values["logits"]
    return {**values, "logits": logits.T.contiguous().T}


def describe_ce(values: dict) -> str:
    logits, target = values["logits"], values["target"]
    ignored = int((target == values["ignore_index"]).sum())
    dtype = str(logits.dtype).removeprefix("torch.")
    layout = "" if logits.is_contiguous() else " (transposed in memory)"
    return (f"logits of shape {tuple(logits.shape)}{layout}, {dtype}, {ignored} of "
            f"{len(target)} rows ignored, ignore_index={values['ignore_index']}")


def check_nones(function, values: dict) -> None:
    """Backward returns None for target and ignore_index (autograd drops a tensor returned
    for the integer target without a word, so look at what backward itself returns)."""
    returned = []

    def backward(ctx, *grads):
        result = function.backward(ctx, *grads)
        returned.append(result if isinstance(result, tuple) else (result,))
        return result

    probe = type(function.__name__, (function,), {"backward": staticmethod(backward)})
    logits = values["logits"].detach().clone().requires_grad_()
    probe.apply(logits, values["target"], values["ignore_index"]).backward()
    if len(returned[0]) == 3 and returned[0][1] is not None:
        raise GradingError("CrossEntropy.backward returned a gradient for target: return None "
                           "for target and ignore_index (autograd drops it silently)",
                           mistake="CrossEntropy/gradient-for-target")


def check_ce_saved(forward, values: dict) -> None:
    """The logits are the only (N, C) tensor saved; anything else is O(N): a tensor as large
    as the logits (N * C elements or more) is refused where C > 2, while one of a few numbers
    per row, an (N, 2) stack included, is not; at C <= 2 the two cannot be told apart."""
    rows, classes = values["logits"].shape
    for saved in forward.saved:
        if saved.role != "input logits" and classes > 2 and saved.tensor.numel() > rows and \
                saved.tensor.numel() >= rows * classes:
            check_not_a_copy("CrossEntropy", saved, values["logits"])
            raise GradingError(
                f"CrossEntropy saves a {str(saved.dtype)[6:]} tensor of shape {saved.shape} "
                f"besides the logits ({guessed(saved.dtype)}): {saved.tensor.numel()} elements "
                f"kept for backward at N={rows}, C={classes}, where the contract allows the "
                "logits and O(N) more; what does your backward read from it, and could it "
                "rebuild that from the logits?", mistake="CrossEntropy/saves-probabilities")


def guessed(dtype: torch.dtype) -> str:
    """What an (N, C) tensor saved beside the logits likely is, by its dtype."""
    return "the probabilities?" if dtype.is_floating_point else "a mask or a one-hot?"


def check_not_a_copy(name: str, saved, logits: torch.Tensor) -> None:
    """A saved tensor holding the logits' values in other memory (``logits.contiguous()`` of
    logits that are transposed in memory, ``logits.clone()``) is named as such, before the
    probabilities are guessed."""
    if saved.shape == tuple(logits.shape) and saved.dtype == logits.dtype and \
            torch.equal(saved.tensor.detach(), logits.detach()):
        layout = " (they are transposed in memory here)" if not logits.is_contiguous() else ""
        raise GradingError(
            f"{name} saves a copy of the logits{layout}: a {str(saved.dtype)[6:]} tensor of "
            f"shape {saved.shape} with the logits' values in memory of its own, a second "
            "(N, C) tensor kept for backward beside the logits the caller already holds",
            mistake=f"{name}/saves-logits-copy")


def check_ce(function, values: dict, *, rtol=1e-5, atol=1e-7) -> None:
    """Values and gradients against F.cross_entropy, with the named mistakes recognised."""
    with case(describe_ce(values)):
        try:
            forward, backward = check_values_and_gradients(function, CE, values,
                                                           rtol=rtol, atol=atol)
        except GradingError as error:
            hint = recognise_ce(function, values)
            if hint is None:
                raise
            raise GradingError(hint, str(error), mistake=CE_MISTAKES) from error
        check_no_ctx_tensors(CE, forward)
        check_backward_by_hand(CE, backward)
        check_ce_saved(forward, values)
        check_nones(function, values)


def check_saved_precision(function, spec: Spec, values: dict) -> None:
    """Before any value is compared: a statistic (the log-sum-exp) saved narrower than float64
    logits is named as seen saved, not as the small gradient error it later causes (the
    domain's saved-dtype rule, run first)."""
    with case(f"logits of shape {tuple(values['logits'].shape)}, float64"):
        forward = run_forward(function, spec, make_inputs(values))
        check_saved_dtypes(SimpleNamespace(spec=spec), forward, torch.float64, torch.float64)


def check_ce_stable(function, device, dtype=torch.float64) -> None:
    """Finite and right at logits of magnitude 1e4, where exp overflows."""
    values = ce_values(6, 5, device, seed=7, ignored=(2,), magnitude=1e4, dtype=dtype)
    logits = values["logits"].detach().clone().requires_grad_()
    with case(describe_ce(values)):
        try:
            loss = function.apply(logits, values["target"], values["ignore_index"])
            grad, = torch.autograd.grad(loss, logits)
        except RuntimeError:
            return check_ce(function, values, rtol=1e-5, atol=1e-5)  # its hint explains it
        if not torch.isfinite(loss).all():
            raise GradingError(
                "CrossEntropy's loss is not finite at logits of magnitude 1e4, where "
                "F.cross_entropy's is: subtract each row's maximum before exp, and take the log "
                "of the sum (log-sum-exp), never of each probability",
                mistake="CrossEntropy/overflows-at-large-logits")
        if not torch.isfinite(grad).all():
            raise GradingError(
                "CrossEntropy's backward gives a non-finite gradient at logits of magnitude 1e4, "
                "where the loss is finite: an exp in backward overflows (of a logit, or of the "
                "log-sum-exp itself); which exponent of the softmax is never above 0?",
                mistake="CrossEntropy/overflows-at-large-logits")
        check_ce(function, values, rtol=1e-5, atol=1e-5)


def ce_full(CrossEntropy, device) -> None:
    function = check_is_function(CrossEntropy, CE)
    check_saved_precision(function, CE, ce_values(6, 4, device, seed=9, ignored=(1,)))
    for seed, (rows, classes, ignored, ignore_index) in enumerate([
            (5, 4, (), -100), (6, 3, (1, 4), -100), (7, 5, (0, 2, 3), 2), (1, 6, (), -100),
            (4, 1, (), -100), (9, 7, tuple(range(8)), -1), (6, 4, (0, 3), 4),
            (5, 1, (1, 3), -100)]):
        check_ce(function, ce_values(rows, classes, device, seed=seed + 10, ignored=ignored,
                                     ignore_index=ignore_index))
    covers("ignored rows, ignore_index=-100")
    covers("ignore_index among the classes")  # 2 of 5 classes: rows targeting 2 do not count
    covers("ignore_index past the classes")  # C, as a padding id one past a vocabulary
    check_ce(function, strided_logits(ce_values(5, 4, device, seed=18, ignored=(2,))))
    check_each_input_alone(function, CE, ce_values(6, 4, device, seed=17, ignored=(1, 4),
                                                   ignore_index=3))
    for dtype in (torch.float64, torch.float32):
        check_ce_stable(function, device, dtype)
    covers("logits of magnitude 1e4")
    with case("gradcheck"):
        check_gradcheck(function, CE, ce_values(4, 3, device, seed=30, ignored=(1,)))


# linear_cross_entropy -------------------------------------------------------------------

def check_is_callable(linear_cross_entropy) -> Called:
    """A plain function whose loss comes from a custom Function, chunk_size defaulting to 1024."""
    if isinstance(linear_cross_entropy, type) and issubclass(linear_cross_entropy,
                                                               torch.autograd.Function):
        raise GradingError("linear_cross_entropy must be a function, def linear_cross_entropy("
                           "x, weight, target, chunk_size=1024), that calls "
                           "LinearCrossEntropy.apply: pass the function, not the Function")
    if not callable(linear_cross_entropy):
        raise GradingError(f"linear_cross_entropy must be a function, got "
                           f"{type(linear_cross_entropy).__name__}")
    try:
        default = inspect.signature(linear_cross_entropy).parameters["chunk_size"].default
    except (KeyError, TypeError, ValueError):
        default = None
    if default != 1024:
        raise GradingError("linear_cross_entropy's signature must be (x, weight, target, "
                           "chunk_size=1024): chunk_size defaults to 1024")
    values = lce_values(3, 2, 4, 2, "cpu")
    packed: list[torch.Tensor] = []
    with saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        inputs = make_inputs(values)
        output = linear_cross_entropy(*inputs.values())
    if not isinstance(getattr(output, "grad_fn", None), torch.autograd.function.BackwardCFunction):
        # the probe: autograd saved (rows, V) tensors covering all N rows, each chunk's logits
        given = [inputs["x"], inputs["weight"]]
        rows = sum(t.shape[0] for t in packed if t.dim() == 2 and t.shape[1] == 4
                   and not any(_shares_memory(t, one) for one in given))
        kept = (" (autograd kept a (rows, V) tensor of every chunk for backward, all N rows' "
                "worth of logits: the memory the chunks were to save)" if rows >= 3 else "")
        raise GradingError("linear_cross_entropy's loss was not made by a custom Function"
                           f"{kept}: return LinearCrossEntropy.apply(...), not composed PyTorch "
                           "ops", mistake="linear_cross_entropy/not-a-custom-function")
    return Called(linear_cross_entropy)


def describe_lce(values: dict) -> str:
    (N, d), V = values["x"].shape, values["weight"].shape[0]
    dtype = str(values["x"].dtype).removeprefix("torch.")
    return f"N={N}, d={d}, V={V}, chunk_size={values['chunk_size']}, {dtype}"


def check_lce(function: Called, values: dict, *, rtol=1e-5, atol=1e-7) -> None:
    """Loss and both gradients against F.cross_entropy(F.linear(x, weight), target)."""
    with case(describe_lce(values)):
        with naming_chunk_means(function, values):
            forward, backward = check_values_and_gradients(function, LCE, values,
                                                           rtol=rtol, atol=atol)
        check_no_ctx_tensors(LCE, forward)
        check_backward_by_hand(LCE, backward)
    with case(describe_lce(values)):
        check_lce_saved(function, values)


def check_lce_stable(function: Called, device) -> None:
    """Logits of magnitude up to about 1e4, the contract's range, in each dtype it names
    (float32 and float64): exp overflows there in both (e^89 is inf in float32, e^710 in
    float64), while F.cross_entropy(x @ weight.T, target) is an ordinary number."""
    for seed, dtype in ((59, torch.float64), (58, torch.float32)):
        values = lce_values(6, 4, 5, 4, device, seed=seed, dtype=dtype)
        values["x"] = 4000 * values["x"]
        name = str(dtype).removeprefix("torch.")
        with case(describe_lce(values) + ", logits up to about 1e4"):
            try:
                with torch.no_grad():
                    loss = function.apply(*make_inputs(values, requires_grad=False).values())
            except RuntimeError:
                loss = None  # check_lce quotes the error
            if isinstance(loss, torch.Tensor) and not torch.isfinite(loss).all():
                raise GradingError(
                    f"linear_cross_entropy returns {loss.item()} at {name} logits of magnitude "
                    "1e4, where F.cross_entropy gives a finite loss: subtract each row's "
                    "maximum before exp (e^89 overflows float32, e^710 float64)",
                    mistake="linear_cross_entropy/overflows-at-large-logits")
        tolerance = 1e-4 if dtype == torch.float32 else 1e-9
        check_lce(function, values, rtol=tolerance, atol=tolerance)


# (N, d, V, chunk_size): ragged last chunk, exact chunks, one chunk bigger than N, rows of 1
LCE_SHAPES = [(11, 3, 7, 4), (12, 4, 9, 3), (5, 3, 6, 32), (4, 2, 5, 1), (1, 3, 4, 2)]


def lce_full(linear_cross_entropy, device) -> None:
    function = check_is_callable(linear_cross_entropy)
    # first, before any other call: its weight's address and _version meet no cached key
    for dtype in (torch.float64, torch.float32, torch.float16):  # float16: a converted copy is new
        check_weight_changed_between_calls(function, lce_values(9, 3, 6, 4, device, seed=61,
                                                                dtype=dtype))
    for grad_output in (3.0, -0.5, 0.0):
        check_scaling(function, lce_values(9, 3, 6, 4, device, seed=51), grad_output)
    for seed, shape in enumerate(LCE_SHAPES):
        check_lce(function, lce_values(*shape, device, seed=seed + 40))
    covers("a short last chunk")
    check_each_input_alone(function, LCE, lce_values(10, 3, 7, 4, device, seed=45))
    check_lce_stable(function, device)
    covers("logits of magnitude 1e4, float32 and float64")
    check_retained_backward(function, lce_values(9, 3, 6, 4, device, seed=52))
    check_returns_new_tensors(function, lce_values(9, 3, 6, 4, device, seed=52))
    check_two_calls(function, lce_values(9, 3, 6, 4, device, seed=62),
                    lce_values(9, 3, 6, 4, device, seed=63))
    check_grad_mode(function, lce_values(24, 8, 16, 8, device, seed=53))
    covers("grad mode off")
    check_backward_only_scales(function, lce_values(24, 8, 16, 8, device, seed=53))
    check_one_gradient(function, lce_values(24, 8, 16, 8, device, seed=54))
    covers("one gradient needed")
    check_largest_tensor(function, lce_values(48, 4, 96, 8, device, seed=55))
    check_largest_tensor(function, lce_values(30, 6, 40, 7, device, seed=56))
    # 16 chunks, each far larger than x and weight: the allowance for those hides no chunk
    check_forward_peak(function, lce_values(256, 2, 96, 16, device, seed=55))
    for seed, dtype in enumerate((torch.bfloat16, torch.float16)):
        check_low_precision(function, lce_values(256, 32, 64, 4, device, seed=57 + seed,
                                                 dtype=dtype))
    check_g_range(function, g_range_values(device))
    check_float16_range(function, float16_range_values(device))
    covers("float16 and bfloat16")
    with case("gradcheck, chunk_size=2"):
        check_gradcheck(function, LCE, lce_values(5, 2, 3, 2, device, seed=60))


# -100, a value no target uses, a class (C = 4 in the domains) and one past the classes
IGNORE_INDEX = Constant(-100, 3, "ignore_index any int, a class too", integer=True, also=(4,))
STABLE_ROWS = "stable for logits of magnitude 1e4, each row on its own"
# the per-call check's two calls: at -100 and 3 both count 4 rows, so a count kept where the
# two calls share it went unseen; at 2 the second call counts 3
PER_CALL_IGNORE_INDEX = ({"ignore_index": -100}, {"ignore_index": 2})


def _rows_apart(make):
    """Rows of logits of magnitude 1e4 beside rows of magnitude 1 (a shift by the whole
    tensor's maximum underflows the small rows)."""
    def values(device, dtype) -> dict:
        made = make(4, 3, device, seed=3, dtype=dtype)
        scale = torch.tensor([[1e4], [1.0], [1e4], [0.5]], dtype=dtype, device=device)
        made["logits"] = made["logits"] / 3.0 * scale
        return made
    return values


EXERCISES = [
    Exercise("CrossEntropy", "11_fused_loss", ce_full,
             example=lambda: tuple(ce_values(5, 4, "cpu", ignored=(1,)).values()),
             domain=Domain(CE, lambda device, dtype=torch.float64, seed=0, ignore_index=-100:
                           ce_values(6 - seed % 2, 4, device, seed=seed, ignored=(1,),
                                     ignore_index=ignore_index, dtype=dtype),
                           constants={"ignore_index": IGNORE_INDEX},
                           per_call_constants=PER_CALL_IGNORE_INDEX,
                           rows_apart=Case(_rows_apart(ce_values), STABLE_ROWS)),
             contract=("ignored rows, ignore_index=-100", "ignore_index among the classes",
                       "ignore_index past the classes", "logits of magnitude 1e4")),
    # N >= 1 (the page says "with at least one row", as Exercise 1 says "at least one row
    # counted"): an empty batch, where F.cross_entropy gives nan, is not graded
    Exercise("linear_cross_entropy", "11_fused_loss", lce_full,
             example=lambda: tuple(lce_values(11, 3, 7, 4, "cpu").values()),
             domain=Domain(LCE, lambda device, dtype=torch.float64, seed=0, chunk_size=4:
                           lce_values(11 - 2 * (seed % 2), 3, 7, chunk_size, device, seed=seed,
                                      dtype=dtype),
                           prepare=Operator,
                           constants={"chunk_size": Constant(1, 16, "chunk_size from 1 past N",
                                                             integer=True)},
                           dtypes=(torch.float64, torch.float32, torch.float16, torch.bfloat16),
                           dtype_clause="float32, and float16/bfloat16 in and out",
                           # no accumulates=: the contract saves grad_x and grad_weight in the
                           # input's dtype (check_saved_dtype), so a float16 intermediate saved
                           # for float16 inputs is right here; the accumulation case below
                           # holds the float32 accumulation instead
                           accumulation=Case(accumulation_values, ACCUMULATION, torch.float16,
                                             ACCUMULATION_TOLERANCE)),
             contract=("a short last chunk", "logits of magnitude 1e4, float32 and float64",
                       "grad mode off", "one gradient needed", "float16 and bfloat16")),
]
