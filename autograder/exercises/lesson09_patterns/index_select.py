"""Lesson 09, IndexSelect: a selection whose backward scatters, adding where index repeats a row,
into a gradient of x's shape; its spec, cases, battery and values."""

import torch

from ...checks import Spec, case, check_gradcheck, check_is_function, run_forward
from ...contract import check_each_input_alone, covers
from ...errors import GradingError
from ...exercise import sample
from ...function_contract import rule_reference
from ...outside_ctx import check_no_state_outside_ctx
from ..shared.grad_output import \
    check_noncontiguous_grad_output as check_transposed_grad_output
from ..shared.layouts import check_noncontiguous_grad_output
from ..shared.jacobian_memory import check_backward_memory_linear
from .pattern_cases import (FLOAT32, LINEAR_FACTOR, _shape, described, gradient_for, graded_case,
                            listed)

SELECT = Spec("IndexSelect", ("x", "index"), lambda x, index: torch.index_select(x, 0, index))

# (x's shape, index): repeats, an empty index, a permutation, a single row, 1-D and 3-D x
SELECT_CASES = [((5, 3), [4, 0, 4, 2, 4]), ((6,), [1, 1, 1]), ((5, 3), []),
                ((4, 2, 3), [3, 0]), ((1, 4), [0, 0]), ((5, 3), [2, 0, 4, 1, 3]),
                ((3, 2), [2])]


def check_saves_index_only(forward, index: torch.Tensor) -> None:
    """No floating-point tensor and no byte of forward's own: index itself, as received."""
    for saved in forward.saved:
        if saved.dtype.is_floating_point:
            what = "its input x" if saved.role == "input x" else (
                f"a float tensor of shape {_shape(saved.shape)}")
            raise GradingError(f"IndexSelect saves {what} ({saved.nbytes} bytes), which a "
                               "correct backward can do without: which values does backward "
                               "read, and what else of x does it need?",
                               mistake="IndexSelect/saves-tensor")
    own = [s for s in forward.saved if not s.role.startswith("input") and s.nbytes]
    if any(s.dtype == index.dtype and s.shape == tuple(index.shape)
           and torch.equal(s.tensor, index) for s in own):
        strided = "" if index.is_contiguous() else (
            " (a strided index here, every other entry of a longer one)")
        raise GradingError(f"IndexSelect saves a copy of index, not index itself{strided}: a "
                           "copy costs memory of its own, index itself none; what made the copy?",
                           mistake="IndexSelect/saves-copy-of-index")
    if own:
        raise GradingError(f"IndexSelect saves a tensor that forward made, of shape "
                           f"{_shape(own[0].shape)} ({own[0].nbytes} bytes), where the contract "
                           "saves no byte of its own: could backward do without it, or keep it "
                           "as a plain ctx attribute?")
    if index.numel() and not any(s.role == "input index" for s in forward.saved):
        raise GradingError("IndexSelect did not save index itself: backward reads its values; "
                           "what did forward keep instead?")


def check_repeated_rows(function, device) -> None:
    """grad[index] = grad_output keeps one write per repeated row."""
    index = torch.tensor([4, 0, 4, 2, 4], device=device)
    got, truth, grad_output = gradient_for(function, SELECT, {"x": sample((5, 3), device),
                                                              "index": index})
    if not isinstance(got, torch.Tensor) or got.shape != truth.shape:
        return
    repeated = torch.zeros(5, dtype=torch.bool, device=device)
    repeated[4] = True
    if (not torch.allclose(got, truth) and torch.allclose(got[~repeated], truth[~repeated])):
        if any(torch.allclose(got[4], grad_output[k]) for k in (0, 2, 4)):
            raise GradingError("IndexSelect lost repeated rows: index = [4, 0, 4, 2, 4] selects "
                               "row 4 three times, so its gradient is the sum of three rows of "
                               "grad_output, and your row 4 is one of them: a write "
                               "(grad[index] = grad_output, grad[index] += grad_output, "
                               "index_copy, scatter; += on an indexed tensor is a write too) "
                               "keeps only one; which Tensor method adds rows at an index?",
                               mistake="IndexSelect/writes-repeated-rows")
        raise GradingError("IndexSelect's gradient is wrong only on row 4, the row that index = "
                           "[4, 0, 4, 2, 4] selects three times: its gradient is the sum of those "
                           "three rows of grad_output",
                           f"got {listed(got[4], truth[4])}, expected {listed(truth[4], got[4])}",
                           mistake="IndexSelect/repeats-not-summed")


