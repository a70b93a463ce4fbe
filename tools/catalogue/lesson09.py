"""Lesson 09: answers with known verdicts for BroadcastMul, ProdOverDim, Cumsum, IndexSelect
and Normalize."""

from . import Mistake, Unusual


def _function(name: str, forward: str, backward: str) -> str:
    """A Function class from its forward and backward (each may start with a blank line)."""
    forward, backward = forward.lstrip("\n"), backward.lstrip("\n")
    return (f"class {name}(torch.autograd.Function):\n    @staticmethod\n{forward}\n"
            f"    @staticmethod\n{backward}")


_MUL_FORWARD = '''    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b
'''


def _mul(backward_body: str, forward: str = _MUL_FORWARD) -> str:
    return _function("BroadcastMul", forward, "    def backward(ctx, grad_output):\n"
                     "        a, b = ctx.saved_tensors\n" + backward_body.lstrip("\n"))


_PROD_FORWARD = '''    def forward(ctx, x, dim):
        ctx.save_for_backward(x)
        ctx.dim = dim
        return torch.prod(x, dim)
'''


def _prod(backward_body: str, forward: str = _PROD_FORWARD) -> str:
    return _function("ProdOverDim", forward, "    def backward(ctx, grad_output):\n"
                     "        x, = ctx.saved_tensors\n        dim = ctx.dim\n"
                     + backward_body.lstrip("\n"))


_CUMSUM_FORWARD = '''    def forward(ctx, x, dim):
        ctx.dim = dim
        return torch.cumsum(x, dim)
'''


def _cumsum(backward_body: str, forward: str = _CUMSUM_FORWARD) -> str:
    return _function("Cumsum", forward, "    def backward(ctx, grad_output):\n"
                     "        dim = ctx.dim\n" + backward_body.lstrip("\n"))


_SELECT_FORWARD = '''    def forward(ctx, x, index):
        ctx.save_for_backward(index)
        ctx.shape = x.shape
        return torch.index_select(x, 0, index)
'''


def _select(backward_body: str, forward: str = _SELECT_FORWARD) -> str:
    return _function("IndexSelect", forward, "    def backward(ctx, grad_output):\n"
                     "        index, = ctx.saved_tensors\n" + backward_body.lstrip("\n"))


_NORMALIZE_FORWARD = '''    def forward(ctx, x, eps):
        norm = x.norm(dim=-1, keepdim=True)
        y = x / norm.clamp_min(eps)
        ctx.save_for_backward(y, norm)
        ctx.eps = eps
        return y
'''


def _normalize(backward_body: str, forward: str = _NORMALIZE_FORWARD) -> str:
    return _function("Normalize", forward, "    def backward(ctx, grad_output):\n"
                     "        y, norm = ctx.saved_tensors\n" + backward_body.lstrip("\n"))


_MUL_BOTH = ("        return (grad_output * b).sum_to_size(a.shape), "
             "(grad_output * a).sum_to_size(b.shape)\n")
_PROD_EXACT = '''        if x.dim() == 0:
            return grad_output.clone(), None
        ones = torch.ones_like(x.narrow(dim, 0, 1))
        n = x.shape[dim]
        before = torch.cat([ones, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)
        after = torch.cat([x.narrow(dim, 1, n - 1), ones], dim).flip(dim).cumprod(dim).flip(dim)
        return grad_output.unsqueeze(dim) * before * after, None
'''
_REVERSED = "        return grad_output.flip(dim).cumsum(dim).flip(dim), None\n"
_INDEX_ADD = ("        return grad_output.new_zeros(ctx.shape).index_add(0, index, grad_output), "
              "None\n")
_PROJECTION = '''        radial = (y * grad_output).sum(-1, keepdim=True)
        above = norm >= ctx.eps
        return (grad_output - y * radial * above) / norm.clamp_min(ctx.eps), None
'''

