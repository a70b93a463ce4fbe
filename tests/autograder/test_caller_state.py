"""Rule 6, the caller's state: grad mode, the default dtype, the random number generators and
the modules the inputs reach are left as the op leaves them; a correct answer, one drawing
random numbers as its reference does included, passes."""

import pytest
import torch
from torch import nn

from autograder.caller_state import check_caller_state, reachable_state
from autograder.domain import Domain, Operator, sampled
from autograder.function_contract import rule_reference
from autograder.spec import Spec
from tests.autograder.rule_answers import CPU, SQUARE, SQUARE_DOMAIN, function

LAYERS = Spec("layers_then_tanh", ("layers", "x"),
              lambda layers, x: torch.tanh(nn.Sequential(*layers)(x)))


def _layers_values(device, dtype=torch.float64, seed=0):
    torch.manual_seed(seed)
    layers = [nn.Linear(4, 4, dtype=dtype, device=device) for _ in range(3)]
    return {"layers": layers, "x": torch.randn(2, 4, dtype=dtype, device=device)}


LAYERS_DOMAIN = Domain(LAYERS, _layers_values, prepare=Operator)


def _first_line(error) -> str:
    return str(error).splitlines()[0]


def test_unfreezing_every_layer_is_caught(raises_hint):
    """A checkpoint_sequential-like call that runs requires_grad_() on every layer: the check
    freezes every other parameter first, so the unfrozen ones show."""
    def unfreezing(layers, x):
        for layer in layers:
            layer.requires_grad_()
        return LAYERS.reference(layers, x)

    with raises_hint("forward changed the caller's layers[0].bias.requires_grad from False to "
                     "True") as info:
        check_caller_state(LAYERS_DOMAIN, Operator(unfreezing), CPU)
    assert _first_line(info.value).endswith(rule_reference("caller"))


def test_training_mode_set_is_caught(raises_hint):
    def training(layers, x):
        for layer in layers:
            layer.train()
        return LAYERS.reference(layers, x)

    with raises_hint(".training from False to True"):
        check_caller_state(LAYERS_DOMAIN, Operator(training), CPU)


def test_layers_left_as_given_pass_and_are_put_back():
    _, parameters = reachable_state(values := _layers_values(CPU))
    check_caller_state(Domain(LAYERS, lambda device, dtype=torch.float64, seed=0: values,
                              prepare=Operator), Operator(LAYERS.reference), CPU)
    assert all(p.requires_grad for p in parameters.values())
    assert all(layer.training for layer in values["layers"])


def test_grad_mode_left_off_is_caught_and_restored(raises_hint):
    def no_grad(layers, x):
        torch.set_grad_enabled(False)
        return LAYERS.reference(layers, x)

    with raises_hint("changed the caller's grad mode (torch.is_grad_enabled()) from True to "
                     "False"):
        check_caller_state(LAYERS_DOMAIN, Operator(no_grad), CPU)
    assert torch.is_grad_enabled()


def test_default_dtype_changed_is_caught_and_restored(raises_hint):
    answer = function("Square", "torch.set_default_dtype(torch.float64)\n"
                      "ctx.save_for_backward(x)\nreturn x * x",
                      "x, = ctx.saved_tensors\nreturn 2 * x * g")
    with raises_hint("default dtype (torch.get_default_dtype()) from torch.float32 to "
                     "torch.float64"):
        check_caller_state(SQUARE_DOMAIN, answer, CPU)
    assert torch.get_default_dtype() == torch.float32


def test_a_default_dtype_set_to_the_inputs_is_caught_at_another_dtype(raises_hint):
    """torch.set_default_dtype(x.dtype) changes nothing at float32 inputs: is it caught at the
    float64 ones every exercise names, and the default put back?"""
    answer = function("Square", "torch.set_default_dtype(x.dtype)\n"
                      "ctx.save_for_backward(x)\nreturn x * x",
                      "x, = ctx.saved_tensors\nreturn 2 * x * g")
    made = sampled(SQUARE, {"x": (3, 4)})
    float32_typical = Domain(SQUARE, lambda device, dtype=torch.float32, **given: made(
        device, dtype, **given))
    with raises_hint("changed the caller's default dtype (torch.get_default_dtype()) from "
                     "torch.float32 to torch.float64 (tried one call at float64 inputs)"):
        check_caller_state(float32_typical, answer, CPU)
    assert torch.get_default_dtype() == torch.float32


def test_random_numbers_the_op_does_not_draw_are_caught(raises_hint):
    answer = function("Square", "ctx.save_for_backward(x)\nreturn x * x",
                      "x, = ctx.saved_tensors\nnoise = torch.rand(())  # a leftover debug draw\n"
                      "return 2 * x * g + 0 * noise")
    with raises_hint("the CPU random number generator is not where the op leaves it") as info:
        check_caller_state(SQUARE_DOMAIN, answer, CPU)
    assert info.value.mistake == "Square/moves-random-state"


DROPOUT = Spec("Dropout", ("x",), lambda x: nn.functional.dropout(x, 0.5) * 2)


@pytest.mark.parametrize("replays", [True, False])
def test_an_op_that_draws_passes_only_where_it_draws_as_the_reference(raises_hint, replays):
    """Dropout drawn in forward as the reference draws it passes; drawing its mask again in
    backward passes only where the state is replayed and put back (a draw from wherever the
    generator stands advances it past the reference's)."""
    replay = "state = torch.get_rng_state()\ntorch.set_rng_state(ctx.state)\n"
    recompute = ((replay if replays else "")
                 + "mask = nn.functional.dropout(torch.ones_like(g), 0.5)\n"
                 + ("torch.set_rng_state(state)\n" if replays else "")
                 + "return g * mask * 2")
    answer = function("Dropout", "ctx.state = torch.get_rng_state()\n"
                      "return nn.functional.dropout(x, 0.5) * 2", recompute,
                      prelude="from torch import nn")
    domain = Domain(DROPOUT, sampled(DROPOUT, {"x": (3, 4)}))
    if replays:
        check_caller_state(domain, answer, CPU)
    else:
        with raises_hint("the CPU random number generator is not where the op leaves it"):
            check_caller_state(domain, answer, CPU)
