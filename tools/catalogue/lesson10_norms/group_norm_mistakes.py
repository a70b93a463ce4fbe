"""Lesson 10: GroupNormFunction's mistakes, built from group_norm's answer (its forward, a
backward head, the right grad_x line) by edits."""

from .. import Mistake, edit
from .group_norm import _FORWARD, _HEAD, _HEAD_EAGER, _NATIVE, _RIGHT, _TAIL, _gn, _grad_x


MISTAKES = [
    Mistake("GroupNormFunction", "eps added outside the square root",
            "adds eps outside the square root", _gn(_HEAD + _RIGHT + _TAIL, edit(
                _FORWARD, ("rstd = torch.rsqrt(variance + eps)",
                           "rstd = 1 / (variance.sqrt() + eps)"))), named=True),
    # rows of length -1, the natural reshape, which no empty batch can infer
    # the review 52's: torch.var's default correction, and a one-pass variance
    Mistake("GroupNormFunction", "unbiased variance (correction=1)",
            "normalises each group with the unbiased variance", _gn(_HEAD + _RIGHT + _TAIL, edit(
                _FORWARD, ("correction=0", "correction=1")))),
    Mistake("GroupNormFunction", "E[x^2] - E[x]^2 variance", "a precision loss", _gn(
        _HEAD + _RIGHT + _TAIL, edit(_FORWARD, (
            "variance, mean = torch.var_mean(rows, dim=-1, keepdim=True, correction=0)",
            "mean = rows.mean(-1, keepdim=True)\n"
            "        variance = rows.square().mean(-1, keepdim=True) - mean.square()")))),
    Mistake("GroupNormFunction", "rows of length -1, an empty batch unhandled",
            "cannot reshape tensor of 0 elements", _gn(
                _HEAD.replace("x.reshape(N, ctx.num_groups, M)", "x.reshape(N, ctx.num_groups, -1)")
                + _RIGHT + _TAIL,
                edit(_FORWARD, ("rows = x.reshape(N, num_groups, M)",
                                "rows = x.reshape(N, num_groups, -1)")))),
    # the positions read off the first sample, x[0, 0]: an IndexError for an empty batch
    Mistake("GroupNormFunction", "positions read off x[0, 0], an empty batch unhandled",
            "an empty batch, N = 0, has no x[0]", _gn(
                edit(_HEAD, ("M = C // ctx.num_groups * x.shape[2:].numel()",
                             "M = C // ctx.num_groups * x[0, 0].numel()")) + _RIGHT + _TAIL,
                edit(_FORWARD, ("M = C // num_groups * x.shape[2:].numel()",
                                "M = C // num_groups * x[0, 0].numel()")))),
    Mistake("GroupNormFunction", "torch.native_group_norm on a transposed x",
            "Expected X.is_contiguous(memory_format) to be true",
            edit(_NATIVE, ("        x = x.contiguous()\n", ""))),
    Mistake("GroupNormFunction", "torch.native_group_norm given a strided weight",
            "GroupNormFunction's output is wrong",
            edit(_NATIVE, ("        weight = weight.contiguous() if weight is not None else None\n"
                           "        bias = bias.contiguous() if bias is not None else None\n",
                           ""))),
    Mistake("GroupNormFunction", "no projection term", "misses the projection term", _grad_x(
        "            grad_x = rstd * (g - g.mean(-1, keepdim=True))\n"), nbgrader=True),
    Mistake("GroupNormFunction", "no mean term", "misses the mean term", _grad_x(
        "            grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))\n")),
    Mistake("GroupNormFunction", "mean and rstd treated as constants",
            "misses the mean and projection terms", _grad_x("            grad_x = rstd * g\n")),
    Mistake("GroupNormFunction", "weight gradient summed over N only",
            "grad_weight has shape", _gn(
                _HEAD.replace("(grad_output * x_hat.reshape(x.shape)).sum(summed)",
                              "(grad_output * x_hat.reshape(x.shape)).sum(0)")
                + _RIGHT + _TAIL)),
    Mistake("GroupNormFunction", "statistics per channel (instance norm)",
            "normalises each channel on its own",
            _gn(_HEAD.replace("x.reshape(N, ctx.num_groups, M)", "x.reshape(N, C, -1)")
                + _RIGHT + _TAIL,
                _FORWARD.replace("rows = x.reshape(N, num_groups, M)",
                                 "rows = x.reshape(N, C, -1)"))),
    Mistake("GroupNormFunction", "channel c in group c % num_groups (interleaved groups)",
            "puts channel c in group c % num_groups", _gn(
                _HEAD + _RIGHT + _TAIL,
                _FORWARD.replace(
                    "rows = x.reshape(N, num_groups, M)",
                    "rows = (x.reshape(N, C // num_groups, num_groups, -1).transpose(1, 2)\n"
                    "                .reshape(N, num_groups, M))").replace(
                    "y = ((rows - mean) * rstd).reshape(x.shape)",
                    "y = (((rows - mean) * rstd).reshape(N, num_groups, C // num_groups, -1)\n"
                    "             .transpose(1, 2).reshape(x.shape))"))),
    Mistake("GroupNormFunction", "statistics per position (spatial dims left out)",
            "normalises each position of a group separately", _gn(
                _HEAD.replace("x_hat = (x.reshape(N, ctx.num_groups, M) - mean) * rstd",
                              "x_hat = (x.reshape(N, ctx.num_groups, C // ctx.num_groups, -1)"
                              " - mean) * rstd")
                + "            grad_x = rstd * (g - g.mean(2, keepdim=True)"
                  " - x_hat * (g * x_hat).mean(2, keepdim=True))\n" + _TAIL,
                _FORWARD.replace("rows = x.reshape(N, num_groups, M)",
                                 "rows = x.reshape(N, num_groups, C // num_groups, -1)").replace(
                    "torch.var_mean(rows, dim=-1, keepdim=True, correction=0)",
                    "torch.var_mean(rows, dim=2, keepdim=True, correction=0)"))),
    Mistake("GroupNormFunction", "grad_x ignores the weight",
            "grad_x ignores the weight", _grad_x(
        "            g = grad_output.reshape(x_hat.shape)\n" + _RIGHT)),
    Mistake("GroupNormFunction", "weight multiplied in after the group means",
            "multiplies by the weight after the group means", _grad_x(
        "            g = grad_output.reshape(x_hat.shape)\n" + _RIGHT
        + "            if weight is not None:\n"
          "                grad_x = grad_x.reshape(x.shape) * weight.reshape(shape)\n")),
    Mistake("GroupNormFunction", "saves the bias", "saved", _gn(
        _HEAD.replace("x, weight, mean, rstd = ctx.saved_tensors",
                      "x, weight, bias, mean, rstd = ctx.saved_tensors") + _RIGHT + _TAIL,
        _FORWARD.replace("ctx.save_for_backward(x, weight, mean, rstd)",
                         "ctx.save_for_backward(x, weight, bias, mean, rstd)"))),
    Mistake('GroupNormFunction', 'eps hard-coded to 1e-5', 'ignores its eps argument', '''
class GroupNormFunction(torch.autograd.Function):
    # x viewed as (N, G, C/G, positions); reductions over dims (2, 3)
    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        N, C = x.shape[:2]
        v = x.reshape(N, num_groups, C // num_groups, -1)
        mean = v.mean((2, 3), keepdim=True)
        rstd = ((v - mean).square().mean((2, 3), keepdim=True) + 1e-5).rsqrt()
        y = (v - mean) * rstd
        if weight is not None:
            y = y * weight.reshape(1, num_groups, C // num_groups, 1)
        if bias is not None:
            y = y + bias.reshape(1, num_groups, C // num_groups, 1)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.G = num_groups
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, rstd = ctx.saved_tensors
        N, C = x.shape[:2]
        G = ctx.G
        shape4 = (N, G, C // G, -1)
        x_hat = (x.reshape(shape4) - mean) * rstd
        go = grad_output.reshape(shape4)
        gx = gw = gb = None
        if ctx.needs_input_grad[2]:
            gw = (go * x_hat).sum((0, 3)).reshape(C)
        if ctx.needs_input_grad[3]:
            gb = go.sum((0, 3)).reshape(C)
        if ctx.needs_input_grad[0]:
            g = go * weight.reshape(1, G, C // G, 1) if weight is not None else go
            gx = rstd * (g - g.mean((2, 3), keepdim=True) - x_hat * (g * x_hat).mean((2, 3), keepdim=True))
            gx = gx.reshape(x.shape)
        return gx, None, gw, gb, None
'''),
    # a make-mutants survivor: without a weight, g is grad_output itself, whose view as rows
    # fails for a transposed grad_output
    Mistake("GroupNormFunction", "grad_output viewed as rows", "view size is not compatible",
            _grad_x(_RIGHT, _HEAD.replace("g = g.reshape(x_hat.shape)",
                                          "g = g.view(x_hat.shape)"))),
    Mistake("GroupNormFunction", "grad_weight computed whenever there is a weight",
            "returned a gradient for weight, which needs none", _grad_x(_RIGHT, _HEAD.replace("if ctx.needs_input_grad[2]:",
                                                   "if weight is not None:"))),
    Mistake("GroupNormFunction", "autograd of the composed ops inside backward",
            "calls torch.autograd.grad", _gn('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, rstd = ctx.saved_tensors
        shape = (x.shape[1],) + (1,) * (x.dim() - 2)
        g = grad_output * weight.reshape(shape) if weight is not None else grad_output
        with torch.enable_grad():
            leaf = x.detach().requires_grad_()
            rows = leaf.reshape(x.shape[0], ctx.num_groups, -1)
            variance, mu = torch.var_mean(rows, dim=-1, keepdim=True, correction=0)
            y = ((rows - mu) * torch.rsqrt(variance + ctx.eps)).reshape(x.shape)
            grad_x, = torch.autograd.grad(y, leaf, g)
        summed = [0, *range(2, x.dim())]
        x_hat = ((x.reshape(x.shape[0], ctx.num_groups, -1) - mean) * rstd).reshape(x.shape)
        grad_weight = (grad_output * x_hat).sum(summed) if ctx.needs_input_grad[2] else None
        grad_bias = grad_output.sum(summed) if ctx.needs_input_grad[3] else None
        return grad_x if ctx.needs_input_grad[0] else None, None, grad_weight, grad_bias, None
''', _FORWARD.replace("ctx.num_groups = num_groups", "ctx.num_groups, ctx.eps = num_groups, eps"))),
    # grad_x's two group sums hoisted above the needs_input_grad test: grad_x's work when
    # only the weight or the bias needs a gradient
    Mistake("GroupNormFunction", "grad_x's group sums computed before needs_input_grad is read",
            "to one number per group", _gn(edit(
                _HEAD_EAGER, ("        if ctx.needs_input_grad[0]:\n"
                        "            g = grad_output * weight.reshape(shape) if weight is not None"
                        " else grad_output\n            g = g.reshape(x_hat.shape)\n",
                        "        g = grad_output * weight.reshape(shape) if weight is not None"
                        " else grad_output\n        g = g.reshape(x_hat.shape)\n"
                        "        mean_g, mean_g_x_hat = g.mean(-1, keepdim=True), "
                        "(g * x_hat).mean(-1, keepdim=True)\n"
                        "        if ctx.needs_input_grad[0]:\n"))
                + "            grad_x = rstd * (g - mean_g - x_hat * mean_g_x_hat)\n" + _TAIL)),
    # the review 52's answers, as written
    Mistake('GroupNormFunction', 'group mean and rstd expanded per channel and saved', 'where the budget is', '''
# Mistake: expands the group mean and rstd to one per channel in forward (so backward can
# broadcast them against x directly) and saves those: C/G times the per-group numbers.
class GroupNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        N, C = x.shape[:2]
        group_size = C // num_groups * x.shape[2:].numel()
        rows = x.reshape(N, num_groups, group_size)
        mean = rows.mean(-1, keepdim=True)
        centred = rows - mean
        rstd = torch.rsqrt(centred.square().mean(-1, keepdim=True) + eps)
        per = (N, C) + (1,) * (x.dim() - 2)
        mean_c = mean.repeat_interleave(C // num_groups, dim=1).reshape(per)
        rstd_c = rstd.repeat_interleave(C // num_groups, dim=1).reshape(per)
        y = (x - mean_c) * rstd_c
        pc = (C,) + (1,) * (x.dim() - 2)
        if weight is not None:
            y = y * weight.reshape(pc)
        if bias is not None:
            y = y + bias.reshape(pc)
        ctx.save_for_backward(x, weight, mean_c, rstd_c)
        ctx.num_groups = num_groups
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean_c, rstd_c = ctx.saved_tensors
        N, C = x.shape[:2]
        G = ctx.num_groups
        pc = (C,) + (1,) * (x.dim() - 2)
        summed = [0, *range(2, x.dim())]
        gx = gw = gb = None
        if ctx.needs_input_grad[3]:
            gb = grad_output.sum(summed)
        if not (ctx.needs_input_grad[0] or ctx.needs_input_grad[2]):
            return gx, None, gw, gb, None
        x_hat = (x - mean_c) * rstd_c
        if ctx.needs_input_grad[2]:
            gw = (grad_output * x_hat).sum(summed)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight.reshape(pc) if weight is not None else grad_output
            M = C // G * x.shape[2:].numel()
            rows = (N, G, M)
            gr, xr = g.reshape(rows), x_hat.reshape(rows)
            rstd = rstd_c.reshape(N, G, -1)[..., :1]
            gx = (rstd * (gr - gr.mean(-1, keepdim=True) - xr * (gr * xr).mean(-1, keepdim=True))).reshape(x.shape)
        return gx, None, gw, gb, None
'''),
    Mistake("GroupNormFunction", "x.view for the rows", "view size is not compatible",
            _gn(_HEAD + _RIGHT + _TAIL, edit(_FORWARD, ("rows = x.reshape(N, num_groups, M)",
                                                        "rows = x.view(N, num_groups, M)")))),
    # each group's sums divided by its channels, C / num_groups, not by its M elements
    Mistake("GroupNormFunction", "group sums divided by C / num_groups",
            "divides each group's sums by C / num_groups", _gn(_HEAD + '''        if ctx.needs_input_grad[0]:
            g = grad_output * weight.reshape(shape) if weight is not None else grad_output
            g = g.reshape(x_hat.shape)
            per_group = C // ctx.num_groups  # the channels of a group
            grad_x = rstd * (g - g.sum(-1, keepdim=True) / per_group
                             - x_hat * (g * x_hat).sum(-1, keepdim=True) / per_group)
            grad_x = grad_x.reshape(x.shape)
        return grad_x, None, grad_weight, grad_bias, None
''')),
]
