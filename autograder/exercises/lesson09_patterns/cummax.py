"""Lesson 09's transfer exercise: CumMax, the running maximum, a scan whose backward is a
selection. Each output's gradient goes to the entry that holds the running maximum (ties as
torch.cummax picks them: the latest of equal values), and many outputs share one entry, so the
gradients must add up (a scatter-add)."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ...checks import Spec, case, check_gradcheck, check_is_function, make_inputs, run_forward
from ...contract import check_each_input_alone, covers
from ...domain import Case, Constant, Domain, sampled
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...linear_memory import check_linear_memory
from ...outside_ctx import check_no_state_outside_ctx
from ...probes import _shares_memory
from ..shared.layouts import check_noncontiguous_grad_output
from .pattern_cases import LESSON, _shape, described, gradient_for, graded_case, listed
from .scalar_scans import check_scalar_x

LATER_IN_LESSON = True
CUMMAX = Spec("CumMax", ("x", "dim"), lambda x, dim: torch.cummax(x, dim).values)
# (x's shape, dim): first, middle, last and negative dims, a 1-D x (dim 0 and -1), and a dim of
# size 1 (a running maximum of one entry)
CASES = [((4, 6), 1), ((6,), 0), ((5, 3), 0), ((2, 3, 5), -1), ((2, 5, 3), 1), ((4, 2, 3), 0),
         ((3, 5), -2), ((5,), -1), ((3, 1), 1)]
# ties (equal running maxima: torch.cummax takes the latest) and long runs under one maximum
TIES = torch.tensor([[1.0, 3.0, 3.0, 2.0, 3.0, 0.5, 4.0],
                     [5.0, 1.0, 2.0, 5.0, -1.0, 5.0, 0.0],
                     [-2.0, -2.0, -2.0, -3.0, -2.0, -4.0, -5.0]])


def _first_tie_gradient(x: torch.Tensor, grad_output: torch.Tensor) -> torch.Tensor:
    """The gradient if ties went to the earliest of equal values (a strict > comparison),
    along the last dim of a 2-D x."""
    grad = torch.zeros_like(x)
    for r in range(x.shape[0]):
        best = 0
        for i in range(x.shape[1]):
            if x[r, i] > x[r, best]:
                best = i
            grad[r, best] += grad_output[r, i]
    return grad


def _tie_mask_gradient(x: torch.Tensor, grad_output: torch.Tensor) -> torch.Tensor:
    """The gradient if each output's gradient went to every entry up to it that equals its
    running maximum (a mask of ties, x == values), along the last dim of a 2-D x."""
    values = torch.cummax(x, -1).values
    n = x.shape[-1]
    earlier = torch.ones(n, n, dtype=torch.bool, device=x.device).triu()  # entry j <= output o
    mask = (x.unsqueeze(-1) == values.unsqueeze(-2)) & earlier  # (rows, entry j, output o)
    return (mask * grad_output.unsqueeze(-2)).sum(-1)


def _targets(x: torch.Tensor) -> torch.Tensor:
    """How many outputs take their value from each entry (along the last dim)."""
    indices = torch.cummax(x, -1).indices
    return torch.zeros_like(indices).scatter_add(-1, indices, torch.ones_like(indices))


def check_ties_and_repeats(function, device) -> None:
    """Ties go where torch.cummax puts them; the gradients of outputs that share an entry add."""
    x = TIES.to(device, torch.float64)
    grad_output = 1 + sample(x.shape, device, seed=3).abs()
    got, truth, _ = gradient_for(function, CUMMAX, {"x": x, "dim": 1}, grad_output=grad_output)
    if not isinstance(got, torch.Tensor) or got.shape != truth.shape or torch.allclose(got, truth):
        return  # graded_case names a missing or mis-shaped gradient
    where = "(with x of shape (3, 7), dim=1: rows with ties and long runs, listed below)"
    details = f"x = {listed(x)}\ngot {listed(got, truth)}\nexpected {listed(truth, got)}"
    if torch.allclose(got, _first_tie_gradient(x, grad_output)):
        raise GradingError(
            "CumMax sends a tied maximum's gradient to the earliest of the equal values: "
            "torch.cummax (and so the contract) picks the latest one, so a later entry equal "
            f"to the running maximum takes it over {where}", details,
            mistake="CumMax/ties-to-earliest")
    indices = torch.cummax(x, 1).indices
    if torch.allclose(got, grad_output.gather(1, indices)):
        raise GradingError(
            "CumMax gathers grad_output with the indices, so entry i reads the gradient of "
            "output indices[i]: the indices say which entry each output copies, so a gradient "
            f"travels the other way, from output o to entry indices[o] {where}", details,
            mistake="CumMax/gathers-with-indices")
    if torch.allclose(got, grad_output):
        raise GradingError(
            "CumMax returns grad_output unchanged, as if each output copied the entry at its own "
            f"position: an output copies the running maximum, often an earlier entry {where}",
            details, mistake="CumMax/returns-grad-output")
    if torch.allclose(got, _tie_mask_gradient(x, grad_output)):
        raise GradingError(
            "CumMax sends each output's gradient to every entry up to it that equals its running "
            "maximum (a mask of ties, x == values): torch.cummax (and so the contract) sends it to "
            "one entry, the one its indices name (the latest of equal values), so where values "
            f"tie, your backward hands the same gradient out several times {where}", details,
            mistake="CumMax/gradient-to-every-tie")
    shared = _targets(x) >= 2
    wrong = ~torch.isclose(got, truth)
    if (wrong <= shared).all():
        written = torch.zeros_like(x).scatter(1, indices, grad_output)  # one write survives
        assignment = (", and an assignment (grad[indices] = ..., scatter without add) keeps "
                      "only one of them" if torch.allclose(got, written) else "")
        raise GradingError(
            "CumMax lost gradients where several outputs take their value from the same entry: "
            f"that entry's gradient is the sum of all of their grad_output{assignment} {where}",
            details, mistake="CumMax/loses-shared-gradients")


def check_near_ties(function, device) -> None:
    """Running maxima one ulp apart in float64: indices found on a rounded copy of x (x.float())
    see ties there and send the gradient to the wrong entry."""
    values = _near_ties(device, torch.float64)
    got, truth, grad_output = gradient_for(function, CUMMAX, values)
    if not isinstance(got, torch.Tensor) or got.shape != truth.shape or torch.allclose(got, truth):
        return  # graded_case names a missing or mis-shaped gradient
    for narrow in (torch.float32, torch.bfloat16, torch.float16):
        rounded = torch.cummax(values["x"].to(narrow), 1).indices
        if torch.allclose(got, torch.zeros_like(got).scatter_add(1, rounded, grad_output)):
            raise GradingError(
                "CumMax's gradient goes where the running maxima of a rounded copy of x lie "
                f"(x in {str(narrow)[6:]}): values one ulp apart become ties there; whose running "
                "maxima does the contract route the gradient to? (with x of shape (2, 6), dim=1, "
                "running maxima one ulp apart, float64)",
                f"x = {values['x'].tolist()}\ngot {listed(got, truth)}\n"
                f"expected {listed(truth, got)}",
                mistake="CumMax/indices-from-rounded-copy")


def check_follows_dim(function, device) -> None:
    """Right along the last dim, wrong for dim=0: backward ignored ctx.dim. A square x keeps a
    scatter along the wrong dim in bounds, so the slip shows as values, not as an error."""
    x = sample((4, 4), device, seed=5)
    try:
        got, truth, _ = gradient_for(function, CUMMAX, {"x": x, "dim": 0})
        along_last, truth_last, _ = gradient_for(function, CUMMAX, {"x": x.T.contiguous(),
                                                                    "dim": 1})
    except GradingError:
        return  # the graded cases report the learner's own error
    tensors = isinstance(got, torch.Tensor) and isinstance(along_last, torch.Tensor)
    if (tensors and got.shape == truth.shape and along_last.shape == truth_last.shape
            and not torch.allclose(got, truth) and torch.allclose(along_last, truth_last)):
        raise GradingError("CumMax's gradient is right when dim is the last dimension but wrong "
                           "for dim=0: the indices run along ctx.dim, so the adding in backward "
                           "must run along ctx.dim too (with x of shape (4, 4), dim=0)",
                           f"got {listed(got, truth)}, expected {listed(truth, got)}",
                           mistake="CumMax/last-dim-only")
    if tensors and got.shape == truth.shape and torch.allclose(got, truth):
        check_negative_dim(function, x)


def check_negative_dim(function, x: torch.Tensor) -> None:
    """Right for dim=0, wrong for dim=-2, the same dim of a 2-D x: backward changed ctx.dim."""
    try:
        got, truth, _ = gradient_for(function, CUMMAX, {"x": x, "dim": -2})
    except GradingError:
        return
    if (isinstance(got, torch.Tensor) and got.shape == truth.shape
            and not torch.allclose(got, truth)):
        raise GradingError("CumMax's gradient is right for dim=0 but wrong for dim=-2, the same "
                           "dim of a 2-D x: which line of your backward turns the dim it was "
                           "given into another one? (scatter_add, gather and movedim all count a "
                           "negative dim from the end) (with x of shape (4, 4), dim=-2)",
                           f"got {listed(got, truth)}, expected {listed(truth, got)}",
                           mistake="CumMax/negative-dim-changed")


def check_saves_indices_only(forward, x: torch.Tensor) -> None:
    """No floating-point tensor, and no byte of its own beyond what torch.cummax gave forward:
    8 bytes per entry of x, the int64 positions of the running maxima as torch.cummax returned
    them (more is a tensor made only to be saved, fewer a conversion or another such tensor)."""
    for saved in forward.saved:
        if saved.dtype.is_floating_point:
            what = "its input x" if saved.role == "input x" else (
                "its output" if saved.role == "output" else
                f"a float tensor of shape {_shape(saved.shape)}")
            raise GradingError(f"CumMax saves {what} ({saved.nbytes} bytes), a float tensor a "
                               "correct backward can do without, which the contract rules out; what "
                               "does backward need to know about x, beyond its values?",
                               mistake="CumMax/saves-float-tensor")
    budget = 8 * x.numel()
    if forward.saved_bytes > budget:
        raise GradingError(f"CumMax saves {forward.saved_bytes} bytes for the {x.numel()} entries "
                           f"of x, more than torch.cummax gave forward beside the values "
                           f"({budget}): a tensor made only to be saved, which the contract "
                           "rules out; which saved tensor does backward not need, or could "
                           "rebuild from ctx attributes?", mistake="CumMax/saves-more-than-needed")
    if forward.saved_bytes < budget:
        narrow = [s for s in forward.saved if s.dtype not in (torch.int64, torch.bool)]
        if narrow:
            raise GradingError(f"CumMax saves a tensor in {str(narrow[0].dtype)[6:]} "
                               f"({forward.saved_bytes} bytes for the {x.numel()} entries of x), "
                               "a dtype torch.cummax never returns its indices in: forward made "
                               "it only to be saved, which the contract rules out even though it "
                               "is smaller than the int64 indices it stands for; in which dtype "
                               "did forward get them?", mistake="CumMax/narrow-indices")
        raise GradingError(f"CumMax saves {forward.saved_bytes} bytes for the {x.numel()} entries "
                           f"of x, fewer than torch.cummax gave forward beside the values "
                           f"({budget}): a tensor made only to be saved, which the contract "
                           "rules out; what does backward need to know, for each output, about "
                           "where its value came from?")


class _CummaxCalls(TorchDispatchMode):
    """``indices``: the indices every torch.cummax of a floating-point tensor returned (its
    second output) while the mode is active."""

    def __init__(self):
        super().__init__()
        self.indices: list[torch.Tensor] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if (func.overloadpacket is torch.ops.aten.cummax and isinstance(args[0], torch.Tensor)
                and args[0].is_floating_point()):
            self.indices.append(out[1])
        return out


def check_saves_cummax_indices(function, device) -> None:
    """Where forward called torch.cummax on x, what it saves is the indices that call returned
    (or a view of them), not a copy of them nor an int64 tensor of the same size rebuilt beside
    them: a tensor made only to be saved, which the byte count alone does not tell apart (a
    forward that finds the running maximum without torch.cummax is held to the byte count
    only). Tried along the last dim and along dim 0 and -2, where a copy taken after a movedim
    (.contiguous(), .clone()) is one, though along the last dim it is a no-op."""
    for dim in (1, 0, -2):
        inputs = make_inputs({"x": TIES.to(device, torch.float64), "dim": dim})
        with _CummaxCalls() as calls:
            forward = run_forward(function, CUMMAX, inputs)
        if not calls.indices:
            return
        for saved in forward.saved:
            if saved.role == "intermediate" and not any(
                    _shares_memory(saved.tensor, indices) for indices in calls.indices):
                raise GradingError(
                    f"CumMax saves a tensor ({str(saved.dtype)[6:]}, of shape "
                    f"{_shape(saved.shape)}) that forward made beside the indices torch.cummax "
                    "returned (a copy of them, or one rebuilt), not those indices themselves: a "
                    "tensor made only to be saved, whose bytes the contract rules out (the "
                    "indices torch.cummax gave forward are bytes it had anyway): which tensor did "
                    "forward already hold that backward could read? (with x of shape (3, 7), "
                    f"dim={dim})",
                    mistake="CumMax/saves-rebuilt-indices")


def cummax_case(function, values: dict) -> None:
    with case(described(values, values["x"].dtype)):
        forward, _ = graded_case(function, CUMMAX, values)
        check_saves_indices_only(forward, values["x"])


def cummax_full(CumMax, device) -> None:
    function = check_is_function(CumMax, CUMMAX)
    # first: indices kept in a global leave nothing saved, which the byte checks would blame
    with case("one call, forward then backward"):
        check_no_state_outside_ctx(function, "CumMax", {"x": TIES.to(device, torch.float64),
                                                        "dim": 1})
    check_ties_and_repeats(function, device)
    cummax_case(function, {"x": TIES.to(device, torch.float64), "dim": 1})
    check_saves_cummax_indices(function, device)
    check_follows_dim(function, device)
    check_near_ties(function, device)
    cummax_case(function, {"x": TIES.T.contiguous().to(device, torch.float64), "dim": 0})
    cummax_case(function, {"x": TIES.to(device, torch.float32), "dim": 1})  # grad in x's dtype
    covers("ties as torch.cummax")
    covers("outputs that share an entry add up")
    for seed, (shape, dim) in enumerate(CASES):
        cummax_case(function, {"x": sample(shape, device, seed=seed), "dim": dim})
    for edge in ("a dim other than the last", "negative dim", "1-D x",
                 "saves no float, no byte of its own"):
        covers(edge)
    check_each_input_alone(function, CUMMAX, {"x": sample((3, 5), device), "dim": 0})
    check_noncontiguous_grad_output(function, CUMMAX, {"x": TIES.to(device, torch.float64),
                                                       "dim": 1})
    # distinct, well-separated values: finite differences never cross a tie
    x = torch.randperm(20, generator=torch.Generator().manual_seed(2)).double().reshape(4, 5)
    check_gradcheck(function, CUMMAX, {"x": x.to(device), "dim": 1})
    # last: a 0-d x along dim 0 and -1, which torch.cummax takes as a row of one; after rule
    # 3's memory bound, so that a backward building a one-hot matrix (which a 0-d x also
    # breaks) is named for the matrix, as the domain's checks name it
    check_linear_memory(CUMMAX_DOMAIN, function, torch.device(device))
    check_scalar_x(function, CUMMAX, "torch.cummax", device, check_saves_indices_only)
    covers("0-d x")


def _near_ties(device, dtype) -> dict:
    """Running maxima one ulp apart beside exact repeats: a cummax computed on rounded values
    sends the gradient to the wrong entry."""
    one = torch.tensor(1.0, dtype=dtype)
    up = torch.nextafter(one, torch.tensor(2.0, dtype=dtype))
    x = torch.stack([torch.stack([one, up, one, up, up, one * 0.5]),
                     torch.stack([up, one, up, one, one, up])])
    return {"x": x.to(device), "dim": 1}


# float64 and float32 (each check in both), every layout of x
CUMMAX_DOMAIN = Domain(CUMMAX, sampled(CUMMAX, {"x": (3, 5)}, {"dim": 1}),
                       constants={"dim": Constant(-2, 1, "dim a Python int, negative allowed",
                                                  integer=True, also=(0,))},
                       ties=Case(_near_ties, "ties as torch.cummax picks them, one ulp apart as "
                                 "well as exact"))

EXERCISES = [
    Exercise("CumMax", LESSON, cummax_full,
             example=lambda: (TIES.double(), 1),
             contract=("ties as torch.cummax", "outputs that share an entry add up",
                       "a dim other than the last", "negative dim", "1-D x",
                       "saves no float, no byte of its own", "non-contiguous grad_output",
                       "0-d x"),
             domain=CUMMAX_DOMAIN),
]
