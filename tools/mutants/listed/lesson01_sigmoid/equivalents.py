"""Lesson 01's surviving mutants that leave the answer correct (see tools.mutants.listed)."""

from .. import EquivalentMutant

_BRANCHES = ("at x = 0 exactly z = 1, and both branches give 1/2; everywhere else the test "
             "is unchanged")
_NOOP_COPY = ("the tensor was just made by an op that returns a contiguous tensor: "
              ".contiguous() returns it itself, no copy")
_VIEW = "the tensor was just made contiguous by an element-wise op: view and reshape agree"
_ONE_INPUT = ("MySigmoid has one input, which requires grad whenever backward runs: the test on "
              "needs_input_grad never skips")
_SCALED_COPY = ("a copy of what ScaledSigmoid saves holds the same values, so backward gives the "
                "same gradient; the exercise's contract bounds no memory")
_SOFTPLUS_BRANCHES = ("both branches are exact formulas of softplus(x), each within a few ulps "
                      "on either side of 0, so which one takes x in [-1e-6, 1e-6] changes no "
                      "digit the contract's 1e-12 sees")


def _sigmoid(operator: str, before: str, after: str, reason: str = _BRANCHES):
    return EquivalentMutant("MySigmoid", operator, before, after, reason)


def _scaled(operator: str, before: str, after: str, reason: str = _SCALED_COPY):
    return EquivalentMutant("ScaledSigmoid", operator, before, after, reason)


def _softplus(operator: str, before: str, after: str, reason: str = _SOFTPLUS_BRANCHES):
    return EquivalentMutant("Softplus", operator, before, after, reason)


# the solutions' save lines, comment included, as the mutants quote them
_SOLUTION = "y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))"
_ONE_MINUS = "y = torch.where(x >= 0, 1 - z / (1 + z), z / (1 + z))"
_FLAT = "y = torch.where(flat >= 0, 1 / (1 + z), z / (1 + z))"
_EXPM1_FREE = "y = torch.where(x >= 0, 1 / (1 + e), e / (1 + e))"
_TEXTBOOK = "y = torch.where(x >= 0, 1 / (1 + torch.exp(-x)),"
_EXPM1_OR_NOT = "return grad_output * torch.where(y < 1, -torch.expm1(-y), 1 - torch.exp(-y))"
_TWO_BRANCHES = "y = torch.where(x > 0, x + torch.log1p(torch.exp(-x)),"
_Y_BRANCHES = "s = torch.where(y > 1, 1 - torch.exp(-y), -torch.expm1(-y))"
_ONE_MINUS_EXP = ("1 - exp(-y) loses under 2 bits for y >= 0.5, far inside the contract's "
                  "1e-12, so moving the switch between it and -expm1(-y) changes no digit that "
                  "matters")

