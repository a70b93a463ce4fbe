"""FakeQuantize's gradients: the contract's, under either convention, and the sums a wrong
backward produces for scale, each with its hint."""

import math

import torch

from ...checks import make_inputs, run_backward, run_forward
from ...diagnose import exact
from ...errors import GradingError
from .fake_quantize_spec import CONVENTIONS, judged, tolerance


def local_gradients(x, scale, qmin, qmax, convention="v", v=None):
    """(inside mask, each element's d(output)/d(scale)) of the contract, the clip judged on
    ``v`` or on ``round(v)``, at both edges or one at each (``CONVENTIONS``); ``v`` is
    ``x / scale`` unless given (another spelling of it)."""
    v = x / scale if v is None else v
    rounded = torch.round(v)
    at_qmin, at_qmax = judged(v, rounded, convention)
    below, above = at_qmin < qmin, at_qmax > qmax
    inside = ~below & ~above
    clipped = torch.where(below, float(qmin), float(qmax)).to(x.dtype)
    return inside, torch.where(inside, rounded - v, clipped)


def expected_gradients(x, scale, qmin, qmax, grad_output, convention="v"):
    """(grad_x, grad_scale) of the contract, the clip judged on ``v`` or on ``round(v)``."""
    inside, local = local_gradients(x, scale, qmin, qmax, convention)
    return grad_output * inside, (grad_output * local).sum()


# The mistake a matching scale candidate proves, by a phrase of its hint (GradingError's mapping).
SCALE_MISTAKES = {
    "inside the clip it uses round(v) alone": "FakeQuantize/round-held-constant-for-scale",
    "inside the clip it is 0, as if the output": "FakeQuantize/inside-gives-scale-nothing",
    "inside the clip it keeps only the term through v": "FakeQuantize/round-term-lost",
    "inside the clip the term through v has the wrong sign": "FakeQuantize/dv-ds-wrong-sign",
    "outside the clip it uses the rounding error too": "FakeQuantize/rounding-error-outside-clip",
    "outside the clip it is the residual": "FakeQuantize/residual-outside-clip",
    "it is the mean over the elements, not the sum": "FakeQuantize/scale-gradient-mean",
    "it is multiplied by scale": "FakeQuantize/scale-gradient-times-scale",
    "it ignores grad_output": "FakeQuantize/scale-gradient-ignores-grad-output",
    "it leaves out the clipped elements": "FakeQuantize/clipped-elements-left-out",
    "inside the clip it has the wrong sign": "FakeQuantize/inside-wrong-sign",
    "qmin and qmax are swapped": "FakeQuantize/qmin-qmax-swapped",
    "sign(v) * qmax assumes a symmetric range": "FakeQuantize/symmetric-range-qmax",
    "sign(v) * |qmin| assumes a symmetric range": "FakeQuantize/symmetric-range-qmin",
    "inside the clip it rounds halves up": "FakeQuantize/scale-rounds-halves-up",
    "inside the clip it rounds halves away from zero": "FakeQuantize/scale-rounds-halves-away",
    "it includes LSQ's gradient-scale factor": "FakeQuantize/lsq-gradient-scale-factor",
    "it is divided by scale": "FakeQuantize/scale-gradient-over-scale",
}


