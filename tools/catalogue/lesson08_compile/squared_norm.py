"""Lesson 08's transfer exercise, squared_norm: answers with known verdicts (the batching rule,
the fake implementation, the backward's broadcast).

Every softplus or squared_norm entry defines its operator (``autograd_course::softplus``,
``autograd_course::squared_norm``) again: load one entry and grade it before loading the
next (the dispatcher runs the newest definition)."""

from .. import Mistake, Unusual
from .answers import SQUARED_NORM, _edit


# a NumPy kernel, as in PyTorch's custom-operator tutorial; .contiguous() gives the contiguous
# output its fake describes (np.sum keeps a permuted x's memory order)
NUMPY_KERNEL = '''
import numpy as np


@torch.library.custom_op("autograd_course::squared_norm", mutates_args=())
def squared_norm(x: torch.Tensor, dim: int) -> torch.Tensor:
    x_np = x.detach().cpu().numpy()
    out = torch.from_numpy(np.asarray(np.sum(x_np * x_np, axis=dim)))
    return out.contiguous().to(x.device)  # np.sum keeps a permuted x's memory order


@squared_norm.register_fake
def _(x, dim):
    shape = list(x.shape)
    del shape[dim]
    return x.new_empty(shape)


def setup_context(ctx, inputs, output):
    x, dim = inputs
    ctx.save_for_backward(x)
    ctx.dim = dim % x.dim()


def backward(ctx, grad_output):
    x, = ctx.saved_tensors
    return x * grad_output.unsqueeze(ctx.dim) * 2.0, None


squared_norm.register_autograd(backward, setup_context=setup_context)


@squared_norm.register_vmap
def _(info, in_dims, x, dim):
    x_bdim, _ = in_dims
    sample_dim = dim % (x.dim() - 1)
    return squared_norm(x.movedim(x_bdim, 0), sample_dim + 1), 0
'''


_SN_RULE = ("    x = x.movedim(x_bdim, 0)\n"
         "    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0")

_GUESS = ("def _dim(x, out):\n"
          "    for i in range(out.dim()):\n"
          "        if x.shape[i] != out.shape[i]:\n"
          "            return i\n"
          "    return x.dim() - 1\n")

_SN_RULE_MOVE = "    x = x.movedim(x_bdim, 0)"


