"""Lesson 10's GroupNormFunction: the reference (F.group_norm as composed ops, whose backward
autograd gives for every weight and bias; in torch 2.13 on CPU, F.group_norm's own raises
"tensor does not have a device" when weight is None and bias is given) and its inputs."""

import torch

from ...checks import Spec
from ...exercise import sample

NAME = "GroupNormFunction"


def group_norm(x, num_groups, weight, bias, eps, *, eps_outside_root=False, eps_floor=False):
    """F.group_norm as composed ops: each group of C / num_groups channels (with every
    position of those channels) is one row, normalised; then the per-channel weight and bias.
    ``eps_outside_root``: rstd = 1 / (sqrt(variance) + eps), and ``eps_floor``:
    rstd = 1 / sqrt(max(variance, eps)), a learner's slips."""
    N, C = x.shape[:2]
    rows = x.reshape(N, num_groups, (C // num_groups) * x.shape[2:].numel())  # N may be 0
    mean = rows.mean(-1, keepdim=True)
    centred = rows - mean
    variance = centred.square().mean(-1, keepdim=True)
    rstd = (1 / (variance.sqrt() + eps) if eps_outside_root else
            variance.clamp_min(eps).rsqrt() if eps_floor else torch.rsqrt(variance + eps))
    y = (centred * rstd).reshape(x.shape)
    per_channel = (C,) + (1,) * (x.dim() - 2)
    if weight is not None:
        y = y * weight.reshape(per_channel)
    if bias is not None:
        y = y + bias.reshape(per_channel)
    return y


GROUP_NORM = Spec(NAME, ("x", "num_groups", "weight", "bias", "eps"), group_norm)
def gn_values(shape, num_groups, device, *, weight=True, bias=True, seed=0,
              dtype=torch.float64, eps=1e-5) -> dict:
    C = shape[1]
    return {"x": sample(shape, device, seed=seed, dtype=dtype) * 2 + 0.5,
            "num_groups": num_groups,
            "weight": (1 + 0.5 * sample((C,), device, seed=seed + 1, dtype=dtype)
                       if weight else None),
            "bias": sample((C,), device, seed=seed + 2, dtype=dtype) if bias else None,
            "eps": eps}


def describe(values: dict) -> str:
    parts = [f"x of shape {tuple(values['x'].shape)}", f"num_groups={values['num_groups']}"]
    parts += [f"{n}=None" for n in ("weight", "bias") if values[n] is None]
    return ", ".join(parts + [str(values["x"].dtype).removeprefix("torch.")])
