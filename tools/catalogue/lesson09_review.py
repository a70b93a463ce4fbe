"""Lesson 09: more answers with known verdicts, from a fresh review (answers nobody in the
lesson wrote, run through the one battery)."""

from . import Mistake, Unusual
from .lesson09 import _cumsum, _function, _mul, _normalize, _prod, _select
from .lesson09_transfer import _cummax

UNUSUAL = [
    Unusual("BroadcastMul", "saves only what each gradient needs (None placeholders)",
            _function("BroadcastMul",
            '''
    def forward(ctx, a, b):
        ctx.save_for_backward(b if ctx.needs_input_grad[0] else None,
                              a if ctx.needs_input_grad[1] else None)
        ctx.shapes = (a.shape, b.shape)
        return a * b
''', '''
    def backward(ctx, g):
        b, a = ctx.saved_tensors
        sa, sb = ctx.shapes
        ga = (g * b).sum_to_size(sa) if ctx.needs_input_grad[0] else None
        gb = (g * a).sum_to_size(sb) if ctx.needs_input_grad[1] else None
        return ga, gb
''')),
    Unusual("BroadcastMul", "0-d branches with .sum(), reshape to shape", _mul('''
        out = []
        for need, other, own in ((ctx.needs_input_grad[0], b, a), (ctx.needs_input_grad[1], a, b)):
            if not need:
                out.append(None); continue
            g = grad_output * other
            if own.dim() == 0:
                out.append(g.sum()); continue
            lead = g.dim() - own.dim()
            g = g.sum(dim=list(range(lead))) if lead else g
            keep = [i for i in range(own.dim()) if own.shape[i] == 1 and g.shape[i] != 1]
            out.append(g.sum(dim=keep, keepdim=True) if keep else g)
        return tuple(out)
''')),
    Unusual("BroadcastMul", "sum_to_size(*shape), with a 0-d branch", _mul('''
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = (torch.mul(grad_output, b).sum_to_size(*a.shape) if a.dim()
                  else (grad_output * b).sum())
        if ctx.needs_input_grad[1]:
            gb = (torch.mul(grad_output, a).sum_to_size(*b.shape) if b.dim()
                  else (grad_output * a).sum())
        return ga, gb
''')),
    Unusual("ProdOverDim", "others by deleting each position (cat of slices)", _prod('''
        n = x.shape[dim]
        parts = []
        for c in range(n):
            rest = torch.cat([x.narrow(dim, 0, c), x.narrow(dim, c + 1, n - c - 1)], dim)
            parts.append(rest.prod(dim, keepdim=True))
        others = torch.cat(parts, dim) if parts else torch.ones_like(x)
        return grad_output.unsqueeze(dim) * others, None
''')),
    Unusual("ProdOverDim", "inclusive cumprod rolled with index_fill", _prod('''
        n = x.shape[dim]
        if n == 0:
            return torch.zeros_like(x), None
        first = torch.tensor([0], device=x.device)
        before = x.cumprod(dim).roll(1, dim).index_fill(dim, first, 1.0)
        after = x.flip(dim).cumprod(dim).roll(1, dim).index_fill(dim, first, 1.0).flip(dim)
        return grad_output.unsqueeze(dim) * before * after, None
''')),
    Unusual("ProdOverDim", "movedim to last, slice [..., :-1]", _prod('''
        z = x.movedim(dim, -1)
        one = torch.ones_like(z[..., :1])
        before = torch.cat([one, z[..., :-1]], -1).cumprod(-1)
        after = torch.cat([z[..., 1:], one], -1).flip(-1).cumprod(-1).flip(-1)
        return (grad_output.unsqueeze(-1) * before * after).movedim(-1, dim), None
''')),
    Unusual("Cumsum", "loop of narrow sums", _cumsum('''
        n = grad_output.shape[dim]
        parts = [grad_output.narrow(dim, i, n - i).sum(dim, keepdim=True) for i in range(n)]
        return (torch.cat(parts, dim) if parts else grad_output.clone()), None
''')),
    Unusual("Cumsum", "torch.flip with list dims, cumsum via torch.cumsum out dtype", _cumsum('''
        flipped = torch.flip(grad_output, [dim])
        return torch.flip(torch.cumsum(flipped, dim=dim, dtype=grad_output.dtype), [dim]), None
''')),
    Unusual("IndexSelect", "in-place index_add_ on torch.zeros, the shape kept in two parts",
            _function("IndexSelect",
            '''
    def forward(ctx, x, index):
        ctx.save_for_backward(index)
        ctx.rows, ctx.rest = x.shape[0], x.shape[1:]
        return x.index_select(0, index)
''', '''
    def backward(ctx, g):
        index, = ctx.saved_tensors
        out = torch.zeros((ctx.rows, *ctx.rest), dtype=g.dtype, device=g.device)
        out.index_add_(0, index, g)
        return out, None
''')),
    Unusual("IndexSelect", "python loop accumulating rows", _select('''
        out = grad_output.new_zeros(ctx.shape)
        for k, s in enumerate(index.tolist()):
            out[s] += grad_output[k]
        return out, None
''')),
    Unusual("IndexSelect", "sparse COO tensor to_dense", _select('''
        n = index.shape[0]
        flat = grad_output.reshape(n, math.prod(ctx.shape[1:]))
        if n == 0 or math.prod(ctx.shape[1:]) == 0:
            return grad_output.new_zeros(ctx.shape), None
        cols = torch.arange(flat.shape[1], device=index.device)
        i = torch.stack([index.repeat_interleave(flat.shape[1]), cols.repeat(n)])
        size = (ctx.shape[0], flat.shape[1])
        dense = torch.sparse_coo_tensor(i, flat.reshape(-1), size).to_dense()
        return dense.reshape(ctx.shape), None
''')),
    Unusual("Normalize", "F.normalize forward, where-branch backward", _function("Normalize", '''
    def forward(ctx, x, eps):
        y = F.normalize(x, dim=-1, eps=eps)
        n = x.norm(dim=-1, keepdim=True)
        ctx.save_for_backward(y, n)
        ctx.eps = eps
        return y
''', '''
    def backward(ctx, g):
        y, n = ctx.saved_tensors
        proj = g - y * (y * g).sum(-1, keepdim=True)
        return torch.where(n < ctx.eps, g / ctx.eps, proj / n.clamp_min(ctx.eps)), None
''')),
    Unusual("Normalize", "norm without keepdim, unsqueezed in backward; einsum dot",
            _function("Normalize",
            '''
    def forward(ctx, x, eps):
        n = torch.linalg.vector_norm(x, dim=-1)
        y = x / n.clamp_min(eps).unsqueeze(-1)
        ctx.save_for_backward(y, n)
        ctx.eps = eps
        return y
''', '''
    def backward(ctx, g):
        y, n = ctx.saved_tensors
        n = n.unsqueeze(-1)
        dot = torch.einsum("...i,...i->...", y, g).unsqueeze(-1)
        gx = (g - y * dot * (n >= ctx.eps).to(g.dtype)) / n.clamp_min(ctx.eps)
        return gx, None
''')),
    Unusual("Normalize", "(g - y (y.g)) / n via addcmul", _normalize('''
        dot = (y * grad_output).sum(-1, keepdim=True)
        mask = (norm >= ctx.eps).to(y.dtype)
        divisor = torch.maximum(norm, torch.full_like(norm, ctx.eps))
        return torch.addcmul(grad_output, y, dot * mask, value=-1) / divisor, None
''')),
    Unusual("CumMax", "one-hot compare with arange", _cummax('''
        d = ctx.dim % grad_output.dim()
        idx = indices.movedim(d, -1)
        n = idx.shape[-1]
        hit = (idx.unsqueeze(-1) == torch.arange(n, device=idx.device)).to(grad_output.dtype)
        return (hit * grad_output.movedim(d, -1).unsqueeze(-1)).sum(-2).movedim(-1, d), None
''')),
    Unusual("CumMax", "in-place scatter_add_ on new_zeros, dim normalised", _cummax('''
        out = grad_output.new_zeros(grad_output.shape)
        out.scatter_add_(ctx.dim % max(grad_output.dim(), 1), indices, grad_output)
        return out, None
''')),
    Unusual("CumMax", "scatter_add_ one output position at a time", _cummax('''
        d = ctx.dim % grad_output.dim()
        g, idx = grad_output.movedim(d, -1), indices.movedim(d, -1)
        out = torch.zeros_like(g)
        for o in range(g.shape[-1]):
            out.scatter_add_(-1, idx[..., o:o + 1], g[..., o:o + 1])
        return out.movedim(-1, d), None
''')),
]

