"""Lesson 09: PyTorch's own historic Functions (ported to torch 2), answers written to the
syllabus that need no 0-d branch (an exercise with a dim argument, and Normalize's rows, are
not graded on a 0-d input), and the last-dim-only slip of the exclusive products."""

from . import Mistake, Unusual
from .lesson09 import _PROD_EXACT, _normalize, _prod

UNUSUAL = [
    Unusual("ProdOverDim", "PyTorch 0.3's Prod (torch/autograd/_functions/reduce.py, ported to "
            "torch 2): divide "
            "when no slice holds a zero, exclusive cumprods from both ends otherwise", """
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
"""),
    Unusual("ProdOverDim", "exclusive products from both ends, with no 0-d branch (the "
            "contract has no 0-d x)", _prod(_PROD_EXACT.replace(
                "        if x.dim() == 0:\n            return grad_output.clone(), None\n", ""))),
    Unusual("Normalize", "the row dot product as an einsum (no 0-d branch: the contract has "
            "rows)", _normalize('''
        radial = torch.einsum("...i,...i->...", y, grad_output).unsqueeze(-1)
        above = norm >= ctx.eps
        return (grad_output - y * radial * above) / norm.clamp_min(ctx.eps), None
''')),

]

MISTAKES = [
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
    Mistake("ProdOverDim", "exclusive products written for the last dim only",
            "ProdOverDim's gradient is right when dim is the last dimension but wrong", _prod('''
        ones = torch.ones_like(x[..., :1])
        before = torch.cat([ones, x[..., :-1]], -1).cumprod(-1)
        after = torch.cat([x[..., 1:], ones], -1).flip(-1).cumprod(-1).flip(-1)
        return grad_output.unsqueeze(dim) * before * after, None
''')),
]