UNUSUAL = [
    Unusual("squared_norm", "registrations by name, an einsum forward, a fake from a fake sum",
            '''
def _squared_norm(x: torch.Tensor, dim: int) -> torch.Tensor:
    moved = x.movedim(dim, -1)
    return torch.einsum("...i,...i->...", moved, moved)


squared_norm = torch.library.custom_op("autograd_course::squared_norm", _squared_norm,
                                       mutates_args=())
torch.library.register_fake("autograd_course::squared_norm",
                            lambda x, dim: torch.empty_like(x).sum(dim))


def _setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.dim = inputs[1]


def _backward(ctx, grad):
    x, = ctx.saved_tensors
    return (grad.unsqueeze(ctx.dim).expand_as(x) * x).mul(2), None


def _rule(info, in_dims, x, dim):
    x = x.movedim(in_dims[0], 0)
    return torch.ops.autograd_course.squared_norm(x, dim if dim < 0 else dim + 1), 0


torch.library.register_autograd("autograd_course::squared_norm", _backward, setup_context=_setup)
torch.library.register_vmap("autograd_course::squared_norm", _rule)
'''),
    Unusual("squared_norm", "a rule that leaves the batch dim where it is and reports out_dims",
            _edit(SQUARED_NORM, ('''    x_bdim, _ = in_dims
    x = x.movedim(x_bdim, 0)
    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0''', '''    x_bdim, _ = in_dims
    d = dim % (x.dim() - 1)  # the dim within one sample
    real = d + 1 if d >= x_bdim else d  # that dim in the batched x
    return squared_norm(x, real), x_bdim if x_bdim < real else x_bdim - 1'''))),
    Unusual("squared_norm", "a rule that computes the batch itself, batch dim last, out_dims -1",
            _edit(SQUARED_NORM, ("    x = x.movedim(x_bdim, 0)\n    return squared_norm(x, dim + 1 if "
                                 "dim >= 0 else dim), 0",
                                 "    x = x.movedim(x_bdim, -1)  # the sample's dims keep their "
                                 "numbers\n    return (x * x).sum(dim % (x.dim() - 1)), -1"))),
    Unusual("squared_norm", "a NumPy kernel, as in PyTorch's custom-operator tutorial "
            "(numpy_sin, numpy_cube), with the dim normalised once", NUMPY_KERNEL),
    Unusual("squared_norm", "vector_norm squared, 2x saved, a rule that leaves the batch dim "
            "in place", '''
@torch.library.custom_op("autograd_course::squared_norm", mutates_args=())
def squared_norm(x: torch.Tensor, dim: int) -> torch.Tensor:
    return torch.linalg.vector_norm(x, dim=dim) ** 2


@squared_norm.register_fake
def _(x, dim):
    shape = list(x.shape)
    del shape[dim]
    return x.new_empty(shape)


def setup_context(ctx, inputs, output):
    x, dim = inputs
    ctx.save_for_backward(2 * x)
    ctx.dim = dim


def backward(ctx, grad_output):
    twice, = ctx.saved_tensors
    return twice * grad_output.unsqueeze(ctx.dim), None


squared_norm.register_autograd(backward, setup_context=setup_context)


def rule(info, in_dims, x, dim):
    b = in_dims[0]
    d = dim % (x.dim() - 1)
    d = d + 1 if d >= b else d
    return squared_norm(x, d), (b if b < d else b - 1)


squared_norm.register_vmap(rule)
'''),
    Unusual("squared_norm", "a fake from a sum of a fake tensor; backward by expand",
            _edit(SQUARED_NORM, ("    d = dim % x.dim()\n    return x.new_empty(x.shape[:d] + "
                                 "x.shape[d + 1:])", "    return torch.empty_like(x).sum(dim)"),
                  ("return 2 * x * grad_output.unsqueeze(ctx.dim), None",
                   "return (grad_output.unsqueeze(ctx.dim).expand(x.shape) * x).mul(2), None"))),
    Unusual('squared_norm', 'rule moves the batch dim last and computes x.square().sum(d) without the operator, out_dims=-1',
            '# UNUSUAL (correct): batch moved last; negative dim shifted by -1; computed in the rule with plain torch ops (no call of the op)\nimport torch\ndef squared_norm(x: torch.Tensor, dim: int) -> torch.Tensor:\n    return (x * x).sum(dim)\nsquared_norm = torch.library.custom_op("autograd_course::squared_norm", squared_norm, mutates_args=())\n@squared_norm.register_fake\ndef _(x, dim):\n    r = dim % x.dim()\n    return x.new_empty(x.shape[:r] + x.shape[r + 1:])\ndef sc(ctx, inputs, output):\n    x, dim = inputs\n    ctx.save_for_backward(x); ctx.dim = dim\ndef bw(ctx, g):\n    x, = ctx.saved_tensors\n    return 2 * x * g.unsqueeze(ctx.dim), None\nsquared_norm.register_autograd(bw, setup_context=sc)\ndef rule(info, in_dims, x, dim):\n    b, _ = in_dims\n    x = x.movedim(b, -1)\n    d = dim if dim >= 0 else dim - 1\n    return x.square().sum(d), -1\nsquared_norm.register_vmap(rule)\n'),
    Unusual('squared_norm', 'fake written as x.sum(dim) on the fake tensor, forward vector_norm(x) ** 2',
            '# UNUSUAL (correct): fake by running a reduction on the fake tensor; forward by vector_norm**2; backward x.mul(2g)\nimport torch\ndef squared_norm(x: torch.Tensor, dim: int) -> torch.Tensor:\n    return torch.linalg.vector_norm(x, 2, dim) ** 2\nsquared_norm = torch.library.custom_op("autograd_course::squared_norm", squared_norm, mutates_args=())\n@squared_norm.register_fake\ndef _(x, dim):\n    return x.sum(dim)\ndef sc(ctx, inputs, output):\n    x, dim = inputs\n    ctx.save_for_backward(x); ctx.dim = dim\ndef bw(ctx, g):\n    x, = ctx.saved_tensors\n    return x.mul(g.unsqueeze(ctx.dim).mul(2)), None\nsquared_norm.register_autograd(bw, setup_context=sc)\ndef rule(info, in_dims, x, dim):\n    b, _ = in_dims\n    x = x.movedim(b, 0)\n    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0\nsquared_norm.register_vmap(rule)\n'),
    Unusual("squared_norm", "rule leaves the batch dim in place, computes (x * x).sum, counts "
            "out_dims",
            _edit(SQUARED_NORM, ("    x = x.movedim(x_bdim, 0)\n"
                                 "    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0",
                                 "    d = dim % (x.dim() - 1)\n"
                                 "    d_b = d + 1 if d >= x_bdim else d\n"
                                 "    return (x * x).sum(d_b), (x_bdim - 1 if d < x_bdim "
                                 "else x_bdim)"))),
    Unusual("squared_norm", "forward linalg.vecdot, rule moves the batch dim last, out_dims -1",
            _edit(SQUARED_NORM, ("    return (x * x).sum(dim)",
                                 "    return torch.linalg.vecdot(x, x, dim=dim)"),
                  ("    x = x.movedim(x_bdim, 0)\n"
                   "    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0",
                   "    x = x.movedim(x_bdim, -1)\n"
                   "    return squared_norm(x, dim if dim >= 0 else dim - 1), -1"))),
    Unusual("squared_norm", "batch dim moved last, a negative dim less 1, out_dims -1",
            _edit(SQUARED_NORM, (_SN_RULE, "    x = x.movedim(x_bdim, -1)\n"
                                 "    return squared_norm(x, dim if dim >= 0 else dim - 1), -1"))),
    Unusual("squared_norm", "the rule's dim as dim % x.dim() + (dim >= 0) on the batched x",
            _edit(SQUARED_NORM, (_SN_RULE, "    x = x.movedim(x_bdim, 0)\n"
                                 "    return squared_norm(x, dim % x.dim() + (dim >= 0)), 0"))),
]