def scale_candidates(x, scale, qmin, qmax, grad_output, convention):
    """Sums a wrong backward produces for scale, each with its hint."""
    v = x / scale
    rounded = torch.round(v)
    at_qmin, at_qmax = judged(v, rounded, convention)
    below, above = at_qmin < qmin, at_qmax > qmax
    inside = ~below & ~above
    g = grad_output
    true = expected_gradients(x, scale, qmin, qmax, grad_output, convention)[1]
    clipped_part = (g * below * qmin + g * above * qmax).sum()
    factor = 1 / math.sqrt(x.numel() * qmax)
    return [
        ((g * inside * rounded).sum() + clipped_part,
         "inside the clip it uses round(v) alone, the derivative with round(x / scale) held "
         "constant (round's true derivative, 0); the straight-through round still depends on s "
         "through v = x / s: what second term does the product rule give? (Hint 2 of "
         "Exercise 3)"),
        (clipped_part,
         "inside the clip it is 0, as if the output were x itself; the straight-through round "
         "replaces only round's derivative by 1: which value of round stays in the product "
         "rule? (Hint 2 of Exercise 3)"),
        ((g * inside * -v).sum() + clipped_part,
         "inside the clip it keeps only the term through v = x / s; the product rule also "
         "differentiates the factor s: what does that term leave? (Hint 2 of Exercise 3)"),
        ((g * inside * (rounded + v)).sum() + clipped_part,
         "inside the clip the term through v has the wrong sign: with v = x / s, is dv/ds "
         "positive or negative?"),
        ((g * (rounded - v)).sum(),
         "outside the clip it uses the rounding error too; there the output is the constant "
         "code qmin (or qmax) times s: differentiate that for s"),
        ((g * (rounded.clamp(qmin, qmax) - v)).sum(),
         "outside the clip it is the residual (y - x) / s, qmax - v above the clip (qmin - v "
         "below), as if the clipped output still depended on v; there the output is the "
         "constant code qmax (or qmin) times s: differentiate that for s"),
        (true / x.numel(),
         "it is the mean over the elements, not the sum: every output depends on the one "
         "scale, so the chain rule adds their contributions"),
        (true * scale, "it is multiplied by scale: differentiate q * s for s, with the code q "
         "held fixed: is a factor s left?"),
        (expected_gradients(x, scale, qmin, qmax, torch.ones_like(g), convention)[1],
         "it ignores grad_output: each element's d(output)/d(scale) is weighted by its own "
         "grad_output before the sum (chain rule)"),
        ((g * inside * (rounded - v)).sum(),
         "it leaves out the clipped elements: where v < qmin the output is qmin * scale (and "
         "qmax * scale above), which still depends on scale: differentiate it for scale"),
        ((g * inside * (v - rounded)).sum() + clipped_part,
         "inside the clip it has the wrong sign: which of the product rule's two terms is "
         "positive, and which carries the sign of dv/ds? (Hint 2 of Exercise 3)"),
        ((g * inside * (rounded - v)).sum() + (g * below * qmax + g * above * qmin).sum(),
         "qmin and qmax are swapped: below the clip the output is qmin * scale, above it "
         "qmax * scale: which code does each side's derivative for scale give?"),
        ((g * inside * (rounded - v)).sum() + (g * (below | above) * torch.sign(v) * qmax).sum(),
         f"elements below the clip (v < qmin) contribute -qmax = {-qmax}, expected qmin = "
         f"{qmin}: sign(v) * qmax assumes a symmetric range; below the clip the output is "
         "qmin * scale, whose derivative for scale is qmin"),
        ((g * inside * (rounded - v)).sum() + (g * (below | above) * torch.sign(v) * -qmin).sum(),
         f"elements above the clip (v > qmax) contribute -qmin = {-qmin}, expected qmax = "
         f"{qmax}: sign(v) * |qmin| assumes a symmetric range; above the clip the output is "
         "qmax * scale, whose derivative for scale is qmax"),
        ((g * inside * (torch.floor(v + 0.5) - v)).sum() + clipped_part,
         "inside the clip it rounds halves up, floor(v + 0.5), where torch.round sends them to "
         "even (at v = 2.5 round(v) - v is -0.5, not 0.5): use the forward's own torch.round(v)"),
        ((g * inside * (torch.sign(v) * torch.floor(v.abs() + 0.5) - v)).sum() + clipped_part,
         "inside the clip it rounds halves away from zero, where torch.round sends them to "
         "even (at v = 2.5 round(v) - v is -0.5, not 0.5): use the forward's own torch.round(v)"),
        (true * factor,
         "it includes LSQ's gradient-scale factor 1 / sqrt(numel * qmax): this exercise's "
         "contract leaves it out (apply it in the optimiser or a hook instead)"),
        (true / scale, "it is divided by scale: differentiate q * s for s, with the code q "
         "held fixed: does a 1 / s appear?"),
    ]


def x_units(x, scale, qmin, qmax):
    """(inside mask, each element's d(output)/d(scale)) with the clip judged in x's units,
    qmin * scale <= x <= qmax * scale: off powers of two those products round, and the edge
    moves by an ulp."""
    v = x / scale
    below, above = x < qmin * scale, x > qmax * scale
    inside = ~below & ~above
    clipped = torch.where(below, float(qmin), float(qmax)).to(x.dtype)
    return inside, torch.where(inside, torch.round(v) - v, clipped)


