"""autograder.diagnose: from a wrong gradient or value to a hint that names the mistake."""

import pytest
import torch

from autograder.diagnose import diagnose_gradient, diagnose_values, shape_hint
from autograder.errors import GradingError
from autograder.function_contract import rule_reference


def values(*shape, seed=0, dtype=torch.float64):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def test_correct_gradient_passes():
    """Does a gradient equal to the reference pass silently?"""
    expected = values(3, 4)
    diagnose_gradient("x", expected.clone(), expected)


def test_tolerance_is_respected():
    """Is a gradient within rtol of the reference accepted, and one outside it rejected?"""
    expected = values(5) + 3
    diagnose_gradient("x", expected * (1 + 1e-7), expected, rtol=1e-5)
    with pytest.raises(GradingError):
        diagnose_gradient("x", expected * (1 + 1e-3), expected, rtol=1e-5)


def test_wrong_sign(raises_hint):
    """Is a negated gradient called a sign error?"""
    expected = values(6)
    with raises_hint("your gradient for x is the expected one times -1: check the sign"):
        diagnose_gradient("x", -expected, expected)


def test_constant_factor(raises_hint):
    """Is a gradient scaled by 2.5 called off by a constant factor 2.5?"""
    expected = values(2, 3)
    with raises_hint("your gradient for w is off by a constant factor 2.5: a factor missing, "
                     "or one too many?"):
        diagnose_gradient("w", 2.5 * expected, expected)


def test_a_factor_near_one_is_never_rounded_to_one(raises_hint):
    """A factor of 1.00002 is outside rtol: is it printed in full, never as a right-looking 1?"""
    expected = values(2, 3)
    with raises_hint("off by a constant factor 1.00002: a factor missing, or one too many?"):
        diagnose_gradient("w", 1.00002 * expected, expected, rtol=1e-6)


def test_zero_gradient(raises_hint):
    """Is an all-zero gradient called unfinished, on many elements and on one?"""
    for shape in [(4,), ()]:
        expected = values(*shape) + 1
        with raises_hint("your gradient for x is zero everywhere, where the expected one is not"):
            diagnose_gradient("x", torch.zeros_like(expected), expected)


def test_single_element_is_not_called_a_constant_factor(raises_hint):
    """On a 0-d tensor any wrong value is "a factor": does the hint give the values instead?"""
    expected = torch.tensor(2.0, dtype=torch.float64)
    with raises_hint("your gradient for x is wrong: largest error 1.3 at index () "
                     "(got 3.3, expected 2)"):
        diagnose_gradient("x", torch.tensor(3.3, dtype=torch.float64), expected)


def test_transposed_square_matrix(raises_hint):
    """When a square gradient is transposed the shape is right: is the transpose named?"""
    expected = values(3, 3)
    with raises_hint("grad_weight is the transpose of the true gradient: a transpose?"):
        diagnose_gradient("weight", expected.T.contiguous(), expected)


def test_transposed_shape(raises_hint):
    """Is a (3, 4) gradient for a (4, 3) input called a transpose, with both shapes?"""
    with raises_hint("grad_weight has shape (3, 4) but weight has shape (4, 3): a transpose?"):
        diagnose_gradient("weight", values(3, 4, seed=1), values(4, 3))


def test_unreduced_shape(raises_hint):
    """Is a gradient that kept a broadcast dimension told to sum over it?"""
    with raises_hint("grad_bias has shape (5, 4) but bias has shape (4,): bias broadcasts to "
                     "that shape; sum over the dimensions bias was broadcast along"):
        diagnose_gradient("bias", values(5, 4), values(4))


@pytest.mark.parametrize("got, expected, transpose", [
    ((3, 4), (4, 3), True), ((4, 3), (4, 3), False), ((2, 3, 4), (4, 3, 2), False),
    ((4,), (4, 1), False),
])
def test_shape_hint(got, expected, transpose):
    """Does shape_hint suggest a transpose exactly for reversed 2-D shapes?"""
    hint = shape_hint("w", got, expected)
    assert hint.startswith(f"grad_w has shape {got} but w has shape {expected}: ")
    assert hint.endswith("a transpose?") == transpose


RULE_2 = ("or one the input broadcasts to (Function contract, rule 2: One gradient per input, "
          "None where none is needed)")


