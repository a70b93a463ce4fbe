"""Lesson 10: answers with known verdicts for GroupNormFunction (the transfer exercise): its
builders and its correct answers written another way; group_norm_mistakes holds its mistakes."""

from .. import Unusual


_FORWARD = '''
    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        N, C = x.shape[:2]
        M = C // num_groups * x.shape[2:].numel()
        rows = x.reshape(N, num_groups, M)
        variance, mean = torch.var_mean(rows, dim=-1, keepdim=True, correction=0)
        rstd = torch.rsqrt(variance + eps)
        y = ((rows - mean) * rstd).reshape(x.shape)
        shape = (C,) + (1,) * (x.dim() - 2)
        if weight is not None:
            y = y * weight.reshape(shape)
        if bias is not None:
            y = y + bias.reshape(shape)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.num_groups = num_groups
        return y
'''


_HEAD = '''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, rstd = ctx.saved_tensors
        N, C = x.shape[:2]
        M = C // ctx.num_groups * x.shape[2:].numel()
        shape = (C,) + (1,) * (x.dim() - 2)
        summed = [0, *range(2, x.dim())]
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[2]:  # never for the bias alone
            x_hat = (x.reshape(N, ctx.num_groups, M) - mean) * rstd
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[2]:
            grad_weight = (grad_output * x_hat.reshape(x.shape)).sum(summed)
        if ctx.needs_input_grad[3]:
            grad_bias = grad_output.sum(summed)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight.reshape(shape) if weight is not None else grad_output
            g = g.reshape(x_hat.shape)
'''


_TAIL = '''            grad_x = grad_x.reshape(x.shape)
        return grad_x, None, grad_weight, grad_bias, None
'''


_RIGHT = ("            grad_x = rstd * (g - g.mean(-1, keepdim=True)"
          " - x_hat * (g * x_hat).mean(-1, keepdim=True))\n")


# the head as first written, x_hat built whatever is needed: the base of mistakes that hoist
# grad_x's work, whose own slip the grader names first
_HEAD_EAGER = _HEAD.replace(
    "        if ctx.needs_input_grad[0] or ctx.needs_input_grad[2]:  # never for the bias alone\n"
    "            x_hat = (x.reshape(N, ctx.num_groups, M) - mean) * rstd\n",
    "        x_hat = (x.reshape(N, ctx.num_groups, M) - mean) * rstd\n")


def _gn(backward: str, forward: str = _FORWARD) -> str:
    return f"class GroupNormFunction(torch.autograd.Function):\n{forward}\n{backward}"


def _grad_x(line: str, head: str = _HEAD) -> str:
    return _gn(head + line + _TAIL)


# torch.native_group_norm, unlike F.group_norm, refuses a non-contiguous x and (torch 2.13, CPU)
# silently misreads a strided weight or bias
_NATIVE = _gn(
    _HEAD.replace("x_hat = (x.reshape(N, ctx.num_groups, M) - mean) * rstd",
                  "x_hat = (x.reshape(N, ctx.num_groups, M) - mean[..., None])"
                  " * rstd[..., None]")
    + _RIGHT.replace("rstd * (", "rstd[..., None] * (") + _TAIL, '''
    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        x = x.contiguous()
        weight = weight.contiguous() if weight is not None else None
        bias = bias.contiguous() if bias is not None else None
        N, C = x.shape[:2]
        y, mean, rstd = torch.native_group_norm(x, weight, bias, N, C, x.shape[2:].numel(),
                                                num_groups, eps)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.num_groups = num_groups
        return y
''')


