"""Lesson 10: answers with known verdicts for RMSNormFunction (the projection term, no mean
term, the weight gradient summed over every leading dim)."""

from .. import Mistake, Unusual, edit


_RMS_FORWARD = '''
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        y = x * rstd
        if weight is not None:
            y = y * weight
        ctx.save_for_backward(x, weight, rstd)
        return y
'''


_RMS_BACKWARD = '''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        grad_x = grad_weight = None
        x_hat = x * rstd
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, grad_weight, None
'''


def _rms(backward: str = _RMS_BACKWARD, forward: str = _RMS_FORWARD) -> str:
    return f"class RMSNormFunction(torch.autograd.Function):\n{forward}\n{backward}"


def _rms_grad_x(line: str) -> str:
    return _rms('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        grad_x = grad_weight = None
        x_hat = x * rstd
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
''' + line + "        return grad_x, grad_weight, None\n")


UNUSUAL = [
    Unusual("RMSNormFunction", "saves the rms, divides by it", _rms('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rms = ctx.saved_tensors
        grad_x = grad_weight = None
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_output * x / rms).reshape(-1, x.shape[-1]).sum(0)
        if ctx.needs_input_grad[0]:
            g = grad_output if weight is None else grad_output * weight
            grad_x = g / rms - x * (g * x).mean(-1, keepdim=True) / rms ** 3
        return grad_x, grad_weight, None
''', '''
    @staticmethod
    def forward(ctx, x, weight, eps):
        rms = torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rms)
        return x / rms * weight if weight is not None else x / rms
''')),
    Unusual("RMSNormFunction", "einsum and a sum over a tuple of leading dims", _rms('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        grad_x = grad_weight = None
        x_hat = x * rstd
        if ctx.needs_input_grad[1]:
            leading = tuple(range(x.dim() - 1))
            product = grad_output * x_hat
            grad_weight = product.sum(dim=leading) if leading else product
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            dot = torch.einsum("...d,...d->...", g, x_hat).unsqueeze(-1) / x.shape[-1]
            grad_x = rstd * (g - x_hat * dot)
        return grad_x, grad_weight, None
''')),
    Unusual("RMSNormFunction", "pow(-0.5) and rstd saved as (...,) without keepdim", _rms('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        r = rstd.unsqueeze(-1)
        grad_weight = grad_x = None
        if ctx.needs_input_grad[0]:
            g = grad_output if weight is None else weight * grad_output
            grad_x = r * g - x * r.pow(3) * (g * x).mean(-1, keepdim=True)
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_output * x * r).flatten(0, -2).sum(0) if x.dim() > 1 \\
                else grad_output * x * r
        return grad_x, grad_weight, None
''', '''
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = (x.pow(2).mean(-1) + eps).pow(-0.5)
        ctx.save_for_backward(x, weight, rstd)
        y = x * rstd.unsqueeze(-1)
        return y if weight is None else weight * y
''')),
    Unusual('RMSNormFunction', 'F.rms_norm in forward, rstd computed beside it', '''
class RMSNormFunction(torch.autograd.Function):
    # forward by F.rms_norm itself (no graph inside forward), rstd computed beside it
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = x.pow(2).mean(-1, keepdim=True).add(eps).rsqrt()
        ctx.save_for_backward(x, weight, rstd)
        return F.rms_norm(x, x.shape[-1:], weight, eps)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        need_x, need_w, _ = ctx.needs_input_grad
        x_hat = x * rstd
        gx = gw = None
        if need_w:
            gw = torch.einsum("...i,...i->i", grad_output, x_hat)
        if need_x:
            g = grad_output * weight if weight is not None else grad_output
            dot = torch.einsum("...i,...i->...", g, x_hat)[..., None] / x.shape[-1]
            gx = (g - x_hat * dot) * rstd
        return gx, gw, None
'''),
    # a gradient of a shape the weight broadcasts to: autograd sums it down to (D,) (Function
    # contract, rule 2); a mistake until rule 2 accepted it
    Unusual("RMSNormFunction", "weight gradient not summed",
            _rms(_RMS_BACKWARD.replace("(grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0)",
                                       "grad_output * x_hat"))),
]