@pytest.mark.parametrize("got, expected, advice", [
    ((5, 4), (4,), "sum over the dimensions w was broadcast along"),
    ((2, 3), (2, 1), "sum over the dimensions w was broadcast along"),
    ((10, 3), (2, 5, 3), RULE_2),
    ((3, 5), (2, 4), RULE_2),
])
def test_shape_hint_names_a_sum_only_where_the_input_was_broadcast(got, expected, advice):
    """Is "sum over broadcast dimensions" said only where the input's shape broadcasts to the
    gradient's (a reshape is said only where the values prove it: below)?"""
    assert shape_hint("w", got, expected).endswith(advice)


def test_right_values_in_another_layout_are_named(raises_hint):
    """Are the right values with the dimensions in another order (an einsum's output letters)
    or flattened named as such, and a wrong gradient of the same size not told to reshape?"""
    truth = values(4, 3, 2)
    with raises_hint("grad_w has shape (3, 4, 2) but w has shape (4, 3, 2): it holds the right "
                     "values with its dimensions in another order (permute(1, 0, 2) of it"):
        diagnose_gradient("w", truth.permute(1, 0, 2).contiguous(), truth)
    with raises_hint("it holds the right values, flattened: reshape it back to w's shape"):
        diagnose_gradient("w", truth.reshape(12, 2), truth)
    with pytest.raises(GradingError) as info:
        diagnose_gradient("w", values(12, 2, seed=3), truth)
    assert "reshape" not in str(info.value) and "order" not in str(info.value)


def test_none_gradient(raises_hint):
    """Is a None gradient for an input that requires grad named?"""
    with raises_hint("backward returned None for x, which requires grad: return grad_x"):
        diagnose_gradient("x", None, values(3))


def test_none_gradient_for_an_empty_input_suspects_the_zeros_shortcut(raises_hint):
    """An empty input's grad_output holds no nonzero entry: a backward that returns None when
    grad_output is all zeros fails there first, and the line says so, with rule 2's tag."""
    with raises_hint("backward returned None for x, which requires grad (x is empty, so "
                     "grad_output holds no nonzero entry: does backward return None when "
                     "grad_output is all zeros?)") as info:
        diagnose_gradient("x", None, values(0))
    assert str(info.value).splitlines()[0].endswith(rule_reference("gradients"))


def test_non_tensor_gradient(raises_hint):
    """Is a float returned as a gradient named by its type?"""
    with raises_hint("backward returned a float for x: return a tensor grad_x"):
        diagnose_gradient("x", 1.0, values(3))


def test_wrong_device(raises_hint):
    """Is a gradient created on another device named, with both devices?"""
    with raises_hint("grad_x is on meta but x is on cpu: create new tensors on the input's device"):
        diagnose_gradient("x", torch.empty(3, device="meta", dtype=torch.float64), values(3))


def test_wrong_dtype(raises_hint):
    """Is a gradient in another dtype named?"""
    expected = values(3)
    with raises_hint("grad_x has dtype torch.float32 but x has dtype torch.float64"):
        diagnose_gradient("x", expected.float(), expected)


def test_non_finite_gradient(raises_hint):
    """Is nan where the true gradient is finite called numerically unstable?"""
    got = values(4)
    got[1] = float("nan")
    with raises_hint("grad_x contains inf or nan where the true gradient is finite"):
        diagnose_gradient("x", got, values(4))


def test_non_finite_gradient_where_an_input_is_negative(raises_hint):
    """Is a nan exactly at the negative x named there (a y ** (2/3) for x ** 2)?"""
    x = torch.tensor([1.0, -0.5, 2.0, -3.0], dtype=torch.float64)
    got = torch.where(x < 0, float("nan"), 3 * x ** 2)
    with raises_hint("grad_x contains inf or nan where the true gradient is finite, first at "
                     "index (1,), where x = -0.5 (nan), exactly where x < 0"):
        diagnose_gradient("x", got, 3 * x ** 2, inputs={"x": x})


