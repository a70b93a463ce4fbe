"""Lesson 12's ClipGradientNorm: backward scales each row of grad_output (last dim) whose norm
is above max_norm down to norm max_norm, and passes the others unchanged; forward is x itself.
gradcheck would reject it by design, so backward is compared with the intended surgery, on rows
far below, far above, exactly at max_norm and at zero norm."""

import torch

from ...checks import (Spec, case, check_backward_by_hand, check_is_function)
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample
from .clip_dtypes import UNDERFLOW_CASES, check_dtype_edges
from .max_norm_ends import check_clip_max_norm_ends
from .surgery_checks import (Intended, check_strided, matches, strided_grad_output,
                             surgery_case)

CLIP = Spec("ClipGradientNorm", ("x", "max_norm"), lambda x, max_norm: x)
CLIP_SHAPES = [(8, 3), (2, 3, 4), (6,), (5, 3), (4, 1), (1, 7)]  # rows are the last dim


def clipped(grad_output: torch.Tensor, max_norm: float) -> torch.Tensor:
    """Each row (last dim) of norm above ``max_norm`` scaled down to norm ``max_norm``."""
    norms = torch.linalg.vector_norm(grad_output, dim=-1, keepdim=True)
    return torch.where(norms > max_norm, grad_output * (max_norm / norms), grad_output)


def clip_grad_output(shape, device, *, max_norm: float, seed: int = 0,
                     dtype=torch.float64) -> torch.Tensor:
    """Rows far below, far above, exactly at (3-4-5 scaled) and at zero norm, in turn."""
    grad = sample(shape, device, seed=seed, dtype=dtype)
    rows = grad.reshape(-1, shape[-1])
    for i in range(rows.shape[0]):
        kind = i % 4
        norm = torch.linalg.vector_norm(rows[i])
        if kind == 0:
            rows[i] *= 4 * max_norm / norm
        elif kind == 1:
            rows[i] *= 0.5 * max_norm / norm
        elif kind == 2 and shape[-1] >= 2:
            rows[i] = 0
            rows[i, :2] = torch.tensor([0.6, 0.8], dtype=dtype) * max_norm  # norm max_norm
        elif kind == 3:
            rows[i] = 0
    return rows.reshape(shape)


