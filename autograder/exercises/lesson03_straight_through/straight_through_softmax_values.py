"""StraightThroughSoftmax's inputs: random logits, tied and near-tied maxima (one ulp apart,
some tied by a softmax or by dividing by tau), rows of far-apart magnitude, and float32 logits
whose softmax at a low temperature overflows exp unless shifted."""

import torch

from ...exercise import sample


def values(shape, device, *, tau=0.7, seed=0, dtype=torch.float64) -> dict:
    return {"logits": 1.5 * sample(shape, device, seed=seed, dtype=dtype), "tau": tau}


def tied_values(device, dtype=torch.float64) -> dict:
    """Rows with a tied maximum (torch.argmax picks the first) and a row of equal logits."""
    rows = [[0.5, 2.0, 2.0, -1.0], [3.0, -2.0, 1.0, 3.0], [0.0, 0.0, 0.0, 0.0]]
    return {"logits": torch.tensor(rows, dtype=dtype, device=device), "tau": 0.5}


def overflow_values(device) -> dict:
    """float32 rows with a near tie at tau = 0.1: logits / tau reaches 120, past exp's float32
    overflow at 88.7, where the softmax and its gradient are finite and not small."""
    rows = [[12.0, 11.8, -2.0, 0.5], [-3.0, 9.5, 9.0, 1.0]]
    return {"logits": torch.tensor(rows, dtype=torch.float32, device=device), "tau": 0.1}


# Logits a whose next float up is equal to a once divided by tau (first of each pair), or once
# multiplied by 1 / tau (second): about 15% of one-ulp pairs collide at tau = 0.7 or 10 (never
# at a power of two); both, since CUDA may divide by a scalar as a product with its reciprocal.
_SCALED_TIES = {(torch.float64, 0.7): (0.704,), (torch.float32, 0.7): (0.701,),
                (torch.float64, 10.0): (0.627, 0.628), (torch.float32, 10.0): (0.626, 0.631)}


def near_ties(device, dtype, tau=0.5) -> dict:
    """Maxima one ulp above the runner-up (one row with two tied): an argmax of rounded logits
    ties and picks first, and so, at tau = 10, does an argmax of their softmax; then 1e-20 above
    0, which a softmax ties at any tau, and 4e-17, which float64's softmax ties at tau = 1, not
    at tau = 0.5. At tau = 10 a row keeps the two first apart: 1e-9 (float64) or 1e-3 (float32)
    above the runner-up, a tie only once rounded. Last, at tau = 0.7 and 10, maxima one ulp
    above the runner-up that logits / tau (or logits * (1 / tau)) ties."""
    one = torch.tensor(1.0, dtype=dtype)
    up = torch.nextafter(one, torch.tensor(2.0, dtype=dtype)).item()
    rows = [[1.0, up, 0.2, -1.0], [up, 1.0, 1.0, 0.0], [-0.5, 1.0, up, up],
            [0.0, 1e-20, -1.0, -2.0], [0.0, 4e-17, -1.0, -2.0]]
    if tau > 1:
        rows.append([0.0, 1.0, 1.0 + (1e-9 if dtype == torch.float64 else 1e-3), -0.5])
    for a in _SCALED_TIES.get((dtype, tau), ()):
        low = torch.tensor(a, dtype=dtype)
        rows.append([a, torch.nextafter(low, 2 * low).item(), 0.2, -1.0])
    return {"logits": torch.tensor(rows, dtype=dtype, device=device), "tau": tau}


def rows_apart(device, dtype) -> dict:
    """A row of magnitude 1000 beside rows of magnitude 1: a shift by the whole tensor's
    maximum underflows every exp of the small rows."""
    rows = [[0.0, 1.0, -1.0, 0.5], [1000.0, 0.0, 2.0, 999.5], [-2.0, 0.3, 0.1, 0.0]]
    return {"logits": torch.tensor(rows, dtype=dtype, device=device), "tau": 0.7}


LOWEST_TAU = 1e-3  # the contract's floor for tau


def low_tau(device) -> dict:
    """float64 logits a few thousandths apart at the contract's lowest tau: the softmax is far
    from one-hot and its gradient of order 1 / tau, so a tau floored or rounded up (such as
    max(tau, 0.01), "for stability") gives another gradient."""
    rows = [[0.0, 0.0004, -0.0007, 0.0012], [0.7040, 0.7041, 0.2, 0.7035],
            [-1.0, 0.5, 0.5005, 0.4995]]
    return {"logits": torch.tensor(rows, dtype=torch.float64, device=device), "tau": LOWEST_TAU}