def test_non_finite_gradient_with_an_empty_input(raises_hint):
    """Is a nan gradient for beta with an empty x blamed on the empty x (a mean over none)?"""
    x = torch.zeros(2, 0, dtype=torch.float64)
    with raises_hint("grad_beta contains inf or nan where the true gradient is finite, with x "
                     "empty"):
        diagnose_gradient("beta", torch.tensor(float("nan")), torch.tensor(0.0),
                          inputs={"x": x, "beta": torch.tensor(1.0)})


def test_unrecognised_mistake_reports_worst_index(raises_hint):
    """Does an arbitrary error report the largest error, where, and both values?"""
    expected = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    got = expected.clone()
    got[1, 0] = 7.0
    got[0, 1] = 2.5
    with raises_hint("your gradient for x is wrong: largest error 4 at index (1, 0) "
                     "(got 7, expected 3)"):
        diagnose_gradient("x", got, expected)


def test_worst_index_names_the_inputs_there(raises_hint):
    """Does the report give each same-shaped input's value where the error is largest, so a
    learner can try that value, and leave out inputs of another shape?"""
    expected = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    inputs = {"x": torch.tensor([0.5, -36.75, 2.0], dtype=torch.float64),
              "bias": torch.tensor(1.0, dtype=torch.float64), "scale": 2.0}
    with raises_hint("your gradient for x is wrong: largest error 4 at index (1,), "
                     "where x = -36.75 (got 6, expected 2)"):
        diagnose_gradient("x", torch.tensor([1.0, 6.0, 3.0], dtype=torch.float64), expected,
                          inputs=inputs)
    with raises_hint("f's output is wrong: largest error 4 at index (1,), where x = -36.75"):
        diagnose_values("f's output", torch.tensor([1.0, 6.0, 3.0], dtype=torch.float64),
                        expected, inputs=inputs)


def test_a_float64_result_computed_in_float32_is_named(raises_hint):
    """Is a float64 gradient or output whose every value is a float32 number named as a float32
    step, though it is within tolerance, and only where the learner's code ran in float64?"""
    truth = values(5)
    rounded = truth.float().double()
    with raises_hint("every value of grad_x is exactly a float32 number, where the truth"):
        diagnose_gradient("x", rounded, truth, computed_in=torch.float64)
    with raises_hint("every value of f's output is exactly a float32 number"):
        diagnose_values("f's output", rounded, truth, computed_in=torch.float64)
    diagnose_gradient("x", rounded, truth)  # widened from float32 by the grader: no claim
    diagnose_gradient("x", rounded, truth, computed_in=torch.float32)


def test_a_float64_result_off_by_float32_rounding_is_asked_about(raises_hint):
    """Is a float64 result outside float64's tolerance but within float32's rounding asked
    about as a float32 step (a float32 constant leaves values that are not float32 numbers),
    rather than called a constant factor?"""
    truth = values(5)
    scaled = truth * torch.tensor(0.1).item() / 0.1  # a constant rounded through float32
    with raises_hint("grad_x agrees with the truth to five digits or more but is far outside "
                     "float64's precision (largest error"):
        diagnose_gradient("x", scaled, truth, rtol=1e-9, atol=1e-10, computed_in=torch.float64)


def test_precision_findings_wait_for_the_end_of_the_battery(raises_hint):
    """Inside a battery, is a precision finding held until the end, a later probe's failure
    raised first (but not a bare value failure), and a proven finding preferred?"""
    from autograder.precision import precision_findings_last

    truth = values(5)
    with pytest.raises(GradingError, match="a later probe"):
        with precision_findings_last("Square"):
            diagnose_gradient("x", truth.float().double(), truth, computed_in=torch.float64)
            raise GradingError("a later probe names the cause")
    with pytest.raises(GradingError) as info:
        with precision_findings_last("Square"):
            diagnose_gradient("x", truth * (1 + 3e-8), truth, rtol=1e-9, atol=1e-10,
                              computed_in=torch.float64)
            diagnose_gradient("x", truth.float().double(), truth, computed_in=torch.float64)
    assert info.value.mistake == "Square/float32-step"
    with raises_hint("grad_x agrees with the truth to five digits or more") as info:
        with precision_findings_last("Square"):  # a later bare value failure: the loss says why
            diagnose_gradient("x", truth * (1 + 3e-8), truth, rtol=1e-9, atol=1e-10,
                              computed_in=torch.float64)
            diagnose_gradient("x", truth + values(5, seed=1), truth)  # no cause to name
    # the digits lost are proven (insight groups them), the step that lost them is not
    assert info.value.mistake == "Square/lost-float64-digits"


