"""Lesson 09's answer builders: each exercise's Function from its forward and backward bodies
(``_mul``, ``_prod``, ``_cumsum``, ``_select``, ``_normalize``, ``_cummax``), the lesson's own
forwards, and the right backward bodies most entries are written against."""


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
        n = x.shape[dim]
        if n == 0:  # narrow(dim, 0, 1) needs an entry; an empty x's gradient is empty
            return torch.zeros_like(x), None
        ones = torch.ones_like(x.narrow(dim, 0, 1))
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


_CUMMAX_FORWARD = '''    def forward(ctx, x, dim):
        values, indices = torch.cummax(x, dim)
        ctx.save_for_backward(indices)
        ctx.dim = dim
        return values
'''


def _cummax(backward_body: str, forward: str = _CUMMAX_FORWARD) -> str:
    return _function("CumMax", forward, "    def backward(ctx, grad_output):\n"
                     "        indices, = ctx.saved_tensors\n" + backward_body.lstrip("\n"))


_SCATTER_ADD = ("        return torch.zeros_like(grad_output).scatter_add(ctx.dim, indices, "
                "grad_output), None\n")
