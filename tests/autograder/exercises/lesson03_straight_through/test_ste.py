"""Lesson 03 (straight-through estimators): what the catalogue harness
(tests/autograder/test_catalogue.py) does not cover for SignSTE, SignClippedSTE, RoundSTE and
FakeQuantize: the full text of each hint, and the checks' own helpers."""

import pytest
import torch

from autograder.exercises import EXERCISES
from autograder.exercises.lesson03_straight_through.fake_quantize import (edge_values,
                                                                          expected_gradients)
from autograder.exercises.lesson03_straight_through.ste import (ROUND_EDGES, ROUND_STE,
                                                                SIGN_CLIPPED_STE, SIGN_EDGES,
                                                                SIGN_STE, check_forward_exact)
from tests.autograder.catalogued import graded_mistake, mistake
from tests.autograder.exercises.battery import run
from tools.solutions import solution

pytestmark = pytest.mark.lesson03

NAMES = ["SignSTE", "SignClippedSTE", "RoundSTE"]


def test_edges_cover_the_cases_that_tell_mistakes_apart():
    """Do the edge values hold sign(0), both clip boundaries, and halves that round to even?"""
    assert {0.0, 1.0, -1.0} <= set(SIGN_EDGES)
    assert any(abs(v) > 1e16 for v in SIGN_EDGES)  # where the detach trick's arithmetic rounds
    assert {0.5, 1.5, 2.5, -0.5, -2.5} <= set(ROUND_EDGES)


