"""Lesson 08's surviving mutants that leave the answer correct (see tools.mutants.listed)."""

from .. import EquivalentMutant

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
    EquivalentMutant("LogSumExp", "drop_statement", "dim = dim % x.dim()", "pass",
                     "forward's amax, sum and squeeze take a negative dim as it is: the "
                     "normalised dim names the same dimension (setup_context normalises its own "
                     "copy for backward and jvp)"),
    EquivalentMutant("LogSumExp", "add_copy", _SAVE_BOTH,
                     "ctx.save_for_backward(x, output.contiguous())",
                     "the output is a fresh contiguous tensor, so output.contiguous() is the "
                     "output itself, with the graph a second derivative follows back to x"),
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
    EquivalentMutant("squared_norm", "move_threshold",
                     "return squared_norm(x, dim % x.dim() + (dim >= 0)), 0",
                     "return squared_norm(x, dim % x.dim() + (dim >= -1e-06)), 0",
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

# found by the uncapped mutants (session 56), of the catalogue's unusual softplus answers (the
# F.softplus and switch-at-20 answers' listings went when review 76 made them mistakes)
_OUTPUT_SAVED = "ctx.save_for_backward(output); ctx.beta = beta"
_EXACT_NEAR_0 = ("both branches are exact forms of log(1 + e^z) for |z| <= 1 (no exponent "
                 "overflows there), so where between -1 and 1 the switch sits changes no digit "
                 "the contract sees")
EQUIVALENTS += [
    EquivalentMutant("softplus", "save_copy", "ctx.save_for_backward(output)",
                     "ctx.save_for_backward(output.clone())", _COPY),
    EquivalentMutant("softplus", "add_copy", "ctx.save_for_backward(output)",
                     "ctx.save_for_backward(output.contiguous())", _COPY),
    EquivalentMutant("softplus", "save_copy", _OUTPUT_SAVED,
                     _OUTPUT_SAVED.replace("(output)", "(output.clone())"), _COPY),
    EquivalentMutant("softplus", "add_copy", _OUTPUT_SAVED,
                     _OUTPUT_SAVED.replace("(output)", "(output.contiguous())"), _COPY),
    EquivalentMutant("softplus", "swap_arithmetic", "return beta * x", "return beta / x",
                     "a fake carries a shape, a dtype, a device and strides, never values: "
                     "beta / x and beta * x give the same four"),
    EquivalentMutant("softplus", "save_copy", "ctx.save_for_backward(torch.sigmoid(beta * x))",
                     "ctx.save_for_backward(torch.sigmoid(beta * x).clone())", _COPY),
    EquivalentMutant("softplus", "move_threshold", _WHERE,
                     _WHERE.replace("z > 0", "z > -1e-06"), _BRANCHES),
    EquivalentMutant("softplus", "nudge_constant", _WHERE, _WHERE.replace("z > 0", "z > 1"),
                     _EXACT_NEAR_0),
    EquivalentMutant("softplus", "nudge_constant", _WHERE, _WHERE.replace("z > 0", "z > -1"),
                     _EXACT_NEAR_0),
]

_INT_DIM = "dim is an int: dim >= -1e-06 and dim >= 0 hold for the same dims"
_X_SAVED = "ctx.save_for_backward(x); ctx.dim = dim"
EQUIVALENTS += [
    EquivalentMutant("squared_norm", "move_threshold",
                     "return squared_norm(x, dim if dim >= 0 else dim - 1), -1",
                     "return squared_norm(x, dim if dim >= -1e-06 else dim - 1), -1", _INT_DIM),
    EquivalentMutant("squared_norm", "move_threshold", "d = dim if dim >= 0 else dim - 1",
                     "d = dim if dim >= -1e-06 else dim - 1", _INT_DIM),
    EquivalentMutant("squared_norm", "save_copy", _X_SAVED,
                     _X_SAVED.replace("(x)", "(x.clone())"), _COPY),
    EquivalentMutant("squared_norm", "add_copy", _X_SAVED,
                     _X_SAVED.replace("(x)", "(x.contiguous())"), _COPY),
    EquivalentMutant("squared_norm", "swap_reduction", "return x.sum(dim)", "return x.mean(dim)",
                     "a fake carries a shape, a dtype and a device, never values: sum and mean "
                     "over dim give the same three"),
]

# the review-57 unusual answer that takes e^z for value and slope below beta * x = -12
_LEFT_VALUE = "return torch.where(z < -12, torch.exp(z), exact) / beta"
_LEFT_SLOPE = "return grad_output * torch.where(z < -12, torch.exp(z), torch.sigmoid(z)), None"
_LEFT = ("below z = -12 e^z is within a relative e^z / 2 of log(1 + e^z) and e^z of sigmoid(z), "
         "under the contract's 1e-5 from any switch at or left of -12")
EQUIVALENTS += [
    EquivalentMutant("softplus", "swap_comparison", _LEFT_VALUE, _LEFT_VALUE.replace("<", "<="),
                     _LEFT),
    EquivalentMutant("softplus", "swap_comparison", _LEFT_SLOPE, _LEFT_SLOPE.replace("<", "<="),
                     _LEFT),
    EquivalentMutant("softplus", "move_threshold", _LEFT_VALUE, _LEFT_VALUE.replace("-12", "-24"),
                     _LEFT),
    EquivalentMutant("softplus", "move_threshold", _LEFT_SLOPE, _LEFT_SLOPE.replace("-12", "-24"),
                     _LEFT),
    EquivalentMutant("softplus", "nudge_constant", _LEFT_VALUE, _LEFT_VALUE.replace("-12", "-13"),
                     _LEFT),
    EquivalentMutant("softplus", "nudge_constant", _LEFT_SLOPE, _LEFT_SLOPE.replace("-12", "-13"),
                     _LEFT),
    EquivalentMutant("softplus", "nudge_constant", _LEFT_VALUE, _LEFT_VALUE.replace("-12", "-11"),
                     "the value's error below z = -11 is e^z / 2 <= 8.4e-6, under the "
                     "contract's relative 1e-5 (the slope's, e^-11 = 1.7e-5, is not: that "
                     "mutant is killed)"),
]

# review 57: uncapped mutants of the LogSumExp answers of reviews 53-56
_GUARD = ("m is -inf, +inf or nan only on a slice of -inf, +inf or nan, which the contract (|x| "
          "up to 1000) leaves ungraded: the catalogue's unusual 'the max subtracted with no "
          "guard'")
_BDIM0 = ('the contract vmaps LogSumExp with in_dims=(0, None) only: the batch dim is already '
          'at 0')
_DIM_TENSOR = ('the saved 0-d tensor only carries dim, a small int that float32, float16 and '
               'a copy hold exactly, and int() reads back')
_INDEX = ('a 0-d integer tensor is accepted as a dim (through __index__), so int() changes '
          'nothing')
_WIDENED = ('a float64 p only makes the weights more exact; the engine casts the gradient back to'
            " x's dtype, and the contract bounds no saved memory")
_EMPTY = ('the else branch runs only for an empty x, where sum and mean over dim give the same '
          'empty m')
EQUIVALENTS += [
    EquivalentMutant('LogSumExp', 'move_threshold',
                     'inner = dim + 1 if dim >= 0 else dim',
                     'inner = dim + 1 if dim >= -1e-06 else dim',
                     _INT_DIM),
    EquivalentMutant('LogSumExp', 'drop_statement',
                     'x = x.movedim(x_bdim, 0)',
                     'pass',
                     _BDIM0),
    EquivalentMutant('LogSumExp', 'drop_statement',
                     'm = torch.where(torch.isfinite(m), m, torch.zeros_like(m))',
                     'pass',
                     _GUARD),
    EquivalentMutant('LogSumExp', 'drop_statement',
                     'm = torch.where(m.isinf(), torch.zeros_like(m), m)',
                     'pass',
                     _GUARD),
    EquivalentMutant('LogSumExp', 'save_narrowed',
                     'ctx.save_for_backward(x, torch.tensor(dim))',
                     'ctx.save_for_backward(x, torch.tensor(dim).float())',
                     _DIM_TENSOR),
    EquivalentMutant('LogSumExp', 'save_narrowed',
                     'ctx.save_for_backward(x, torch.tensor(dim))',
                     'ctx.save_for_backward(x, torch.tensor(dim).half())',
                     _DIM_TENSOR),
    EquivalentMutant('LogSumExp', 'save_widened',
                     'ctx.save_for_backward(x, torch.tensor(dim))',
                     'ctx.save_for_backward(x, torch.tensor(dim).double())',
                     _DIM_TENSOR),
    EquivalentMutant('LogSumExp', 'save_copy',
                     'ctx.save_for_backward(x, torch.tensor(dim))',
                     'ctx.save_for_backward(x, torch.tensor(dim).clone())',
                     _DIM_TENSOR),
    EquivalentMutant('LogSumExp', 'drop_statement',
                     'd = int(d)',
                     'pass',
                     _INDEX),
    EquivalentMutant('LogSumExp', 'nudge_constant',
                     'm = torch.nan_to_num(m, neginf=0.0, posinf=0.0)',
                     'm = torch.nan_to_num(m, neginf=1.0, posinf=0.0)',
                     _GUARD),
    EquivalentMutant('LogSumExp', 'nudge_constant',
                     'm = torch.nan_to_num(m, neginf=0.0, posinf=0.0)',
                     'm = torch.nan_to_num(m, neginf=0.0, posinf=1.0)',
                     _GUARD),
    EquivalentMutant('LogSumExp', 'drop_statement',
                     'm = torch.nan_to_num(m, neginf=0.0, posinf=0.0)',
                     'pass',
                     _GUARD),
    EquivalentMutant('LogSumExp', 'swap_reduction',
                     'm = x.max(dim).values if x.numel() else x.sum(dim)',
                     'm = x.max(dim).values if x.numel() else x.mean(dim)',
                     _EMPTY),
    EquivalentMutant('LogSumExp', 'nudge_constant',
                     'm = m.nan_to_num(0.0, 0.0, 0.0)',
                     'm = m.nan_to_num(0.0, 1.0, 0.0)',
                     _GUARD),
    EquivalentMutant('LogSumExp', 'nudge_constant',
                     'm = m.nan_to_num(0.0, 0.0, 0.0)',
                     'm = m.nan_to_num(1.0, 0.0, 0.0)',
                     _GUARD),
    EquivalentMutant('LogSumExp', 'drop_statement',
                     'm = m.nan_to_num(0.0, 0.0, 0.0)',
                     'pass',
                     _GUARD),
    EquivalentMutant('LogSumExp', 'nudge_constant',
                     'm = m.nan_to_num(0.0, 0.0, 0.0)',
                     'm = m.nan_to_num(0.0, 0.0, 1.0)',
                     _GUARD),
    *(EquivalentMutant("LogSumExp", "nudge_constant",
                       "m = x.amax(dim, keepdim=True).clamp(min=-700)",
                       f"m = x.amax(dim, keepdim=True).clamp(min={bound})",
                       "any clamp near -700 leaves every exponent x - m between -301 and 0 "
                       "for |x| up to 1000: the shift stays exact (review 58's unusual)")
      for bound in (-699, -701)),
    *(EquivalentMutant("softplus", kind, "ctx.save_for_backward(x, output)",
                       f"ctx.save_for_backward({saved})", _COPY)
      for kind, saved in (("add_copy", "x.contiguous(), output"),
                          ("save_copy", "x.clone(), output"),
                          ("add_copy", "x, output.contiguous()"),
                          ("save_copy", "x, output.clone()"))),
]

_F64 = ("return torch.where(z > 40, z, torch.log1p(torch.exp(z.clamp(max=40))))"
        ".div(beta).to(x.dtype)")
_PAST_37 = ("a switch to z anywhere from beta * x = 37 on is within the right tail's tolerances: "
            "the value drops e^-z / z, and the slope exp(beta x - beta s) becomes 1, e^-z off, "
            "below float64's ulps there (review 75): 39 and 40, > and >=, are all past it")
EQUIVALENTS += [
    EquivalentMutant("softplus", "swap_comparison", _F64, _F64.replace("z > 40", "z >= 40"),
                     _PAST_37),
    EquivalentMutant("softplus", "nudge_constant", _F64, _F64.replace("z > 40", "z > 39"),
                     _PAST_37),
    EquivalentMutant("softplus", "nudge_constant", _F64,
                     _F64.replace("max=40", "max=41"),
                     "the clamp only keeps exp finite where where() takes z anyway: the "
                     "log1p branch is used only for z <= 40, which max=41 leaves unclamped too"),
]
