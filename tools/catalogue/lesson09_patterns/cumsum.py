"""Lesson 09: answers with known verdicts for Cumsum (the reversed scan, and the total minus a
running sum, equal only in exact arithmetic)."""

from .. import Mistake, Unusual
from .answers import _CUMSUM_FORWARD, _REVERSED, _cumsum, _function


UNUSUAL = [
    Unusual("Cumsum", "reversed with index_select", _cumsum('''
        if grad_output.dim() == 0:
            return grad_output.clone(), None
        n = grad_output.shape[dim]
        backwards = torch.arange(n - 1, -1, -1, device=grad_output.device)
        flipped = grad_output.index_select(dim, backwards)
        return flipped.cumsum(dim).index_select(dim, backwards), None
''')),
    Unusual("Cumsum", "loop of narrow sums, a 0-d x apart", _cumsum('''
        if grad_output.dim() == 0:  # a row of one: its own sum
            return grad_output.clone(), None
        n = grad_output.shape[dim]
        parts = [grad_output.narrow(dim, i, n - i).sum(dim, keepdim=True) for i in range(n)]
        return (torch.cat(parts, dim) if parts else grad_output.clone()), None
''')),
    Unusual("Cumsum", "torch.flip with list dims, cumsum via torch.cumsum out dtype", _cumsum('''
        flipped = torch.flip(grad_output, [dim])
        return torch.flip(torch.cumsum(flipped, dim=dim, dtype=grad_output.dtype), [dim]), None
''')),
]


