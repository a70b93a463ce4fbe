"""Lesson 09's Normalize: rows whose norms sit on either side of eps, the kink where the
gradient changes formula, close enough that a test in backward that is not exact (a norm in
a narrower dtype, |y| for the norm, isclose, a safety margin) puts a row in the wrong case."""

import functools

import torch
import torch.nn.functional as F

from ...checks import make_inputs, reference_gradients
from ...errors import GradingError
from ...exercise import sample
from .pattern_cases import gradient_for


def just_below(eps: float, dtype) -> torch.Tensor:
    """The largest number of ``dtype`` below ``eps`` as ``dtype`` holds it."""
    eps = torch.tensor(eps, dtype=dtype)
    return torch.nextafter(eps, torch.zeros_like(eps))


def _one_entry(value: torch.Tensor, width: int, device) -> torch.Tensor:
    """A row whose only nonzero entry is ``value``: its norm is that entry exactly."""
    row = torch.zeros(width, dtype=value.dtype, device=device)
    row[0] = value
    return row


def near_eps_rows(eps: float, width: int, device, dtype, seed: int = 6) -> torch.Tensor:
    """Three rows below eps yet close to it, where |y| = norm / eps is close to 1: norms 0.9 eps
    and (1 - 1e-6) eps (apart from eps in float32 too), and one ulp below eps (a single entry,
    so that the norm is that entry exactly)."""
    direction = F.normalize(sample((width,), device, seed=seed, dtype=dtype), dim=-1)
    rows = torch.stack([direction * (0.9 * eps), direction.flip(0) * ((1 - 1e-6) * eps),
                        _one_entry(just_below(eps, dtype), width, device)])
    assert (torch.linalg.vector_norm(rows, dim=-1) < torch.tensor(eps, dtype=dtype)).all()
    return rows


def _one_ulp_above(eps: torch.Tensor, width: int, device, seed: int,
                   rounding_below: bool = True) -> torch.Tensor:
    """A row of no special direction whose norm is one ulp above ``eps``: a row of a single
    entry has one, but its gradient there is 0 up to rounding (y = (1, 0, ...)), which no
    tolerance scaled to the entries tells from a wrong one. Where ``rounding_below`` and a
    search finds one and ``device`` computes its norm above eps too, a row whose |y| * norm
    rounds below eps (_length_rounding_below); otherwise each try scales a direction one ulp at
    a time towards that norm, the closest norm above eps found kept if none lands on it."""
    below = _length_rounding_below(eps.item(), eps.dtype, width) if rounding_below else None
    eps = eps.to(device)
    if below is not None and torch.linalg.vector_norm(below.to(device)) > eps:
        return below.to(device)  # found on the CPU: another device's norm may round it to eps
    target, best = torch.nextafter(eps, 2 * eps), None
    for k in range(8):
        direction = F.normalize(sample((width,), device, seed=seed + k, dtype=eps.dtype), dim=-1)
        scale = target.clone()
        for _ in range(8):
            row = direction * scale
            norm = torch.linalg.vector_norm(row)
            if norm > eps and (best is None or norm < best[0]):
                best = (norm, row)
            if norm == target:
                return row
            scale = torch.nextafter(scale, 2 * scale if norm < target else 0 * scale)
    return best[1]