def check_v_widened(x, scale, qmin, qmax, grad_output, got, tolerance, which: int) -> None:
    """Name a gradient ``got`` that judges "inside" on v = x / scale computed in float64 for
    narrower x, or in float32 for float64 x, where that differs from v in x's dtype (the
    quotient rounds onto an edge)."""
    other = torch.float32 if x.dtype == torch.float64 else torch.float64
    if other == torch.float32 and which == 0:  # x's mask: probe_v_in_float32 tells it apart
        return
    v = x / scale
    wide = (x.to(other) / scale.to(other)).to(torch.float64)
    inside = (v >= qmin) & (v <= qmax)
    wide_inside = (wide >= qmin) & (wide <= qmax)
    moved = inside != wide_inside
    if not moved.any():
        return
    if which == 0:
        candidate = (grad_output * wide_inside).to(got.dtype)
    else:
        local = torch.where(wide_inside, torch.round(wide) - wide,
                            torch.where(wide < qmin, float(qmin), float(qmax)))
        candidate = (grad_output.double() * local).sum().to(got.dtype)
    if not torch.allclose(got, candidate, *tolerance):
        return
    i = tuple(int(k) for k in torch.nonzero(moved)[0])
    named = str(other).removeprefix('torch.')
    raise GradingError(
        f"FakeQuantize computes v = x / scale in {named} for "
        f"{str(x.dtype).removeprefix('torch.')} x: at x = {exact(x[i].item())}, scale = "
        f"{exact(scale.item())}, x / scale in x's dtype is {exact(v[i].item())} but in {named} "
        f"{exact(wide[i].item())}, so its "
        f"{'gradient for x' if which == 0 else 'gradient for scale'} judges that element "
        f"{'inside' if wide_inside[i] else 'outside'}; the contract judges v as forward's "
        "x / scale gives it, in x's dtype" + (" (look for a .float())" if named == "float32"
                                              else ""), mistake=f"FakeQuantize/v-in-{named}")


def scale_near_miss(got, references) -> str | None:
    """A first line for a gradient for scale within a relative 1e-4 of the contract's, but
    beyond rounding: a factor near 1, which the generic hint would not name."""
    for reference in references:
        if reference != 0 and abs(got / reference - 1) < 1e-4:
            ratio = (got / reference).item()
            return (f"FakeQuantize's gradient for scale is {ratio!r} times the contract's "
                    f"(it gives {exact(got.item())}, expected {exact(reference.item())}): off by "
                    f"a relative {abs(ratio - 1):.1e}, beyond rounding in x's dtype: a factor "
                    "near 1, or a step in a narrower dtype, somewhere in backward")
    return None