MISTAKES = [
    # W14 of review 74: dim turned into a position with dim % x.dim(), which divides by zero on
    # a 0-d x (torch.cumsum takes one along dim 0 and -1, a row of one)
    Mistake("Cumsum", "dim normalised with dim % x.dim() in forward",
            "Cumsum raised ZeroDivisionError on a 0-d x (dim=0, float64), which torch.cumsum "
            "takes", _cumsum(_REVERSED, forward='''
    def forward(ctx, x, dim):
        ctx.dim = dim % x.dim()
        return torch.cumsum(x, dim)
''')),
    # UNUSUAL until review 74: reads grad_output.shape[dim], which a 0-d x does not have
    Mistake("Cumsum", "loop of narrow sums", "Cumsum.backward raised IndexError on a 0-d x",
            _cumsum('''
        n = grad_output.shape[dim]
        parts = [grad_output.narrow(dim, i, n - i).sum(dim, keepdim=True) for i in range(n)]
        return (torch.cat(parts, dim) if parts else grad_output.clone()), None
''')),
    # UNUSUAL until review 67: the Jacobian along dim, a triangle of ones (n x n), built as a
    # matrix; rule 3 keeps backward's memory linear in the sizes
    Mistake("Cumsum", "an upper-triangular matrix of ones",
            "its largest tensor of shape (1024, 1024)", _cumsum('''
        if grad_output.dim() == 0:
            return grad_output.clone(), None
        moved = grad_output.movedim(dim, -1)
        n = moved.shape[-1]
        upper = torch.ones(n, n, dtype=moved.dtype, device=moved.device).triu()
        return (moved @ upper.T).movedim(-1, dim), None
''')),
    Mistake("Cumsum", "a matmul with a triangle of ones along dim",
            "its largest tensor of shape (1024, 1024)", _cumsum('''
        g = grad_output.movedim(dim, -1)
        n = g.shape[-1]
        lower = torch.ones(n, n, dtype=g.dtype, device=g.device).tril()  # [o, i]: i <= o
        return (g @ lower).movedim(-1, dim), None
''')),
    Mistake("Cumsum", "total minus the exclusive prefix",
            "Cumsum's gradient written as the total minus a running sum", _cumsum(
                "        return grad_output.sum(dim, keepdim=True) - grad_output.cumsum(dim) "
                "+ grad_output, None\n")),
    Mistake("Cumsum", "forward scan in backward", "ran the scan the same way as forward",
            _cumsum("        return grad_output.cumsum(dim), None\n"), named=True, nbgrader=True),
    Mistake("Cumsum", "saves x", "needs no tensor", _cumsum(_REVERSED, forward='''
    def forward(ctx, x, dim):
        ctx.save_for_backward(x)
        ctx.dim = dim
        return torch.cumsum(x, dim)
'''), named=True),
    Mistake("Cumsum", "flips only once", "wrong", _cumsum(
        "        return grad_output.flip(dim).cumsum(dim), None\n")),
    Mistake("Cumsum", "PyTorch's own 2017 Cumsum (torch/autograd/_functions/reduce.py): "
            "an exclusive sum scan",
            "Cumsum's gradient written as the total minus a running sum", """
def sum_scan_exclusive(x, dim):
    ret = torch.cumsum(-x, dim=dim)
    end_idx = ret.size(dim) - 1
    ret_sum = ret.narrow(dim, end_idx, 1).clone()
    ret -= ret_sum.expand_as(ret)
    ret += x
    return ret


class Cumsum(torch.autograd.Function):

    @staticmethod
    def forward(ctx, input, dim):
        ctx.dim = dim
        return torch.cumsum(input, dim=ctx.dim)

    @staticmethod
    def backward(ctx, grad_output):
        return sum_scan_exclusive(grad_output, dim=ctx.dim), None
"""),
    Mistake("Cumsum", "total minus cumsum plus g (other order), dim normalised",
            "Cumsum's gradient written as the total minus a running sum", _cumsum('''
        d = dim % grad_output.dim()
        c = torch.cumsum(grad_output, d)
        if c.shape[d] == 0:
            return grad_output.clone(), None
        return c.narrow(d, c.shape[d] - 1, 1) - c + grad_output, None
''')),
    Mistake("Cumsum", "total minus the inclusive running sum (off by one)",
            "g_i is missing (x_i reaches y_i too)", _cumsum(
                "        return grad_output.sum(dim, keepdim=True) - grad_output.cumsum(dim), "
                "None\n"), named=True),
    Mistake("Cumsum", "reversed running sum less g_i (exclusive)",
            "g_i is missing (x_i reaches y_i too)", _cumsum(
                "        return grad_output.flip(dim).cumsum(dim).flip(dim) - grad_output, "
                "None\n")),
    Mistake("Cumsum", "flips and scans the last dim, whatever dim is",
            "Cumsum's gradient is right when dim is the last dimension but wrong for dim=0",
            _cumsum("        return grad_output.flip(-1).cumsum(-1).flip(-1), None\n"),
            named=True),
    Mistake("Cumsum", "total less an exclusive scan shifted with roll (wraps round)",
            "Cumsum's gradient is right everywhere but at the first entry along dim", _cumsum('''
        exclusive = grad_output.cumsum(dim).roll(1, dim)
        return grad_output.sum(dim, keepdim=True) - exclusive, None
''')),
    Mistake("Cumsum", "total minus a running sum (grad_output.sum(dim, keepdim=True) - "
            "(grad_output.cumsum(dim) - grad_output))",
            "Cumsum's gradient written as the total minus a running sum",
            _function("Cumsum", _CUMSUM_FORWARD, '''
    def backward(ctx, grad_output):
        dim = ctx.dim
        return grad_output.sum(dim, keepdim=True) - (grad_output.cumsum(dim) - grad_output), None
''')),
    Mistake("Cumsum", "reversed scan in float32",
            "Cumsum's gradient is off by more than rounding where grad_output decays",
            _function("Cumsum", _CUMSUM_FORWARD, '''
    def backward(ctx, grad_output):
        dim = ctx.dim
        g = grad_output.float()
        return g.flip(dim).cumsum(dim).flip(dim).to(grad_output.dtype), None
''')),    # C2 of review 75: the reversal as index_select with an arange made on the default device
    Mistake("Cumsum", "reversed with index_select, the arange made without device=",
            "made a tensor on the default device (torch.arange without device=)", _cumsum('''
        if grad_output.dim() == 0:
            return grad_output.clone(), None
        backwards = torch.arange(grad_output.shape[dim] - 1, -1, -1)
        flipped = grad_output.index_select(dim, backwards)
        return flipped.cumsum(dim).index_select(dim, backwards), None
''')),
    # learner trial 80 (issue 68): the reversed scan along a fixed dim, or its cumsum alone
    # along one, got 'your gradient for x is wrong'; the gradient is the right formula along
    # another dim (Cumsum/along-another-dim)
    Mistake("Cumsum", "reversed scan always along dim 0",
            "the whole reversed scan along dim 0, where dim=1",
            _cumsum("        return grad_output.flip(0).cumsum(0).flip(0), None\n")),
    Mistake("Cumsum", "flips along dim, the cumsum along dim 0",
            "the scan (cumsum) along dim 0, the flips along dim, where dim=1",
            _cumsum("        return grad_output.flip(dim).cumsum(0).flip(dim), None\n")),
]