def select_case(function, x_shape, rows, device, seed=0, dtype=torch.float64) -> None:
    """One case; in float32, what backward itself returns is in x's dtype too (the engine would
    cast a float64 gradient silently, so only graded_case's look at the returned tensor sees it)."""
    index = torch.tensor(rows, dtype=torch.int64, device=device)
    values = {"x": sample(x_shape, device, seed=seed, dtype=dtype), "index": index}
    try:
        with case(described(values, dtype) + f", index={rows}"):
            forward, _ = graded_case(function, SELECT, values,
                                     FLOAT32 if dtype == torch.float32 else None)
            check_saves_index_only(forward, index)
    except GradingError as error:
        if not error.mistake:  # an error no probe named: a dense matrix in backward?
            check_dense_backward(function, device, error)
        raise


def check_dense_backward(function, device, error: GradingError | None = None) -> None:
    """1024 rows picked from 1024: a backward that builds the one-hot matrix of them (k x n)
    holds 1024 * 1024, where index_add holds a few tensors of x's size."""
    rows = torch.randint(0, 1024, (1024,), generator=torch.Generator().manual_seed(5))
    try:
        check_backward_memory_linear(function, SELECT, {"x": sample((1024, 2), device),
                                                        "index": rows.to(device)},
                                     "x of shape (1024, 2), index of 1024 rows, float64",
                                     factor=LINEAR_FACTOR)
    except GradingError as dense:
        if error is None:
            raise
        raise dense from error


def select_opening(IndexSelect, device="cpu") -> None:
    function = check_is_function(IndexSelect, SELECT)
    # first: an index kept in a global leaves nothing saved, which the byte checks would blame
    with case("one call, forward then backward"):
        check_no_state_outside_ctx(function, "IndexSelect", {
            "x": sample((4, 2), device), "index": torch.tensor([3, 1, 3], device=device)})
    check_repeated_rows(function, device)
    for x_shape, rows in SELECT_CASES[:3]:
        select_case(function, x_shape, rows, device)
    select_case(function, *SELECT_CASES[0], device, dtype=torch.float32)
    check_gradcheck(function, SELECT, {"x": sample((4, 2), device),
                                       "index": torch.tensor([3, 1, 3], device=device)})


def select_full(IndexSelect, device) -> None:
    select_opening(IndexSelect, device)
    for seed, (x_shape, rows) in enumerate(SELECT_CASES):
        select_case(IndexSelect, x_shape, rows, device, seed=seed)
    for edge in ("repeated index", "empty index", "1-D x", "saves only index"):
        covers(edge)
    values = {"x": sample((5, 3), device), "index": torch.tensor([4, 0, 4], device=device)}
    check_each_input_alone(IndexSelect, SELECT, values)
    check_noncontiguous_grad_output(IndexSelect, SELECT, values)
    # a transposed grad_output (2-D and 3-D x): no flattening .view reaches its rows
    for x_shape in ((5, 3), (5, 2, 3)):
        with case(f"x of shape {x_shape}, a transposed grad_output"):
            check_transposed_grad_output(IndexSelect, SELECT, {**values,
                                                               "x": sample(x_shape, device)})
    strided = torch.tensor([4, 9, 0, 9, 4, 9], device=device)[::2]
    with case("x of shape (5, 3), index=[4, 0, 4], every other entry of a longer index"):
        forward = run_forward(IndexSelect, SELECT, {"x": sample((5, 3), device).requires_grad_(),
                                                    "index": strided})  # kept strided
        check_saves_index_only(forward, strided)
    check_gradcheck(IndexSelect, SELECT, {"x": sample((3, 2, 2), device),
                                          "index": torch.tensor([0, 2, 0, 0], device=device)})
    check_dense_backward(IndexSelect, device)
    check_strided_rows(IndexSelect, device)
    covers("3-D x transposed or expanded")
    check_scalar_x(IndexSelect, device)  # last: the one x torch takes with no rows
    covers("0-d x")