EQUIVALENTS = [
    _sigmoid("swap_comparison", _SOLUTION, _SOLUTION.replace(">= 0", "> 0")),
    _sigmoid("swap_comparison", _ONE_MINUS, _ONE_MINUS.replace(">= 0", "> 0")),
    _sigmoid("swap_comparison", _TEXTBOOK, _TEXTBOOK.replace(">= 0", "> 0"),
             "at x = 0 exactly both textbook formulas give 1/2; elsewhere the test is unchanged"),
    _sigmoid("ignore_needs_input_grad", "if not ctx.needs_input_grad[0]:", "if not True:",
             _ONE_INPUT),
    EquivalentMutant("MyReLU", "save_copy", "ctx.save_for_backward(positive)",
                     "ctx.save_for_backward(positive.clone())",
                     "a copy of a bool mask forward just made is still a bool mask, and the "
                     "same new memory (the original is freed when forward returns)"),
    EquivalentMutant("MyReLU", "save_copy", "ctx.save_for_backward(mask)",
                     "ctx.save_for_backward(mask.clone())",
                     "a copy of a bool mask forward just made is still a bool mask, and the "
                     "same new memory (the original is freed when forward returns)"),
    EquivalentMutant("MyReLU", "add_copy", "ctx.save_for_backward(positive)",
                     "ctx.save_for_backward(positive.contiguous())", _NOOP_COPY),
    EquivalentMutant("MyReLU", "add_copy", "ctx.save_for_backward(mask)",
                     "ctx.save_for_backward(mask.contiguous())", _NOOP_COPY),
    _scaled("save_copy", "ctx.save_for_backward(y)", "ctx.save_for_backward(y.clone())"),
    _scaled("save_copy", "ctx.save_for_backward(x)", "ctx.save_for_backward(x.clone())"),
    _scaled("add_copy", "ctx.save_for_backward(x)", "ctx.save_for_backward(x.contiguous())"),
    _scaled("save_copy", "ctx.save_for_backward(s)", "ctx.save_for_backward(s.clone())"),
    _scaled("add_copy", "ctx.save_for_backward(s)", "ctx.save_for_backward(s.contiguous())"),
    _scaled("add_copy", "return y", "return y.clone()",
            "the output returned is a copy of y: same values, and the saved y becomes an "
            "intermediate, which the exercise's contract allows"),
    _scaled("save_widened", "ctx.save_for_backward(x, torch.tensor(scale, dtype=x.dtype))",
            "ctx.save_for_backward(x, torch.tensor(scale, dtype=x.dtype).double())",
            "a 0-d scale in float64 holds the Python float at least as exactly (8 bytes)"),
    _scaled("ignore_needs_input_grad", "if not ctx.needs_input_grad[0]:", "if not True:",
            "scale is a Python float, so x is ScaledSigmoid's one tensor input and requires "
            "grad whenever backward runs: the test never skips"),
    _softplus("move_threshold", _EXPM1_OR_NOT, _EXPM1_OR_NOT.replace("y < 1", "y < 2"),
              "1 - exp(-y) loses under 2 bits for y >= 0.5, far inside the contract's 1e-12, "
              "so moving the switch between it and -expm1(-y) changes no digit that matters"),
    _softplus("move_threshold", _EXPM1_OR_NOT, _EXPM1_OR_NOT.replace("y < 1", "y < 0.5"),
              "1 - exp(-y) loses under 2 bits for y >= 0.5, far inside the contract's 1e-12, "
              "so moving the switch between it and -expm1(-y) changes no digit that matters"),
    _softplus("swap_comparison", _EXPM1_OR_NOT, _EXPM1_OR_NOT.replace("y < 1", "y <= 1"),
              "at y = 1 exactly both -expm1(-y) and 1 - exp(-y) are within 2 ulps"),
    _softplus("move_threshold", _TWO_BRANCHES, _TWO_BRANCHES.replace("x > 0", "x > -1e-06")),
    _softplus("move_threshold", _TWO_BRANCHES, _TWO_BRANCHES.replace("x > 0", "x > 1e-06")),
    _softplus("swap_comparison", _TWO_BRANCHES, _TWO_BRANCHES.replace("x > 0", "x >= 0")),
    _softplus("swap_comparison", "y = torch.where(x > -threshold, x, torch.where(",
              "y = torch.where(x >= -threshold, x, torch.where(",
              "at x = -threshold exactly (34.0), x itself is within 1e-14 of softplus(x)"),
    _softplus("swap_comparison", "x < threshold, features_exp, torch.log1p(features_exp)))",
              "x <= threshold, features_exp, torch.log1p(features_exp)))",
              "at x = threshold exactly (-34.0), e^x is within 1e-14 of softplus(x)"),
    _softplus("swap_comparison",
              "y = torch.where(x < -14, e - e * e / 2, torch.logaddexp(x, 0 * x))",
              "y = torch.where(x <= -14, e - e * e / 2, torch.logaddexp(x, 0 * x))",
              "at x = -14 exactly the two-term series is within 1e-13 of softplus(x), as it is "
              "below"),
    _sigmoid("reshape_to_view",
             "y = torch.where(flat >= 0, 1 / (1 + z), z / (1 + z)).reshape(x.shape)",
             "y = torch.where(flat >= 0, 1 / (1 + z), z / (1 + z)).view(x.shape)", _VIEW),
    _sigmoid("swap_comparison", "e = torch.exp(torch.where(x >= 0, -x, x))",
             "e = torch.exp(torch.where(x > 0, -x, x))",
             "at x = 0 exactly, -x and x are both 0 (of either sign): e = 1 either way"),
    _sigmoid("swap_comparison", _EXPM1_FREE, _EXPM1_FREE.replace(">= 0", "> 0"),
             "at x = 0 exactly e = 1, and both 1 / (1 + e) and e / (1 + e) are 1/2"),
    _scaled("save_copy", "ctx.save_for_backward(x, torch.tensor(scale, dtype=x.dtype))",
            "ctx.save_for_backward(x.clone(), torch.tensor(scale, dtype=x.dtype))"),
    _scaled("save_copy", "ctx.save_for_backward(x, torch.tensor(scale, dtype=x.dtype))",
            "ctx.save_for_backward(x, torch.tensor(scale, dtype=x.dtype).clone())"),
    _scaled("add_copy", "ctx.save_for_backward(x, torch.tensor(scale, dtype=x.dtype))",
            "ctx.save_for_backward(x.contiguous(), torch.tensor(scale, dtype=x.dtype))"),
    _scaled("save_widened", "ctx.save_for_backward(s)", "ctx.save_for_backward(s.double())",
            "sigmoid(x) kept in float64 for float32 x holds at least float32's digits, and the "
            "exercise's contract bounds no memory; backward's gradient is cast to x's dtype"),
    _scaled("add_copy", "ctx.save_for_backward(y)", "ctx.save_for_backward(y.contiguous())",
            _NOOP_COPY),
    _softplus("move_threshold",
              "y = torch.where(x < -14, e - e * e / 2, torch.logaddexp(x, 0 * x))",
              "y = torch.where(x < -28, e - e * e / 2, torch.logaddexp(x, 0 * x))",
              "logaddexp, the reference itself, takes x in [-28, -14]; below -28 the two-term "
              "series is within 1e-24 (relative) of softplus(x)"),
    _softplus("move_threshold", _Y_BRANCHES, _Y_BRANCHES.replace("y > 1", "y > 2"),
              _ONE_MINUS_EXP),
    _softplus("move_threshold", _Y_BRANCHES, _Y_BRANCHES.replace("y > 1", "y > 0.5"),
              _ONE_MINUS_EXP),
    _softplus("swap_comparison", _Y_BRANCHES, _Y_BRANCHES.replace("y > 1", "y >= 1"),
              _ONE_MINUS_EXP),
    _softplus("nudge_constant", _TWO_BRANCHES, _TWO_BRANCHES.replace("x > 0", "x > -1"),
              "x + log1p(exp(-x)) is softplus(x) for every x, and for x in (-1, 0] exp(-x) is "
              "at most e: nothing overflows or cancels, every digit the contract sees is kept"),
    _sigmoid("swap_comparison", "y = torch.where(x > 0, r, e * r)",
             "y = torch.where(x >= 0, r, e * r)",
             "at x = 0 exactly e = exp(-|x|) = 1, and r = 1 / (1 + e) and e * r are both 1/2"),
    _softplus("nudge_constant", "y = F.softplus(x, threshold=29.0)",
              "y = F.softplus(x, threshold=58.0)",
              "F.softplus's log1p(exp(x)) then also takes x in (29, 58]: exp(x) < 2e25 does not "
              "overflow, and log1p(exp(x)) equals x + log1p(exp(-x)) to float64's rounding"),
]