def check_float32_steps(x, scale, qmin, qmax, grad_output, got, references) -> None:
    """Name a gradient for scale, for float64 x, that is the contract's with one step rounded
    to float32 where that rounding changes it: scale itself (a .float() on the saved scale),
    the reciprocal in v = x * (1 / scale), or each element's term before the sum. A probe, not
    a guess: every other step is the contract's."""
    if x.dtype != torch.float64:
        return
    s = scale.detach()
    near = 1e-12 * (grad_output.abs().sum() * (qmax - qmin + 1)).item()
    narrow = s.float().to(x.dtype)
    for convention, reference in zip(CONVENTIONS, references):
        candidate = (grad_output * local_gradients(x, narrow, qmin, qmax, convention)[1]).sum()
        if (not torch.equal(narrow, s) and torch.allclose(got, candidate, rtol=1e-10, atol=near)
                and not torch.allclose(candidate, reference, rtol=1e-10, atol=1e-11)):
            raise GradingError(
                "FakeQuantize's gradient for scale is what scale rounded to float32 gives (it "
                f"gives {exact(got.item())}, expected {exact(reference.item())}): backward used "
                f"scale as float32 ({exact(narrow.item())} for {exact(s.item())}, a .float() "
                "on the saved scale) with float64 x, so v = x / scale lost float64's digits; "
                "save and use scale in its own dtype", mistake="FakeQuantize/scale-in-float32")
    for reciprocal in ((1 / s.float()).to(x.dtype), (1 / s).float().to(x.dtype)):
        for convention, reference in zip(CONVENTIONS, references):
            local = local_gradients(x, s, qmin, qmax, convention, v=x * reciprocal)[1]
            candidate = (grad_output * local).sum()
            if (not torch.equal(reciprocal, 1 / s)
                    and torch.allclose(got, candidate, rtol=1e-10, atol=near)
                    and not torch.allclose(candidate, reference, rtol=1e-10, atol=1e-11)):
                raise GradingError(
                    "your gradient for scale agrees to float32 precision only: it is what "
                    "1 / scale rounded to float32 gives (it gives "
                    f"{exact(got.item())}, expected {exact(reference.item())}; 1 / scale is "
                    f"{exact((1 / s).item())}, in float32 {exact(reciprocal.item())}): a step "
                    "in float32 (1 / scale.float(), or a float32 reciprocal) for float64 x, so "
                    "v = x * (1 / scale) lost float64's digits; compute the reciprocal in "
                    "scale's own dtype", mistake="FakeQuantize/reciprocal-in-float32")
    rtol, atol = tolerance(x.dtype)
    for convention, reference in zip(CONVENTIONS, references):
        term = grad_output * local_gradients(x, s, qmin, qmax, convention)[1].float().to(x.dtype)
        if (torch.allclose(got, term.sum(), rtol=1e-10, atol=1e-12 * term.abs().sum().item())
                and not torch.allclose(term.sum(), reference, rtol=rtol, atol=atol)):
            raise GradingError(
                "FakeQuantize's gradient for scale is the sum of grad_output times each "
                "element's d(output)/d(scale) rounded to float32 (it gives "
                f"{exact(got.item())}, expected {exact(reference.item())}): that term was "
                "computed in float32 for float64 x (a .float(), or a tensor made in the "
                "default dtype); keep it in x's dtype", mistake="FakeQuantize/grad-scale-in-float32")


def check_x_units(x, scale, qmin, qmax, grad_output, got, tolerance, which: int) -> None:
    """Name a gradient ``got`` (``which``: 0 for x, 1 for scale) that is the contract's with
    v computed in float64 (``check_v_widened``), or with the clip judged in x's units, where
    that differs from judging x / scale."""
    check_v_widened(x, scale, qmin, qmax, grad_output, got, tolerance, which)
    inside, local = x_units(x, scale, qmin, qmax)
    v = x / scale
    rounded = torch.round(v)
    moved = inside != ((v >= qmin) & (v <= qmax) & (rounded >= qmin) & (rounded <= qmax))
    if not moved.any():
        return
    candidate = grad_output * inside if which == 0 else (grad_output * local).sum()
    if not torch.allclose(got, candidate, *tolerance):
        return
    i = tuple(int(k) for k in torch.nonzero(moved)[0])
    at, code = x[i].item(), qmax if v[i] > 0 else qmin
    edge = (torch.tensor(code, dtype=x.dtype) * scale.detach().cpu()).item()
    side = "<" if edge < at else ">"
    raise GradingError(
        f"FakeQuantize judges the clip edge in x's units: at x = {exact(at)}, scale = "
        f"{exact(scale.item())}, x / scale is exactly {exact(v[i].item())}, the edge "
        f"{'qmax' if code == qmax else 'qmin'} = {code} itself (inside), but "
        f"{'qmax' if code == qmax else 'qmin'} * scale rounds to {exact(edge)} {side} x, so "
        f"its {'gradient for x' if which == 0 else 'gradient for scale'} takes x as outside; "
        "the contract judges v = x / scale against qmin and qmax",
        mistake="FakeQuantize/edge-in-x-units")


# one element each, scale = 0.25 (a power of two: v exact), qmin = -4, qmax = 3:
# (x, what it is, d(output)/d(scale) of the contract under every convention)
_PROBE_SCALE, _PROBE_QMIN, _PROBE_QMAX = 0.25, -4, 3
_PROBES = ((0.75, "edge", 0.0), (-1.0, "edge", 0.0),          # v = qmax, v = qmin exactly
           (1.25, "clipped", 3.0), (-1.5, "clipped", -4.0))   # v = 5 > qmax, v = -6 < qmin
