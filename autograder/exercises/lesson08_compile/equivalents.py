"""Lesson 08's surviving mutants that leave the answer correct (see autograder.equivalents)."""

from ...equivalents import EquivalentMutant

_COPY = ("a copy of a tensor backward reads holds the same values; the exercise's contract "
         "bounds no saved memory")
_SAVE_BOTH = "ctx.save_for_backward(x, output)"
_WHERE = ("return torch.where(z > 0, z + torch.log1p(torch.exp(-z)), torch.log1p(torch.exp(z))) "
          "/ beta")
_BRANCHES = ("both branches are exact forms of log(1 + e^z), each within a few ulps on either "
             "side of 0, so which one takes z in [0, 1e-6] changes no digit the contract sees")

EQUIVALENTS = [
    EquivalentMutant("LogSumExp", "drop_statement",
                     "m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # a row of -inf "
                     "stays -inf", "pass  # a row of -inf stays -inf",
                     "the guard matters only on a slice of -inf, which the contract (|x| up to "
                     "1000) leaves ungraded: the catalogue's unusual 'the max subtracted with no "
                     "guard'"),
    EquivalentMutant("LogSumExp", "save_copy", _SAVE_BOTH,
                     "ctx.save_for_backward(x, output.clone())", _COPY),
    EquivalentMutant("LogSumExp", "add_copy", _SAVE_BOTH,
                     "ctx.save_for_backward(x, output.contiguous())", _COPY),
    EquivalentMutant("LogSumExp", "save_copy", _SAVE_BOTH,
                     "ctx.save_for_backward(x.clone(), output)", _COPY),
    EquivalentMutant("LogSumExp", "add_copy", _SAVE_BOTH,
                     "ctx.save_for_backward(x.contiguous(), output)", _COPY),
    EquivalentMutant("softplus", "save_copy", "ctx.save_for_backward(x)",
                     "ctx.save_for_backward(x.clone())", _COPY),
    EquivalentMutant("softplus", "add_copy", "ctx.save_for_backward(x)",
                     "ctx.save_for_backward(x.contiguous())", _COPY),
    EquivalentMutant("squared_norm", "save_copy", "ctx.save_for_backward(x)",
                     "ctx.save_for_backward(x.clone())", _COPY),
    EquivalentMutant("squared_norm", "add_copy", "ctx.save_for_backward(x)",
                     "ctx.save_for_backward(x.contiguous())", _COPY),
    EquivalentMutant("squared_norm", "move_threshold",
                     "return squared_norm(x, dim + 1 if dim >= 0 else dim), 0",
                     "return squared_norm(x, dim + 1 if dim >= -1e-06 else dim), 0",
                     "dim is an int: dim >= -1e-06 and dim >= 0 hold for the same dims"),
    EquivalentMutant("softplus", "save_copy", "ctx.save_for_backward(inputs[0])",
                     "ctx.save_for_backward(inputs[0].clone())", _COPY),
    EquivalentMutant("softplus", "ignore_needs_input_grad", "wanted = ctx.needs_input_grad[0]",
                     "wanted = True", "x is the operator's one tensor input: backward runs only "
                     "when x needs a gradient, so the test never skips"),
    EquivalentMutant("softplus", "move_threshold", _WHERE,
                     _WHERE.replace("z > 0", "z > 1e-06"), _BRANCHES),
    EquivalentMutant("softplus", "swap_comparison", _WHERE, _WHERE.replace("z > 0", "z >= 0"),
                     _BRANCHES),
]

# found by the uncapped mutants (session 54), past the default cap of 40 per exercise
_NEVER_EQUAL = ("the reduced dim is placed in the batched x past the batch dim, so it never "
                "equals it: < and <= pick the same branch")
EQUIVALENTS += [
    EquivalentMutant("squared_norm", "swap_reduction", "return torch.empty_like(x).sum(dim)",
                     "return torch.empty_like(x).mean(dim)",
                     "a fake carries a shape, a dtype and a device, never values: sum and mean "
                     "over dim give the same three"),
    EquivalentMutant("squared_norm", "save_copy", "ctx.save_for_backward(2 * x)",
                     "ctx.save_for_backward((2 * x).clone())", _COPY),
    EquivalentMutant("squared_norm", "swap_comparison",
                     "return squared_norm(x, d), (b if b < d else b - 1)",
                     "return squared_norm(x, d), (b if b <= d else b - 1)", _NEVER_EQUAL),
    EquivalentMutant("squared_norm", "swap_comparison",
                     "return squared_norm(x, real), x_bdim if x_bdim < real else x_bdim - 1",
                     "return squared_norm(x, real), x_bdim if x_bdim <= real else x_bdim - 1",
                     _NEVER_EQUAL),
]
