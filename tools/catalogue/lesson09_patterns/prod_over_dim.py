"""Lesson 09: answers with known verdicts for ProdOverDim (the product of the others, exact
where a slice holds one zero or several)."""

from .. import Mistake, Unusual, edit
from .answers import _PROD_EXACT, _prod


# the zeros counted, then overwritten with ones in the saved x: the gradient is right on the
# x forward was given, and that x is changed
PROD_ZEROS_OVERWRITTEN = _prod('''
        zero = x == 0
        nonzero = (~zero).sum(dim, keepdim=True)
        x[zero] = 1.0
        p = x.prod(dim, keepdim=True)
        n = x.shape[dim]
        others = torch.where(zero, p * (nonzero == n - 1), (p / x) * (nonzero == n))
        return grad_output.unsqueeze(dim) * others, None
''')


UNUSUAL = [
    Unusual("ProdOverDim", "exclusive products from both ends", _prod(_PROD_EXACT)),
    Unusual("ProdOverDim", "others by deleting each position (cat of slices)", _prod('''
        if x.dim() == 0:
            return grad_output.clone(), None
        n = x.shape[dim]
        parts = []
        for c in range(n):
            rest = torch.cat([x.narrow(dim, 0, c), x.narrow(dim, c + 1, n - c - 1)], dim)
            parts.append(rest.prod(dim, keepdim=True))
        others = torch.cat(parts, dim) if parts else torch.ones_like(x)
        return grad_output.unsqueeze(dim) * others, None
''')),
    Unusual("ProdOverDim", "inclusive cumprod rolled with index_fill", _prod('''
        if x.dim() == 0:
            return grad_output.clone(), None
        n = x.shape[dim]
        if n == 0:
            return torch.zeros_like(x), None
        first = torch.tensor([0], device=x.device)
        before = x.cumprod(dim).roll(1, dim).index_fill(dim, first, 1.0)
        after = x.flip(dim).cumprod(dim).roll(1, dim).index_fill(dim, first, 1.0).flip(dim)
        return grad_output.unsqueeze(dim) * before * after, None
''')),
    Unusual("ProdOverDim", "movedim to last, slice [..., :-1]", _prod('''
        if x.dim() == 0:
            return grad_output.clone(), None
        z = x.movedim(dim, -1)
        one = torch.ones_like(z[..., :1])
        before = torch.cat([one, z[..., :-1]], -1).cumprod(-1)
        after = torch.cat([z[..., 1:], one], -1).flip(-1).cumprod(-1).flip(-1)
        return (grad_output.unsqueeze(-1) * before * after).movedim(-1, dim), None
''')),
]


# PyTorch 0.3's Prod (torch/autograd/_functions/reduce.py), ported to torch 2
PROD_03 = """
class ProdOverDim(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, dim):
        ctx.dim = dim
        ctx.input_size = input.size()
        output = input.prod(dim)
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        def safe_zeros_backward(inp, dim):
            # input:                        [    a,     b,     c]
            # cumprod(exclusive, normal):   [1    ,     a, a * b]
            # cumprod(exclusive, reverse):  [b * c,     c,     1]
            # product:                      [b * c, a * c, a * b]
            if inp.size(dim) == 1:
                return grad_output.expand_as(inp).clone()
            ones_size = torch.Size((inp.size()[:dim] + (1,) + inp.size()[dim + 1:]))
            ones = grad_output.new_ones(ones_size)
            exclusive_normal = torch.cat((ones, inp.narrow(dim, 0, inp.size(dim) - 1)),
                                         dim).cumprod(dim)

            def reverse_dim(var, dim):
                index = torch.arange(var.size(dim) - 1, -1, -1, device=var.device)
                return var.index_select(dim, index)

            narrow_reverse = reverse_dim(inp.narrow(dim, 1, inp.size(dim) - 1), dim)
            exclusive_reverse = reverse_dim(torch.cat((ones, narrow_reverse), dim).cumprod(dim),
                                            dim)
            return grad_output.expand_as(exclusive_normal).mul(
                exclusive_normal.mul(exclusive_reverse))

        input, output = ctx.saved_tensors
        if input.dim() == 0:  # not in 0.3, which had no 0-d tensors: the product is input
            return grad_output.clone(), None
        dim = ctx.dim if ctx.dim >= 0 else ctx.dim + input.dim()
        if len(ctx.input_size) != 1:
            grad_output = grad_output.unsqueeze(dim)
            output = output.unsqueeze(dim)
        zero_mask = input == 0
        slice_zero_count = zero_mask.sum(dim, True)
        total_zeros = slice_zero_count.sum()
        if total_zeros == 0:
            grad_input = grad_output.mul(output).expand_as(input).div(input)
        else:
            grad_input = safe_zeros_backward(input, dim)
        return grad_input, None
"""


