"""Rule 2, None on every path: a backward that returns a gradient for an input needing no
gradient on a typical batch, or zeros for it when grad_output is all zeros, when a ReLU layer is dead, or when the batch is empty, is caught;
one that gates every path on ctx.needs_input_grad passes."""

import pytest
import torch

from autograder.domain import Domain
from autograder.function_contract import rule_reference
from autograder.none_paths import check_none_on_every_path
from autograder.spec import Spec
from tests.autograder.rule_answers import CPU, GATED, OUTER_DOMAIN, function, outer

RELU_OUTER = Spec("Outer", ("u", "v"), lambda u, v: torch.outer(u, v).clamp(min=0))

SHORTCUT = ("if not g.any():\n"
            "    return torch.zeros_like(u), torch.zeros_like(v)\n") + GATED
EMPTY = ("if g.numel() == 0:\n"
         "    return torch.zeros_like(u), torch.zeros_like(v)\n") + GATED


@pytest.mark.parametrize("backward, path", [(SHORTCUT, "a grad_output of zeros"),
                                            (EMPTY, "an empty batch")])
def test_zeros_on_a_shortcut_are_caught(raises_hint, backward, path):
    with raises_hint(f"returned a tensor of zeros for v, which needs no gradient, with {path}") \
            as info:
        check_none_on_every_path(OUTER_DOMAIN, outer(backward), CPU)
    assert str(info.value).splitlines()[0].endswith(rule_reference("gradients"))
    assert info.value.mistake == "Outer/not-none-on-every-path"


def test_none_on_every_path_passes():
    gated = outer("if not g.any():\n"
                  "    return (torch.zeros_like(u) if ctx.needs_input_grad[0] else None,\n"
                  "            torch.zeros_like(v) if ctx.needs_input_grad[1] else None)\n"
                  + GATED)
    check_none_on_every_path(OUTER_DOMAIN, gated, CPU)


def test_an_ungated_backward_is_caught_on_the_typical_path(raises_hint):
    """Tensors for every input, whichever requires grad: work autograd throws away."""
    with raises_hint("returned a gradient for v with only u requiring grad") as info:
        check_none_on_every_path(OUTER_DOMAIN, outer("return g @ v, g.T @ u"), CPU)
    assert str(info.value).splitlines()[0].endswith(rule_reference("gradients"))
    assert info.value.mistake == "Outer/computes-frozen-gradient"


def test_a_gate_on_the_other_input_s_entry_is_named(raises_hint):
    swapped = outer("return (g @ v if ctx.needs_input_grad[1] else None,\n"
                    "        g.T @ u if ctx.needs_input_grad[0] else None)")
    with raises_hint("from another input's entry of ctx.needs_input_grad") as info:
        check_none_on_every_path(OUTER_DOMAIN, swapped, CPU)
    assert info.value.mistake == "Outer/gate-on-wrong-entry"


def test_zeros_where_a_relu_layer_is_dead_are_caught(raises_hint):
    """A fused ReLU(u v^T) whose backward returns zeros for both inputs when every unit is off:
    inputs of zeros put every unit at the kink, the path a typical batch never takes."""
    dead = function("Outer", "mask = torch.outer(u, v) > 0\nctx.save_for_backward(u, v, mask)\n"
                    "return torch.outer(u, v).clamp(min=0)",
                    "u, v, mask = ctx.saved_tensors\n"
                    "if not mask.any():\n"
                    "    return torch.zeros_like(u), torch.zeros_like(v)\n"
                    "g = g * mask\n" + GATED, "u, v")
    domain = Domain(RELU_OUTER, OUTER_DOMAIN.values)
    with raises_hint("with every floating input all zeros"):
        check_none_on_every_path(domain, dead, CPU)


SELECT = Spec("Select", ("x", "index"), lambda x, index: x.index_select(0, index))
SELECT_DOMAIN = Domain(SELECT, lambda device, dtype=torch.float64, seed=0, **given: {
    "x": torch.randn(4, 3, dtype=dtype, generator=torch.Generator().manual_seed(seed)).to(device),
    "index": torch.tensor([2, 0, 2], device=device)})
SELECT_FORWARD = ("ctx.save_for_backward(index)\nctx.rows = x.shape[0]\n"
                  "return x.index_select(0, index)")
SELECT_GRAD_X = "g.new_zeros((ctx.rows, *g.shape[1:])).index_add(0, index, g)"


@pytest.mark.parametrize("given", ["torch.zeros_like(index)", "index"])
def test_a_tensor_for_an_integer_input_is_caught(raises_hint, given):
    """An integer (or bool) tensor can never require grad: autograd drops whatever backward
    returns for it without a word, so rule 2's None is checked on what backward returned."""
    answer = function("Select", SELECT_FORWARD,
                      f"index, = ctx.saved_tensors\nreturn {SELECT_GRAD_X}, {given}", "x, index")
    with raises_hint("Select.backward returned a tensor" + (" of zeros" if "zeros" in given else "")
                     + " for its int64 input index: an integer or bool tensor never needs a "
                       "gradient") as info:
        check_none_on_every_path(SELECT_DOMAIN, answer, CPU)
    assert str(info.value).splitlines()[0].endswith(rule_reference("gradients"))
    assert info.value.mistake == "Select/gradient-for-integer-input"


def test_none_for_an_integer_input_passes():
    answer = function("Select", SELECT_FORWARD,
                      f"index, = ctx.saved_tensors\nreturn {SELECT_GRAD_X}, None", "x, index")
    check_none_on_every_path(SELECT_DOMAIN, answer, CPU)
