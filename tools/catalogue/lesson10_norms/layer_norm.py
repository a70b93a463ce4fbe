"""Lesson 10: answers with known verdicts for LayerNormFunction."""

from .. import Mistake, Unusual

# -------------------------------------------------------------------------- LayerNormFunction
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
        x_hat = (x - mean) * rstd
        if need_weight:
            grad_weight = (grad_output * x_hat).reshape(-1, D).sum(0)
        if need_bias:
            grad_bias = grad_output.reshape(-1, D).sum(0)
'''


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
        x_hat = (rows - mean[:, None]) * rstd[:, None]
        grads = [None, None, None, None]
        if ctx.needs_input_grad[1]:
            grads[1] = (g_rows * x_hat).sum(0)
        if ctx.needs_input_grad[2]:
            grads[2] = g_rows.sum(0)
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
]

MISTAKES = [
    Mistake("LayerNormFunction", "no projection term", "misses the projection term", _ln_grad_x(
        "            grad_x = rstd * (g - g.mean(-1, keepdim=True))\n"),
        named=True, nbgrader=True),
    Mistake("LayerNormFunction", "no mean term", "misses the mean term", _ln_grad_x(
        "            grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))\n"),
        named=True),
    Mistake("LayerNormFunction", "mean and rstd treated as constants",
            "treats the mean and rstd as constants", _ln_grad_x("            grad_x = rstd * g\n"),
            named=True),
    Mistake("LayerNormFunction", "grad_x ignores the weight", "ignores the weight", _ln_grad_x(
        "            g = grad_output\n" + _LN_CORRECT), named=True),
    Mistake("LayerNormFunction", "weight multiplied in after the row means",
            "multiplies by the weight after the row means", _ln_grad_x(
        "            g = grad_output\n" + _LN_CORRECT
        + "            grad_x = grad_x * weight if weight is not None else grad_x\n"),
            named=True),
    Mistake("LayerNormFunction", "E[x^2] - E[x]^2 variance", "a precision loss, not a wrong formula", _ln(
        _LN_HEAD + "        if need_x:\n"
        "            g = grad_output * weight if weight is not None else grad_output\n"
        + _LN_CORRECT + "        return grad_x, grad_weight, grad_bias, None\n", '''
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean = x.mean(-1, keepdim=True)
        variance = (x * x).mean(-1, keepdim=True) - mean * mean
        rstd = torch.rsqrt(variance + eps)
        y = (x - mean) * rstd
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x, weight, mean, rstd)
        return y