def _land(directions: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Each row of unit ``directions`` scaled, one ulp at a time, towards the norm ``target``."""
    scale = target.expand(len(directions), 1).clone()
    for _ in range(8):
        norm = torch.linalg.vector_norm(directions * scale, dim=-1, keepdim=True)
        step = torch.where(norm < target, 2 * scale, 0 * scale)
        scale = torch.where(norm == target, scale, torch.nextafter(scale, step))
    return directions * scale


@functools.lru_cache(maxsize=None)
def _length_rounding_below(eps: float, dtype: torch.dtype, width: int) -> torch.Tensor | None:
    """A row (on the CPU) whose norm is one ulp above ``eps`` held in ``dtype``, yet whose
    computed |y| = |row / norm| rounds so far below 1 that |y| * norm < eps: a backward that
    rebuilds the norm from the saved y and divisor calls it below eps. Rare (about 1 direction
    in 10^4 to 10^5, none at some eps), so found by a seeded search, once per (eps, dtype);
    None where 2^18 directions hold none."""
    held = torch.tensor(eps, dtype=dtype)
    target = torch.nextafter(held, 2 * held)
    generator = torch.Generator().manual_seed(9)
    for _ in range(8):
        directions = torch.randn(2 ** 15, width, generator=generator, dtype=torch.float64)
        rows = _land(F.normalize(directions, dim=-1).to(dtype), target)
        norm = torch.linalg.vector_norm(rows, dim=-1, keepdim=True)
        length = torch.linalg.vector_norm(rows / norm, dim=-1, keepdim=True)
        hit = ((norm == target) & (length * norm < held)).squeeze(-1).nonzero()
        if len(hit):
            return rows[hit[0, 0]].clone()
    return None


def rebuilt_norm_below(rows: torch.Tensor, eps: float) -> torch.Tensor:
    """Per row: above eps, yet |y| * max(norm, eps) < eps as computed in the rows' dtype."""
    held = torch.tensor(eps, dtype=rows.dtype, device=rows.device)
    divisor = torch.linalg.vector_norm(rows, dim=-1, keepdim=True).clamp_min(eps)
    length = torch.linalg.vector_norm(rows / divisor, dim=-1, keepdim=True)
    return ((divisor > held) & (length * divisor < held)).squeeze(-1)


def near_above_rows(eps: float, width: int, device, dtype, seed: int = 7) -> torch.Tensor:
    """Rows just above eps, where a test with a margin or isclose calls them below: one ulp
    above eps (where a search finds one, a row whose |y| * norm rounds below eps:
    _length_rounding_below), (1 + 1e-6) eps, and for eps <= 1e-8 a row of 1e3 eps, which isclose's default
    atol of 1e-8 still calls equal to eps."""
    direction = F.normalize(sample((width,), device, seed=seed, dtype=dtype), dim=-1)
    eps_held = torch.tensor(eps, dtype=dtype)
    rows = [_one_ulp_above(eps_held, width, device, seed + 1),
            direction * ((1 + 1e-6) * eps)]
    if eps <= 1e-8:
        rows.append(direction.flip(0) * (1e3 * eps))
    rows = torch.stack(rows)
    assert (torch.linalg.vector_norm(rows, dim=-1) > eps_held.to(device)).all()
    return rows


def rows_around_eps(device, dtype=torch.float64) -> tuple[torch.Tensor, float]:
    """Rows with norms 2, 0.5, 1e-3 and 0 against eps = 1e-2 (two above, two far below),
    then 0.9 eps, (1 - 1e-6) eps and one ulp below eps, then one ulp above eps and
    (1 + 1e-6) eps."""
    directions = F.normalize(sample((4, 5), device, seed=5, dtype=dtype), dim=-1)
    norms = torch.tensor([2.0, 0.5, 1e-3, 0.0], dtype=dtype, device=device)
    return torch.cat([directions * norms.unsqueeze(-1), near_eps_rows(1e-2, 5, device, dtype),
                      near_above_rows(1e-2, 5, device, dtype)]), 1e-2


AROUND_EPS = ("with row norms 2, 0.5, 1e-3, 0, 0.9 eps, (1 - 1e-6) eps, one ulp below eps, one "
              "ulp above eps and (1 + 1e-6) eps, eps=0.01")
BELOW, NEAR_ABOVE = slice(2, 7), slice(7, 9)  # rows of rows_around_eps: 4:7 just below


def check_near_above(function, spec, rows: torch.Tensor, eps: float, got: torch.Tensor,
                     truth: torch.Tensor, as_below: torch.Tensor) -> None:
    """Right on rows far above and on every row below eps, wrong on a row just above it:
    named where that row has the gradient of a row below eps, grad_output / eps; the cause
    named as the norm rebuilt from |y| x divisor only where a probe proves it."""
    details = (f"on the rows one ulp above eps and (1 + 1e-6) eps: got {got.tolist()}\n"
               f"expected {truth.tolist()}")
    wrong = torch.isclose(got, as_below).all(-1)
    if wrong.any() and rebuilt_from_length(function, spec, rows, eps, wrong):
        raise GradingError("Normalize's gradient on a row just above eps is grad_output / eps, "
                           "the gradient of a row below eps: backward rebuilt the norm as |y| "
                           "x divisor, and on this row |y| = |x / norm| rounds so far below 1 "
                           "that |y| x norm < eps (a row one ulp above eps whose |y| x norm does "
                           "not round below eps gets the right gradient): which quantity did "
                           f"forward compare with eps, and does backward have it? ({AROUND_EPS})",
                           details,
                           mistake="Normalize/near-above-as-below")
    if wrong.any():
        raise GradingError("Normalize's gradient on a row just above eps is grad_output / eps, "
                           "the gradient of a row below eps: the test in backward must be exact. "
                           "What does your backward compare with eps, and is it the very norm "
                           "forward compared (not one rebuilt from y, nor one with a margin)? "
                           f"({AROUND_EPS})", details,
                           mistake="Normalize/near-above-as-below")
    raise GradingError("Normalize's gradient is right on rows far above eps and on every row "
                       "below it, but wrong on a row just above eps: one ulp above, or (1 + 1e-6) "
                       f"eps; there the norm moves with x ({AROUND_EPS})", details,
                       mistake="Normalize/wrong-just-above-eps")


def rebuilt_from_length(function, spec, rows: torch.Tensor, eps: float,
                        wrong: torch.Tensor) -> bool:
    """Were exactly the rows whose |y| x norm rounds below eps given grad_output / eps, and is
    a row one ulp above eps whose |y| x norm does not right? isclose, a margin and a float32
    copy of the divisor all call that second row below eps."""
    rebuilt = rebuilt_norm_below(rows, eps)
    if not rebuilt.any() or not torch.equal(wrong.cpu(), rebuilt.cpu()):
        return False
    held = torch.tensor(eps, dtype=rows.dtype)
    kept = _one_ulp_above(held, rows.shape[-1], rows.device, seed=8, rounding_below=False)
    x = torch.stack([rows[rebuilt][0], kept])
    if rebuilt_norm_below(x, eps)[1]:
        return False
    try:
        got, truth, grad_output = gradient_for(function, spec, {"x": x, "eps": eps})
    except GradingError:
        return False
    if not isinstance(got, torch.Tensor) or got.shape != truth.shape:
        return False
    return bool(torch.isclose(got[0], grad_output[0] / eps).all()
                and torch.isclose(got[1], truth[1]).all())


def eps_as_float32(function, spec, rows: torch.Tensor, eps: float) -> bool:
    """Is the answer right with eps rounded to float32 (torch.tensor(eps) makes a float32
    tensor), where the misread ``rows`` have norms in [float32(eps), eps)? Checked on those rows
    and on a row one ulp below float32(eps): the rounded eps calls it below, a norm rounded to
    float32 (x.float()) calls it float32(eps), so above."""
    eps32 = float(torch.tensor(eps, dtype=torch.float32))
    norms = torch.linalg.vector_norm(rows, dim=-1)
    if eps32 == eps or rows.dtype != torch.float64 or not (
            (norms >= eps32) & (norms < eps)).all():
        return False
    under = _one_entry(just_below(eps32, rows.dtype), rows.shape[-1], rows.device)
    x = torch.cat([rows, under[None]])
    grad_output = sample(x.shape, x.device, seed=9, dtype=x.dtype)
    try:
        got, _, _ = gradient_for(function, spec, {"x": x, "eps": eps}, grad_output=grad_output)
    except GradingError:
        return False
    truth = reference_gradients(spec, make_inputs({"x": x, "eps": eps32}), grad_output)["x"]
    return (isinstance(got, torch.Tensor) and got.shape == truth.shape
            and bool(torch.isclose(got, truth).all()))


# an eps off the grid of reciprocals: 1 / (one ulp above eps) rounds to 1 / eps, in float64 and
# in float32 alike (as for many eps, though not for 0.01)
OFF_GRID_EPS = 9e-4


def check_off_grid_eps(function, spec, device) -> None:
    """Rows of one entry (the norm that entry exactly) one ulp above and one ulp below eps =
    9e-4, in float64 then float32: a test on a rounded quantity rather than the norm itself
    (1 / max(norm, eps) < 1 / eps) calls the row above eps below it at this eps,
    though it gets the rows around eps = 0.01 right. Rows exactly at eps are never tried (the
    contract leaves them out)."""
    for dtype in (torch.float64, torch.float32):
        held = torch.tensor(OFF_GRID_EPS, dtype=dtype)
        above = torch.nextafter(held, 2 * held)
        x = torch.stack([_one_entry(above, 4, device),
                         _one_entry(just_below(OFF_GRID_EPS, dtype), 4, device)])
        grad_output = 1 + sample(x.shape, device, seed=10, dtype=dtype).abs()
        got, truth, _ = gradient_for(function, spec, {"x": x, "eps": OFF_GRID_EPS},
                                     grad_output=grad_output)
        if not isinstance(got, torch.Tensor) or got.shape != truth.shape:
            return  # the graded cases name a missing or mis-shaped gradient
        scale = truth.abs().amax(-1, keepdim=True)
        wrong = ((got - truth).abs() > 1e-3 * scale).any(-1)
        if not wrong.any():
            continue
        where = (f"with x of shape (2, 4), rows of one entry one ulp above and one ulp below "
                 f"eps = 0.0009, {str(dtype)[6:]}")
        details = f"got {got.tolist()}\nexpected {truth.tolist()}"
        as_below = (got[0] - grad_output[0] / held.to(device)).abs() <= 1e-3 * scale[0]
        if wrong[0] and not wrong[1] and as_below.all():
            raise GradingError(
                "Normalize's gradient on a row one ulp above eps = 0.0009 is grad_output / eps, "
                "the gradient of a row below eps, though rows one ulp above eps = 0.01 get the "
                "right one: backward tested a rounded quantity, not the norm itself; one ulp "
                "above this eps, 1 / norm rounds to 1 / eps, so a test such as "
                "1 / max(norm, eps) < 1 / eps calls the row below eps: which quantity did forward "
                f"compare with eps, and does backward test that one? ({where})", details,
                mistake="Normalize/rounded-test-off-grid-eps")
        raise GradingError("Normalize's gradient is wrong on a row one ulp above or one ulp "
                           "below eps = 0.0009, though right around eps = 0.01: the test in "
                           "backward must tell the cases apart exactly at every eps "
                           f"({where})", details)


@functools.lru_cache(maxsize=None)
def _sum_of_squares_at_eps(eps: float, dtype: torch.dtype, width: int) -> torch.Tensor | None:
    """Two rows (on the CPU) whose norm as F.normalize computes it (torch.linalg.vector_norm,
    which x.norm calls) is one ulp below ``eps``, yet whose (x * x).sum(-1).sqrt() rounds to
    eps or above: about one landed row in ten in float64 at eps = 0.01; None where a seeded
    search finds fewer."""
    held = torch.tensor(eps, dtype=dtype)
    target = torch.nextafter(held, 0 * held)
    generator = torch.Generator().manual_seed(11)
    directions = torch.randn(256, width, generator=generator, dtype=torch.float64)
    rows = _land(F.normalize(directions, dim=-1).to(dtype), target)
    hit = ((torch.linalg.vector_norm(rows, dim=-1) < held)
           & ((rows * rows).sum(-1).sqrt() >= held)).nonzero().flatten()
    return rows[hit[:2]].clone() if len(hit) >= 2 else None


def check_norm_as_f_normalize(function, spec, device) -> None:
    """Rows one ulp below eps = 0.01 by F.normalize's norm, at eps or above by the textbook
    sqrt of a sum of squares, beside a row far above eps and one far below: a backward (or a
    forward's saved norm) that computes the norm as (x * x).sum(-1).sqrt() takes them for rows
    above eps and projects. The contract places a row by F.normalize's own norm."""
    eps = 1e-2
    found = _sum_of_squares_at_eps(eps, torch.float64, 5)
    if found is None:
        return
    held = torch.tensor(eps, dtype=torch.float64, device=device)
    near = found.to(device)
    near = near[(torch.linalg.vector_norm(near, dim=-1) < held)
                & ((near * near).sum(-1).sqrt() >= held)]  # another device may round otherwise
    if not len(near):
        return
    far = F.normalize(sample((2, 5), device, seed=12), dim=-1) * torch.tensor(
        [[2.0], [1e-3]], dtype=torch.float64, device=device)
    x = torch.cat([far, near])
    got, truth, grad_output = gradient_for(function, spec, {"x": x, "eps": eps})
    if not isinstance(got, torch.Tensor) or got.shape != truth.shape:
        return  # the graded cases name a missing or mis-shaped gradient
    right = torch.isclose(got, truth).all(-1)
    if right.all() or not right[:2].all():
        return  # wrong far from eps too: the other checks name it
    where = (f"with x of shape {tuple(x.shape)}: a row of norm 2, one of norm 1e-3, and "
             f"{len(near)} whose norm as F.normalize computes it is one ulp below eps, eps=0.01")
    details = f"got {got[2:].tolist()}\nexpected {truth[2:].tolist()}"
    norm = (near * near).sum(-1, keepdim=True).sqrt()
    y, g = near / norm, grad_output[2:]
    projected = (g - y * (y * g).sum(-1, keepdim=True)) / norm
    if torch.isclose(got[2:], projected).all():
        raise GradingError("Normalize's gradient on a row one ulp below eps by F.normalize's "
                           "norm is that of a row above eps: your norm is not F.normalize's; "
                           "(x * x).sum(-1).sqrt() rounds this row's norm to eps or above, and "
                           "the contract places a row by F.normalize's own norm: which op "
                           f"computes that norm? ({where})", details,
                           mistake="Normalize/norm-not-f-normalize")
    raise GradingError("Normalize's gradient is wrong on a row whose norm, as F.normalize "
                       "computes it, is one ulp below eps, though right far above and far "
                       "below eps: does backward place the row by the same norm as F.normalize, "
                       f"x.norm(dim=-1), tested against eps exactly? ({where})", details)
