"""Lesson 00's surviving mutants that leave the answer correct (see tools.mutants.listed)."""

from .. import EquivalentMutant

_CLONE = ("a copy of x holds x's values, so backward computes the same gradient; Square's "
          "contract bounds no memory (Outer's does, and fails a copy)")
_WEIGHT_PAIR = ("the (2,) tensor of the two weights forward built: a copy, or the same values in "
                "float64, holds the same weights, and w[0] is a 0-d tensor, which does not "
                "widen grad_output's dtype; the gradients are unchanged")
_COUNTER = ("a module-level call counter that nothing reads: its count changes no value, "
            "gradient or saved tensor")
_ONE_INPUT = ("Square has one input, which requires grad whenever backward runs: the test on "
              "needs_input_grad is always true")
_UNNEEDED = ("WeightedSum's contract asks for no skipping: a gradient computed for an input "
             "that needs none is discarded by the engine, and the needed ones are unchanged")
_WEIGHT_TENSOR = ("a copy of a 0-d weight tensor forward built, or the same weight in float64, "
                  "holds the same value (8 bytes); the gradients are unchanged")
_SIZE_SWITCH = ("both paths of the size switch compute 2 * x * grad_output in x's dtype: where "
                "the switch lies, and a copy of the fresh result, change no value or gradient")

_FLOAT32_BELOW = ("float64's extremes are ungraded and float32 has no non-zero |x| below 1.4e-45 nor"
                  " a non-zero x ** 2 below 1e-45: a cut moved between 1e-308 and 1e-150, or < "
                  "made <=, changes no float32 gradient the contract grades")

EQUIVALENTS = [
    *[EquivalentMutant("Square", kind, "if x.numel() > 4096:", f"if x.numel() {new}:",
                       _SIZE_SWITCH)
      for kind, new in (("move_threshold", "> 8192"), ("move_threshold", "> 2048.0"),
                        ("swap_comparison", ">= 4096"), ("nudge_constant", "> 4095"),
                        ("nudge_constant", "> 4097"))],
    EquivalentMutant("Square", "add_copy", "return g", "return g.clone()", _SIZE_SWITCH),
    *[EquivalentMutant("WeightedSum", kind, old, old[:-1] + f".{method}(){old[-1]}",
                       _WEIGHT_TENSOR)
      for old in ("torch.tensor(w2, dtype=torch.float64))",
                  "ctx.save_for_backward(torch.tensor(w1, dtype=torch.float64),")
      for kind, method in (("save_copy", "clone"), ("save_widened", "double"))],
    EquivalentMutant("WeightedSum", "save_copy", "ctx.save_for_backward(w)",
                     "ctx.save_for_backward(w.clone())", _WEIGHT_PAIR),
    EquivalentMutant("WeightedSum", "save_widened", "ctx.save_for_backward(w)",
                     "ctx.save_for_backward(w.double())", _WEIGHT_PAIR),
    EquivalentMutant("WeightedSum", "add_copy", "ctx.save_for_backward(w)",
                     "ctx.save_for_backward(w.contiguous())", _WEIGHT_PAIR),
    EquivalentMutant("Square", "save_copy", "ctx.save_for_backward(flat)",
                     "ctx.save_for_backward(flat.clone())", _CLONE),
    EquivalentMutant("Square", "add_copy", "ctx.save_for_backward(flat)",
                     "ctx.save_for_backward(flat.contiguous())", _CLONE),
    EquivalentMutant("Square", "drop_ctx_declaration", "ctx.set_materialize_grads(False)", "pass",
                     "with grads materialised, a None grad_output arrives as zeros, which the "
                     "answer's formula turns into the same zero gradient its None branch returns"),
    EquivalentMutant("Square", "flip_boolean", "ctx.set_materialize_grads(False)",
                     "ctx.set_materialize_grads(True)",
                     "with grads materialised, a None grad_output arrives as zeros, which the "
                     "answer's formula turns into the same zero gradient its None branch returns"),
    EquivalentMutant("Square", "save_copy", "ctx.save_for_backward(x)",
                     "ctx.save_for_backward(x.clone())", _CLONE),
    EquivalentMutant("Square", "add_copy", "ctx.save_for_backward(x)",
                     "ctx.save_for_backward(x.contiguous())", _CLONE),
    EquivalentMutant("Square", "save_copy", "ctx.save_for_backward(x.detach())",
                     "ctx.save_for_backward(x.detach().clone())", _CLONE),
    EquivalentMutant("Square", "ignore_needs_input_grad", "if ctx.needs_input_grad[0]:",
                     "if True:", _ONE_INPUT),
    EquivalentMutant("Square", "ignore_needs_input_grad",
                     "return 2 * x * grad_output if ctx.needs_input_grad[0] else None",
                     "return 2 * x * grad_output if True else None", _ONE_INPUT),
    EquivalentMutant("Square", "nudge_constant", "if ctx.needs_input_grad[0]:",
                     "if ctx.needs_input_grad[-1]:",
                     "needs_input_grad has one entry for Square's one input: [-1] is [0]"),
    EquivalentMutant("Square", "nudge_constant",
                     "return 2 * x * grad_output if ctx.needs_input_grad[0] else None",
                     "return 2 * x * grad_output if ctx.needs_input_grad[-1] else None",
                     "needs_input_grad has one entry for Square's one input: [-1] is [0]"),
    EquivalentMutant("WeightedSum", "add_copy", "return x1", "return x1.clone()",
                     "at w1 = 1, w2 = 0 a copy of x1 holds w1 * x1 + w2 * x2's values; the "
                     "contract asks for the value, and a new tensor is what the formula returns"),
    # review 57's answer that saves a copy of the output beside x (backward reads only x):
    # every copy added, dropped or doubled holds the same values
    *[EquivalentMutant("Square", kind, "ctx.save_for_backward(x, y.clone())", new, _CLONE)
      for kind, new in (("drop_copy", "ctx.save_for_backward(x, y)"),
                        ("save_copy", "ctx.save_for_backward(x.clone(), y.clone())"),
                        ("add_copy", "ctx.save_for_backward(x.contiguous(), y.clone())"),
                        ("save_copy", "ctx.save_for_backward(x, y.clone().clone())"))],
    EquivalentMutant("Square", "add_copy", "return y", "return y.clone()",
                     "the output returned as a copy holds the same values; the saved copy of y "
                     "is unread"),
]

