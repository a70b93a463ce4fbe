"""Float32 inputs, computed in float32: probes that tell a forward run in the inputs' dtype from
one run in float64 and cast back (more exact, but a different value where float32 rounds a
pre-activation to exactly 0 or overflows to +inf).

Where the bias joins the sum is not fixed: ``x @ weight.T + bias`` adds it after the products,
while F.linear (addmm) may start its accumulator at the bias and add each product in a fused
multiply-add, on some CPUs and on a GPU (where 2e19 * 2e19 - 2e38 is then 2e38, not +inf). Each
probe accepts either: the value of the products summed, then the bias added, or the reference's
own value on the grading device. The probes have few products per output entry, each exact (or
overflowing), so no order of summing the products alone changes their float32 sum."""


import torch

from ...checks import Spec, case, check_values_and_gradients
from ...errors import GradingError
from .relu_mask import _matches

A = 1 + 2 ** -13  # A * A is 1 + 2**-12 + 2**-26: float32 rounds it to 1 + 2**-12

# float32 pre-activations: entry (0, 0) is A * A - (1 + 2**-12), exactly 0 in float32 and
# 2**-26 (1.5e-8) in float64; the others are positive or negative in both
ZERO_IN_FLOAT32 = {"x": [[A], [1.0]], "weight": [[A], [2.0]], "bias": [-(1 + 2 ** -12), -1.0]}

# entry (0, 0) is 2e19 * 2e19 - 2e38: the product overflows float32 to +inf before the bias
# is added, and in float64 the sum, 2e38, fits a float32
OVERFLOW_IN_FLOAT32 = {"x": [[2e19], [1.0]], "weight": [[2e19], [1.0]], "bias": [-2e38, 0.0]}
BILINEAR_OVERFLOW = {"x1": [[2e19], [1.0]], "x2": [[2e19], [1.0]],
                     "weight": [[[1.0]], [[1.0]]], "bias": [-2e38, 0.0]}


def float32_values(given: dict, device) -> dict:
    return {name: torch.tensor(v, dtype=torch.float32, device=device)
            for name, v in given.items()}


def widened(spec: Spec) -> Spec:
    """``spec``'s reference computed in float64 and cast back to the inputs' dtype."""
    return Spec(spec.name, spec.input_names, lambda **values: spec.reference(
        **{n: v.double() for n, v in values.items()}).to(next(iter(values.values())).dtype))


def bias_after_products(spec: Spec, products, activation=None) -> Spec:
    """``spec``'s value as ``products(...) + bias`` computes it in the inputs' dtype: the
    products summed first, then the bias added (then ``activation``)."""
    def reference(bias=None, **inputs):
        z = products(*inputs.values())
        z = z if bias is None else z + bias
        return z if activation is None else activation(z)
    return Spec(spec.name, spec.input_names, reference)


def _float32_values_of(output, specs, values: dict) -> bool:
    """Is ``output`` the value of one of ``specs`` (the reference on this device, the bias added
    after the products) at ``values``, bit for bit?"""
    with torch.no_grad():
        return any(torch.equal(output, spec.reference(**values)) for spec in specs)


def _comparable(output, truth) -> bool:
    """A tensor of the reference's shape and dtype: a wrong type, shape or dtype is for the
    other checks to name."""
    return isinstance(output, torch.Tensor) and output.shape == truth.shape \
        and output.dtype == truth.dtype


def wider_dtype_error(spec: Spec, what: str, details: str) -> GradingError:
    """What an answer that computes in float64 and casts back is told."""
    return GradingError(
        f"{spec.name} computes in a wider dtype than its float32 inputs (float64, then cast "
        f"back): {what}. The contract asks for the value in the inputs' dtype; which dtype do "
        "your forward's products run in?", details, mistake=f"{spec.name}/computes-in-wider-dtype")


# three float32 terms per entry (1 and 2**-24 as products, 2**-50 as the bias): every float32
# order of summation, fused multiply-adds included, gives 1 (1 + 2**-24 is a tie, rounded to
# even; 2**-50 is lost against either), while their float64 sum, cast back, is past the tie
# and rounds up to 1 + 2**-23
ROUNDED_ONCE = {"x": [[1.0, 2.0 ** -24], [1.0, 1.0]], "weight": [[1.0, 1.0]],
                "bias": [2.0 ** -50]}
BILINEAR_ROUNDED_ONCE = {"x1": [[1.0], [1.0]], "x2": ROUNDED_ONCE["x"],
                         "weight": [ROUNDED_ONCE["weight"]], "bias": ROUNDED_ONCE["bias"]}