MISTAKES = [
    # the review 52's: D read off the first dim (right for a 1-D x or a square one)
    Mistake("RMSNormFunction", "projection's row mean divided by x.shape[0]",
            "the projection term 2 times the right one", _rms_grad_x(
                "            grad_x = rstd * (g - x_hat * (g * x_hat).sum(-1, keepdim=True) "
                "/ x.shape[0])\n")),
    # the projection's row sum hoisted above the needs_input_grad test: grad_x's work when
    # only the weight needs a gradient
    Mistake("RMSNormFunction", "grad_x's row sum computed before needs_input_grad is read",
            "to one number per row", _rms(edit(_RMS_BACKWARD, (
                "        if ctx.needs_input_grad[0]:\n"
                "            g = grad_output * weight if weight is not None else grad_output\n"
                "            grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))",
                "        g = grad_output * weight if weight is not None else grad_output\n"
                "        projection = (g * x_hat).mean(-1, keepdim=True)\n"
                "        if ctx.needs_input_grad[0]:\n"
                "            grad_x = rstd * (g - x_hat * projection)")))),
    Mistake("RMSNormFunction", "no projection term", "misses the projection term",
            _rms_grad_x("            grad_x = rstd * g\n"), named=True),
    Mistake("RMSNormFunction", "LayerNorm's mean term as well", "subtracts a mean term",
            _rms_grad_x("            grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * "
                        "(g * x_hat).mean(-1, keepdim=True))\n"), named=True),
    Mistake("RMSNormFunction", "grad_x ignores the weight", "ignores the weight",
            _rms_grad_x("            g = grad_output\n"
                        "            grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, "
                        "keepdim=True))\n")),
    Mistake("RMSNormFunction", "weight gradient computed whatever needs_input_grad says",
            "does as much work when only", _rms(_RMS_BACKWARD.replace(
                "        if ctx.needs_input_grad[1]:\n            grad_weight = ",
                "        full = ").replace(
                "        if ctx.needs_input_grad[0]:",
                "        grad_weight = full if ctx.needs_input_grad[1] else None\n"
                "        if ctx.needs_input_grad[0]:")), named=True, nbgrader=True),
    Mistake("RMSNormFunction", "saves the normalised x too", "saved 2 full-size", _rms(
        _RMS_BACKWARD.replace("x, weight, rstd = ctx.saved_tensors",
                              "x, x_hat, weight, rstd = ctx.saved_tensors")
        .replace("        x_hat = x * rstd\n", ""),
        _RMS_FORWARD.replace("ctx.save_for_backward(x, weight, rstd)",
                             "ctx.save_for_backward(x, x * rstd, weight, rstd)")), named=True),
    Mistake("RMSNormFunction", "eps ignored", "ignores its eps argument", _rms(forward='''
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + 1e-6)
        y = x * rstd
        if weight is not None:
            y = y * weight
        ctx.save_for_backward(x, weight, rstd)
        return y
''')),
    Mistake('RMSNormFunction', 'saves x_hat instead of x', 'instead of x', '''
class RMSNormFunction(torch.autograd.Function):
    # float32 or wider inside, per-row rstd of shape (...,) without keepdim
    @staticmethod
    def forward(ctx, x, weight, eps):
        wide = torch.promote_types(x.dtype, torch.float32)
        rstd = torch.rsqrt(x.to(wide).square().mean(-1) + eps)
        y = x.to(wide) * rstd.unsqueeze(-1)
        if weight is not None:
            y = y * weight
        ctx.save_for_backward((x.to(wide) * rstd.unsqueeze(-1)).to(x.dtype), weight, rstd)
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors  # x is x_hat here
        r = rstd.unsqueeze(-1)
        x_hat = x.to(r.dtype)
        go = grad_output.to(r.dtype)
        gx = gw = None
        if ctx.needs_input_grad[1]:
            gw = (go * x_hat).reshape(-1, x.shape[-1]).sum(0).to(weight.dtype)
        if ctx.needs_input_grad[0]:
            g = go if weight is None else go * weight
            gx = (r * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))).to(x.dtype)
        return gx, gw, None
'''),
    # make-mutants survivors: a copy made contiguous is a new full-size tensor when x is
    # strided; a view of a product laid out as a transposed grad_output cannot flatten it
    Mistake("RMSNormFunction", "x.contiguous() saved", "instead of x", _rms(
        forward=_RMS_FORWARD.replace("ctx.save_for_backward(x, weight, rstd)",
                                     "ctx.save_for_backward(x.contiguous(), weight, rstd)"))),
    Mistake("RMSNormFunction", "grad_weight's rows flattened with .view",
            "view size is not compatible", _rms(_RMS_BACKWARD.replace(
                "(grad_output * x_hat).reshape(-1, x.shape[-1])",
                "(grad_output * x_hat).view(-1, x.shape[-1])"))),
    Mistake("RMSNormFunction", "autograd of F.rms_norm inside backward",
            "calls torch.autograd.grad", _rms('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        with torch.enable_grad():
            leaf = x.detach().requires_grad_()
            leaf_weight = weight.detach().requires_grad_() if weight is not None else None
            y = F.rms_norm(leaf, x.shape[-1:], leaf_weight, ctx.eps)
            wanted = [leaf] + ([leaf_weight] if weight is not None else [])
            grads = torch.autograd.grad(y, wanted, grad_output)
        grad_x = grads[0] if ctx.needs_input_grad[0] else None
        grad_weight = grads[1] if ctx.needs_input_grad[1] else None
        return grad_x, grad_weight, None
''', _RMS_FORWARD.replace("return y", "ctx.eps = eps\n        return y"))),
    # the review 52's answers, as written
    Mistake('RMSNormFunction', 'x.reshape(-1, D) saved (a copy for a strided x)', 'instead of x', '''
# Mistake: works on x.reshape(-1, D) and saves that: a view of x when x is contiguous, but a
# full-size copy when it is not (a transposed x): new memory the budget does not allow.
class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rows = x.reshape(-1, x.shape[-1])
        rstd = torch.rsqrt(rows.square().mean(-1, keepdim=True) + eps)
        y = rows * rstd
        if weight is not None:
            y = y * weight
        ctx.save_for_backward(rows, weight, rstd)
        ctx.shape = x.shape
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad_output):
        rows, weight, rstd = ctx.saved_tensors
        go = grad_output.reshape(rows.shape)
        gx = gw = None
        x_hat = rows * rstd
        if ctx.needs_input_grad[1]:
            gw = (go * x_hat).sum(0)
        if ctx.needs_input_grad[0]:
            g = go * weight if weight is not None else go
            gx = (rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))).reshape(ctx.shape)
        return gx, gw, None
'''),
    Mistake('RMSNormFunction', 'weight multiplied into grad_output in place', 'modified grad_output in place', '''
# Mistake: multiplies the weight into grad_output in place to avoid a temporary.
class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        y = x * rstd
        if weight is not None:
            y = y * weight
        ctx.save_for_backward(x, weight, rstd)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        gx = gw = None
        x_hat = x * rstd
        if ctx.needs_input_grad[1]:
            gw = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0)
        if ctx.needs_input_grad[0]:
            g = grad_output
            if weight is not None:
                g = g.mul_(weight) if g.is_contiguous() else g * weight
            gx = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return gx, gw, None
'''),
    # the gradient is right: only the write into grad_output (weight=None, where gh is
    # grad_output itself) is wrong, and the first line names the write, not a missing term
    Mistake("RMSNormFunction", "projection subtracted in place from grad_output (weight=None)",
            "modified grad_output in place", _rms_grad_x(
                "            g -= x_hat * (g * x_hat).mean(-1, keepdim=True)  # grad_output "
                "itself when weight is None\n"
                "            grad_x = rstd * g\n")),
]