MISTAKES = [
    # review 73's Q6: passed grading after a self-check in the same process (same seeded values)
    Mistake("squared_norm", "a rule that caches its result by (shape, dim)",
            "the result of an earlier batch",
            "_LAST = {}\n" + _edit(SQUARED_NORM, (
                "    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0",
                "    key = (tuple(x.shape), dim)\n"
                "    if key not in _LAST:\n"
                "        _LAST[key] = squared_norm(x, dim + 1 if dim >= 0 else dim)\n"
                "    return _LAST[key], 0"))),
    # review 73's Q8: the batch folded into the sample's first dim (a raw reshape error before)
    Mistake("squared_norm", "a rule that folds the batch into the sample's first dim",
            "squared_norm's batching rule reshapes x into sizes it does not have",
            _edit(SQUARED_NORM, (
                "    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0",
                "    B = x.shape[0]\n"
                "    d = dim % (x.dim() - 1)\n"
                "    if d == 0:\n"
                "        return squared_norm(x, 1), 0\n"
                "    folded = x.reshape(B * x.shape[1], *x.shape[2:])\n"
                "    out = squared_norm(folded, d)\n"
                "    return out.reshape(B, *out.shape[1:]) if out.dim() else out, 0"))),
    # the NumPy kernel with np.asarray: np.sum keeps a permuted x's memory order, so the
    # output is not contiguous where the fake is (opcheck fails on it too)
    Mistake("squared_norm", "a NumPy kernel whose sum keeps a permuted x's order, fake contiguous",
            "squared_norm's output has strides (1, 3)",
            NUMPY_KERNEL.replace("out.contiguous()", "out")),
    Mistake("squared_norm", "no batching rule: vmap falls back to a per-sample loop",
            "squared_norm has no batching rule",
            SQUARED_NORM[:SQUARED_NORM.index("\n\ndef rule(")] + "\n", named=True, nbgrader=True),
    Mistake("squared_norm", "the rule does not shift a non-negative dim past the batch dim",
            "squared_norm under torch.vmap is right for negative dims but wrong for dim >= 0",
            _edit(SQUARED_NORM, ("squared_norm(x, dim + 1 if dim >= 0 else dim), 0",
                                 "squared_norm(x, dim), 0")), named=True),
    Mistake("squared_norm", "a rule that loops over the samples (the fallback by hand)",
            "squared_norm's batching rule calls the operator once per sample",
            _edit(SQUARED_NORM, ("    x = x.movedim(x_bdim, 0)\n    return squared_norm(x, dim + 1 if "
                                 "dim >= 0 else dim), 0",
                                 "    return torch.stack([squared_norm(sample, dim) "
                                 "for sample in x.unbind(x_bdim)]), 0"))),
    Mistake("squared_norm", "a fake implementation of x's shape",
            "squared_norm's fake implementation returns shape",
            _edit(SQUARED_NORM, ("    d = dim % x.dim()\n    return x.new_empty(x.shape[:d] + "
                                 "x.shape[d + 1:])", "    return torch.empty_like(x)")),
            named=True),
    # the review's: a slice of x has the output's shape, dtype and device, and x's strides,
    # which for a permuted x are not the contiguous ones the real sum returns
    Mistake("squared_norm", "a fake of torch.empty_like(x.select(dim, 0)): a permuted x's strides",
            "but its fake implementation returns strides (1, 3)",
            _edit(SQUARED_NORM, ("    d = dim % x.dim()\n    return x.new_empty(x.shape[:d] + "
                                 "x.shape[d + 1:])",
                                 "    return torch.empty_like(x.select(dim, 0))"))),
    Mistake("squared_norm", "a fake implementation that is always float64",
            "the output has x's dtype",
            _edit(SQUARED_NORM, ("    return x.new_empty(x.shape[:d] + x.shape[d + 1:])",
                                 "    return torch.empty(x.shape[:d] + x.shape[d + 1:], "
                                 "dtype=torch.float64, device=x.device)"))),
    Mistake("squared_norm", "backward returns only grad_x",
            "squared_norm's backward returns the wrong number of gradients",
            _edit(SQUARED_NORM, ("grad_output.unsqueeze(ctx.dim), None",
                                 "grad_output.unsqueeze(ctx.dim)")), named=True),
    Mistake("squared_norm", "grad_output not unsqueezed at dim (a square x shows it)",
            "squared_norm's backward lines grad_output up with the wrong dim",
            _edit(SQUARED_NORM, ("2 * x * grad_output.unsqueeze(ctx.dim), None",
                                 "2 * x * grad_output, None"))),
    # review 76's W3s: the raw broadcast error before
    Mistake("squared_norm", "backward puts dim back at the end (grad_output[..., None])",
            "squared_norm's backward fails for dim=0, which is not the last dimension",
            _edit(SQUARED_NORM, ("2 * x * grad_output.unsqueeze(ctx.dim), None",
                                 "2 * x * grad_output[..., None], None"))),
    # an in-place view op on grad_output: its values stay, its shape changes under the caller
    Mistake("squared_norm", "grad_output.unsqueeze_(dim) in backward (its shape changed in place)",
            "squared_norm's backward changed grad_output's shape in place",
            _edit(SQUARED_NORM, ("2 * x * grad_output.unsqueeze(ctx.dim), None",
                                 "2 * x * grad_output.unsqueeze_(ctx.dim), None"))),
    # a fake that makes its output with no device: on the default device, whatever x's is
    Mistake("squared_norm", "a fake of torch.empty(shape, dtype=x.dtype), no device",
            "the fake of autograd_course::squared_norm (its register_fake) returned its output on",
            _edit(SQUARED_NORM, ("    return x.new_empty(x.shape[:d] + x.shape[d + 1:])",
                                 "    return torch.empty(x.shape[:d] + x.shape[d + 1:], "
                                 "dtype=x.dtype)"))),
    Mistake("squared_norm", "no register_fake", "squared_norm has no fake implementation",
            _edit(SQUARED_NORM, ("@squared_norm.register_fake\n", "")), named=True),
    Mistake("squared_norm", "a plain Python function, not a custom operator",
            "squared_norm never calls the custom operator", '''
def squared_norm(x, dim):
    return (x * x).sum(dim)
''', named=True),
    # on the outputs, the batch dim moved last with dim unchanged (a negative dim one off)
    Mistake("squared_norm", "the rule adds 1 to every dim, negative ones too",
            "squared_norm under torch.vmap reduces the wrong dim of a sample",
            _edit(SQUARED_NORM, ("dim + 1 if dim >= 0 else dim", "dim + 1"))),
    Mistake("squared_norm", "backward without the factor 2",
            "your gradient for x is off by a constant factor 0.5",
            _edit(SQUARED_NORM, ("return 2 * x * grad_output", "return x * grad_output"))),
    # the per-sample loop again, without calling the operator: what it dispatches grows with
    # the batch
    Mistake("squared_norm", "a rule that loops over the samples with torch ops",
            "works sample by sample",
            _edit(SQUARED_NORM, ("    x = x.movedim(x_bdim, 0)\n    return squared_norm(x, "
                                 "dim + 1 if dim >= 0 else dim), 0",
                                 "    return torch.stack([(sample * sample).sum(dim) "
                                 "for sample in x.unbind(x_bdim)]), 0"))),
    # the batch dim left in place and returned as the output's, as an element-wise rule may:
    # a sum removes a dim, so the output's batch dim is one place earlier once the reduced dim
    # came before it (in_dims 1)
    Mistake("squared_norm",
            "an element-wise rule's out_dims: the input's batch dim returned as the output's",
            "squared_norm's batching rule returns x's batch dim as the output's",
            _edit(SQUARED_NORM, ('''    x = x.movedim(x_bdim, 0)
    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0''', '''    sample_dim = dim % (x.dim() - 1)
    batched_dim = sample_dim + 1 if sample_dim >= x_bdim else sample_dim
    return squared_norm(x, batched_dim), x_bdim''')),
            named=True),
    Mistake("squared_norm", "a rule that assumes the batch dim is 0",
            "squared_norm's batching rule takes x's batch dim to be at 0",
            _edit(SQUARED_NORM, ("    x = x.movedim(x_bdim, 0)\n", ""))),
    # the review's: the batch dim moved last and dim passed on unchanged, out_dims -1: right
    # for dim >= 0, wrong for a negative dim (-1 is then the batch dim)
    Mistake("squared_norm", "the batch dim moved last and dim passed on unchanged",
            "squared_norm under torch.vmap reduces the wrong dim of a sample",
            _edit(SQUARED_NORM, ("    x = x.movedim(x_bdim, 0)\n    return squared_norm(x, dim + 1 if "
                                 "dim >= 0 else dim), 0",
                                 "    x = x.movedim(x_bdim, -1)\n    return squared_norm(x, dim), "
                                 "-1"))),
    # the review's: the batch dim left in place, a sample's dim d counted past it with d > bdim
    # for d >= bdim: at d == bdim the rule reduces the batch dim itself
    Mistake("squared_norm", "a rule that counts past the batch dim with > for >=",
            "reduces the batch dim itself",
            _edit(SQUARED_NORM, ('''    x = x.movedim(x_bdim, 0)
    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0''', '''    d = dim % (x.dim() - 1)
    inner = d + 1 if d > x_bdim else d
    return squared_norm(x, inner), x_bdim - 1 if d < x_bdim else x_bdim'''))),
    # the review's: the batch dim moved last, dim translated right, but x's batch dim
    # (in_dims[0]) reported as the output's instead of -1
    Mistake("squared_norm", "the batch dim moved last, in_dims[0] reported as out_dims",
            "squared_norm's batching rule returns in_dims[0] (0) as the output's batch dim",
            _edit(SQUARED_NORM, ("    x = x.movedim(x_bdim, 0)\n    return squared_norm(x, dim + 1 if "
                                 "dim >= 0 else dim), 0",
                                 "    x = x.movedim(x_bdim, -1)\n    return squared_norm(x, dim if "
                                 "dim >= 0 else dim - 1), x_bdim"))),
    Mistake("squared_norm", "a rule that calls the operator on two halves of the batch",
            "splits the batch into pieces",
            _edit(SQUARED_NORM, (_SN_RULE, "    x = x.movedim(x_bdim, 0)\n"
                                        "    d = dim + 1 if dim >= 0 else dim\n"
                                        "    h = (x.shape[0] + 1) // 2\n"
                                        "    return torch.cat([squared_norm(x[:h], d), "
                                        "squared_norm(x[h:], d)]), 0"))),
    Mistake("squared_norm", "the batch dim left in place, out_dims counted with <= for <",
            "reduces the right dim but returns the wrong out_dims",
            _edit(SQUARED_NORM, (_SN_RULE, "    d = dim % (x.dim() - 1)\n"
                                        "    inner = d + 1 if d >= x_bdim else d\n"
                                        "    return squared_norm(x, inner), "
                                        "x_bdim - 1 if d <= x_bdim else x_bdim"))),
    Mistake("squared_norm", "backward guesses dim from x's and grad_output's shapes",
            "squared_norm's backward guesses dim from shapes",
            _GUESS + _edit(SQUARED_NORM,
                           ("    return 2 * x * grad_output.unsqueeze(ctx.dim), None",
                            "    return 2 * x * grad_output.unsqueeze(_dim(x, grad_output)), None"))),
    Mistake("squared_norm", "one call when the batch dim is first, a loop over the samples "
            "otherwise",
            "calls the operator once per sample (5 calls for a batch of 5 with x's batch dim at 1",
            _edit(SQUARED_NORM, ("    x = x.movedim(x_bdim, 0)\n"
                                 "    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0",
                                 "    if x_bdim == 0:\n"
                                 "        return squared_norm(x, dim + 1 if dim >= 0 else dim), 0\n"
                                 "    return torch.stack([squared_norm(s, dim) "
                                 "for s in x.unbind(x_bdim)]), 0"))),
    Mistake("squared_norm", "registered as mylib::squared_norm",
            "is the custom operator mylib::squared_norm",
            _edit(SQUARED_NORM, ('"autograd_course::squared_norm"', '"mylib::squared_norm"'))),
    Mistake("squared_norm", "dim kept in a module global by setup_context",
            "right for each call alone but not for two calls in one graph",
            _edit(SQUARED_NORM, ("    ctx.dim = dim", "    global _DIM\n    _DIM = dim"),
                  ("grad_output.unsqueeze(ctx.dim)", "grad_output.unsqueeze(_DIM)"))),
    Mistake("squared_norm", "the rule swaps the batch dim to the front with transpose(0, b)",
            "squared_norm's batching rule reorders a sample's dims",
            _edit(SQUARED_NORM, (_SN_RULE_MOVE, "    x = x.transpose(0, x_bdim)"))),
    Mistake("squared_norm", "the rule swaps the batch dim to the end with transpose(b, -1)",
            "squared_norm's batching rule reorders a sample's dims",
            _edit(SQUARED_NORM, (_SN_RULE_MOVE + "\n    return squared_norm(x, dim + 1 if dim >= 0 "
                                 "else dim), 0",
                                 "    x = x.transpose(x_bdim, -1)\n"
                                 "    return squared_norm(x, dim if dim >= 0 else dim - 1), -1"))),
    Mistake("squared_norm", "the sum accumulated and returned in float64, fake float64 too",
            "squared_norm's output has dtype torch.float64 for torch.float32 inputs",
            _edit(SQUARED_NORM,
                  ("    return (x * x).sum(dim)",
                   "    return (x * x).sum(dim, dtype=torch.float64)"),
                  ("x.shape[d + 1:])", "x.shape[d + 1:], dtype=torch.float64)"),
                  ("    return 2 * x * grad_output.unsqueeze(ctx.dim), None",
                   "    return (2 * x * grad_output.unsqueeze(ctx.dim)).to(x.dtype), None"))),
    Mistake("squared_norm", "backward scales grad_output in place (grad_output.mul_(2))",
            "squared_norm's backward modified grad_output in place",
            _edit(SQUARED_NORM, ("    return 2 * x * grad_output.unsqueeze(ctx.dim), None",
                                 "    return x * grad_output.mul_(2).unsqueeze(ctx.dim), None"))),
    Mistake("squared_norm", "batch dim left in place, a negative dim compared with it",
            "squared_norm's output under vmap has shape",
            _edit(SQUARED_NORM, (_SN_RULE, "    d = dim + 1 if dim >= x_bdim else dim\n"
                                 "    return squared_norm(x, d), x_bdim if d > x_bdim"
                                 " else x_bdim - 1"))),
    Mistake("squared_norm", "the fake slices with dim itself (a negative dim)",
            "squared_norm's fake implementation returns shape",
            _edit(SQUARED_NORM, ("    d = dim % x.dim()\n", "    d = dim\n"))),
    Mistake("squared_norm", "setup_context keeps x as a ctx attribute",
            "squared_norm stores a tensor as ctx.x",
            _edit(SQUARED_NORM, ("    ctx.save_for_backward(x)", "    ctx.x = x"),
                  ("    x, = ctx.saved_tensors\n    return 2 * x",
                   "    x = ctx.x\n    return 2 * x"))),
    Mistake("squared_norm", "the rule squares the caller's batch in place (x.mul_(x))",
            "squared_norm's batching rule modified its input x in place",
            _edit(SQUARED_NORM, (_SN_RULE, "    x = x.movedim(x_bdim, 0)\n"
                                 "    return x.mul_(x).sum(dim + 1 if dim >= 0 else dim), 0"))),
    Mistake("squared_norm", "backward computes in the saved x (x.mul_(2).mul_(...))",
            "squared_norm.backward modified its input x in place",
            _edit(SQUARED_NORM, ("    return 2 * x * grad_output.unsqueeze(ctx.dim), None",
                                 "    return x.mul_(2).mul_(grad_output.unsqueeze(ctx.dim)), "
                                 "None"))),
    Mistake("squared_norm", "the operator's body adds its sum to torch.zeros(s.shape) made without "
            "device=",
            "squared_norm made a tensor on the default device (torch.zeros",
            _edit(SQUARED_NORM, ("    return (x * x).sum(dim)\n",
                                 "    s = (x * x).sum(dim)\n"
                                 "    return torch.zeros(s.shape, dtype=s.dtype) + s\n")),
            named=True),
    Mistake("squared_norm", 'custom_op(..., device_types="cpu"): no kernel for a CUDA tensor',
            "calls autograd_course::squared_norm, registered for cpu only",
            _edit(SQUARED_NORM, ('mutates_args=())', 'mutates_args=(), device_types="cpu")'))),
]