def check_float32_rounded_once(function, spec: Spec, in_order: Spec, device, given: dict) -> None:
    """Terms whose float32 sum is 1 in every order and whose float64 sum, cast back, is
    1 + 2**-23: a forward computed in float64 is told so on every device."""
    values = float32_values(given, device)
    with case("float32 inputs whose terms, 1, 2**-24 and 2**-50, sum to 1 in float32"):
        with torch.no_grad():
            output = function.apply(*values.values())
            truth = spec.reference(**values)
            wide = widened(spec).reference(**values)
        if _comparable(output, truth) and torch.equal(output, wide) \
                and not _float32_values_of(output, (spec, in_order), values):
            raise wider_dtype_error(
                spec, "float32 sums 1, 2**-24 and 2**-50 to 1 in every order (1 + 2**-24 is a "
                "tie, rounded to even), and yours gives 1 + 2**-23, their float64 sum rounded "
                "once", f"your output: {output.tolist()}\nthe reference's: {truth.tolist()}")


def check_float32_overflow(function, spec: Spec, in_order: Spec, device, given: dict,
                           sum_named: str) -> None:
    """The float32 value where ``sum_named`` overflows to +inf before the bias is added: +inf,
    as ``x @ weight.T + bias`` gives (or 2e38 where the reference on this device adds the bias
    inside a fused multiply-add); a forward run in float64 and cast back gives 2e38."""
    values = float32_values(given, device)
    with case("float32 inputs whose products overflow to +inf before the bias is added"):
        with torch.no_grad():
            output = function.apply(*values.values())
            truth = in_order.reference(**values)
            wide = widened(spec).reference(**values)
        if not _comparable(output, truth) or _float32_values_of(output, (spec, in_order), values):
            return
        if torch.equal(output, wide):
            raise wider_dtype_error(
                spec, f"where {sum_named} overflows float32 to +inf before the bias of -2e38 is "
                "added, the products summed, then the bias, give +inf, and yours a finite 2e38",
                f"your output: {output.tolist()}\n{sum_named} + bias: {truth.tolist()}")
        raise GradingError(
            f"your float32 output differs from {sum_named} + bias where {sum_named} overflows "
            "float32 to +inf before the bias is added: that gives +inf there",
            f"your output: {output.tolist()}\n{sum_named} + bias: {truth.tolist()}")


def _matches_either(function, spec: Spec, in_order: Spec, values: dict) -> None:
    """Values and gradients checked against the reference on this device, and where they differ,
    against the bias added after the products: the first one's failure is raised."""
    try:
        check_values_and_gradients(function, spec, values)
    except GradingError:
        if not _matches(function, in_order, values):
            raise


def check_float32_zero_pre_activation(function, spec: Spec, in_order: Spec, device) -> None:
    """Where the float32 pre-activation x @ weight.T + bias is exactly 0 (the product rounded,
    then the bias added), torch.relu passes no gradient; in float64 it is 1.5e-8, and a forward
    that computes there and casts back passes grad_output on (and outputs 1.5e-8)."""
    values = float32_values(ZERO_IN_FLOAT32, device)
    with case("float32 pre-activations exactly 0 in float32 (1.5e-8 in float64), bias=a tensor"):
        try:
            _matches_either(function, spec, in_order, values)
        except GradingError as error:
            if not _matches(function, widened(spec), values):
                raise
            raise wider_dtype_error(
                spec, "where the float32 pre-activation x @ weight.T + bias is exactly 0 (the "
                "product rounded to float32, then the bias added), yours is 1.5e-8 (its float64 "
                "value), so the ReLU passes grad_output on where torch.relu passes 0",
                error.details or error.hint) from error


R = 1.4e19  # R * R is 1.96e38, a float32; two of them overflow float32 to +inf

# bias-order probes: two input features. Entry (0, 0) of x @ weight.T + bias (the products
# first, then the bias) is +inf (1.96e38 + 1.96e38 overflows, then - 2e38) and exactly 0
# (1 + 2**-24 rounds to 1, then - 1); summed with the bias first (the x0 = 1 trick: a column of
# ones in x, the bias a column of weight) it is 1.92e38 and 2**-24
BIAS_FIRST_OVERFLOW = {"x": [[R, R], [1.0, 1.0]], "weight": [[R, R], [1.0, 1.0]],
                       "bias": [-2e38, 0.0]}
BIAS_FIRST_ZERO = {"x": [[1.0, 2 ** -24], [1.0, 1.0]], "weight": [[1.0, 1.0], [2.0, 1.0]],
                   "bias": [-1.0, 0.0]}
# the same exact 0 in float64: 1 + 2**-53 rounds to 1 (2**-53 summed with the bias first)
BIAS_FIRST_ZERO_64 = {**BIAS_FIRST_ZERO, "x": [[1.0, 2 ** -53], [1.0, 1.0]]}