# in the half-step band beside each edge, where round(v) is the edge itself: clipped when the
# clip is judged on v (the edge's code), inside when on round(v) (round(v) - v)
_BANDS = ((-1.0625, -4.0, 0.25),   # v = -4.25: round(v) = -4 = qmin
          (0.8125, 3.0, -0.25))    # v = 3.25: round(v) = 3 = qmax


def _one_element(function, spec, at, dtype, device) -> float:
    """d(output)/d(scale) of ``function`` on the single element x = ``at``."""
    inputs = make_inputs({"x": torch.tensor([at], dtype=dtype, device=device),
                          "scale": torch.tensor(_PROBE_SCALE, dtype=dtype, device=device),
                          "qmin": _PROBE_QMIN, "qmax": _PROBE_QMAX})
    output = run_forward(function, spec, inputs).output
    grads = run_backward(spec, output, inputs, torch.ones(1, dtype=dtype, device=device)).grads
    return float(grads[1].detach().sum())


def probe_scale_gradient(function, spec, dtype, device) -> None:
    """After a gradient for scale matched no named mistake: run ``function`` on one element at
    a time (six tiny calls) and name the element whose d(output)/d(scale) is the open
    interval's value at an edge, the clipped output qmax * scale itself, or neither
    convention's value in a half-step band beside an edge; return quietly when none shows (or
    the probe cannot run: the caller's hint stands)."""
    s, qmin, qmax = _PROBE_SCALE, _PROBE_QMIN, _PROBE_QMAX
    for at, kind, expected in _PROBES:
        try:
            got = _one_element(function, spec, at, dtype, device)
        except Exception:  # noqa: BLE001 - the caller's hint stands
            return
        if got == expected:
            continue
        v, code = at / s, qmax if at > 0 else qmin
        bound = "qmax" if at > 0 else "qmin"
        if kind == "edge" and got == code:
            raise GradingError(
                f"FakeQuantize: at v = {bound} exactly (x = {exact(at)}, scale = {exact(s)}, "
                f"v = {exact(v)} = {bound}) your scale gradient uses the open interval's value, "
                f"{bound} = {code}: there the contract's clamp counts v as inside, as it does "
                "for x's gradient (LSQ's paper writes the open interval; this exercise follows "
                "clamp)", mistake="FakeQuantize/scale-open-interval")
        if kind == "clipped" and got == code * s:
            raise GradingError(
                f"FakeQuantize: for a clipped element (x = {exact(at)}, scale = {exact(s)}, "
                f"v = {exact(v)} {'>' if at > 0 else '<'} {bound} = {code}) your dy/ds is "
                f"{bound} * scale = {exact(got)}, not {bound}: {bound} * scale is the clipped "
                "output y itself, not its derivative for scale",
                mistake="FakeQuantize/clipped-scale-times-scale")
    for at, clipped, inside in _BANDS:
        try:
            got = _one_element(function, spec, at, dtype, device)
        except Exception:  # noqa: BLE001 - the caller's hint stands
            return
        if got in (clipped, inside):
            continue
        v = at / s
        bound, other = ("qmin", "qmax") if at < 0 else ("qmax", "qmin")
        where = (f"FakeQuantize: in the half-step band {'below qmin' if at < 0 else 'above qmax'}"
                 f" (x = {exact(at)}, scale = {exact(s)}, qmin = {qmin}, qmax = {qmax}: v = "
                 f"{exact(v)}, round(v) = {exact(round(v))} = {bound}) your dy/ds is "
                 f"{exact(got)}, where the contract's is {bound} = {exact(clipped)} (the clip "
                 f"judged on v: clipped) or round(v) - v = {exact(inside)} (judged on round(v): "
                 "inside)")
        if got == (qmax if at < 0 else qmin):
            raise GradingError(
                f"{where}; {other} is the value {'above' if at < 0 else 'below'} the clip: "
                f"which test picks the clipped side, and does it judge v where round(v) is "
                f"{bound} itself?", mistake="FakeQuantize/band-takes-other-side")
        raise GradingError(where)