def check_clip(function, x: torch.Tensor, max_norm: float, *, seed: int = 0):
    grad_output = clip_grad_output(x.shape, x.device, max_norm=max_norm, seed=seed + 1,
                                   dtype=x.dtype)
    pristine = grad_output.clone()
    forward, backward = surgery_case(function, CLIP, x, max_norm, grad_output)
    got, expected = backward.grads[0], clipped(pristine, max_norm)
    total = torch.linalg.vector_norm(pristine)
    mistakes = [
        (pristine * min(1.0, max_norm / total.item()),
         "clips by the norm of the whole gradient, as clip_grad_norm_ does: clip each row "
         "(last dim) by its own L2 norm"),
        (pristine.clamp(-max_norm, max_norm),
         "clamps each element to [-max_norm, max_norm]: clip each row's L2 norm instead"),
        (pristine * max_norm / torch.linalg.vector_norm(pristine, dim=-1, keepdim=True)
         .clamp(min=1e-300),
         "scales every row to norm max_norm, the small ones up too: rows at or below max_norm "
         "pass unchanged"),
    ]
    squares = (pristine * pristine).sum(-1, keepdim=True)
    squared = torch.where(squares > max_norm, pristine * (max_norm / squares.sqrt()), pristine)
    at_one = clipped(pristine, 1.0)
    if not torch.allclose(at_one, pristine) and not torch.allclose(at_one, squared):
        # only where clipping at 1 is neither no clipping nor the squared comparison
        mistakes.append((at_one, "clips rows at norm 1 whatever max_norm is: where does max_norm "
                                 "enter your factor? Hint 4's rows at max_norm = 2 show it"))
    mistakes.append((squared, f"compares each row's squared norm with max_norm: at "
                              f"max_norm={max_norm:g} it misjudges the rows whose norm lies "
                              "between max_norm and sqrt(max_norm). Compare the norm with "
                              "max_norm (or the squared norm with max_norm ** 2)"))
    if pristine.dim() >= 2:
        columns = torch.linalg.vector_norm(pristine, dim=-2, keepdim=True)
        mistakes.append((torch.where(columns > max_norm, pristine * (max_norm / columns),
                                     pristine),
                         "clips columns (the norm over dim -2): clip each row, the norm over "
                         "the last dim"))
    if pristine.dim() >= 3:  # in 2-D a slice along dim 0 is a row
        slices = torch.linalg.vector_norm(pristine.flatten(1), dim=1).reshape(
            (-1,) + (1,) * (pristine.dim() - 1))
        mistakes.append((torch.where(slices > max_norm, pristine * (max_norm / slices),
                                     pristine),
                         f"clips each slice along dim 0 by one norm over all its other dims "
                         f"(grad_output of shape {tuple(pristine.shape)}, as if dim 0 held the "
                         "samples): a row is the last dim, and each row of a 3-D grad_output "
                         "is clipped by its own norm"))
    if isinstance(got, torch.Tensor) and got.shape == expected.shape:
        rows = torch.linalg.vector_norm(pristine, dim=-1) > 0  # a mistake may divide by 0 there
        for candidate, hint in mistakes:
            if matches(got[rows], candidate[rows], expected[rows]):
                raise GradingError(f"ClipGradientNorm {hint}", mistake={
                    "clips by the norm of the whole gradient": "ClipGradientNorm/whole-norm",
                    "clamps each element": "ClipGradientNorm/clamps-elements",
                    "scales every row to norm max_norm": "ClipGradientNorm/scales-small-rows-up",
                    "clips rows at norm 1 whatever": "ClipGradientNorm/ignores-max-norm",
                    "compares each row's squared norm": "ClipGradientNorm/squared-norm-compared",
                    "clips columns": "ClipGradientNorm/clips-columns",
                    "clips each slice along dim 0": "ClipGradientNorm/clips-dim0-slices"})
        if not torch.isfinite(got).all():
            raise GradingError("ClipGradientNorm's gradient has nan or inf where a row of "
                               "grad_output is all zeros: a row of norm 0 is below max_norm and "
                               "passes unchanged (divide only where the norm exceeds max_norm)",
                               mistake="ClipGradientNorm/nan-on-zero-row")
    # no eps: the factor is max_norm / norm to float64's rounding, at every max_norm (an eps
    # added to the norm, as torch.renorm's 1e-7, is 1e-7 / norm of the gradient, a relative
    # error an absolute tolerance hides once max_norm is small; 1e-12 at max_norm 1e-3 is a
    # relative 2.5e-10, far above float64's rounding, so the bound is 1e-12)
    if isinstance(got, torch.Tensor) and got.shape == expected.shape and \
            not torch.allclose(got, expected, rtol=1e-12, atol=0) and \
            torch.allclose(got, expected, rtol=1e-2, atol=0):
        off = f"{((got - expected).abs() / expected.abs().clamp(min=1e-300)).max():.1g}"
        rounded = float(torch.tensor(max_norm, dtype=torch.float32))
        if rounded != max_norm and torch.allclose(got, clipped(pristine, rounded), rtol=1e-12,
                                                  atol=0):
            raise GradingError(f"ClipGradientNorm computes with a float32 constant in float64 "
                               f"arithmetic: its clipped rows are off by a relative {off} at "
                               f"max_norm={max_norm:g}, exactly what max_norm rounded to float32 "
                               "gives. Which tensor holds max_norm, and in what dtype?",
                               mistake="ClipGradientNorm/float32-constant")
        grown = (got.abs() - expected.abs()) / expected.abs().clamp(min=1e-300)
        if grown.max() > 1e-12 and grown.abs().max() < 2 ** -22:  # an eps only shrinks a row
            raise GradingError(f"ClipGradientNorm computes a step in float32 in float64 "
                               f"arithmetic: its clipped rows are off by a relative {off} at "
                               f"max_norm={max_norm:g}, some of them too long (an eps added to "
                               "the norm only shortens them), float32's rounding. Which of your "
                               "tensors is float32?", mistake="ClipGradientNorm/float32-step")
        if _float32_step(function, got.device):
            # float32 rounds to a relative 6e-8, float16 and bfloat16 to 5e-4 and 4e-3
            low = "float32" if float(off) < 2 ** -16 else "float16 (or bfloat16)"
            raise GradingError(f"ClipGradientNorm computes its factor in {low} arithmetic for "
                               f"float64 rows: its clipped rows are off by a relative {off} at "
                               f"max_norm={max_norm:g}, and rows of norm 1e8 too, where an eps "
                               f"added to the norm would be lost: {low}'s rounding. Which of "
                               f"your tensors is {low} (a .float() or .half(), a narrower "
                               "constant)?", mistake="ClipGradientNorm/float32-factor")
        raise GradingError(f"ClipGradientNorm's clipped rows are off by a relative {off} at "
                           f"max_norm={max_norm:g}: the factor is max_norm / norm exactly, "
                           "with nothing added to the norm (an eps, as torch.renorm's, shows once "
                           "the norms are small)", mistake="ClipGradientNorm/eps-in-norm")
    diagnose_gradient("x", got, expected)
    return forward, backward