# the bias-order probes, with where each differs and its dtype
BIAS_ORDER = ((BIAS_FIRST_OVERFLOW, "1.96e38 + 1.96e38 overflows to +inf before the bias of -2e38 "
               "is added", torch.float32),
              (BIAS_FIRST_ZERO, "1 + 2**-24 rounds to 1 before the bias of -1 is added, so the "
               "pre-activation is exactly 0", torch.float32),
              (BIAS_FIRST_ZERO_64, "1 + 2**-53 rounds to 1 before the bias of -1 is added, so "
               "the pre-activation is exactly 0", torch.float64))


def _bias_first(spec: Spec, activation) -> Spec:
    """``spec``'s value with the bias summed first, then each input feature's product in turn."""
    def reference(x, weight, bias=None):
        z = bias
        for k in range(x.shape[-1]):
            z = z + x[..., k:k + 1] * weight[:, k]
        return activation(z)
    return Spec(spec.name, spec.input_names, reference)


def check_float32_bias_order(function, spec: Spec, in_order: Spec, device, activation,
                             probes) -> None:
    """Inputs with two features, where the products summed, then the bias, and the bias summed
    first give other values: in float32 +inf and 1.92e38, 0 and 2**-24; in float64 0 and
    2**-53. The reference on this device is accepted too (F.linear may add the bias first in a
    fused multiply-add, where it gives the bias-first value: the x0 = 1 trick then passes)."""
    for given, where, dtype in probes:
        values = {name: torch.tensor(v, dtype=dtype, device=device) for name, v in given.items()}
        with case(f"{dtype} inputs with two features, bias=a tensor, where {where}"):
            try:
                _matches_either(function, spec, in_order, values)
            except GradingError as error:
                if not _matches(function, _bias_first(spec, activation), values):
                    raise
                raise GradingError(
                    f"{spec.name} adds the bias inside the sum over the input features (the "
                    "x0 = 1 trick: a column of ones in x, the bias a column of weight), so its "
                    "value is not x @ weight.T + bias, which adds the bias after the products: "
                    f"where {where}, yours differs. In which order does your forward add the terms "
                    "of x @ weight.T + bias?", error.details or error.hint,
                    mistake=f"{spec.name}/bias-summed-with-products") from error


# three exact products per entry (x times weights of 1 and 0): 2**64, 2**40 and 2**14 sum to
# 2**64 in float32 in every order (2**64 + 2**40 is a tie, rounded to even; 2**14 is below half
# a unit), so the bias of -2**64, added after them, leaves exactly 0 (added first, in a fused
# multiply-add, 2**40 + 2**14); their float64 sum, cast back to float32 before the bias is
# added, rounds up to 2**64 + 2**41 (past the tie), and the bias leaves 2**41
CAST_BEFORE_BIAS = {"x": [[2.0 ** 64, 2.0 ** 40, 2.0 ** 14], [1.0, 1.0, 1.0]],
                    "weight": [[1.0, 1.0, 1.0], [0.0, 0.0, 1.0]], "bias": [-2.0 ** 64, 0.0]}
BILINEAR_CAST_BEFORE_BIAS = {"x1": [[1.0], [1.0]], "x2": CAST_BEFORE_BIAS["x"],
                             "weight": [[row] for row in CAST_BEFORE_BIAS["weight"]],
                             "bias": CAST_BEFORE_BIAS["bias"]}


def check_float32_cast_before_bias(function, spec: Spec, in_order: Spec, device, given: dict,
                                   products, activation=None) -> None:
    """The float32 sum of three products whose float64 sum, cast back, differs whatever the
    order of summation: a forward that computes ``products`` (the inputs but the bias) in
    float64 and casts back before adding the bias in float32 gives 2**41 where the products
    summed, then the bias, give 0 (one that adds the bias in float64 too is named by the probes
    above)."""
    values = float32_values(given, device)
    with case("float32 inputs whose products, 2**64, 2**40 and 2**14, meet a bias of -2**64"):
        with torch.no_grad():
            output = function.apply(*values.values())
            truth = in_order.reference(**values)
            *inputs, bias = values.values()
            wide = products(*(v.double() for v in inputs)).to(bias.dtype) + bias
            wide = wide if activation is None else activation(wide)
        if _comparable(output, truth) and torch.equal(output, wide) \
                and not _float32_values_of(output, (spec, in_order), values):
            raise wider_dtype_error(
                spec, "float32 sums the products 2**64, 2**40 and 2**14 to 2**64 in every order, "
                "so the bias of -2**64 leaves exactly 0, and yours gives 2**41 (their float64 sum "
                "cast back to float32 before the bias is added)",
                f"your output: {output.tolist()}\nthe products, then the bias: {truth.tolist()}")