def test_gradcheck_rejects_a_correct_ste():
    """Is gradcheck really the wrong tool here (so grading must not run it)?"""
    x = torch.tensor([-2.0, -0.5, 0.7, 1.5], dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(solution("SignSTE").apply, (x,))


MISTAKES = [
    ("SignSTE", "zero gradient (the true derivative)",
     "SignSTE's gradient is zero everywhere: that is the true derivative of sign, which a "
     "straight-through estimator replaces; return grad_output times the slope of your stand-in"),
    ("SignSTE", "ones instead of grad_output", "SignSTE's backward ignores grad_output: multiply"),
    ("SignSTE", "clips: the other exercise's estimator",
     "SignSTE zeroes the gradient where |x| > 1: that is the clipped estimator (SignClippedSTE)"),
    ("SignSTE", "where(x >= 0, 1, -1) sends 0 to 1", "SignSTE.apply(0) gives 1 but sign(0) = 0: "
     "use torch.sign(x) (a comparison such as x >= 0 sends 0 to one side)"),
    ("SignSTE", "x / x.abs(), nan at 0", "SignSTE.apply(0) gives nan but sign(0) = 0: use "
     "torch.sign(x) (0 / 0 is nan, as in x / x.abs() at 0; x / x.abs() is also nan at ±inf, "
     "inf / inf) (with the edge values"),
    ("SignSTE", "tanh(100 x) in forward",
     "SignSTE's output is not all -1, 0 or 1 (at x = -1e-30 it gives -1.0000000000000001e-28, "
     "expected -1): a smooth approximation is not sign(x)"),
    ("SignSTE", "detach trick inside forward",
     "SignSTE's output is sign(x) only up to rounding (at x = -1e+17 it gives 0, expected -1): "
     "inside forward autograd is off, so y_hard - y_soft.detach() + y_soft is plain arithmetic"),
    ("SignSTE", "integer output",
     "SignSTE's output has dtype torch.int64 but should have dtype torch.float64"),
    ("SignClippedSTE", "forgets the clip",
     "SignClippedSTE's gradient is not clipped: it passes grad_output where |x| > 1 too, "
     "where your stand-in for sign is flat and its slope is 0"),
    ("SignClippedSTE", "clip with |x| < 1",
     "SignClippedSTE drops the gradient at |x| == 1: the contract's corners are "
     "torch.clamp(x, -1, 1)'s"),
    ("SignClippedSTE", "inverted clip", "SignClippedSTE's clip mask is inverted"),
    ("SignClippedSTE", "clamps grad_output",
     "SignClippedSTE clips grad_output instead of masking by the input"),
    ("SignClippedSTE", "mask from the saved output",
     "SignClippedSTE builds its clip mask from the output sign(x), whose magnitude is never "
     "above 1: the clip is on the input, so save x"),
    ("SignClippedSTE", "writes into grad_output", "backward modified grad_output in place"),
    ("SignClippedSTE", "gradient returned in float32",
     "SignClippedSTE's gradient is grad_output rounded to float32 (at x = -1 it gives "
     "0.49763965606689453, expected 0.4976396477793393): backward computed it in float32 for "
     "float64 x"),
    ("RoundSTE", "floor",
     "RoundSTE's forward is floor(x), not round(x): use torch.round(x)"),
    ("RoundSTE", "x.long() truncates", "RoundSTE's forward is trunc(x), which is what .long() or "
     ".int() does, not round(x)"),
    ("RoundSTE", "floor(x + 0.5) rounds halves up",
     "RoundSTE does not round halves to even (at x = -1.5 it gives -1, expected -2): "
     "torch.round sends 0.5 to 0, 1.5 to 2 and 2.5 to 2"),
    ("RoundSTE", "no rounding", "RoundSTE's forward returns x unchanged"),
    ("RoundSTE", "smooth look-alike", "RoundSTE's output is not all integers"),
    ("RoundSTE", "zero gradient",
     "RoundSTE's gradient is zero everywhere: that is the true derivative of round"),
    ("RoundSTE", "wrong sign", "your gradient for x is the expected one times -1"),
    ("RoundSTE", "gradient built in the default dtype",
     "RoundSTE's gradient is grad_output rounded to float32"),
    ("FakeQuantize", "returns the integer codes",
     "FakeQuantize returns the integer codes clamp(round(x / scale), qmin, qmax): fake "
     "quantisation returns them times scale"),
    ("FakeQuantize", "round(v) held constant for scale",
     "FakeQuantize's gradient for scale is wrong: inside the clip it uses round(v) alone"),
    ("FakeQuantize", "clipped elements give scale nothing",
     "FakeQuantize's gradient for scale is wrong: it leaves out the clipped elements"),
    ("FakeQuantize", "grad_x divided by scale",
     "FakeQuantize's gradient for x carries a factor 1 / scale"),
    ("FakeQuantize", "LSQ's gradient-scale factor kept",
     "it includes LSQ's gradient-scale factor 1 / sqrt(numel * qmax): this exercise's contract "
     "leaves it out"),
]


def _id(value):
    return value if isinstance(value, str) and len(value) < 40 else ""


@pytest.mark.parametrize("name, entry, hint", MISTAKES, ids=_id)
def test_mistake_named_by_quick(name, entry, hint, raises_hint):
    """Does the visible self-check already name each mistake, in full?"""
    with raises_hint(hint):
        run(name, mistake(name, entry))


@pytest.mark.parametrize("name, entry, hint", MISTAKES + [
    ("SignSTE", "x kept on ctx",
     "SignSTE stores a tensor as ctx.x: use ctx.save_for_backward"),
    ("SignClippedSTE", "x kept on ctx",
     "SignClippedSTE stores a tensor as ctx.x: use ctx.save_for_backward"),
], ids=_id)
def test_mistake_named_by_full(name, entry, hint, device, raises_hint):
    """Do the hidden checks name each mistake, in full, on every device?"""
    with raises_hint(hint):
        run(name, mistake(name, entry), device)


def test_unclipped_loses_the_exercise_on_grading(raises_hint):
    """Does grading (every device) fail the syllabus's example mistake with its hint?"""
    with raises_hint("SignClippedSTE's gradient is not clipped"):
        EXERCISES["SignClippedSTE"].run(mistake("SignClippedSTE", "forgets the clip"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_forward_is_compared_bit_for_bit(dtype, device):
    """Is the forward compared bit for bit in both dtypes (no tolerance hides a look-alike)?"""
    x = torch.tensor(SIGN_EDGES, dtype=dtype, device=device)
    check_forward_exact(SIGN_STE, torch.sign(x), x)
    check_forward_exact(SIGN_CLIPPED_STE, torch.sign(x), x)
    x = torch.tensor(ROUND_EDGES, dtype=dtype, device=device)
    check_forward_exact(ROUND_STE, torch.round(x), x)
    almost = torch.round(x) + torch.where(x == 0.5, 1e-3, 0.0).to(dtype)
    with pytest.raises(AssertionError, match="not all integers"):
        check_forward_exact(ROUND_STE, almost, x)


def test_wrong_device_output_is_named(cuda, raises_hint):
    """Is a forward that moves its output to the CPU told which device it should be on?"""

    class SignOnCPU(solution("SignSTE")):
        @staticmethod
        def forward(ctx, x):
            return torch.sign(x).cpu()

    with raises_hint("SignSTE's output is on cpu but should be on cuda"):
        run("SignSTE", SignOnCPU, cuda)


class _Stub(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        raise NotImplementedError()

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError()


@pytest.mark.parametrize("name", NAMES)
def test_stub_raises_not_implemented(name):
    """Does an untouched stub raise NotImplementedError itself, as learners' copies expect?"""
    with pytest.raises(NotImplementedError):
        run(name, _Stub)


class _FakeQuantizeStub(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        raise NotImplementedError()

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError()


def test_fake_quantize_stub_raises_not_implemented():
    """Does an untouched FakeQuantize stub raise NotImplementedError itself?"""
    with pytest.raises(NotImplementedError):
        run("FakeQuantize", _FakeQuantizeStub)


def test_round_convention_is_pytorchs():
    """Is the round(v) convention the one torch._fake_quantize_learnable_per_tensor_affine
    follows (zero point 0, gradient factor 1), for x and for scale?"""
    values = edge_values("cpu")
    x = values["x"].float().requires_grad_()
    scale = values["scale"].float().reshape(1).requires_grad_()
    output = torch._fake_quantize_learnable_per_tensor_affine(x, scale, torch.zeros(1), -4, 3,
                                                              1.0)
    grad_output = torch.linspace(-1, 1, x.numel())
    grad_x, grad_scale = torch.autograd.grad(output, (x, scale), grad_output)
    ours_x, ours_scale = expected_gradients(x.detach(), scale.detach()[0], -4, 3, grad_output,
                                            "round(v)")
    assert torch.equal(grad_x, ours_x)
    assert torch.allclose(grad_scale[0], ours_scale, atol=1e-6)
    other_x, _ = expected_gradients(x.detach(), scale.detach()[0], -4, 3, grad_output, "v")
    assert not torch.equal(other_x, ours_x)  # the edge values do reach the half-step band


def test_the_two_conventions_both_pass(raises_hint):
    """Does grading accept a backward that judges inside on v and one that judges on round(v)?"""
    from tools.catalogue.lesson03_straight_through import fake_quantize
    for entry in fake_quantize.UNUSUAL:
        if "round(v)" in entry.name:
            run("FakeQuantize", entry.load())
    run("FakeQuantize", solution("FakeQuantize"))


def test_the_float_edges_are_what_their_comments_say():
    """Are the added edges where a float32 copy or a rounded x + 0.5 goes wrong, as claimed?"""
    below_half32 = torch.tensor(0.4999999701976776, dtype=torch.float32)
    assert torch.nextafter(below_half32, torch.tensor(1.0)).item() == 0.5
    for dtype, below_half in ((torch.float64, 0.49999999999999994), (torch.float32, below_half32)):
        x = torch.tensor([below_half, 2.0 ** 23 + 1, 2.0 ** 52 + 1], dtype=dtype)
        rounded_up = torch.floor(x + 0.5) != torch.round(x)
        assert rounded_up[0] and (rounded_up[1] if dtype == torch.float32 else rounded_up[2])
    near_one = torch.tensor([1 + 1e-9, 1e-300], dtype=torch.float64)
    assert torch.equal(near_one.float(), torch.tensor([1.0, 0.0]))  # a float32 copy loses them
    assert {1 + 1e-9, -1 - 1e-9, 1e-300} <= set(SIGN_EDGES)
    past_one = torch.tensor([1 + 1e-7, -1 - 1e-7], dtype=torch.float64)
    assert torch.equal(past_one.float().abs() > 1, torch.tensor([True, True]))  # still outside
    assert {1 + 1e-7, -1 - 1e-7} <= set(SIGN_EDGES)
    assert {0.49999999999999994, 0.4999999701976776, 2.0 ** 23 + 1, 2.0 ** 52 + 1} <= set(ROUND_EDGES)
    apart = torch.tensor([2.0 ** 40 + 1.5], dtype=torch.float64)  # round gives 2^40 + 2
    magic = 1.5 * 2.0 ** 52
    assert torch.equal((apart + magic) - magic, torch.round(apart))  # float64 tricks are right
    assert torch.round(apart.float()).item() == 2.0 ** 40  # a float32 copy is not
    assert 2.0 ** 40 + 1.5 in ROUND_EDGES


def test_magic_number_rounding_is_not_told_float32():
    """Is (x + 1.5 * 2^52) - 1.5 * 2^52, wrong only at 2^52 + 1 as round(x.float()) is, kept
    apart from a float32 copy by 2^40 + 1.5, and told where it is wrong?"""
    with pytest.raises(AssertionError) as raised:
        run("RoundSTE", mistake("RoundSTE", "magic-number rounding (x + 1.5 * 2^52) - 1.5 * 2^52"))
    first = str(raised.value).splitlines()[0]
    assert "at x = 4503599627370497" in first and "float32" not in first


def test_a_wrong_gradient_is_located_by_x_not_by_index(raises_hint):
    """Does a surrogate that is wrong at x = 1 only say "at x = 1", a value the learner knows?"""
    class DropsPlusOne(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sign(x)

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * ((x >= -1) & (x < 1))

    with raises_hint("your gradient for x is wrong: at x = 1 it gives 0, expected"):
        run("SignClippedSTE", DropsPlusOne)


def test_the_detach_trick_is_named_only_where_the_output_is_what_it_computes():
    """Is a round computed in float32 (no detach trick) told that, and is the detach trick,
    exact for round, never blamed for RoundSTE?"""
    x = torch.tensor(ROUND_EDGES, dtype=torch.float64)
    assert torch.equal((torch.round(x) - x) + x, torch.round(x))  # the trick is exact for round
    with pytest.raises(AssertionError) as raised:
        check_forward_exact(ROUND_STE, torch.round(x.float()).double(), x)
    first = str(raised.value).splitlines()[0]
    assert "round of x rounded to float32" in first and "detach" not in first


@pytest.mark.parametrize("spec", [SIGN_STE, SIGN_CLIPPED_STE])
def test_a_sign_of_float32_x_is_named_by_the_x_it_loses(spec, raises_hint):
    """Is sign(x.float()) for float64 x named as a float32 step at the x it gets wrong (1e-300,
    0 in float32), and another wrong sign located by its x, not only its index?"""
    x = torch.tensor(SIGN_EDGES, dtype=torch.float64)
    with raises_hint(f"{spec.name}'s output is sign of x rounded to float32 (at x = 1e-300 it "
                     "gives 0, expected 1): forward ran sign on a float32 copy of x"):
        check_forward_exact(spec, torch.sign(x.float()).double(), x)
    flipped = torch.sign(x) * torch.where(x == 0.25, -1.0, 1.0).double()
    with raises_hint("is wrong: largest error 2 at index (8,), where x = 0.25"):
        check_forward_exact(spec, flipped, x)


def test_a_mask_on_float32_x_is_named(raises_hint):
    """Is a clip mask built on x.float() named as such, at the x just outside the window that a
    float32 copy rounds to -1?"""
    with raises_hint("SignClippedSTE's clip mask is built on x rounded to float32 (at x = "
                     "-1.000000001 it gives"):
        run("SignClippedSTE", mistake("SignClippedSTE", "mask on a float32 copy of x"))


# Each probed hint of the three estimators and the stable id grading records for it
# (GradingError.mistake): rewording a hint keeps its id.
IDS = [
    ("SignSTE", "zero gradient (the true derivative)", "SignSTE/true-zero-gradient"),
    ("SignSTE", "ones instead of grad_output", "SignSTE/ignores-grad-output"),
    ("SignSTE", "clips: the other exercise's estimator", "SignSTE/clipped-estimator"),
    ("SignSTE", "where(x >= 0, 1, -1) sends 0 to 1", "SignSTE/sign-of-zero-not-zero"),
    ("SignSTE", "x / x.abs(), nan at 0", "SignSTE/sign-of-zero-not-zero"),
    ("SignSTE", "tanh(100 x) in forward", "SignSTE/smooth-forward"),
    ("SignSTE", "detach trick inside forward", "SignSTE/detach-trick-in-forward"),
    ("SignClippedSTE", "forgets the clip", "SignClippedSTE/not-clipped"),
    ("SignClippedSTE", "clip with |x| < 1", "SignClippedSTE/drops-boundary"),
    ("SignClippedSTE", "inverted clip", "SignClippedSTE/inverted-mask"),
    ("SignClippedSTE", "clamps grad_output", "SignClippedSTE/clips-grad-output"),
    ("SignClippedSTE", "mask from the saved output", "SignClippedSTE/mask-from-output"),
    ("SignClippedSTE", "gradient returned in float32", "SignClippedSTE/gradient-in-float32"),
    ("RoundSTE", "floor", "RoundSTE/floors"),
    ("RoundSTE", "x.long() truncates", "RoundSTE/truncates"),
    ("RoundSTE", "floor(x + 0.5) rounds halves up", "RoundSTE/halves-not-to-even"),
    ("RoundSTE", "floor(x + 0.5) with halves sent to even", "RoundSTE/floor-of-x-plus-half"),
    ("RoundSTE", "no rounding", "RoundSTE/forward-returns-x"),
    ("RoundSTE", "smooth look-alike", "RoundSTE/smooth-forward"),
    ("RoundSTE", "zero gradient", "RoundSTE/true-zero-gradient"),
    ("RoundSTE", "gradient built in the default dtype", "RoundSTE/gradient-in-float32"),
    ("SignSTE", "sign of a float32 copy of x", "SignSTE/forward-in-float32"),
    ("SignClippedSTE", "mask on a float32 copy of x", "SignClippedSTE/mask-in-float32"),
    ("SignClippedSTE", "saves x as bfloat16, the mask read from it",
     "SignClippedSTE/saves-narrowed-x"),
    ("RoundSTE", "rounded in float32, no detach trick", "RoundSTE/forward-in-float32"),
    ("RoundSTE", "round(x) + 0.0: -0 turned into 0", "RoundSTE/signed-zero"),
]


@pytest.mark.parametrize("name, entry, expected", IDS, ids=[f"{n}: {e}" for n, e, _ in IDS])
def test_a_probed_mistake_is_graded_with_its_id(name, entry, expected):
    """Does grading a catalogued mistake record its stable id, not only its hint?"""
    assert graded_mistake(name, entry) == expected


def test_a_float32_mask_for_float64_x_passes():
    """Does a clip mask saved as float32 for float64 inputs pass (0 and 1 lose no digits), while
    the same mask with the product taken in float32 does not?"""
    from tools.catalogue.lesson03_straight_through import sign_clipped_ste
    saved = next(entry for entry in sign_clipped_ste.UNUSUAL if "float32" in entry.name)
    run("SignClippedSTE", saved.load())
    with pytest.raises(AssertionError, match="rounded to float32"):
        run("SignClippedSTE", mistake("SignClippedSTE", "gradient returned in float32"))