def check_empty_scale_gradient(x, got) -> None:
    """On an empty x, scale's gradient is a sum over no elements: 0, not a mean's 0 / 0."""
    if x.numel() or (isinstance(got, torch.Tensor) and got.shape == () and bool(got == 0)):
        return
    shown = exact(got.item()) if isinstance(got, torch.Tensor) and got.numel() == 1 else got
    raise GradingError(
        f"FakeQuantize's gradient for scale on an empty x is {shown}, expected 0: a sum over no "
        "elements is 0, where a mean over none is 0 / 0 = nan (look for a .mean(), or a "
        "division by x.numel()); the contract takes x of any shape, an empty one included",
        mistake="FakeQuantize/scale-gradient-of-empty-x")


def check_band_judged_one_way(x, scale, qmin, qmax, grad_output, got, tolerance) -> None:
    """Each element follows the clip judged on v or on round(v), but within one half-step band
    some follow v and some round(v) (a tolerance on the edge, such as v <= qmax + 1e-3): at a
    given edge the contract judges every v one way."""
    inside = [local_gradients(x, scale, qmin, qmax, c)[0] for c in ("v", "round(v)")]
    on_v, on_round = (torch.isclose(got, grad_output * mask, *tolerance) for mask in inside)
    if not (on_v | on_round).all():
        return
    v = x / scale
    for edge, beyond in ((qmax, v > qmax), (qmin, v < qmin)):
        as_round, as_v = beyond & on_round & ~on_v, beyond & on_v & ~on_round
        if as_round.any() and as_v.any():
            a, b, to = v[as_round][0].item(), v[as_v][0].item(), torch.round(v[as_round][0])
            raise GradingError(
                f"FakeQuantize's gradient for x judges the half-step band beyond {edge} two ways: "
                f"at x / scale = {exact(a)} it follows round(v) = {exact(to.item())}, at "
                f"{exact(b)} it follows v itself; judge every v in that band one way, on v or "
                f"on round(v) (a tolerance on the edge, such as {edge} ± 1e-3, is neither)",
                mistake="FakeQuantize/band-judged-two-ways")


def probe_v_in_float32(function, spec, device) -> None:
    """After x's gradient judged a half-step band two ways in float64: run ``function`` once on
    v = 3 + 7 * 2^-26 (1.04e-7 past) and 3 + 2^-22 (scale 0.25, qmax 3, both v exact) and name
    v computed in float32, which rounds the first to 3 (inside) but not the second (outside),
    where either convention judges the two alike and a tolerance up to 1e-7 keeps both
    outside (one of 1.1e-7 would pass for float32: no test point tells those apart)."""
    x = torch.tensor([0.75 + 7 * 2.0 ** -28, 0.75 + 2.0 ** -24], dtype=torch.float64,
                     device=device)
    try:
        inputs = make_inputs({"x": x, "scale": torch.tensor(0.25, dtype=torch.float64,
                                                            device=device),
                              "qmin": -4, "qmax": 3})
        output = run_forward(function, spec, inputs).output
        got = run_backward(spec, output, inputs, torch.ones_like(x)).grads[0].tolist()
    except Exception:  # noqa: BLE001 - the caller's hint stands
        return
    if got == [1.0, 0.0]:
        raise GradingError(
            "FakeQuantize computes v = x / scale in float32 for float64 x: at v = 3 + 7 * 2^-26 "
            "(x = 0.75 + 7 * 2^-28, scale = 0.25, qmax = 3) its gradient for x is 1, at 3 + 2^-22 "
            "it is 0: float32 rounds the first v to 3, inside, and keeps the second; the "
            "contract judges v as forward's x / scale gives it, in x's dtype (look for a "
            ".float())", mistake="FakeQuantize/v-in-float32")


def check_one_convention(inputs, for_x, for_scale) -> None:
    """x's gradient and scale's each follow some convention, but no one convention both."""
    if for_x & for_scale:
        return
    x, scale, qmin, qmax = inputs
    on, other = (next(c for c in CONVENTIONS if c in found) for found in (for_x, for_scale))
    band = (local_gradients(x, scale, qmin, qmax, on)[0]
            != local_gradients(x, scale, qmin, qmax, other)[0])
    raise GradingError(
        f"FakeQuantize judges 'inside' on {on} for x's gradient but on {other} for scale's: "
        f"at x / scale = {exact((x / scale)[band][0].item())}, in the half-step band beside "
        "the clip, no one surrogate of the forward has that pair of derivatives; at each "
        "edge, pick one convention for both")
