"""Lesson 08: LogSumExp's spec and the inputs its battery tries: the (shape, dim) cases and
the values of x (3 times a sample, so that the weights differ)."""

import torch

from ...checks import Spec
from ...exercise import sample


LSE = Spec("LogSumExp", ("x", "dim"), lambda x, dim: torch.logsumexp(x, dim))


# (shape, dim): negative dims, 1-d to a 0-d result, a size-1 dim that is not reduced (a
# squeeze of every size-1 dim is wrong there), and a 0-size batch last
LSE_CASES = [((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -1), ((2, 3, 4), -2), ((2, 3, 4), 0),
             ((6,), 0), ((6,), -1), ((3, 1, 4), -1), ((0, 4), -1), ((4, 4), 0), ((2, 3, 3), 1)]


def lse_values(shape, device, *, seed=0, dim=1, dtype=torch.float64) -> dict:
    return {"x": 3 * sample(shape, device, seed=seed, dtype=dtype), "dim": dim}
