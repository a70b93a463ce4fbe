"""Lesson 13: what names a cause in rms_norm_rows's batteries (rms_norm_rows.py), each from a
gradient taken with grad_output all ones: a weight gradient that is one row's contribution per
column (programs storing into one shared row), and a row gradient that is the path through
y_j alone."""

import torch


def _normalised(values: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """x's rows in float64 and their rstd = 1 / sqrt(mean(x^2) + eps), shaped to broadcast."""
    rows = values["x"].detach().double()
    return rows, torch.rsqrt(rows.pow(2).mean(-1, keepdim=True) + values["eps"])


def one_rows_contribution_per_column(got: torch.Tensor, values: dict) -> bool:
    """The signature of programs storing into one shared row: each entry of the weight
    gradient is the contribution of a single row (the last program to write it), not the sum."""
    rows, rstd = _normalised(dict(values, x=values["x"].reshape(-1, values["x"].shape[-1])))
    contributions = rows * rstd  # grad_output is ones: row r adds x_hat_r to the gradient
    close = torch.isclose(got.detach().double()[None, :], contributions, rtol=1e-4, atol=1e-6)
    return bool(close.any(0).all())


def direct_path_only(got_x: torch.Tensor, values: dict) -> bool:
    """grad_x = rstd * weight (grad_output ones): the path from x_j through y_j alone, with r's
    dependence on every x_k of the row left out. The true gradient differs from it by
    rstd * x_hat_j * mean(weight * x_hat), which is not zero for the batteries' rows."""
    rows, rstd = _normalised(values)
    if not rows.numel() or got_x.shape != rows.shape:
        return False
    direct = rstd * values["weight"].detach().double()
    return bool(torch.allclose(got_x.detach().double(), direct, rtol=1e-4, atol=1e-6))