def test_float32_numbers_that_are_the_truth_pass():
    """Do exact answers that happen to be float32 numbers (integers, halves) pass, and does a
    float64 rounding difference from the reference stay unblamed?"""
    halves = torch.tensor([0.5, -2.0, 3.0], dtype=torch.float64)
    diagnose_gradient("x", halves.clone(), halves, computed_in=torch.float64)
    truth = values(5)
    diagnose_gradient("x", truth * (1 + 1e-15), truth, computed_in=torch.float64)


def test_nonzero_gradient_where_truth_is_zero(raises_hint):
    """Where the true gradient is zero, is a nonzero one reported (not a factor or a sign)?"""
    with raises_hint("your gradient for x is wrong"):
        diagnose_gradient("x", values(3), torch.zeros(3, dtype=torch.float64))


def test_requires_grad_tensors_are_compared():
    """Do tensors that require grad compare without autograd complaining?"""
    expected = values(3).requires_grad_()
    diagnose_gradient("x", expected * 1, expected)


@pytest.mark.parametrize("check, got, mistake", [
    (diagnose_gradient, None, "Square/returns-none-gradient"),
    (diagnose_gradient, 1.0, "Square/gradient-not-a-tensor"),
    (diagnose_gradient, values(4), "Square/wrong-gradient-shape"),
    (diagnose_gradient, values(3).float(), "Square/wrong-gradient-dtype"),
    (diagnose_gradient, torch.empty(3, device="meta", dtype=torch.float64),
     "Square/gradient-on-wrong-device"),
    (diagnose_values, 1.0, "Square/output-not-a-tensor"),
    (diagnose_values, values(4), "Square/wrong-output-shape"),
    (diagnose_values, values(3).float(), "Square/wrong-output-dtype"),
    (diagnose_values, torch.empty(3, device="meta", dtype=torch.float64),
     "Square/output-on-wrong-device"),
])
def test_a_proven_fact_has_the_exercise_s_id_where_the_exercise_is_named(check, got, mistake):
    """Does a fact the check proves (None, not a tensor, the shape, dtype or device) carry the
    id of the exercise the caller names, and a value that only differs none?"""
    from autograder.mistakes import mistake_of

    with pytest.raises(GradingError) as failure:
        check("x", got, values(3), exercise_name="Square")
    assert mistake_of(failure.value) == mistake
    with pytest.raises(GradingError) as unnamed:
        check("x", got, values(3))
    assert mistake_of(unnamed.value) == "unproven:wrong-value"
    with pytest.raises(GradingError) as wrong:
        check("x", values(3) + 1, values(3), exercise_name="Square")
    assert mistake_of(wrong.value) == "unproven:wrong-value"


def _with_inf(t):
    t = t.clone()
    t[0, 0] = float("inf")
    return t


@pytest.mark.parametrize("check, wrong, mistake", [
    (diagnose_gradient, lambda e: -e, "Square/wrong-gradient-sign"),
    (diagnose_gradient, lambda e: 2.5 * e, "Square/gradient-off-by-a-factor"),
    (diagnose_gradient, torch.zeros_like, "Square/zero-gradient"),
    (diagnose_gradient, lambda e: e.T, "Square/transposed-gradient"),
    (diagnose_gradient, _with_inf, "Square/non-finite-gradient"),
    (diagnose_values, _with_inf, "Square/non-finite-output"),
])
def test_what_the_values_prove_has_the_exercise_s_id(check, wrong, mistake):
    """Does a fact the values prove (the true gradient times -1, times one constant, zero
    everywhere, transposed; inf or nan where the true values are finite) carry its id where
    the exercise is named, and no id where it is not?"""
    from autograder.mistakes import mistake_of

    expected = values(3, 3)
    with pytest.raises(GradingError) as failure:
        check("x", wrong(expected), expected, exercise_name="Square")
    assert mistake_of(failure.value) == mistake
    with pytest.raises(GradingError) as unnamed:
        check("x", wrong(expected), expected)
    assert mistake_of(unnamed.value) == "unproven:wrong-value"
