"""Lesson 10: LayerNormFunction's answer builders (the lesson's forward, a backward head that
computes the weight and bias gradients, the right grad_x line) and its correct answers
written another way; layer_norm_mistakes holds its mistakes."""

from .. import Unusual


_LN_FORWARD = '''
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        variance, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
        rstd = torch.rsqrt(variance + eps)
        y = (x - mean) * rstd
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x, weight, mean, rstd)
        return y
'''


_LN_HEAD = '''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, rstd = ctx.saved_tensors
        need_x, need_weight, need_bias = ctx.needs_input_grad[:3]
        grad_x = grad_weight = grad_bias = None
        D = x.shape[-1]
        if need_x or need_weight:  # x_hat serves these two, never the bias
            x_hat = (x - mean) * rstd
        if need_weight:
            grad_weight = (grad_output * x_hat).reshape(-1, D).sum(0)
        if need_bias:
            grad_bias = grad_output.reshape(-1, D).sum(0)
'''


# the head as first written, x_hat built whatever is needed: the base of mistakes that hoist
# grad_x's work, whose own slip the grader names first
_LN_HEAD_EAGER = _LN_HEAD.replace(
    "        if need_x or need_weight:  # x_hat serves these two, never the bias\n"
    "            x_hat = (x - mean) * rstd\n", "        x_hat = (x - mean) * rstd\n")


def _ln(backward: str, forward: str = _LN_FORWARD) -> str:
    return f"class LayerNormFunction(torch.autograd.Function):\n{forward}\n{backward}"


def _ln_grad_x(line: str, head: str = _LN_HEAD) -> str:
    """A backward that differs from the solution only in the grad_x line."""
    return _ln(head + '''        if need_x:
            g = grad_output * weight if weight is not None else grad_output
''' + line + "        return grad_x, grad_weight, grad_bias, None\n")


_LN_CORRECT = ("            grad_x = rstd * (g - g.mean(-1, keepdim=True)"
               " - x_hat * (g * x_hat).mean(-1, keepdim=True))\n")


