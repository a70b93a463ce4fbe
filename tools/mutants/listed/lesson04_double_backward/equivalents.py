"""Lesson 04's surviving mutants that leave an answer correct, each with why."""

from .. import EquivalentMutant

_THIRD = ("in the innermost Function, whose backward is the third derivative, which the contract "
          "does not ask for (gradcheck and gradgradcheck: two orders)")
_ZERO_D = "beta is a 0-d tensor, always contiguous: .contiguous() returns beta itself"
_CONTIGUOUS_LINES = (  # the answer with .cpu().contiguous() before every .numpy() in backward
    "g, y = g.detach().cpu().contiguous().numpy(), y.detach().cpu().contiguous().numpy()",
    "gb, g, y = grad_b.detach().cpu().contiguous().numpy(), g.detach().cpu().contiguous().numpy(), "
    "y.detach().cpu().contiguous().numpy()")


def _without_nth(line: str, text: str, n: int) -> str:
    """``line`` with the n-th (from 0) ``text`` in it removed."""
    at = -1
    for _ in range(n + 1):
        at = line.index(text, at + 1)
    return line[:at] + line[at + len(text):]


_FRESH = "a tensor backward or forward has just made, held by nothing else: the same values"
_STRIDES = ("NumPy reads any strides, and every array here feeds a NumPy op that returns a new "
            "array: .contiguous() before .numpy() changes no value")
_Y_NEEDS = ("y, NumpyTanh's saved output, requires grad whenever the inner Function runs under "
            "create_graph, so ctx.needs_input_grad[1] is True on every path there: testing it or "
            "not, dy is computed the same")

# the three-level answer's innermost Function (its backward is the third derivative): each
# line as it stands, and its edits that survive every check (review 56, --cap 0)
_THIRD_ORDER_EDITS = [
    ('ctx.save_for_backward(gb, g, y)', [
        ('drop_statement',
         'pass'),
        ('add_copy',
         'ctx.save_for_backward(gb, g, y.contiguous())'),
        ('add_copy',
         'ctx.save_for_backward(gb.contiguous(), g, y)'),
        ('save_copy',
         'ctx.save_for_backward(gb.clone(), g, y)'),
        ('save_copy',
         'ctx.save_for_backward(gb, g, y.clone())'),
        ('save_narrowed',
         'ctx.save_for_backward(gb, g.float(), y)'),
        ('save_widened',
         'ctx.save_for_backward(gb, g.double(), y)'),
        ('add_copy',
         'ctx.save_for_backward(gb, g.contiguous(), y)'),
        ('save_narrowed',
         'ctx.save_for_backward(gb, g.half(), y)'),
        ('save_widened',
         'ctx.save_for_backward(gb.double(), g, y)'),
        ('save_narrowed',
         'ctx.save_for_backward(gb.float(), g, y)'),
        ('save_narrowed',
         'ctx.save_for_backward(gb, g, y.float())'),
    ]),
]