_NO_EMPTY_BRANCH = _PROD_EXACT.replace(
    "        if n == 0:  # narrow(dim, 0, 1) needs an entry; an empty x's gradient is empty\n"
    "            return torch.zeros_like(x), None\n", "")

MISTAKES = [
    # the lesson's own solution until review 67: narrow(dim, 0, 1) and shape[dim] raise on the
    # two shapes at torch.prod's edge, which the grader did not try
    Mistake("ProdOverDim", "exclusive products by narrow: raises on a 0-d x", "on a 0-d x",
            _prod(_NO_EMPTY_BRANCH.replace(
                "        if x.dim() == 0:\n            return grad_output.clone(), None\n", ""))),
    Mistake("ProdOverDim", "exclusive products by narrow(dim, 1, size - 1): raises on an x "
            "empty along dim", "empty along dim", _prod(_NO_EMPTY_BRANCH)),
    # right for the last dim; a broadcast error, or on a square x a silent transpose, otherwise
    Mistake("ProdOverDim", "grad_output unsqueezed at the last dim, not at dim",
            "unsqueezed grad_output at the last dim", _prod('''
        size = x.shape[dim]
        ones = torch.ones_like(x.narrow(dim, 0, 1))
        before = torch.cat([ones, x.narrow(dim, 0, size - 1)], dim).cumprod(dim)
        after = torch.cat([x.narrow(dim, 1, size - 1), ones], dim).flip(dim).cumprod(dim).flip(dim)
        return grad_output.unsqueeze(-1) * before * after, None
''')),
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
    Mistake("ProdOverDim", "exclusive products written for the last dim only",
            "ProdOverDim's gradient is right when dim is the last dimension but wrong", _prod('''
        ones = torch.ones_like(x[..., :1])
        before = torch.cat([ones, x[..., :-1]], -1).cumprod(-1)
        after = torch.cat([x[..., 1:], ones], -1).flip(-1).cumprod(-1).flip(-1)
        return grad_output.unsqueeze(dim) * before * after, None
''')),
    Mistake("ProdOverDim", "y/x with nan_to_num (one zero gets 0)",
            "wrong on a slice with exactly one zero",
            _prod('''
        y = x.prod(dim, keepdim=True)
        others = torch.nan_to_num(y / x, nan=0.0, posinf=0.0, neginf=0.0)
        return grad_output.unsqueeze(dim) * others, None
''')),
    Mistake("ProdOverDim", "inclusive cumprods (no shift)",
            "your products before and after x_i both include x_i itself",
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
    Mistake("ProdOverDim", "the others through logs, exp(sum log|x| - log|x|): a division in "
            "log space", "as prod / x or a sum of logs gives", _prod('''
        logs = x.abs().log()
        sign = torch.where(x < 0, -1.0, 1.0).to(x.dtype)
        others = (logs.sum(dim, keepdim=True) - logs).exp() * sign.prod(dim, keepdim=True) * sign
        return grad_output.unsqueeze(dim) * others, None
''')),
    # allclose passes both: the gradient is 1e-30 or 1e-9 times a product where it is 0 exactly
    # (review 09)
    *(Mistake("ProdOverDim", f"zeros nudged to {tiny} before dividing",
              "close to 0 but not exactly 0", _prod(f'''
        nudged = torch.where(x == 0, torch.full_like(x, {tiny}), x)
        others = nudged.prod(dim, keepdim=True) / nudged
        return grad_output.unsqueeze(dim) * others, None
''')) for tiny in ("1e-30", "1e-9")),
    # right values, but an n x n matrix per slice (each entry masked out of a copy of the slice):
    # memory in n^2 (rule 3; was UNUSUAL before the generic memory check)
    Mistake("ProdOverDim", "product of the others by masking each entry",
            "made by where: a Jacobian built as a matrix", _prod('''
        if x.dim() == 0:
            return grad_output.clone(), None
        moved = x.movedim(dim, -1)
        n = moved.shape[-1]
        eye = torch.eye(n, dtype=torch.bool, device=x.device)
        others = torch.where(eye, torch.ones_like(moved).unsqueeze(-1),
                             moved.unsqueeze(-2).expand(*moved.shape, n)).prod(-1)
        return (grad_output.unsqueeze(-1) * others).movedim(-1, dim), None
''')),
    Mistake("ProdOverDim", "zeros overwritten with ones in the saved x (x[x == 0] = 1)",
            "ProdOverDim.backward modified its input x in place: inputs must stay untouched "
            "(Function contract, rule 5: Nothing written", PROD_ZEROS_OVERWRITTEN),
    # the per-call check's calls share x's number of dims; a 1-D x beside a 2-D x tells them apart
    Mistake("ProdOverDim", "PyTorch 0.3's Prod (cumprods always) with the input size in a module "
            "global",
            "ProdOverDim is right for each call alone", edit(
        PROD_03,
        ("        ctx.input_size = input.size()\n",
         "        global INPUT_SIZE\n        INPUT_SIZE = input.size()\n"),
        ("len(ctx.input_size)", "len(INPUT_SIZE)"),
        (PROD_03[PROD_03.index("        zero_mask"):PROD_03.index("        return grad_input")],
         "        grad_input = safe_zeros_backward(input, dim)  # review 55c: never y / x\n"))),    # P4 of review 75: the products after each entry reversed by index_select with an arange
    # made on the default device
    Mistake("ProdOverDim", "after-products reversed by index_select, the arange made without "
            "device=", "made a tensor on the default device (torch.arange without device=)", _prod('''
        if x.dim() == 0:
            return grad_output.clone(), None
        size = x.shape[dim]
        backwards = torch.arange(size - 1, -1, -1)
        shape = list(x.shape)
        shape[dim] = 1
        ones = x.new_ones(shape)

        def exclusive(t):
            return torch.cat([ones, t], dim).cumprod(dim).narrow(dim, 0, size)

        after = exclusive(x.index_select(dim, backwards)).index_select(dim, backwards)
        return grad_output.unsqueeze(dim) * exclusive(x) * after, None
''')),
    # learner trial 80 (issue 68): the products along a fixed dim, or the flips around the scan
    # of the products after x_i along one, got a generic first line ('wrong on a slice with no
    # zero'); the gradient is the right formula along another dim (ProdOverDim/along-another-dim)
    Mistake("ProdOverDim", "products of the others always along dim 0",
            "the products of the other entries taken along dim 0, where dim=1", _prod('''
        n = x.shape[0]
        ones = torch.ones_like(x.narrow(0, 0, 1))
        before = torch.cat([ones, x.narrow(0, 0, n - 1)], 0).cumprod(0)
        after = torch.cat([x.narrow(0, 1, n - 1), ones], 0).flip(0).cumprod(0).flip(0)
        return grad_output.unsqueeze(dim) * before * after, None
''')),
    Mistake("ProdOverDim", "after-products flipped along dim 0, scanned along dim",
            "the flips around the scan of the products after x_i along another dim", _prod('''
        n = x.shape[dim]
        ones = torch.ones_like(x.narrow(dim, 0, 1))
        before = torch.cat([ones, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)
        after = torch.cat([x.narrow(dim, 1, n - 1), ones], dim).flip(0).cumprod(dim).flip(0)
        return grad_output.unsqueeze(dim) * before * after, None
''')),
]