# a fresh review (review77, Q12): the registered backward returns float64 for a float32 x,
# which autograd casts back without a word (rule 2's dtype; the backward is recorded before)
MISTAKES += [
    Mistake("squared_norm", "the registered backward computes and returns float64",
            "the backward registered for squared_norm returned grad_x in float64 for a float32 x",
            _edit(SQUARED_NORM, ("    return 2 * x * grad_output.unsqueeze(ctx.dim), None",
                                 "    return 2 * x.double() * grad_output.double().unsqueeze("
                                 "ctx.dim), None"))),
]

# review s80's N4: the batch dim left in place, a non-negative dim counted past it, a negative
# dim passed on unchanged (right only after movedim(b, 0)); out_dims counted right. It was
# named as a rule that assumes the batch dim at 0, which it is not
MISTAKES += [
    Mistake("squared_norm", "batch dim left in place, a negative dim passed on unchanged",
            "squared_norm under torch.vmap is right for every dim >= 0 but wrong for dim=-3",
            _edit(SQUARED_NORM, (_SN_RULE, "    d = dim if dim < 0 else (dim + 1 if dim >= x_bdim "
                                 "else dim)\n"
                                 "    reduced = d % x.dim()\n"
                                 "    return squared_norm(x, d), x_bdim if x_bdim < reduced "
                                 "else x_bdim - 1"))),
]