EQUIVALENTS = [
    EquivalentMutant("SwishFunction", "add_copy",
                     "ctx.save_for_backward(x, beta)  # inputs only: they come back linked to the "
                     "graph",
                     "ctx.save_for_backward(x, beta.contiguous())  # inputs only: they come back "
                     "linked to the graph", _ZERO_D),
    EquivalentMutant("CubeOnce", "reshape_to_view",
                     "return torch.as_tensor(g, dtype=x.dtype).reshape(x.shape).to(x.device)",
                     "return torch.as_tensor(g, dtype=x.dtype).view(x.shape).to(x.device)",
                     "g is a fresh NumPy result, C-contiguous: view and reshape both view it"),
    EquivalentMutant("CubeOnce", "save_copy",
                     "ctx.save_for_backward(torch.as_tensor(3 * x.detach().cpu().numpy() ** 2)"
                     ".to(x.device))",
                     "ctx.save_for_backward(torch.as_tensor(3 * x.detach().cpu().numpy() ** 2)"
                     ".to(x.device).clone())",
                     "a copy of 3x^2, which forward made in NumPy and nothing else holds: the "
                     "original is freed, the bytes kept are the same"),
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
    EquivalentMutant("NumpyTanh", "flip_boolean", "return t.numpy(force=True)",
                     "return t.numpy(force=False)",
                     "force only matters off the CPU or for a tensor requiring grad with grad "
                     "mode on; the contract's tensors are CPU tensors, and every call here runs "
                     "in a Function's forward or in a backward run without create_graph"),
    EquivalentMutant("SwishFunction", "add_copy", "ctx.save_for_backward(x, beta)",
                     "ctx.save_for_backward(x, beta.contiguous())", _ZERO_D),
    EquivalentMutant("SwishFunction", "add_copy", "return grad_x, grad_beta",
                     "return grad_x, grad_beta.clone()",
                     "grad_beta is a fresh sum backward has just made: its clone has the same "
                     "value, and the original is freed as backward returns"),
    # review 56, every mutant (--cap 0)
    *(EquivalentMutant("NumpyTanh", operator, before, after, _THIRD)
      for before, edits in _THIRD_ORDER_EDITS for operator, after in edits),
    EquivalentMutant("NumpyTanh", "add_copy", "return dg, dy", "return dg, dy.clone()", _FRESH),
    *(EquivalentMutant("NumpyTanh", "add_copy", f"ctx.save_for_backward({before})",
                       f"ctx.save_for_backward({before[:-1]}y.contiguous())", _FRESH)
      for before in ("g, y", "y")),
    *(EquivalentMutant("NumpyTanh", "drop_copy", before, _without_nth(before, ".contiguous()", n),
                       _STRIDES)
      for before in _CONTIGUOUS_LINES for n in range(before.count(".contiguous()"))),
    EquivalentMutant("SwishFunction", "add_copy", "return grad_x, grad_beta",
                     "return grad_x.clone(), grad_beta", _FRESH),
    EquivalentMutant("SwishFunction", "add_copy", "ctx.save_for_backward(x, beta, y)",
                     "ctx.save_for_backward(x, beta.contiguous(), y)", _ZERO_D),
    EquivalentMutant("SwishFunction", "add_copy",
                     "ctx.save_for_backward(x, beta, s)  # s is an output: its graph link is kept",
                     "ctx.save_for_backward(x, beta, s.contiguous())  # s is an output: its graph "
                     "link is kept", "s, torch.sigmoid's fresh output, is contiguous: "
                     ".contiguous() returns s itself"),
    # catalogued answers added in review 57
    EquivalentMutant("CubeOnce", "reshape_to_view",
                     "return (grad_output.reshape(-1) * torch.as_tensor(3 * a ** 2).to(x.device))"
                     ".reshape(x.shape)",
                     "return (grad_output.reshape(-1) * torch.as_tensor(3 * a ** 2).to(x.device))"
                     ".view(x.shape)", "the product is a fresh contiguous 1-D tensor: .view and "
                     ".reshape give the same tensor"),
    EquivalentMutant("CubeOnce", "nudge_constant", "a = x.detach().cpu().numpy().reshape(-1)",
                     "a = x.detach().cpu().numpy().reshape(-2)",
                     "NumPy's reshape reads any negative size as the one inferred: -2 is -1"),
    # review 60: x's device kept in a global by an answer that keeps dtype and device on ctx
    EquivalentMutant("CubeOnce", "ctx_to_global",
                     "ctx.dtype, ctx.device = x.dtype, x.device\nlocal = torch.as_tensor(3 * x."
                     "detach().cpu().numpy() ** 2, dtype=ctx.dtype, device=ctx.device)",
                     "global _shared_device; ctx.dtype, _shared_device = x.dtype, x.device\n"
                     "local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2, "
                     "dtype=ctx.dtype, device=_shared_device)",
                     "not exact: calls in flight on two devices at once would share it, but no "
                     "clause interleaves devices and one grader run has one device per dtype"),
]