def _float32_step(function, device) -> bool:
    """Rows of norm about 1e8 at max_norm 3: an eps up to 1e-3 on the norm moves their factor
    by less than 1e-11, float32's rounding by about 1e-8."""
    grad_output = torch.tensor([[61234567.891, 80123456.789], [1e8 / 3, 7e7 / 3],
                                [9.87654321e7, 1.23456789e7]], dtype=torch.float64,
                               device=device)
    got = surgery_case(function, CLIP, sample((3, 2), device, seed=45), 3.0,
                       grad_output.clone())[1].grads[0]
    expected = clipped(grad_output, 3.0)
    return isinstance(got, torch.Tensor) and got.shape == expected.shape and bool(
        ((got - expected).abs() > 1e-9 * expected.abs()).any())


# rows just above max_norm, as multiples of it: a slack on the threshold leaves them unclipped
THRESHOLD_SLACKS = {torch.float64: (1 + 2 ** -40, 1.0005, 1.005),
                    torch.float32: (1 + 2 ** -16, 1.0005, 1.005)}


def check_threshold(function, device) -> None:
    """Every row above max_norm is clipped, however slightly above: rows of norm
    max_norm * (1 + 2^-40) (float32: 1 + 2^-16), * 1.0005 and * 1.005, beside a row at
    max_norm exactly, which passes unchanged."""
    for dtype, slacks in THRESHOLD_SLACKS.items():
        for max_norm in (1.0, 0.2, 3.0):
            rows = [[0.6 * max_norm * f, 0.8 * max_norm * f, 0.0] for f in (1.0,) + slacks]
            grad_output = torch.tensor(rows, dtype=torch.float64).to(device, dtype)
            with case(f"x of shape {tuple(grad_output.shape)} in {dtype}, max_norm={max_norm:g}, "
                      "rows of norm just above max_norm"):
                _, backward = surgery_case(function, CLIP, sample(grad_output.shape, device,
                                                                  seed=44, dtype=dtype),
                                           max_norm, grad_output.clone())
                got, expected = backward.grads[0], clipped(grad_output, max_norm)
                if not (isinstance(got, torch.Tensor) and got.shape == expected.shape):
                    continue
                for row, f in enumerate(slacks, start=1):
                    if torch.equal(got[row], grad_output[row]) and \
                            not torch.equal(expected[row], grad_output[row]):
                        raise GradingError(
                            f"ClipGradientNorm left a row of norm {f:.13g} * max_norm unclipped "
                            f"(max_norm={max_norm:g}, {str(dtype).removeprefix('torch.')}): "
                            "a slack on the threshold (norms "
                            "> max_norm * (1 + something), or a tolerance): every row above "
                            "max_norm, however slightly, is brought to norm max_norm",
                            mistake="ClipGradientNorm/slack-on-threshold")
                diagnose_gradient("x", got, expected)