# the unusual answer that saves y below 4096 entries and a bool mask above: either is what the
# contract allows, so where the size switch lies (or a copy of the fresh mask) changes nothing
_Y_OR_MASK = "ctx.save_for_backward(y if x.numel() < 4096 else x > 0)"
_EITHER = ("y and a bool mask are both what the contract allows MyReLU to save, and backward "
           "reads either right: moving the size at which it switches changes no value")
EQUIVALENTS += [
    *(EquivalentMutant("MyReLU", operator, _Y_OR_MASK, _Y_OR_MASK.replace("< 4096", after),
                       _EITHER)
      for operator, after in (("move_threshold", "< 2048.0"), ("move_threshold", "< 8192"),
                              ("nudge_constant", "< 4095"), ("nudge_constant", "< 4097"),
                              ("swap_comparison", "<= 4096"))),
    EquivalentMutant("MyReLU", "save_copy", _Y_OR_MASK,
                     _Y_OR_MASK.replace("else x > 0", "else (x > 0).clone()"),
                     "a copy of a bool mask forward just made is still a bool mask, and the "
                     "same new memory (the original is freed when forward returns)"),
    EquivalentMutant("MyReLU", "swap_comparison", "y = torch.where(x > 0, x, 0.0)",
                     "y = torch.where(x >= 0, x, 0.0)",
                     "they differ only at x = -0.0, where y is x itself, -0.0 (as torch.relu "
                     "gives) for 0.0; masked_fill(y == 0) still gives gradient 0 there"),
]