UNUSUAL = [
    Unusual("BroadcastMul", "leading dims summed in a loop, size-1 dims with keepdim", _mul('''
        grads = []
        for needed, other, own in ((ctx.needs_input_grad[0], b, a),
                                   (ctx.needs_input_grad[1], a, b)):
            if not needed:
                grads.append(None)
                continue
            g = grad_output * other
            while g.dim() > own.dim():
                g = g.sum(0)
            dims = [i for i, size in enumerate(own.shape) if size == 1 and g.shape[i] != 1]
            grads.append(g.sum(dims, keepdim=True) if dims else g)
        return tuple(grads)
''')),
    Unusual("BroadcastMul", "saves the output too, unused (no saving rule in the contract)",
            _mul("""
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = (grad_output * b).sum_to_size(a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = (grad_output * a).sum_to_size(b.shape)
        return grad_a, grad_b
""", forward="""    def forward(ctx, a, b):
        y = a * b
        ctx.save_for_backward(a, b, y)
        return y
""").replace("a, b = ctx.saved_tensors", "a, b, _ = ctx.saved_tensors")),
    Unusual("BroadcastMul", "broadcast_tensors, then sum_to_size", _mul('''
        grad_a = grad_b = None
        big_a, big_b = torch.broadcast_tensors(a, b)
        if ctx.needs_input_grad[0]:
            grad_a = (grad_output * big_b).sum_to_size(a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = (grad_output * big_a).sum_to_size(b.shape)
        return grad_a, grad_b
''')),
    Unusual("BroadcastMul", "saves expanded views, reduces with a helper", _mul('''
        def reduce(g, shape):
            lead = g.dim() - len(shape)
            g = g.sum(tuple(range(lead))) if lead else g
            dims = tuple(i for i, s in enumerate(shape) if s == 1)
            return g.sum(dims, keepdim=True) if dims else g

        grad_a = reduce(grad_output * b, a.shape) if ctx.needs_input_grad[0] else None
        grad_b = reduce(grad_output * a, b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b
''', forward='''
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return torch.mul(a, b)
''')),
    Unusual("ProdOverDim", "count the zeros, divide only where safe", _prod('''
        zeros = (x == 0).sum(dim, keepdim=True)
        safe = torch.where(x == 0, torch.ones_like(x), x)
        product_of_nonzeros = safe.prod(dim, keepdim=True)
        others = torch.where(x == 0, product_of_nonzeros, product_of_nonzeros / safe)
        local = torch.where(zeros == 0, others,
                            torch.where((zeros == 1) & (x == 0), others, torch.zeros_like(x)))
        g = grad_output.unsqueeze(dim) if x.dim() else grad_output
        return g * local, None
''')),
    Unusual("ProdOverDim", "exclusive products from both ends", _prod(_PROD_EXACT)),
    Unusual("ProdOverDim", "product of the others by masking each entry", _prod('''
        if x.dim() == 0:
            return grad_output.clone(), None
        moved = x.movedim(dim, -1)
        n = moved.shape[-1]
        eye = torch.eye(n, dtype=torch.bool, device=x.device)
        others = torch.where(eye, torch.ones_like(moved).unsqueeze(-1),
                             moved.unsqueeze(-2).expand(*moved.shape, n)).prod(-1)
        return (grad_output.unsqueeze(-1) * others).movedim(-1, dim), None
''')),
    Unusual("Cumsum", "an upper-triangular matrix of ones", _cumsum('''
        if grad_output.dim() == 0:
            return grad_output.clone(), None
        moved = grad_output.movedim(dim, -1)
        n = moved.shape[-1]
        upper = torch.ones(n, n, dtype=moved.dtype, device=moved.device).triu()
        return (moved @ upper.T).movedim(-1, dim), None
''')),
    Unusual("Cumsum", "reversed with index_select", _cumsum('''
        if grad_output.dim() == 0:
            return grad_output.clone(), None
        n = grad_output.shape[dim]
        backwards = torch.arange(n - 1, -1, -1, device=grad_output.device)
        flipped = grad_output.index_select(dim, backwards)
        return flipped.cumsum(dim).index_select(dim, backwards), None
''')),
    Unusual("IndexSelect", "scatter_add with an expanded index", _select('''
        rows = index.reshape(-1, *([1] * (grad_output.dim() - 1))).expand_as(grad_output)
        return grad_output.new_zeros(ctx.shape).scatter_add(0, rows, grad_output), None
''')),
    Unusual("IndexSelect", "index_put_ with accumulate=True", _select('''
        grad_x = torch.zeros(ctx.shape, dtype=grad_output.dtype, device=grad_output.device)
        grad_x.index_put_((index,), grad_output, accumulate=True)
        return grad_x, None
''')),
    Unusual("IndexSelect", "a one-hot matrix product", _select('''
        one_hot = F.one_hot(index, ctx.shape[0]).to(grad_output.dtype)  # (k, n)
        flat = grad_output.reshape(index.shape[0], math.prod(ctx.shape[1:]))
        return (one_hot.T @ flat).reshape(ctx.shape), None
''', forward='''
    def forward(ctx, x, index):
        ctx.save_for_backward(index)
        ctx.shape = x.shape
        return x[index]
''')),
    Unusual("Normalize", "saves the clamped norm; the branch from the output's length",
            _normalize('''
        eps = ctx.eps
        radial = (y * grad_output).sum(-1, keepdim=True)
        projected = torch.where(norm > eps, grad_output - y * radial, grad_output)
        return projected / norm, None
''', forward='''
    def forward(ctx, x, eps):
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(eps)
        y = x / norm
        ctx.save_for_backward(y, norm)
        ctx.eps = eps
        return y
''')),
    Unusual("Normalize", "two branches with torch.where", _normalize('''
        radial = (y * grad_output).sum(dim=-1, keepdim=True)
        above = (grad_output - radial * y) / torch.clamp(norm, min=ctx.eps)
        return torch.where(norm >= ctx.eps, above, grad_output / ctx.eps), None
''')),
    Unusual("Normalize", "saves the reciprocal of the clamped norm", _function("Normalize", '''
    def forward(ctx, x, eps):
        inverse = 1 / x.norm(dim=-1, keepdim=True).clamp_min(eps)
        y = x * inverse
        ctx.save_for_backward(y, inverse)
        ctx.eps = eps
        return y
''', '''
    def backward(ctx, grad_output):
        y, inverse = ctx.saved_tensors
        above = inverse < 1 / ctx.eps  # 1 / max(norm, eps) is 1 / eps below eps
        radial = (y * grad_output).sum(-1, keepdim=True)
        return (grad_output - y * radial * above) * inverse, None
''')),
]

