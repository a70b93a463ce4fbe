"""Lesson 06: what the mask means, and what it must beat. Reversed polarity (masking where mask
is True) shows at moderate scores. A finite fill, ``masked_fill(~mask, -1e4)`` or the additive
``scores + (~mask) * -10000``, is right wherever the visible scores beat the masked ones by
less than the fill; ``masked_above_values`` has visible float64 scores of about -7000 to
-20000 and masked ones of about +7000 to +20000, which only a fill of -inf (or one far below,
such as -1e30) masks. There a finite fill's output is also the reversed
mask's, so polarity is named only where the moderate case shows it. Rows near
-torch.finfo(dtype).max / 2 or at torch.finfo(dtype).min, which no model meets, are not tried:
a fill of -1e30 or of torch.finfo(dtype).min masks every score models meet."""

import torch

from ...checks import Spec, case, make_inputs, run_forward
from ...errors import GradingError
from .attention_inputs import attention_reference, attention_values, describe, same

FILL_CASE = "float64 masked scores far above the visible ones"

POLARITY = ("{name} masks out the positions where mask is True: False means masked out (like "
            "F.scaled_dot_product_attention's boolean attn_mask), so fill "
            "scores.masked_fill(~mask, -inf)")


def reversed_mask(values: dict) -> dict | None:
    """``values`` with the mask inverted; None without a mask."""
    if values.get("mask") is None:
        return None
    return dict(values, mask=~values["mask"])


def _polarity_values(device) -> dict:
    """Moderate scores, a mask whose rows all keep some keys and drop others."""
    return attention_values((2,), 4, 5, 3, 2, device, mask="random", seed=11)


def _output(function, values: dict):
    with torch.no_grad():
        return function.apply(*make_inputs(values, requires_grad=False).values())


def reversed_at_moderate_scores(function, device) -> bool:
    """Does the output on the polarity case match the reversed mask's? (Large scores make a
    finite fill match it too: the masked keys then win.)"""
    values = _polarity_values(device)
    return same(_output(function, values), attention_reference(**reversed_mask(values)))


def check_mask_polarity(function, spec: Spec, device) -> None:
    """A mask whose rows all keep some keys and drop others: reversed polarity is visible."""
    values = _polarity_values(device)
    inputs = make_inputs(values, requires_grad=False)
    with case(describe(values)):
        output = run_forward(function, spec, inputs).output
        if same(output, attention_reference(**reversed_mask(values))):
            raise GradingError(POLARITY.format(name=spec.name),
                               mistake=f"{spec.name}/mask-polarity-reversed")


def masked_above_values(device, seed: int = 23) -> dict:
    """Q (2, 4, 2), K (2, 6, 2), V (2, 6, 3), scale 1, a (4, 6) mask keeping keys 0, 1 and 2.
    Query row i is about a_i (1, 1), a_i from 35 to 100; the visible keys are about
    -100 (1, 1) and the masked ones +100 (1, 1), so that row i's visible scores lie near
    -200 a_i (-7000 to -20000, a few units apart) and its masked ones near +200 a_i."""
    generator = torch.Generator().manual_seed(seed)

    def noise(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64)

    a = torch.linspace(35.0, 100.0, 4, dtype=torch.float64)
    Q = a[:, None] + 0.02 * noise(2, 4, 2)
    K = torch.cat([-100.0 + 0.02 * noise(2, 3, 2), 100.0 + 0.02 * noise(2, 3, 2)], dim=-2)
    mask = torch.zeros(4, 6, dtype=torch.bool)
    mask[:, :3] = True
    return {"Q": Q.to(device), "K": K.to(device), "V": noise(2, 6, 3).to(device),
            "scale": 1.0, "mask": mask.to(device)}


def finite_fill(function, name: str, values: dict) -> str | None:
    """The hint when the output on ``values`` is finite and wrong, yet right on the same Q, K, V
    without the mask, and right with the scores 1000 times smaller (scale / 1000): masking
    works at moderate scores and attention works at these, so the mask is what large scores
    beat, as a finite fill does."""
    mask = values.get("mask")
    if mask is None or bool(mask.all()):
        return None
    output = _output(function, values)
    if (not isinstance(output, torch.Tensor) or not torch.isfinite(output).all()
            or same(output, attention_reference(**values))):
        return None
    unmasked = {n: v for n, v in values.items() if n != "mask"}
    small = dict(values, scale=values["scale"] / 1000)
    if not (same(_output(function, unmasked), attention_reference(**unmasked))
            and same(_output(function, small), attention_reference(**small))):
        return None
    raw = (values["Q"] @ values["K"].transpose(-2, -1)) * values["scale"]
    hidden = ~mask.expand(raw.shape)
    visible_low = raw.masked_fill(hidden, float("inf")).amin().item()
    hidden_high = raw.masked_fill(~hidden, float("-inf")).amax().item()
    return (f"{name}'s mask loses to large scores: with visible scores as low as "
            f"{visible_low:.0f} and masked ones up to {hidden_high:.0f}, your output is wrong, "
            "yet it is right on the same Q, K, V without the mask, and right with the scores "
            "1000 times smaller. A finite fill (masked_fill with -1e4, or adding -10000 to the "
            "masked scores) leaves the masked keys a chance against scores this large: fill "
            "masked scores with float('-inf'), which no score beats")