_SAVED_WEIGHTS = ("ctx.save_for_backward(torch.tensor(w1, dtype=x1.dtype), "
                  "torch.tensor(w2, dtype=x1.dtype))")
for _operator, _suffix in (("save_copy", ".clone()"), ("save_widened", ".double()")):
    for _weight in ("w1", "w2"):
        _made = f"torch.tensor({_weight}, dtype=x1.dtype)"
        EQUIVALENTS.append(EquivalentMutant(
            "WeightedSum", _operator, _SAVED_WEIGHTS,
            _SAVED_WEIGHTS.replace(_made, _made + _suffix), _WEIGHT_TENSOR))
# review 56b's unusual answer: one float64 tensor of both weights, made in forward and read back
# with tolist(); a copy of it, or .double() on it, is the same values in another tensor
_BOTH_WEIGHTS = "ctx.save_for_backward(torch.tensor([w1, w2], dtype=torch.float64))"
for _operator, _suffix in (("save_copy", ".clone()"), ("save_widened", ".double()")):
    EQUIVALENTS.append(EquivalentMutant(
        "WeightedSum", _operator, _BOTH_WEIGHTS,
        _BOTH_WEIGHTS.replace("float64)", f"float64){_suffix}"),
        "a copy of the float64 tensor of both weights forward built, or .double() on it, holds "
        "the same two values (16 bytes); the gradients are unchanged"))

_UNGRADED_EXTREME = ("the guard or branch changes a value only at a point no check grades (float64's "
                     "extremes: a y = x ** 2 that underflows or overflows, |x| below 1e-150 or "
                     "above 1e154; a gradient past float32's range; a point the float32 ends never "
                     "meet); x = 0 takes the same value either way")
_ENGINE_SUMS = ("a gradient of a shape v broadcasts to, (1, n) for v's (n,): the engine sums it "
                "down to v's shape, as the Function contract accepts (rule 1)")

