"""Lesson 04's surviving mutants that leave an answer correct, each with why."""

from ...equivalents import EquivalentMutant

_SKIP = ("the contract asks for no skipping: a gradient returned for an input that does not "
         "require grad is dropped by the engine, and the gradients asked for are unchanged")
_THIRD = ("in the innermost Function, whose backward is the third derivative, which the contract "
          "does not ask for (gradcheck and gradgradcheck: two orders)")
_ZERO_D = "beta is a 0-d tensor, always contiguous: .contiguous() returns beta itself"

EQUIVALENTS = [
    *(EquivalentMutant("SwishFunction", "ignore_needs_input_grad", before, after, _SKIP)
      for before, after in (
          ("grad_x = grad_output * (s + beta * x * ds) if ctx.needs_input_grad[0] else None",
           "grad_x = grad_output * (s + beta * x * ds) if True else None"),
          ("grad_beta = (grad_output * x * x * ds).sum() if ctx.needs_input_grad[1] else None",
           "grad_beta = (grad_output * x * x * ds).sum() if True else None"),
          ("grad_x = grad_output * s * (1 + beta * x * (1 - s)) if ctx.needs_input_grad[0] "
           "else None",
           "grad_x = grad_output * s * (1 + beta * x * (1 - s)) if True else None"))),
    EquivalentMutant("SwishFunction", "add_copy",
                     "ctx.save_for_backward(x, beta)  # inputs only: they come back linked to the "
                     "graph",
                     "ctx.save_for_backward(x, beta.contiguous())  # inputs only: they come back "
                     "linked to the graph", _ZERO_D),
    EquivalentMutant("CubeOnce", "reshape_to_view",
                     "return torch.as_tensor(g, dtype=x.dtype).reshape(x.shape).to(x.device)",
                     "return torch.as_tensor(g, dtype=x.dtype).view(x.shape).to(x.device)",
                     "g is a fresh NumPy result, C-contiguous: view and reshape both view it"),
    EquivalentMutant("CubeOnce", "save_copy", "ctx.save_for_backward(x * x)",
                     "ctx.save_for_backward((x * x).clone())",
                     "a copy of x * x, which forward made and nothing else holds: the original is "
                     "freed, the bytes kept are the same"),
    EquivalentMutant("NumpyTanh", "nudge_constant",
                     "return (torch.from_numpy(u * (1 - y * y) - 2 * w * g * y),",
                     "return (torch.from_numpy(u * (1 - y * y) - 1 * w * g * y),",
                     "this term is in the innermost backward, the third derivative, which the "
                     "contract does not ask for (gradcheck and gradgradcheck: two orders)"),
    EquivalentMutant("NumpyTanh", "drop_once_differentiable",
                     "@once_differentiable\ndef backward(ctx, grad_b):", "def backward(ctx, grad_b):",
                     "the mark on the innermost backward is accepted, not required, by the "
                     "contract"),
    EquivalentMutant("NumpyTanh", "drop_statement",
                     "u, w = u.detach().numpy(), w.detach().numpy()", "pass", _THIRD),
    *(EquivalentMutant("NumpyTanh", operator, "ctx.save_for_backward(gb, g, y)",
                       f"ctx.save_for_backward({after})", _THIRD)
      for operator, after in (("save_copy", "gb, g.clone(), y"), ("save_narrowed", "gb, g, y.half()"),
                              ("save_narrowed", "gb.half(), g, y"),
                              ("save_widened", "gb, g, y.double()"))),
    EquivalentMutant("SwishFunction", "add_copy",
                     "ctx.save_for_backward(x, beta, s)  # s is an output: its graph link is kept",
                     "ctx.save_for_backward(x, beta.contiguous(), s)  # s is an output: its graph "
                     "link is kept", _ZERO_D),
    EquivalentMutant("SwishFunction", "ignore_needs_input_grad",
                     "grad_beta = (grad_output * x * (y - y * s)).sum() if ctx.needs_input_grad[1] "
                     "else None",
                     "grad_beta = (grad_output * x * (y - y * s)).sum() if True else None", _SKIP),
    *(EquivalentMutant("NumpyTanh", "ignore_needs_input_grad", before, after, _SKIP)
      for before, after in (
          ("dg = torch.from_numpy(gb * (1 - y * y)) if ctx.needs_input_grad[0] else None",
           "dg = torch.from_numpy(gb * (1 - y * y)) if True else None"),
          ("dy = torch.from_numpy(-2 * gb * g * y) if ctx.needs_input_grad[1] else None",
           "dy = torch.from_numpy(-2 * gb * g * y) if True else None"))),
    EquivalentMutant("NumpyTanh", "flip_boolean", "return t.numpy(force=True)",
                     "return t.numpy(force=False)",
                     "force only matters off the CPU or for a tensor requiring grad with grad "
                     "mode on; the contract's tensors are CPU tensors, and every call here runs "
                     "in a Function's forward or in a backward run without create_graph"),
    # catalogued answers added in review 54
    EquivalentMutant("SwishFunction", "ignore_needs_input_grad",
                     "if ctx.needs_input_grad[1] else None)", "if True else None)", _SKIP),
    EquivalentMutant("SwishFunction", "ignore_needs_input_grad",
                     "grad_x = grad_output * (s + z * s * t) if ctx.needs_input_grad[0] else None",
                     "grad_x = grad_output * (s + z * s * t) if True else None", _SKIP),
    EquivalentMutant("SwishFunction", "add_copy", "ctx.save_for_backward(x, beta)",
                     "ctx.save_for_backward(x, beta.contiguous())", _ZERO_D),
    EquivalentMutant("SwishFunction", "add_copy", "return grad_x, grad_beta",
                     "return grad_x, grad_beta.clone()",
                     "grad_beta is a fresh sum backward has just made: its clone has the same "
                     "value, and the original is freed as backward returns"),
    EquivalentMutant("CubeOnce", "save_copy",
                     "ctx.save_for_backward(torch.as_tensor(3 * a ** 2).to(x.device))",
                     "ctx.save_for_backward(torch.as_tensor(3 * a ** 2).to(x.device).clone())",
                     "a copy of a fresh tensor made from a new NumPy array, held by nothing "
                     "else: the same bytes kept"),
    EquivalentMutant("CubeOnce", "save_widened",
                     "ctx.save_for_backward(torch.as_tensor(3 * a ** 2).to(x.device))",
                     "ctx.save_for_backward(torch.as_tensor(3 * a ** 2).to(x.device).double())",
                     "this answer makes 3x^2 in float64 NumPy, so the saved tensor is float64 "
                     "already: .double() returns it unchanged"),
]