MISTAKES = [
    Mistake("Cumsum", "total minus cumsum plus g (other order), dim normalised",
            "Cumsum's gradient written as the total minus a running sum", _cumsum('''
        d = dim % grad_output.dim()
        c = torch.cumsum(grad_output, d)
        if c.shape[d] == 0:
            return grad_output.clone(), None
        return c.narrow(d, c.shape[d] - 1, 1) - c + grad_output, None
''')),
    Mistake("BroadcastMul", "sums leading dims only (size-1 dims unsummed)", "you forgot to sum the broadcast dims",
            _mul('''
        ga = gb = None
        if ctx.needs_input_grad[0]:
            g = grad_output * b
            ga = g.sum(dim=list(range(g.dim() - a.dim()))) if g.dim() > a.dim() else g
        if ctx.needs_input_grad[1]:
            g = grad_output * a
            gb = g.sum(dim=list(range(g.dim() - b.dim()))) if g.dim() > b.dim() else g
        return ga, gb
''')),
    Mistake("BroadcastMul", "summed with keepdim after left-padding (extra dims of size 1)",
            "has b's values but extra dims of size 1 that b lacks", _mul('''
        def reduce(g, shape):
            padded = (1,) * (g.dim() - len(shape)) + tuple(shape)
            dims = [i for i, size in enumerate(padded) if size == 1 and g.shape[i] != 1]
            return g.sum(dims, keepdim=True) if dims else g

        return reduce(grad_output * b, a.shape), reduce(grad_output * a, b.shape)
''')),
    Mistake("BroadcastMul", "computes grad_b always, returns None when not needed",
            "does the same work when only a",
            _mul('''
        ga = (grad_output * b).sum_to_size(a.shape)
        gb = (grad_output * a).sum_to_size(b.shape)
        return (ga if ctx.needs_input_grad[0] else None), (gb if ctx.needs_input_grad[1] else None)
''')),
    Mistake("ProdOverDim", "y/x with nan_to_num (one zero gets 0)",
            "wrong on a slice with exactly one zero",
            _prod('''
        y = x.prod(dim, keepdim=True)
        others = torch.nan_to_num(y / x, nan=0.0, posinf=0.0, neginf=0.0)
        return grad_output.unsqueeze(dim) * others, None
''')),
    Mistake("ProdOverDim", "inclusive cumprods (no shift)", "wrong on a slice with no zero",
            _prod('''
        before = x.cumprod(dim)
        after = x.flip(dim).cumprod(dim).flip(dim)
        return grad_output.unsqueeze(dim) * before * after, None
''')),
    Mistake("ProdOverDim", "forgets to flip after back", "wrong on a slice with no zero", _prod('''
        n = x.shape[dim]
        ones = torch.ones_like(x.narrow(dim, 0, 1))
        before = torch.cat([ones, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)
        after = torch.cat([x.narrow(dim, 1, n - 1), ones], dim).flip(dim).cumprod(dim)
        return grad_output.unsqueeze(dim) * before * after, None
''')),
    Mistake("ProdOverDim", "zero-case with where(x==0, prod of nonzeros, y/x)", "wrong on a slice with two zeros",
            _prod('''
        safe = torch.where(x == 0, torch.ones_like(x), x)
        p = safe.prod(dim, keepdim=True)
        others = torch.where(x == 0, p, x.prod(dim, keepdim=True) / safe)
        return grad_output.unsqueeze(dim) * others, None
''')),
    Mistake("IndexSelect", "index_copy (a write)", "IndexSelect lost repeated rows", _select('''
        return grad_output.new_zeros(ctx.shape).index_copy(0, index, grad_output), None
''')),
    Mistake("IndexSelect", "scatter (no add) with expanded index", "IndexSelect lost repeated rows",
            _select('''
        rows = index.reshape(-1, *([1] * (grad_output.dim() - 1))).expand_as(grad_output)
        return grad_output.new_zeros(ctx.shape).scatter(0, rows, grad_output), None
''')),
    Mistake("IndexSelect", "zeros in float32 always (torch.zeros(ctx.shape))", "keep the input's dtype",
            _select('''
        return torch.zeros(ctx.shape, device=grad_output.device).index_add(0, index, grad_output.float()), None
''')),
    Mistake("Normalize", "unclamped norm in the division", "below eps", _normalize('''
        radial = (y * grad_output).sum(-1, keepdim=True)
        above = norm >= ctx.eps
        return (grad_output - y * radial * above) / norm, None
''')),
    Mistake("CumMax", "g times (indices == position): no sum over a run", "CumMax lost gradients where several outputs", _function("CumMax",
            '''
    def forward(ctx, x, dim):
        values, indices = torch.cummax(x, dim)
        ctx.save_for_backward(indices)
        ctx.dim = dim
        return values
''', '''
    def backward(ctx, g):
        indices, = ctx.saved_tensors
        n = indices.shape[ctx.dim]
        pos = torch.arange(n, device=g.device).reshape([-1] + [1] * (g.dim() - 1 - (ctx.dim % g.dim()))) if g.dim() else None
        return g * (indices == pos), None
''')),
    Mistake("CumMax", "saves values and indices", "CumMax saves its output", _function("CumMax",
            '''
    def forward(ctx, x, dim):
        values, indices = torch.cummax(x, dim)
        ctx.save_for_backward(indices, values)
        ctx.dim = dim
        return values
''', '''
    def backward(ctx, g):
        indices, _ = ctx.saved_tensors
        return torch.zeros_like(g).scatter_add(ctx.dim, indices, g), None
''')),
    Mistake("IndexSelect", "index_reduce with 'mean': repeats averaged, not added",
            "IndexSelect's gradient is wrong only on row 4", _select('''
        out = grad_output.new_zeros(ctx.shape)
        return out.index_reduce(0, index, grad_output, "mean", include_self=False), None
''')),
    Mistake("ProdOverDim", "the others through logs, exp(sum log|x| - log|x|): a division in "
            "log space", "as prod / x or a sum of logs gives", _prod('''
        logs = x.abs().log()
        sign = torch.where(x < 0, -1.0, 1.0).to(x.dtype)
        others = (logs.sum(dim, keepdim=True) - logs).exp() * sign.prod(dim, keepdim=True) * sign
        return grad_output.unsqueeze(dim) * others, None
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
    Mistake("CumMax", "scatter_add along the last dim, whatever dim is",
            "CumMax's gradient is right when dim is the last dimension but wrong for dim=0",
            _cummax("        return torch.zeros_like(grad_output).scatter_add(-1, indices, "
                    "grad_output), None\n")),
    Mistake("IndexSelect", "grad[index] += grad_output (+= on an indexed tensor is a write)",
            "IndexSelect lost repeated rows", _select('''
        grad_x = grad_output.new_zeros(ctx.shape)
        grad_x[index] += grad_output
        return grad_x, None
'''), named=True),
]