UNUSUAL = [
    Unusual("LayerNormFunction", "torch.native_layer_norm gives the mean and rstd", _ln(
        _LN_HEAD + "        if need_x:\n"
        "            g = grad_output * weight if weight is not None else grad_output\n"
        + _LN_CORRECT + "        return grad_x, grad_weight, grad_bias, None\n", '''
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        y, mean, rstd = torch.native_layer_norm(x, x.shape[-1:], weight, bias, eps)
        ctx.save_for_backward(x, weight, mean, rstd)
        return y
''')),
    Unusual("LayerNormFunction", "saves the normalised input and rstd, no mean", _ln('''
    @staticmethod
    def backward(ctx, grad_output):
        x_hat, weight, rstd = ctx.saved_tensors
        grad_x = grad_weight = grad_bias = None
        leading = tuple(range(x_hat.dim() - 1))
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_output * x_hat).sum(leading) if leading else grad_output * x_hat
        if ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(leading) if leading else grad_output.clone()
        if ctx.needs_input_grad[0]:
            g = grad_output if weight is None else grad_output * weight
            D = x_hat.shape[-1]
            grad_x = (rstd / D) * (D * g - g.sum(-1, keepdim=True)
                                   - x_hat * (g * x_hat).sum(-1, keepdim=True))
        return grad_x, grad_weight, grad_bias, None
''', '''
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean = x.mean(-1, keepdim=True)
        centred = x - mean
        rstd = 1.0 / torch.sqrt(centred.pow(2).mean(-1, keepdim=True) + eps)
        x_hat = centred * rstd
        ctx.save_for_backward(x_hat, weight, rstd)
        y = x_hat
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        return y.clone() if y is x_hat else y
''')),
    Unusual("LayerNormFunction", "std per row instead of rstd, einsum for the weight", _ln('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, std = ctx.saved_tensors
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            x_hat = (x - mean) / std
        if ctx.needs_input_grad[1]:
            grad_weight = torch.einsum("...d,...d->d", grad_output, x_hat)
        if ctx.needs_input_grad[2]:
            grad_bias = torch.einsum("...d->d", grad_output)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            projection = (g * x_hat).mean(-1, keepdim=True)
            grad_x = (g - g.mean(-1, keepdim=True) - x_hat * projection) / std
        return grad_x, grad_weight, grad_bias, None
''', '''
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean = x.mean(dim=-1, keepdim=True)
        std = torch.sqrt(((x - mean) ** 2).mean(dim=-1, keepdim=True) + eps)
        y = (x - mean) / std
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x, weight, mean, std)
        return y
''')),
    Unusual("LayerNormFunction", "rows flattened to (N, D), per-row statistics of shape (N,)",
            _ln('''
    @staticmethod
    def backward(ctx, grad_output):
        rows, weight, mean, rstd = ctx.saved_tensors
        g_rows = grad_output.reshape(rows.shape)
        grads = [None, None, None, None]
        if ctx.needs_input_grad[2]:
            grads[2] = g_rows.sum(0)
        if not (ctx.needs_input_grad[0] or ctx.needs_input_grad[1]):
            return tuple(grads)
        x_hat = (rows - mean[:, None]) * rstd[:, None]
        if ctx.needs_input_grad[1]:
            grads[1] = (g_rows * x_hat).sum(0)
        if ctx.needs_input_grad[0]:
            g = g_rows if weight is None else g_rows * weight
            inner = g - g.mean(1, keepdim=True) - x_hat * (g * x_hat).mean(1, keepdim=True)
            grads[0] = (rstd[:, None] * inner).reshape(ctx.shape)
        return tuple(grads)
''', '''
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        ctx.shape = x.shape
        rows = x.reshape(-1, x.shape[-1])
        variance, mean = torch.var_mean(rows, dim=1, correction=0)
        rstd = (variance + eps).rsqrt()
        y = (rows - mean[:, None]) * rstd[:, None]
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(rows, weight, mean, rstd)
        return y.reshape(x.shape)
''')),
    Unusual("LayerNormFunction", "Triton's layer-norm tutorial's formula, ported to torch", _ln('''
    @staticmethod
    def backward(ctx, DY):
        # triton-lang/triton, python/tutorials/05-layer-norm.py, _layer_norm_bwd_dx_fused:
        # c1 = sum(xhat * wdy) / N, c2 = sum(wdy) / N, dx = (wdy - (xhat * c1 + c2)) * rstd
        X, W, Mean, Rstd = ctx.saved_tensors
        N = X.shape[-1]
        xhat = (X - Mean) * Rstd if ctx.needs_input_grad[0] or ctx.needs_input_grad[1] else None
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            wdy = DY * W if W is not None else DY
            c1 = (xhat * wdy).sum(-1, keepdim=True) / N
            c2 = wdy.sum(-1, keepdim=True) / N
            dx = (wdy - (xhat * c1 + c2)) * Rstd
        if ctx.needs_input_grad[1]:
            dw = (DY * xhat).reshape(-1, N).sum(0)
        if ctx.needs_input_grad[2]:
            db = DY.reshape(-1, N).sum(0)
        return dx, dw, db, None
''')),
    Unusual('LayerNormFunction', 'saves x and rstd only, the mean recomputed in backward', '''
class LayerNormFunction(torch.autograd.Function):
    # saves x and rstd only; the mean is recomputed in backward
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        c = x - x.mean(-1, keepdim=True)
        rstd = (c.square().mean(-1, keepdim=True) + eps) ** -0.5
        y = c * rstd
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x, weight, rstd)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        D = x.shape[-1]
        out = [None, None, None, None]
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            x_hat = (x - x.mean(-1, keepdim=True)) * rstd
        if ctx.needs_input_grad[1]:
            out[1] = torch.einsum("...d,...d->d", grad_output, x_hat)
        if ctx.needs_input_grad[2]:
            out[2] = torch.einsum("...d->d", grad_output)
        if ctx.needs_input_grad[0]:
            g = grad_output if weight is None else grad_output * weight
            s1 = g.sum(-1, keepdim=True)
            s2 = (g * x_hat).sum(-1, keepdim=True)
            out[0] = rstd / D * (D * g - s1 - x_hat * s2)
        return tuple(out)
'''),
    # the review 52's answers, as written
    Unusual('LayerNormFunction', 'saves the centred input and rstd only', '''
# Correct but unusual: saves the centred input x - mean (not x, not x_hat) and rstd only;
# the mean is never kept. Statistics by torch.var_mean on a 2-D view; backward with einsum.
class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
        centred = x - mean
        rstd = (var + eps).rsqrt()
        out = torch.addcmul(bias if bias is not None else torch.zeros((), dtype=x.dtype, device=x.device),
                            centred * rstd, weight if weight is not None else torch.ones((), dtype=x.dtype, device=x.device))
        ctx.save_for_backward(centred, weight, rstd)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        centred, weight, rstd = ctx.saved_tensors
        D = centred.shape[-1]
        want_x, want_w, want_b = ctx.needs_input_grad[:3]
        gx = gw = gb = None
        go2 = grad_output.reshape(-1, D)
        if want_b:
            gb = torch.einsum('rd->d', go2)
        if want_w or want_x:
            x_hat = centred * rstd
        if want_w:
            gw = torch.einsum('rd,rd->d', go2, x_hat.reshape(-1, D))
        if want_x:
            g = grad_output if weight is None else grad_output * weight
            a = torch.einsum('...d->...', g)[..., None] / D
            b = torch.einsum('...d,...d->...', g, x_hat)[..., None] / D
            gx = rstd * (g - a - x_hat * b)
        return gx, gw, gb, None
'''),
    Unusual('LayerNormFunction', "one-pass variance shifted by each row's first element, in float64", '''
# Correct but unusual: a ONE-pass variance on data shifted by each row's first element,
# K = x[..., :1]: var = E[(x-K)^2] - E[x-K]^2. Stable because |x_k - mean|^2 <= D * var for
# any element, so the cancellation costs at most a factor ~D, not the offset squared.
# Forward statistics in float64 for float32 input (saved in float32), backward by hand.
class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        wide = x.double() if x.dtype == torch.float32 else x
        d = wide - wide[..., :1]
        m = d.mean(-1, keepdim=True)
        var = (d * d).mean(-1, keepdim=True) - m * m
        var = var.clamp_min(0)
        mean = (m + wide[..., :1])
        rstd = torch.rsqrt(var + eps)
        y = ((wide - mean) * rstd).to(x.dtype)
        mean, rstd = mean.to(x.dtype), rstd.to(x.dtype)
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x, weight, mean, rstd)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, rstd = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad[:3]
        D = x.shape[-1]
        gx = gw = gb = None
        if nb:
            gb = grad_output.reshape(-1, D).sum(0)
        if not (nx or nw):
            return gx, gw, gb, None
        x_hat = (x - mean) * rstd
        if nw:
            gw = (grad_output * x_hat).reshape(-1, D).sum(0)
        if nx:
            g = grad_output * weight if weight is not None else grad_output
            gx = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return gx, gw, gb, None
'''),
]