'''), named=True),
    Mistake("LayerNormFunction", "weight gradient summed over dim 0 only", "returned grad_weight "
            "of shape", _ln(_LN_HEAD.replace("(grad_output * x_hat).reshape(-1, D).sum(0)",
                                             "(grad_output * x_hat).sum(0)")
                            .replace("grad_output.reshape(-1, D).sum(0)", "grad_output.sum(0)")
                            + "        if need_x:\n            g = grad_output * weight if "
                            "weight is not None else grad_output\n" + _LN_CORRECT +
                            "        return grad_x, grad_weight, grad_bias, None\n"),
            named=True),
    Mistake("LayerNormFunction", "sum(dim=()) for a 1-D input", "a 0-d grad_weight for a "
            "1-D x", _ln(_LN_HEAD.replace(
                "(grad_output * x_hat).reshape(-1, D).sum(0)",
                "(grad_output * x_hat).sum(dim=tuple(range(x.dim() - 1)))").replace(
                "grad_output.reshape(-1, D).sum(0)",
                "grad_output.sum(dim=tuple(range(x.dim() - 1)))")
                + "        if need_x:\n            g = grad_output * weight if weight is not "
                "None else grad_output\n" + _LN_CORRECT +
                "        return grad_x, grad_weight, grad_bias, None\n"), named=True),
    Mistake("LayerNormFunction", "every gradient returned whatever needs_input_grad says",
            "returned a gradient for", _ln('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, rstd = ctx.saved_tensors
        D = x.shape[-1]
        x_hat = (x - mean) * rstd
        grad_weight = (grad_output * x_hat).reshape(-1, D).sum(0)
        grad_bias = grad_output.reshape(-1, D).sum(0)
        g = grad_output * weight if weight is not None else grad_output
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, grad_weight, grad_bias, None
'''), named=True),
    Mistake("LayerNormFunction", "grad_x computed even when only weight needs a gradient",
            "does as much work when only", _ln(_LN_HEAD + """\
        g = grad_output * weight if weight is not None else grad_output
        full = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        grad_x = full if need_x else None
        return grad_x, grad_weight, grad_bias, None
"""), named=True),
    Mistake("LayerNormFunction", "saves the normalised input as well as x", "saved 2 full-size",
            _ln('''
    @staticmethod
    def backward(ctx, grad_output):
        x, x_hat, weight, mean, rstd = ctx.saved_tensors
        need_x, need_weight, need_bias = ctx.needs_input_grad[:3]
        grad_x = grad_weight = grad_bias = None
        D = x.shape[-1]
        if need_weight:
            grad_weight = (grad_output * x_hat).reshape(-1, D).sum(0)
        if need_bias:
            grad_bias = grad_output.reshape(-1, D).sum(0)
        if need_x:
            g = grad_output * weight if weight is not None else grad_output
            grad_x = rstd * (g - g.mean(-1, keepdim=True)
                             - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, grad_weight, grad_bias, None
''', _LN_FORWARD.replace("ctx.save_for_backward(x, weight, mean, rstd)",
                         "ctx.save_for_backward(x, (x - mean) * rstd, weight, mean, rstd)")),
            named=True),
    Mistake("LayerNormFunction", "saves the bias", "saved the bias", _ln(
        _LN_HEAD.replace("x, weight, mean, rstd = ctx.saved_tensors",
                         "x, weight, bias, mean, rstd = ctx.saved_tensors")
        + "        if need_x:\n            g = grad_output * weight if weight is not None else "
        "grad_output\n" + _LN_CORRECT + "        return grad_x, grad_weight, grad_bias, None\n",
        _LN_FORWARD.replace("ctx.save_for_backward(x, weight, mean, rstd)",
                            "ctx.save_for_backward(x, weight, bias, mean, rstd)"))),
    Mistake("LayerNormFunction", "mean and rstd kept on ctx", "stores a tensor as ctx.", _ln(
        _LN_HEAD.replace("x, weight, mean, rstd = ctx.saved_tensors",
                         "x, weight = ctx.saved_tensors\n        mean, rstd = ctx.mean, ctx.rstd")
        + "        if need_x:\n            g = grad_output * weight if weight is not None else "
        "grad_output\n" + _LN_CORRECT + "        return grad_x, grad_weight, grad_bias, None\n",
        _LN_FORWARD.replace("ctx.save_for_backward(x, weight, mean, rstd)",
                            "ctx.save_for_backward(x, weight)\n        ctx.mean, ctx.rstd = "
                            "mean, rstd")), named=True),
    Mistake("LayerNormFunction", "the built-in native_layer_norm_backward",
            "uses the built-in op native_layer_norm_backward", _ln('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, rstd = ctx.saved_tensors
        grads = torch.ops.aten.native_layer_norm_backward(
            grad_output, x, x.shape[-1:], mean, rstd, weight, None,
            [ctx.needs_input_grad[0], ctx.needs_input_grad[1], False])
        grad_bias = None
        if ctx.needs_input_grad[2]:
            grad_bias = grad_output.reshape(-1, x.shape[-1]).sum(0)
        return grads[0], grads[1], grad_bias, None
'''), named=True),
    Mistake("LayerNormFunction", "autograd of F.layer_norm inside backward",
            "backward calls torch.autograd", _ln('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, rstd = ctx.saved_tensors
        inputs = [t.detach().requires_grad_(need) if t is not None else None
                  for t, need in zip((x, weight), ctx.needs_input_grad[:2])]
        bias = torch.zeros(x.shape[-1], dtype=x.dtype, device=x.device, requires_grad=True)
        with torch.enable_grad():
            y = F.layer_norm(inputs[0], x.shape[-1:], inputs[1], bias, 1e-5)
            wanted = [t for t in (*inputs, bias) if t is not None and t.requires_grad]
            grads = iter(torch.autograd.grad(y, wanted, grad_output))
        out = [next(grads) if t is not None and t.requires_grad else None
               for t in (*inputs, bias)]
        return out[0], out[1], out[2] if ctx.needs_input_grad[2] else None, None
'''), named=True),
    Mistake("LayerNormFunction", "grad_output scaled in place", "modified grad_output in place",
            _ln_grad_x("            g = grad_output.mul_(weight) if weight is not None else "
                       "grad_output\n" + _LN_CORRECT)),
]

UNUSUAL += [
    Unusual("LayerNormFunction", "Triton's layer-norm tutorial's formula, ported to torch", _ln('''
    @staticmethod
    def backward(ctx, DY):
        # triton-lang/triton, python/tutorials/05-layer-norm.py, _layer_norm_bwd_dx_fused:
        # c1 = sum(xhat * wdy) / N, c2 = sum(wdy) / N, dx = (wdy - (xhat * c1 + c2)) * rstd
        X, W, Mean, Rstd = ctx.saved_tensors
        N = X.shape[-1]
        xhat = (X - Mean) * Rstd
        wdy = DY * W if W is not None else DY
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            c1 = (xhat * wdy).sum(-1, keepdim=True) / N
            c2 = wdy.sum(-1, keepdim=True) / N
            dx = (wdy - (xhat * c1 + c2)) * Rstd
        if ctx.needs_input_grad[1]:
            dw = (DY * xhat).reshape(-1, N).sum(0)
        if ctx.needs_input_grad[2]:
            db = DY.reshape(-1, N).sum(0)
        return dx, dw, db, None
''')),
]

MISTAKES += [
    Mistake("LayerNormFunction", "grad_weight gated on the bias's needs_input_grad entry",
            "backward returned None for weight, which requires grad", _ln(
                _LN_HEAD.replace("        if need_weight:\n", "        if need_bias:\n", 1)
                + "        if need_x:\n            g = grad_output * weight if weight is not "
                "None else grad_output\n" + _LN_CORRECT +
                "        return grad_x, grad_weight, grad_bias, None\n")),
    Mistake("LayerNormFunction", "weight assumed present in backward",
            "raised TypeError: unsupported operand type(s) for *",
            _ln_grad_x("            g = grad_output * weight\n" + _LN_CORRECT)),
]
