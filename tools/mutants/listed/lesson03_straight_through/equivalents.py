"""Lesson 03's surviving mutants that leave an answer correct, each with why."""

from .. import EquivalentMutant

_ONE_INPUT = ("x is the only input, and backward runs only when it requires grad: "
              "needs_input_grad[0] is True there")
_CLONE = ("grad_output itself or a copy of it: the same values, and the contract asks for the "
          "gradient's values, not a new tensor")
_TIMES_ONE = "multiplying or dividing by 1 is exact in every floating dtype"
_FRESH = ("a copy of a tensor forward made and nothing else holds: the original is freed, so "
          "the bytes kept are the same")
_MASK = ("a mask of 0 and 1 holds exactly in any floating dtype, and no wider than x's: a "
         "float mask multiplies grad_output as the boolean one does")
_SKIP = ("the contract asks for no skipping: a gradient returned for an input that does not "
         "require grad is dropped by the engine, and the gradients asked for are unchanged")

EQUIVALENTS = [
    EquivalentMutant("SignSTE", "drop_term", "return grad_output * 1", "return grad_output",
                     _TIMES_ONE),
    EquivalentMutant("SignSTE", "swap_arithmetic", "return grad_output * 1",
                     "return grad_output / 1", _TIMES_ONE),
    EquivalentMutant("RoundSTE", "drop_term", "return 1.0 * grad_output", "return grad_output",
                     _TIMES_ONE),
    *(EquivalentMutant("RoundSTE", operator,
                       "return grad_output * torch.ones((), dtype=grad_output.dtype)", after,
                       _TIMES_ONE)
      for operator, after in (("drop_term", "return grad_output"),
                              ("swap_arithmetic",
                               "return grad_output / torch.ones((), dtype=grad_output.dtype)"))),
    *(EquivalentMutant(exercise, operator, "return grad_output if ctx.needs_input_grad[0] else None",
                       after, _ONE_INPUT)
      for exercise in ("SignSTE", "RoundSTE")
      for operator, after in (
          ("ignore_needs_input_grad", "return grad_output if True else None"),
          ("nudge_constant", "return grad_output if ctx.needs_input_grad[-1] else None"))),
    *(EquivalentMutant(exercise, operator, before, after, _CLONE)
      for exercise in ("SignSTE", "RoundSTE")
      for operator, before, after in (
          ("add_copy", "return grad_output", "return grad_output.clone()"),
          ("drop_copy", "return grad_output.clone()", "return grad_output"))),
    EquivalentMutant("SignSTE", "add_copy", "return grad_output  # identity surrogate",
                     "return grad_output.clone()  # identity surrogate", _CLONE),
    EquivalentMutant("RoundSTE", "add_copy", "return grad_output  # the identity surrogate",
                     "return grad_output.clone()  # the identity surrogate", _CLONE),
    EquivalentMutant("SignClippedSTE", "save_narrowed",
                     "ctx.save_for_backward((x.abs() <= 1).float())",
                     "ctx.save_for_backward((x.abs() <= 1).float().float())",
                     ".float() of a float32 tensor is that tensor"),
    EquivalentMutant("SignClippedSTE", "save_copy",
                     "ctx.save_for_backward((x.abs() <= 1).float())",
                     "ctx.save_for_backward((x.abs() <= 1).float().clone())",
                     "a copy of a mask forward made and nothing else holds: the original is "
                     "freed, so what is kept is the same mask in the same bytes"),
    EquivalentMutant("SignClippedSTE", "add_copy", "return grad_input", "return grad_input.clone()",
                     "grad_input is a tensor backward made: a copy of it has the same values"),
    EquivalentMutant("SignClippedSTE", "save_copy", "ctx.save_for_backward(x.abs() <= 1)",
                     "ctx.save_for_backward((x.abs() <= 1).clone())", _FRESH),
    EquivalentMutant("SignClippedSTE", "save_copy",
                     "ctx.save_for_backward((x * x <= 1).to(torch.uint8))",
                     "ctx.save_for_backward((x * x <= 1).to(torch.uint8).clone())", _FRESH),
    EquivalentMutant("SignClippedSTE", "save_copy", "ctx.save_for_backward(x.abs() > 1)",
                     "ctx.save_for_backward((x.abs() > 1).clone())", _FRESH),
    EquivalentMutant("SignClippedSTE", "save_narrowed",
                     "ctx.save_for_backward((x * x <= 1).to(torch.uint8))",
                     "ctx.save_for_backward((x * x <= 1).to(torch.uint8).float())",
                     "the window's 0 and 1 in float32 (no copy of x), as the listed "
                     "(x.abs() <= 1).float() keeps it: keep.bool() gives the same mask back"),
    EquivalentMutant("SignClippedSTE", "save_narrowed", "ctx.save_for_backward(x.abs() <= 1)",
                     "ctx.save_for_backward((x.abs() <= 1).float())", _MASK),
    EquivalentMutant("SignClippedSTE", "save_narrowed",
                     "ctx.save_for_backward((x.abs() <= 1).float())",
                     "ctx.save_for_backward((x.abs() <= 1).float().half())", _MASK),
    *(EquivalentMutant("FakeQuantize", "add_copy", f"ctx.save_for_backward({before})",
                       f"ctx.save_for_backward({after})",
                       "scale is a 0-d tensor, always contiguous: .contiguous() returns scale itself")
      for before, after in (("x, scale", "x, scale.contiguous()"),
                            ("x, scale, codes", "x, scale.contiguous(), codes"))),
    EquivalentMutant("FakeQuantize", "save_copy", "ctx.save_for_backward(inside, local)",
                     "ctx.save_for_backward(inside, local.clone())", _FRESH),
    EquivalentMutant("FakeQuantize", "add_copy", "ctx.save_for_backward(inside, local)",
                     "ctx.save_for_backward(inside.contiguous(), local)", _FRESH),
    EquivalentMutant("FakeQuantize", "save_narrowed", "ctx.save_for_backward(inside, local)",
                     "ctx.save_for_backward(inside.half(), local)", _MASK),
    EquivalentMutant("StraightThroughSoftmax", "save_copy",
                     "ctx.save_for_backward(torch.softmax(logits / tau, -1))",
                     "ctx.save_for_backward(torch.softmax(logits / tau, -1).clone())", _FRESH),
    EquivalentMutant("StraightThroughSoftmax", "save_copy", "ctx.save_for_backward(soft)",
                     "ctx.save_for_backward(soft.clone())",
                     "a copy of the softmax forward made and nothing else holds: the original is "
                     "freed, so what is kept is the same softmax in the same bytes"),
    EquivalentMutant("StraightThroughSoftmax", "save_copy", "ctx.save_for_backward(z)",
                     "ctx.save_for_backward(z.clone())",
                     "a copy of z = logits / tau, which forward made and nothing else holds: the "
                     "original is freed, so what is kept is the same z in the same bytes"),
    EquivalentMutant("StraightThroughSoftmax", "add_copy", "ctx.save_for_backward(soft)",
                     "ctx.save_for_backward(soft.contiguous())",
                     "a contiguous copy, where one is made, of the softmax forward made and "
                     "nothing else holds: the original is freed, the bytes kept are the same"),
    EquivalentMutant("RoundSTE", "swap_comparison", "small = x.abs() < p",
                     "small = x.abs() <= p",
                     "they differ only at |x| = 2^23 (2^52 in float64), an integer, where "
                     "(|x| + p) - p is exactly |x|: both return x"),
    EquivalentMutant("FakeQuantize", "swap_comparison",
                     "clipped = torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax))",
                     "clipped = torch.where(v <= ctx.qmin, float(ctx.qmin), float(ctx.qmax))",
                     "they differ only at v == qmin, which is inside the clip, where backward "
                     "takes round(v) - v and never reads clipped"),
    EquivalentMutant("FakeQuantize", "ignore_needs_input_grad", "if ctx.needs_input_grad[1]:",
                     "if True:", _SKIP),
    EquivalentMutant("FakeQuantize", "ignore_needs_input_grad",
                     "grad_x = grad_output * inside if ctx.needs_input_grad[0] else None",
                     "grad_x = grad_output * inside if True else None", _SKIP),
]