# review 56 (uncapped runs of MySigmoid, MyReLU and Softplus)
_EXACT_BOTH = ("both branches are exact formulas, accurate to a few ulps on either side of the "
               "moved threshold (no overflow, no cancellation within |x| <= 1): which one takes "
               "x there changes no digit the contract's 1e-15 / 1e-12 sees")
_TF = ("below x = log(eps) + c (c from -2 to 3, x about -38 to -33) e^x is within e^x / 2 < "
       "1e-14 (relative) of softplus(x), and above -(log(eps) + c) x is within e^-x < 1e-14: "
       "far inside 1e-12 either way")
_TEXTBOOK_LINE = "y = torch.where(x >= 0, 1 / (1 + torch.exp(-x)),"
EQUIVALENTS += [
    EquivalentMutant("MyReLU", "ignore_needs_input_grad", "if ctx.needs_input_grad[0]:",
                     "if True:", "MyReLU has one input: a graph is recorded only when it needs "
                     "a gradient, and then the test is True; otherwise the mask is thrown away"),
    EquivalentMutant("MyReLU", "nudge_constant", "if ctx.needs_input_grad[0]:",
                     "if ctx.needs_input_grad[-1]:", "one input: index -1 is index 0"),
    EquivalentMutant("MyReLU", "add_copy", "ctx.save_for_backward(m)",
                     "ctx.save_for_backward(m.contiguous())",
                     "x > 0 is contiguous: .contiguous() returns the mask itself"),
    EquivalentMutant("MyReLU", "save_copy", "ctx.save_for_backward(m)",
                     "ctx.save_for_backward(m.clone())",
                     "a copy of a bool mask forward just made is still a bool mask, and the "
                     "same new memory (the original is freed when forward returns)"),
    _sigmoid("nudge_constant", "if not ctx.needs_input_grad[0]:",
             "if not ctx.needs_input_grad[-1]:", "one input: index -1 is index 0"),
    *(_sigmoid(operator, _TEXTBOOK_LINE, _TEXTBOOK_LINE.replace(">= 0", after), _EXACT_BOTH)
      for operator, after in (("move_threshold", ">= 1e-06"), ("move_threshold", ">= -1e-06"),
                              ("nudge_constant", ">= -1"), ("nudge_constant", ">= 1"))),
    _sigmoid("swap_comparison", _FLAT + ".reshape(x.shape)",
             _FLAT.replace(">= 0", "> 0") + ".reshape(x.shape)"),
    _sigmoid("add_copy", "ctx.save_for_backward(y)", "ctx.save_for_backward(y.contiguous())",
             "y is contiguous where this survives (a reshape of a fresh tensor, a row of a "
             "stack): .contiguous() returns y itself, the output"),
    _sigmoid("drop_once_differentiable",
             "@torch.autograd.function.once_differentiable\ndef backward(ctx, grad_output):",
             "def backward(ctx, grad_output):",
             "lesson 01's contract grades first derivatives only; once_differentiable changes "
             "none"),
    _softplus("add_copy", "ctx.save_for_backward(y)", "ctx.save_for_backward(y.contiguous())",
              "-logsigmoid(-x) is a fresh contiguous tensor: .contiguous() returns y itself"),
    _softplus("nudge_constant", "y = torch.where(x > 0, x + torch.log1p(torch.exp(-x)),",
              "y = torch.where(x > 1, x + torch.log1p(torch.exp(-x)),", _EXACT_BOTH),
    _softplus("nudge_constant",
              "y = torch.where(x < -14, e - e * e / 2, torch.logaddexp(x, 0 * x))",
              "y = torch.where(x < -15, e - e * e / 2, torch.logaddexp(x, 0 * x))",
              "logaddexp is exact at x in [-15, -14], and the series is within 1e-13 below -14"),
    *(_softplus(operator, "threshold = math.log(torch.finfo(x.dtype).eps) + 2", after, _TF)
      for operator, after in (
          ("nudge_constant", "threshold = math.log(torch.finfo(x.dtype).eps) + 1"),
          ("nudge_constant", "threshold = math.log(torch.finfo(x.dtype).eps) + 3"),
          ("drop_term", "threshold = math.log(torch.finfo(x.dtype).eps)"),
          ("swap_arithmetic", "threshold = math.log(torch.finfo(x.dtype).eps) - 2"))),
    _softplus("nudge_constant", "y = F.softplus(x, threshold=40.0)",
              "y = F.softplus(x, threshold=80.0)",
              "F.softplus is log1p(exp(x)) below its threshold, exact and finite up to x = 709; "
              "from x = 37 on it rounds to x, what the threshold returns"),
]