# (dtype, max_norm, rows below max_norm or at zero, what the case says): float64 rows of norm
# 5e-13 and 5e-14, which a clamp or an eps on the norm (F.normalize's 1e-12) scales
TINY_ROWS = (
    (torch.float64, 1.0, ([3e-13, 4e-13, 0.0], [0.0, 3e-14, 4e-14], [0.0, 0.0, 0.0]),
     "rows of norm 5e-13 and 5e-14"),
    (torch.float64, 1e-3, ([3e-13, 4e-13, 0.0], [0.0, 3e-14, 4e-14], [1e-4, 3e-4, 7e-5]),
     "rows of norm 5e-13, 5e-14 and 3.2e-4"),
)
# rows that a division by max_norm and a product by it round (in float16 at max_norm 1e3,
# g / 1e3 falls below the normal numbers): graded after max_norm's ends, which name the order
ROUNDED_ROWS = (
    (torch.float64, 3.0, ([0.1, 0.7, 0.3], [1.1, -0.9, 0.2]), "rows of norm 0.77 and 1.4"),
    (torch.float32, 3.0, ([0.1, 0.7, 0.3], [1.1, -0.9, 0.2]), "rows of norm 0.77 and 1.4"),
    (torch.float16, 1e3, ([1e-3, 2e-3, 3e-4], [0.1, 0.7, 0.3]), "rows of norm 2.3e-3 and 0.77"),
    (torch.float16, 3.0, ([0.1, 0.7, 0.3], [1.1, -0.9, 0.2]), "rows of norm 0.77 and 1.4"),
    # max_norm values float16 rounds (0.3 -> 0.2998, 1e-3 -> 0.0010004): a clamp of the norms
    # to max_norm in float16 gives an unclipped row the factor 0.3 / 0.2998, not 1
    (torch.float16, 0.3, ([0.06, 0.08, 0.0], [0.1, 0.1, -0.1]), "rows of norm 0.1 and 0.17"),
    (torch.float16, 1e-3, ([3e-4, 4e-4, 0.0], [2e-4, -1e-4, 2e-4]), "rows of norm 5e-4 and 3e-4"),
)


def check_unclipped_rows(function, device, cases) -> None:
    """Rows at or below max_norm come back bit for bit, in every dtype."""
    for dtype, max_norm, rows, what in cases:
        kind = str(dtype).removeprefix("torch.")
        grad_output = torch.tensor(rows, dtype=dtype, device=device)
        with case(f"a {kind} grad_output of shape {tuple(grad_output.shape)}, "
                  f"max_norm={max_norm:g}, {what}"):
            _, backward = surgery_case(function, CLIP, sample(grad_output.shape, device, seed=40,
                                                              dtype=dtype),
                                       max_norm, grad_output.clone())
            got = backward.grads[0]
            if not isinstance(got, torch.Tensor) or got.shape != grad_output.shape:
                continue  # the float64 cases name a missing or odd gradient
            for row, values in enumerate(grad_output):
                if not torch.equal(got[row], values):
                    norm = torch.linalg.vector_norm(values.double()).item()
                    raise GradingError(
                        f"ClipGradientNorm changed a {kind} row of norm {norm:.2g}, below "
                        f"max_norm={max_norm:g}: it returns {got[row].tolist()} for "
                        f"{values.tolist()}. A row at or below max_norm comes back unchanged, "
                        "bit for bit: a clamp or an eps on the norm (as F.normalize's 1e-12) "
                        "scales it, a division by max_norm and a product by it round it (in "
                        "float16, g / 1e3 falls below the normal numbers). Give these rows "
                        "factor 1, or the row itself by torch.where",
                        mistake="ClipGradientNorm/changes-unclipped-row")


INTENDED_CLIP = Spec("ClipGradientNorm", ("x", "max_norm"),
                     lambda x, max_norm: Intended.apply(x, max_norm, clipped))


def clip_full(ClipGradientNorm, device) -> None:
    function = check_is_function(ClipGradientNorm, CLIP)
    for seed, shape in enumerate(CLIP_SHAPES):
        for max_norm in (1.0, 3.0, 0.25, 1e-3):  # 3.0 before 0.25: see check_clip
            with case(f"x of shape {shape}, max_norm={max_norm}, rows of grad_output above, "
                      "below, at max_norm and zero"):
                _, backward = check_clip(function, sample(shape, device, seed=seed),
                                         max_norm, seed=seed)
    for edge in ("1-D x", "3-D x", "a row of zeros", "a row at max_norm exactly"):
        covers(edge)
    check_threshold(function, device)
    check_unclipped_rows(function, device, TINY_ROWS)
    check_dtype_edges(function, CLIP, device)
    check_clip_max_norm_ends(function, CLIP, device)
    check_dtype_edges(function, CLIP, device, UNDERFLOW_CASES)
    check_unclipped_rows(function, device, ROUNDED_ROWS)
    covers("float32 and float16 rows at the edges of their range")
    check_backward_by_hand(CLIP, backward)
    check_each_input_alone(function, INTENDED_CLIP, {"x": sample((5, 3), device), "max_norm": 1.0})
    grad_output = strided_grad_output((2, 4, 3), device, seed=6)
    check_strided(function, CLIP, {"x": sample((2, 4, 3), device), "max_norm": 1.0}, grad_output,
                  {"x": clipped(grad_output, 1.0)})