# x of shape (4, 2, 3) in two layouts a flattening view refuses, and a 0-d x
STRIDED_ROWS = [(", a (2, 4, 3) tensor transposed in dims 0 and 1, not contiguous",
                 lambda device: sample((2, 4, 3), device, seed=4).transpose(0, 1)),
                (", expanded from (4, 1, 3), a stride of 0 in dim 1",
                 lambda device: sample((4, 1, 3), device, seed=5).expand(4, 2, 3))]


def check_strided_rows(function, device) -> None:
    """A 3-D x whose rows no view of shape (n, -1) reaches: rule 1's layouts, on the shape where
    a flattening view fails (a 2-D x keeps its shape under view(n, -1), whatever its strides)."""
    index = [3, 0, 3]
    for layout, make in STRIDED_ROWS:
        x = make(device)
        values = {"x": x, "index": torch.tensor(index, device=device)}
        try:
            with case(described(values, torch.float64) + f", index={index}, x{layout}"):
                forward, _ = graded_case(function, SELECT, values)
                check_saves_index_only(forward, values["index"])
        except GradingError as error:
            if "view size is not compatible" not in str(error):
                raise
            raise GradingError(f"IndexSelect refused an x of shape (4, 2, 3){layout}: "
                               "view size is not compatible with input tensor's size and stride "
                               "(.view never copies, so it needs strides it can reinterpret; "
                               ".reshape takes every layout, and index_select on x itself needs "
                               f"no flattening) {rule_reference('values')}", str(error),
                               mistake="IndexSelect/view-on-strided-x") from error
        except NotImplementedError:
            raise
        except Exception as error:  # noqa: BLE001 - the learner's code may raise anything
            message = (str(error).splitlines() or [""])[0]
            raise GradingError(f"IndexSelect raised {type(error).__name__} ({message}) on an x of "
                               f"shape (4, 2, 3){layout}, index={index}, which "
                               f"torch.index_select takes {rule_reference('values')}") from error


NO_ROWS = ("a 0-d x has no dim 0 (x.shape[0], x[k] and grad_output[k] do not exist there): "
           "which line of yours assumes one, where x.shape kept whole would not?")


def check_scalar_x(function, device) -> None:
    """A 0-d x with index [0]: torch.index_select takes it (one entry, at position 0) and
    returns a 0-d output, whose gradient is grad_output; x.shape[0] does not exist there."""
    values = {"x": sample((), device, seed=3), "index": torch.tensor([0], device=device)}
    said = ("a 0-d x with index=[0], which torch.index_select takes (its one entry, at "
            "position 0), returning a 0-d output whose gradient is grad_output")
    try:
        with case(described(values, torch.float64) + ", index=[0]"):
            forward, _ = graded_case(function, SELECT, values)
            check_saves_index_only(forward, values["index"])
    except GradingError as error:
        if not error.hint.startswith(("IndexSelect.forward raised",
                                      "IndexSelect.backward raised")):
            raise
        raise GradingError(f"{error.hint.split(' with ')[0]} on {said}: {NO_ROWS} "
                           f"{rule_reference('values')}",
                           str(error), mistake="IndexSelect/raises-on-0-d") from error
    except NotImplementedError:
        raise
    except Exception as error:  # noqa: BLE001 - the learner's code may raise anything
        message = (str(error).splitlines() or [""])[0]
        raise GradingError(f"IndexSelect raised {type(error).__name__} ({message}) on {said}: "
                           f"{NO_ROWS} {rule_reference('values')}",
                           mistake="IndexSelect/raises-on-0-d") from error

def select_values(device, dtype=torch.float64, seed=0) -> dict:
    """x of shape (4, 3) or (6, 2), and an index with repeats, each by seed: two seeds in a row
    give two shapes of x, rows and columns both (x's shape, or part of it, kept outside ctx
    meets the other call's)."""
    index = torch.tensor([[3, 0, 3, 1, 3], [2, 2, 0]][seed % 2], device=device)
    return {"x": sample(((4, 3), (6, 2))[seed % 2], device, seed=seed, dtype=dtype),
            "index": index}
