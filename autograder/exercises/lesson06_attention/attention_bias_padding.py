"""Lesson 06, AttentionWithBias: a -inf entry of a padding bias stays -inf, so a padded key
gets probability exactly 0 even where its score lies far above every visible one (Exercise 1's
large-score probe, its mask turned into a bias of 0 and -inf)."""

import torch

from ...checks import Spec, case, check_values_and_gradients, make_inputs
from ...errors import GradingError
from .attention_inputs import same as _close
from .attention_mask import masked_above_values


def padding_above_values(device) -> dict:
    """Exercise 1's large-score probe (``masked_above_values``) with its mask as a padding
    bias of 0 and -inf: visible scores about -7000 to -20000, padded keys' about +7000 to
    +20000, where only -inf (or a stand-in far below, such as finfo.min) keeps a padded key
    out; a finite stand-in such as bias.clamp(min=-1e4) lets it win."""
    values = masked_above_values(device)
    mask = values["mask"]
    bias = torch.zeros(mask.shape, dtype=values["Q"].dtype, device=mask.device)
    return {"Q": values["Q"], "K": values["K"], "V": values["V"],
            "bias": bias.masked_fill(~mask, float("-inf")), "scale": values["scale"]}


def finite_padding(function, name: str, reference, values: dict) -> str | None:
    """The hint when the output on ``values`` is finite and wrong, yet right with the scores
    1000 times smaller: the -inf entries are what large scores beat, as a finite stand-in
    for -inf (a clamp, nan_to_num, -1e4) does."""
    def output(values):
        with torch.no_grad():
            return function.apply(*make_inputs(values, requires_grad=False).values())

    got = output(values)
    if (not isinstance(got, torch.Tensor) or not torch.isfinite(got).all()
            or _close(got, reference(**values))):
        return None
    small = dict(values, scale=values["scale"] / 1000)
    if not _close(output(small), reference(**small)):
        return None
    raw = (values["Q"] @ values["K"].transpose(-2, -1)) * values["scale"]
    padded = torch.isinf(values["bias"]).expand(raw.shape)
    visible_low = raw.masked_fill(padded, float("inf")).amin().item()
    padded_high = raw.masked_fill(~padded, float("-inf")).amax().item()
    return (f"{name}'s -inf bias entries lose to large scores: with visible scores as low as "
            f"{visible_low:.0f} and padded keys' up to {padded_high:.0f}, your output is wrong, "
            "yet it is right with the scores 1000 times smaller. A finite stand-in for -inf "
            "(bias.clamp(min=-1e4), nan_to_num, -1e4) leaves a padded key a chance against "
            "scores this large: keep the -inf, which no score beats (every query keeps one "
            "finite key, so no row is all -inf)")


def check_padding_beats_large_scores(function, spec: Spec, reference, describe, device) -> None:
    """A padded key gets probability exactly 0 even where its score lies far above every
    visible one: a -inf entry of the bias must stay -inf."""
    values = padding_above_values(device)
    with case(describe(values) + ", padded keys' scores far above the visible ones"):
        try:
            check_values_and_gradients(function, spec, values)
        except GradingError as error:
            try:
                hint = finite_padding(function, spec.name, reference, values)
            except Exception:  # noqa: BLE001 - the learner's code may raise anything
                hint = None
            if hint is None:
                raise
            raise GradingError(hint, str(error),
                               mistake=f"{spec.name}/finite-padding-bias") from error