# edits of the catalogued answers that no clause can see (each reason above says why)
EQUIVALENTS += [
    EquivalentMutant('Square', 'move_threshold', 'safe = torch.where(x == 0, torch.ones_like(x), x)', 'safe = torch.where(x == 1e-06, torch.ones_like(x), x)', _UNGRADED_EXTREME),
    EquivalentMutant('Square', 'swap_comparison', 'return torch.where(x.abs() < 1e-200, torch.zeros_like(x), 2 * x * grad_output)', 'return torch.where(x.abs() <= 1e-200, torch.zeros_like(x), 2 * x * grad_output)', _UNGRADED_EXTREME),
    EquivalentMutant('Square', 'move_threshold', 'return torch.where(x.abs() < 1e-200, torch.zeros_like(x), 2 * x * grad_output)', 'return torch.where(x.abs() < 5e-201, torch.zeros_like(x), 2 * x * grad_output)', _UNGRADED_EXTREME),
    EquivalentMutant('Square', 'add_copy', 'ctx.save_for_backward(x, y)', 'ctx.save_for_backward(x, y.contiguous())', _CLONE),
    EquivalentMutant('Square', 'save_copy', 'ctx.save_for_backward(x, y)', 'ctx.save_for_backward(x, y.clone())', _CLONE),
    EquivalentMutant('Square', 'move_threshold', 'safe = torch.where(x == 0, torch.ones_like(x), x)', 'safe = torch.where(x == -1e-06, torch.ones_like(x), x)', _UNGRADED_EXTREME),
    EquivalentMutant('Square', 'nudge_constant', 'safe = torch.where(x == 0, torch.ones_like(x), x)', 'safe = torch.where(x == -1, torch.ones_like(x), x)', _UNGRADED_EXTREME),
    EquivalentMutant('Square', 'narrow_accumulator', 'if r.dtype == torch.float32:', 'if r.dtype == torch.float16:', _UNGRADED_EXTREME),
    EquivalentMutant('Square', 'swap_comparison', 'if r.dtype == torch.float32:', 'if r.dtype != torch.float32:', _UNGRADED_EXTREME),
    EquivalentMutant('Outer', 'flip_keepdim', 'grad_v = (grad_output * col).sum(0) if ctx.needs_input_grad[1] else None', 'grad_v = (grad_output * col).sum(0, keepdim=True) if ctx.needs_input_grad[1] else None', _ENGINE_SUMS),
    EquivalentMutant('Outer', 'change_dim', 'grad_v = torch.mm(u.unsqueeze(0), grad_output).squeeze(0)', 'grad_v = torch.mm(u.unsqueeze(0), grad_output).squeeze(-1)', _ENGINE_SUMS),
    EquivalentMutant('Outer', 'flip_keepdim', 'grad_v = (grad_output * u[:, None]).sum(0) if ctx.needs_input_grad[1] else None', 'grad_v = (grad_output * u[:, None]).sum(0, keepdim=True) if ctx.needs_input_grad[1] else None', _ENGINE_SUMS),
    EquivalentMutant('Square', 'move_threshold', 'return grad_output * torch.where(x == 0, torch.zeros_like(x), torch.where(torch.isinf(y), 2 * x, torch.where(y.double() < 2.3e-308, 2 * x, 2 * y / safe)))', 'return grad_output * torch.where(x == -1e-06, torch.zeros_like(x), torch.where(torch.isinf(y), 2 * x, torch.where(y.double() < 2.3e-308, 2 * x, 2 * y / safe)))', _FLOAT32_BELOW),
    EquivalentMutant('Square', 'swap_comparison', 'return grad_output * torch.where(x == 0, torch.zeros_like(x), torch.where(torch.isinf(y), 2 * x, torch.where(y.double() < 2.3e-308, 2 * x, 2 * y / safe)))', 'return grad_output * torch.where(x == 0, torch.zeros_like(x), torch.where(torch.isinf(y), 2 * x, torch.where(y.double() <= 2.3e-308, 2 * x, 2 * y / safe)))', _FLOAT32_BELOW),
    EquivalentMutant('Square', 'move_threshold', 'return torch.where(x.abs() < 1e-150, torch.zeros_like(x), 2 * x * grad_output)', 'return torch.where(x.abs() < 2e-150, torch.zeros_like(x), 2 * x * grad_output)', _FLOAT32_BELOW),
    EquivalentMutant('Square', 'move_threshold', 'return torch.where(x.abs() < 1e-150, torch.zeros_like(x), 2 * x * grad_output)', 'return torch.where(x.abs() < 5e-151, torch.zeros_like(x), 2 * x * grad_output)', _FLOAT32_BELOW),
]