MISTAKES = [
    Mistake("Cumsum", "total minus the exclusive prefix",
            "Cumsum's gradient written as the total minus a running sum", _cumsum(
                "        return grad_output.sum(dim, keepdim=True) - grad_output.cumsum(dim) "
                "+ grad_output, None\n")),
    Mistake("BroadcastMul", "forgot to sum the broadcast dims",
            "forgot to sum the broadcast dims",
            _mul("        return grad_output * b, grad_output * a\n"),
            named=True, nbgrader=True),
    Mistake("BroadcastMul", "sum without keepdim", "keepdim", _mul('''
        def reduce(g, shape):
            while g.dim() > len(shape):
                g = g.sum(0)
            for i, size in enumerate(shape):
                if size == 1 and g.shape[i] != 1:
                    g = g.sum(i)
            return g

        return reduce(grad_output * b, a.shape), reduce(grad_output * a, b.shape)
'''), named=True),
    Mistake("BroadcastMul", "ignores needs_input_grad",
            "returns a tensor for b when only a requires grad", _mul(_MUL_BOTH), named=True),
    Mistake("BroadcastMul", "the other input recovered as y / a (nan where a holds 0)",
            "is inf or nan exactly where a holds 0", _mul("""
        y = a * b
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = (grad_output * y / a).sum_to_size(a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = (grad_output * y / b).sum_to_size(b.shape)
        return grad_a, grad_b
""")),
    Mistake("BroadcastMul", "gradients swapped", "wrong", _mul(
        "        return (grad_output * a).sum_to_size(a.shape), "
        "(grad_output * b).sum_to_size(b.shape)\n")),
    Mistake("ProdOverDim", "prod / x divides by zero", "as prod / x or a sum of logs gives",
            _prod('''
        y = torch.prod(x, dim, keepdim=True)
        return grad_output.unsqueeze(dim) * y / x, None
'''), named=True, nbgrader=True),
    Mistake("ProdOverDim", "several zeros treated like one", "two zeros", _prod('''
        safe = torch.where(x == 0, torch.ones_like(x), x)
        product_of_nonzeros = safe.prod(dim, keepdim=True)
        local = torch.where(x == 0, product_of_nonzeros, product_of_nonzeros / safe)
        local = torch.where((x == 0).any(dim, keepdim=True) & (x != 0), 0.0, local)
        return grad_output.unsqueeze(dim) * local, None
'''), named=True),
    Mistake("ProdOverDim", "grad_output not unsqueezed", "unsqueeze it at dim", _prod('''
        n = x.shape[dim]
        ones = torch.ones_like(x.narrow(dim, 0, 1))
        before = torch.cat([ones, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)
        after = torch.cat([x.narrow(dim, 1, n - 1), ones], dim).flip(dim).cumprod(dim).flip(dim)
        return grad_output * before * after, None
'''), named=True),
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
    Mistake("IndexSelect", "grad[index] = grad_output", "lost repeated rows", _select('''
        grad_x = grad_output.new_zeros(ctx.shape)
        grad_x[index] = grad_output
        return grad_x, None
'''), named=True, nbgrader=True),
    Mistake("IndexSelect", "saves x", "saves its input x", _select(_INDEX_ADD, forward='''
    def forward(ctx, x, index):
        ctx.save_for_backward(x, index)
        return torch.index_select(x, 0, index)
''').replace("index, = ctx.saved_tensors", "x, index = ctx.saved_tensors").replace(
        "ctx.shape", "x.shape"), named=True),
    Mistake("IndexSelect", "index kept on ctx", "stores a tensor as ctx.index", _function(
        "IndexSelect", '''    def forward(ctx, x, index):
        ctx.index = index
        ctx.shape = x.shape
        return torch.index_select(x, 0, index)
''', '''    def backward(ctx, grad_output):
        return grad_output.new_zeros(ctx.shape).index_add(0, ctx.index, grad_output), None
'''), named=True),
    Mistake("IndexSelect", "zeros in the default dtype", "keep the input's dtype", _select(
        "        return torch.zeros(ctx.shape).index_add(0, index, grad_output.float()), None\n")),
    Mistake("Normalize", "missing projection term", "missing the projection term", _normalize(
        "        return grad_output / norm.clamp_min(ctx.eps), None\n"),
            named=True, nbgrader=True),
    Mistake("Normalize", "projection on rows below eps too", "below eps", _normalize('''
        radial = (y * grad_output).sum(-1, keepdim=True)
        return (grad_output - y * radial) / norm.clamp_min(ctx.eps), None
'''), named=True),
    Mistake("Normalize", "saves x", "saves its input x", _normalize(_PROJECTION, forward='''
    def forward(ctx, x, eps):
        norm = x.norm(dim=-1, keepdim=True)
        y = x / norm.clamp_min(eps)
        ctx.save_for_backward(y, norm, x)
        ctx.eps = eps
        return y
''').replace("y, norm = ctx.saved_tensors", "y, norm, x = ctx.saved_tensors"), named=True),
    Mistake("Normalize", "builds each row's Jacobian", "Jacobian", _normalize('''
        d = y.shape[-1]
        eye = torch.eye(d, dtype=y.dtype, device=y.device)
        above = (norm >= ctx.eps).unsqueeze(-1)
        jacobian = (eye - above * y.unsqueeze(-1) * y.unsqueeze(-2)) / norm.clamp_min(
            ctx.eps).unsqueeze(-1)
        return (jacobian @ grad_output.unsqueeze(-1)).squeeze(-1), None
'''), named=True),
    Mistake("Normalize", "radial sum without keepdim", "keepdim", _normalize('''
        radial = (y * grad_output).sum(-1)
        above = norm >= ctx.eps
        return (grad_output - y * radial * above) / norm.clamp_min(ctx.eps), None
'''), named=True),
]