# review 57's log-space ScaledSigmoid (scale 0 handled apart) and the (scale or 1) divisor
_ZERO_SCALE = "at scale 0 the output and the gradient are zeros whatever else multiplies them"
_SIGN = "math.copysign(1.0, s) is 1 or -1, so dividing by it is multiplying by it"
_OR_ONE = ("ctx.scale is 0 only where y is 0 everywhere: the divisor then divides zeros, and "
           "any nonzero one gives the same 0")
EQUIVALENTS += [
    _scaled("drop_term", "return torch.zeros_like(x) * scale", "return torch.zeros_like(x)",
            _ZERO_SCALE + " (a -0.0 the contract does not tell from 0.0)"),
    _scaled("drop_term", "return grad_output * 0.0 * x, None", "return grad_output * 0.0, None",
            _ZERO_SCALE),
    _scaled("drop_term", "return grad_output * 0.0 * x, None", "return 0.0 * x, None",
            _ZERO_SCALE + " (grad_output is finite: the contract states no other)"),
    _scaled("swap_arithmetic", "return grad_output * math.copysign(1.0, ctx.scale) * slope, None",
            "return grad_output / math.copysign(1.0, ctx.scale) * slope, None", _SIGN),
    *(_scaled("nudge_constant", "s = y / (ctx.scale or 1.0)  # y is 0 at scale 0",
              f"s = y / (ctx.scale or {other})  # y is 0 at scale 0", _OR_ONE)
      for other in ("0.5", "2.0")),
]

_DTYPE_BRANCH = ("both branches are the same mask product, exact in every dtype: which dtype takes "
                 "which changes no value")

EQUIVALENTS += [
    EquivalentMutant('MyReLU', 'swap_comparison', 'if grad_output.dtype == torch.float16:', 'if grad_output.dtype != torch.float16:', _DTYPE_BRANCH),
]

# the catalogue's mask packed eight to a byte (a correct answer since the contract bounds the
# bytes an element, not the dtype): copies, views and a kept dimension that change no bit
_PACKED_ROW = "bits.reshape(-1)[:grad_output.numel()]"
EQUIVALENTS += [
    EquivalentMutant("MyReLU", "flip_keepdim",
                     "packed = (bits * weights).sum(1, dtype=torch.uint8)",
                     "packed = (bits * weights).sum(1, dtype=torch.uint8, keepdim=True)",
                     "packed keeps the same bytes in shape (m, 1): backward's "
                     "packed.unsqueeze(1) & weights is then (m, 1, 8), whose reshape(-1) lists "
                     "the bits in the same order"),
    EquivalentMutant("MyReLU", "add_copy", "ctx.save_for_backward(packed)",
                     "ctx.save_for_backward(packed.contiguous())", _NOOP_COPY),
    EquivalentMutant("MyReLU", "reshape_to_view",
                     f"mask = {_PACKED_ROW}.reshape(ctx.shape)",
                     f"mask = {_PACKED_ROW}.view(ctx.shape)",
                     "a leading slice of a contiguous 1-d tensor is contiguous: view and "
                     "reshape agree"),
    EquivalentMutant("MyReLU", "reshape_to_view",
                     f"mask = {_PACKED_ROW}.reshape(ctx.shape)",
                     "mask = bits.view(-1)[:grad_output.numel()].reshape(ctx.shape)", _VIEW),
    EquivalentMutant("MyReLU", "reshape_to_view",
                     "bits = torch.cat([bits, bits.new_zeros((-n) % 8)]).reshape(-1, 8)"
                     ".to(torch.uint8)",
                     "bits = torch.cat([bits, bits.new_zeros((-n) % 8)]).view(-1, 8)"
                     ".to(torch.uint8)",
                     "torch.cat returns a new contiguous tensor: view and reshape agree"),
]