_TINY_BETA = ("the branch moves only for |beta| between 5e-201 and 1e-200, where sigma(beta x) is 1/2 "
              "to the last bit either way; no beta a model meets, nor the contract's grading, "
              "lies there")
_BETA_SHAPE = ("grad_beta a 1-element tensor: (1,) or 0-d, summed on its only dim; the engine "
               "sums either to beta's shape (Function contract, rule 1)")
_WIDE_INTERMEDIATE = ("float64 inputs: .double() returns the tensor itself; float32: the same "
                      "float32 values held wider, an intermediate no clause sizes")

# edits of the catalogued answers that no clause can see (each reason above says why)
EQUIVALENTS += [
    EquivalentMutant('SwishFunction', 'swap_comparison', "if abs(beta.item()) < 1e-200:  # 'beta is about 0': linearise sigma", "if abs(beta.item()) <= 1e-200:  # 'beta is about 0': linearise sigma", _TINY_BETA),
    EquivalentMutant('SwishFunction', 'move_threshold', "if abs(beta.item()) < 1e-200:  # 'beta is about 0': linearise sigma", "if abs(beta.item()) < 5e-201:  # 'beta is about 0': linearise sigma", _TINY_BETA),
    EquivalentMutant('SwishFunction', 'change_dim', 'grad_beta = (grad_output * x * x * ds).reshape(-1).sum(0, keepdim=True) if ctx.needs_input_grad[1] else None', 'grad_beta = (grad_output * x * x * ds).reshape(-1).sum(-1, keepdim=True) if ctx.needs_input_grad[1] else None', _BETA_SHAPE),
    EquivalentMutant('SwishFunction', 'flip_keepdim', 'grad_beta = (grad_output * x * x * ds).reshape(-1).sum(0, keepdim=True) if ctx.needs_input_grad[1] else None', 'grad_beta = (grad_output * x * x * ds).reshape(-1).sum(0, keepdim=False) if ctx.needs_input_grad[1] else None', _BETA_SHAPE),
    EquivalentMutant('NumpyTanh', 'drop_copy', 'y = torch.from_numpy(np.asarray(np.tanh(x.detach().cpu().contiguous().numpy())))', 'y = torch.from_numpy(np.asarray(np.tanh(x.detach().cpu().numpy())))', _STRIDES),
    EquivalentMutant('NumpyTanh', 'ignore_needs_input_grad', 'to_torch(-2 * gb * gn * yn, y) if ctx.needs_input_grad[1] else None)', 'to_torch(-2 * gb * gn * yn, y) if True else None)', _Y_NEEDS),
    EquivalentMutant('NumpyTanh', 'ignore_needs_input_grad', 'dy = torch.from_numpy(np.asarray(-2 * gb * g * y)) if ctx.needs_input_grad[1] else None', 'dy = torch.from_numpy(np.asarray(-2 * gb * g * y)) if True else None', _Y_NEEDS),
    EquivalentMutant('NumpyTanh', 'ignore_needs_input_grad', 'if ctx.needs_input_grad[1]:', 'if True:', _Y_NEEDS),
    EquivalentMutant('NumpyTanh', 'add_copy', 'return grad_g, grad_y', 'return grad_g, grad_y.clone()', _FRESH),
    EquivalentMutant('NumpyTanh', 'save_widened', 'ctx.save_for_backward(torch.from_numpy(np.asarray(-2 * gn * yn)), y)  # a new tensor, not a copy', 'ctx.save_for_backward(torch.from_numpy(np.asarray(-2 * gn * yn)).double(), y)  # a new tensor, not a copy', _WIDE_INTERMEDIATE),
    EquivalentMutant('NumpyTanh', 'ignore_needs_input_grad', 'dy if ctx.needs_input_grad[1] else None)', 'dy if True else None)', _THIRD),
    EquivalentMutant('NumpyTanh', 'drop_term', 'return (torch.from_numpy(np.asarray(u * (1 - y * y) - 2 * w * g * y)),', 'return (torch.from_numpy(np.asarray(u * (1 - y) - 2 * w * g * y)),', _THIRD),
]