_CLAMP_MASK = "ctx.save_for_backward(torch.clamp(x, -1, 1) == x)"
_CLAMPED = "torch.clamp(x, -1, 1) == x"
_FLOAT_MASK = ("the window's 0 and 1 are exact in float16 and float32, so grad_output times it "
               "is the boolean mask's product (the engine casts it back to x's dtype); "
               "SignClippedSTE's contract bounds no memory")
_BOTH_EDGES = ("they differ only where the test is at qmin exactly, which is inside the clip: "
               "there backward takes r - v and never reads this choice")
_RETURNED = ("a copy of a gradient backward just made: the same values, and the contract asks "
             "for the gradient's values, not a new tensor")
_FQ_SAVE = "ctx.save_for_backward(x, scale, codes)"
_TENSORDOT = "ctx.save_for_backward(v, scale)"
_LOCAL = "torch.where(inside, r - v, torch.where({} qmin, float(qmin), float(qmax)){})"
_PAIR = "ctx.save_for_backward(inside, local)"
EQUIVALENTS += [
    EquivalentMutant("SignClippedSTE", "save_copy", _CLAMP_MASK,
                     _CLAMP_MASK.replace(_CLAMPED, f"({_CLAMPED}).clone()"), _FRESH),
    *(EquivalentMutant("SignClippedSTE", "save_narrowed", before, before.replace(mask, after),
                       _FLOAT_MASK)
      for before, mask, after in (
          (_CLAMP_MASK, _CLAMPED, f"({_CLAMPED}).float()"),
          (_CLAMP_MASK, _CLAMPED, f"({_CLAMPED}).half()"),
          ("ctx.save_for_backward(x.abs() <= 1)", "x.abs() <= 1", "(x.abs() <= 1).half()"),
          ("ctx.save_for_backward((x * x <= 1).to(torch.uint8))", ".to(torch.uint8)",
           ".to(torch.uint8).half()"))),
    *(EquivalentMutant("FakeQuantize", operator, before, after, reason)
      for operator, before, after, reason in (
          ("save_copy", _FQ_SAVE, _FQ_SAVE.replace("codes)", "codes.clone())"), _FRESH),
          ("add_copy", _FQ_SAVE, _FQ_SAVE.replace("codes)", "codes.contiguous())"), _FRESH),
          ("save_copy", _TENSORDOT, "ctx.save_for_backward(v.clone(), scale)", _FRESH),
          ("add_copy", _TENSORDOT, "ctx.save_for_backward(v.contiguous(), scale)", _FRESH),
          ("add_copy", _TENSORDOT, "ctx.save_for_backward(v, scale.contiguous())",
           "scale is a 0-d tensor, always contiguous: .contiguous() returns scale itself"),
          ("save_copy", "ctx.save_for_backward(v)", "ctx.save_for_backward(v.clone())", _FRESH),
          ("add_copy", "ctx.save_for_backward(v)", "ctx.save_for_backward(v.contiguous())",
           _FRESH),
          ("save_copy", _PAIR, "ctx.save_for_backward(inside.clone(), local)", _FRESH),
          ("add_copy", _PAIR, "ctx.save_for_backward(inside, local.contiguous())", _FRESH),
          ("save_narrowed", _PAIR, "ctx.save_for_backward(inside.float(), local)", _MASK),
          ("swap_comparison", "local = " + _LOCAL.format("r <", ""),
           "local = " + _LOCAL.format("r <=", ""), _BOTH_EDGES),
          ("swap_comparison", "local = " + _LOCAL.format("v <", ".to(x.dtype)"),
           "local = " + _LOCAL.format("v <=", ".to(x.dtype)"), _BOTH_EDGES),
          ("swap_comparison", "local = torch.where(inside, r - v, torch.where(v < ctx.qmin, "
           "float(ctx.qmin), float(ctx.qmax)))", "local = torch.where(inside, r - v, "
           "torch.where(v <= ctx.qmin, float(ctx.qmin), float(ctx.qmax)))", _BOTH_EDGES),
          ("swap_comparison", "local = torch.where(inside, code - v, torch.where(code < "
           "ctx.qmin, ctx.qmin, ctx.qmax).to(x.dtype))", "local = torch.where(inside, code - v, "
           "torch.where(code <= ctx.qmin, ctx.qmin, ctx.qmax).to(x.dtype))", _BOTH_EDGES))),
    # review 56's unusual FakeQuantize gates each gradient on its own line
    EquivalentMutant("FakeQuantize", "ignore_needs_input_grad",
                     "gx = grad_output * inside if ctx.needs_input_grad[0] else None",
                     "gx = grad_output * inside if True else None", _SKIP),
    EquivalentMutant("FakeQuantize", "ignore_needs_input_grad",
                     "if ctx.needs_input_grad[1] else None)", "if True else None)", _SKIP),
    EquivalentMutant("SignClippedSTE", "save_copy", "ctx.save_for_backward(x.abs())",
                     "ctx.save_for_backward(x.abs().clone())", _FRESH),
    EquivalentMutant("StraightThroughSoftmax", "save_copy",
                     "ctx.save_for_backward(torch.exp(torch.log_softmax(logits / tau, -1)))",
                     "ctx.save_for_backward(torch.exp(torch.log_softmax(logits / tau, -1)).clone())",
                     _FRESH),
    EquivalentMutant("StraightThroughSoftmax", "add_copy", "ctx.save_for_backward(z)",
                     "ctx.save_for_backward(z.contiguous())", _FRESH),
]

_ENGINE_SUMS = ("scale's gradient as a (1,) view of a fresh 0-d sum: the engine sums it to scale's "
                "shape, as the Function contract accepts")

_MASK_WIDER = ("the window saved as float64 and applied with torch.where: the gradient keeps "
               "grad_output's dtype, and the contract states no dtype for a saved mask")

# edits of the catalogued answers that no clause can see (each reason above says why)
EQUIVALENTS += [
    EquivalentMutant('SignClippedSTE', 'save_widened',
                     'ctx.save_for_backward((x * x <= 1).to(torch.uint8))',
                     'ctx.save_for_backward((x * x <= 1).to(torch.uint8).double())', _MASK_WIDER),
    EquivalentMutant('FakeQuantize', 'reshape_to_view', '(grad_output * torch.where(inside, r - v, clipped)).sum().reshape(1) if ctx.needs_input_grad[1] else None, None, None)', '(grad_output * torch.where(inside, r - v, clipped)).sum().view(1) if ctx.needs_input_grad[1] else None, None, None)', _ENGINE_SUMS),
]