UNUSUAL = [
    Unusual("GroupNormFunction", "torch.native_group_norm gives the mean and rstd", _NATIVE),
    Unusual("GroupNormFunction", "per-channel sums first, as PyTorch's CPU kernel does", _gn('''
    @staticmethod
    def backward(ctx, grad_output):
        # aten/src/ATen/native/cpu/group_norm_kernel.cpp: ds = sum(dy * x), db = sum(dy)
        # per (sample, channel), then one affine map of dy and x per group
        x, gamma, mean, rstd = ctx.saved_tensors
        N, C = x.shape[:2]
        G = ctx.num_groups
        X = x.reshape(N, C, x.shape[2:].numel())
        dY = grad_output.reshape(X.shape)
        db = dY.sum(-1)  # (N, C)
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[2]:  # not for the bias alone
            ds = (dY * X).sum(-1)
        dx = dgamma = dbeta = None
        mean2, rstd2 = mean.reshape(N, G), rstd.reshape(N, G)
        if ctx.needs_input_grad[0]:
            gam = gamma if gamma is not None else torch.ones(C, dtype=x.dtype, device=x.device)
            M = (C // G) * X.shape[-1]
            ds_g = (ds * gam).reshape(N, G, C // G).sum(-1)
            db_g = (db * gam).reshape(N, G, C // G).sum(-1)
            b = (db_g * mean2 - ds_g) * rstd2 ** 3 / M
            c = -b * mean2 - db_g * rstd2 / M
            a = (rstd2.repeat_interleave(C // G, dim=1) * gam)[..., None]
            dx = (a * dY + b.repeat_interleave(C // G, dim=1)[..., None] * X
                  + c.repeat_interleave(C // G, dim=1)[..., None]).reshape(x.shape)
        if ctx.needs_input_grad[2]:
            m = mean2.repeat_interleave(C // G, dim=1)
            r = rstd2.repeat_interleave(C // G, dim=1)
            dgamma = ((ds - db * m) * r).sum(0)
        if ctx.needs_input_grad[3]:
            dbeta = db.sum(0)
        return dx, None, dgamma, dbeta, None
''')),
    Unusual("GroupNormFunction", "saves the normalised input and rstd, einsum sums", _gn('''
    @staticmethod
    def backward(ctx, grad_output):
        x_hat, weight, rstd = ctx.saved_tensors
        N, C = grad_output.shape[:2]
        g_c = grad_output.reshape(N, C, grad_output.shape[2:].numel())
        xh_c = x_hat.reshape(g_c.shape)
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[2]:
            grad_weight = torch.einsum("ncm,ncm->c", g_c, xh_c)
        if ctx.needs_input_grad[3]:
            grad_bias = torch.einsum("ncm->c", g_c)
        if ctx.needs_input_grad[0]:
            g = g_c * weight[:, None] if weight is not None else g_c
            g = g.reshape(N, ctx.num_groups, C // ctx.num_groups * g.shape[-1])
            xh = x_hat.reshape(g.shape)
            M = g.shape[-1]
            inner = M * g - g.sum(-1, keepdim=True) - xh * (g * xh).sum(-1, keepdim=True)
            grad_x = (rstd / M * inner).reshape(grad_output.shape)
        return grad_x, None, grad_weight, grad_bias, None
''', '''
    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        N, C = x.shape[:2]
        rows = x.reshape(N, num_groups, x.shape[1:].numel() // num_groups)
        mean = rows.mean(-1, keepdim=True)
        rstd = 1 / torch.sqrt(((rows - mean) ** 2).mean(-1, keepdim=True) + eps)
        x_hat = ((rows - mean) * rstd).reshape(x.shape)
        ctx.save_for_backward(x_hat, weight, rstd)
        ctx.num_groups = num_groups
        view = [1, C] + [1] * (x.dim() - 2)
        y = x_hat * weight.reshape(view) if weight is not None else x_hat.clone()
        return y + bias.reshape(view) if bias is not None else y
''')),
    Unusual("GroupNormFunction", "channels last via movedim, weight broadcast on the last dim",
            _gn('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, rstd = ctx.saved_tensors
        G = ctx.num_groups
        N, C = x.shape[:2]
        gl = grad_output.movedim(1, -1)  # (N, *, C)
        xl = x.movedim(1, -1)
        m = mean.reshape(N, *([1] * (x.dim() - 2)), G).repeat_interleave(C // G, -1)
        r = rstd.reshape(N, *([1] * (x.dim() - 2)), G).repeat_interleave(C // G, -1)
        x_hat = (xl - m) * r if ctx.needs_input_grad[0] or ctx.needs_input_grad[2] else None
        grads = [None] * 5
        lead = tuple(range(x.dim() - 1))
        if ctx.needs_input_grad[2]:
            grads[2] = (gl * x_hat).sum(lead)
        if ctx.needs_input_grad[3]:
            grads[3] = gl.sum(lead)
        if ctx.needs_input_grad[0]:
            g = gl * weight if weight is not None else gl
            def group_mean(t):
                s = t.reshape(N, x.shape[2:].numel(), G, C // G).mean((1, 3))
                return s.repeat_interleave(C // G, -1).reshape(N, *([1] * (x.dim() - 2)), C)
            grads[0] = (r * (g - group_mean(g) - x_hat * group_mean(g * x_hat))).movedim(-1, 1)
        return tuple(grads)
''')),
]
