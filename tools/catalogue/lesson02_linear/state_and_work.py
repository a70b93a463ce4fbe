"""Lesson 02: the other answers of review 53, on what is kept and what is computed. Wrong ones
that passed: x and weight kept in a module dict keyed by id(ctx) (an in-place change after
forward went unseen); the float pre-activation kept in a global beside the saved mask; the bias
gradient computed (cumsum) and dropped when the bias is frozen. Caught, but blamed on the wrong
gradient: grad_weight and grad_bias as one product G^T @ [x, 1] with the bias frozen. Correct
unusual answers: the mask packed 8 to a byte (within the contract's bound, one byte per output
element), addmm and tensordot, F.linear then clamp_ with
masked_fill and einsums, and for Bilinear flattened matmuls and F.bilinear with a permuted
weight."""

from .. import Mistake, Unusual

MISTAKES = []
UNUSUAL = []

MISTAKES.append(Mistake(
    'MyLinearFunction', 'x and weight kept in a module dict keyed by id(ctx)',
    "after x was changed in place, MyLinearFunction's backward silently used the new values", '''
_SAVED = {}
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        _SAVED[id(ctx)] = (x, weight)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y + bias if bias is not None else y
    @staticmethod
    def backward(ctx, grad_output):
        x, weight = _SAVED[id(ctx)]
        g2 = grad_output.reshape(-1, grad_output.shape[-1])
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = grad_output @ weight
        if ctx.needs_input_grad[1]:
            gw = g2.T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = g2.sum(0)
        return gx, gw, gb
'''))

MISTAKES.append(Mistake(
    'FusedLinearReLU', 'the float pre-activation kept in a module dict keyed by id(ctx)',
    "keeps a float64 tensor of the output's size, shape (", '''
_Z = {}
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = x @ weight.T
        if bias is not None:
            z = z + bias
        ctx.save_for_backward(x, weight, z > 0)
        _Z[id(ctx)] = z
        ctx.has_bias = bias is not None
        return z.clamp(min=0)
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, _ = ctx.saved_tensors
        z = _Z[id(ctx)]
        out = grad_output.shape[-1]
        gz = torch.where(z > 0, grad_output, 0)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = gz @ weight
        if ctx.needs_input_grad[1]:
            gw = gz.reshape(-1, out).T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = gz.reshape(-1, out).sum(0)
        return gx, gw, gb
'''))

MISTAKES.append(Mistake(
    'FusedLinearReLU', 'grad_bias as cumsum(0)[-1] always, None when frozen',
    'computed a tensor of shape (6, 4) (in aten.cumsum) that reaches none of the gradients '
    'it returns', '''
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = x @ weight.T
        if bias is not None:
            z = z + bias
        ctx.save_for_backward(x, weight, z > 0)
        ctx.has_bias = bias is not None
        return z.clamp(min=0)
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, positive = ctx.saved_tensors
        out = grad_output.shape[-1]
        gz2 = torch.where(positive, grad_output, 0).reshape(-1, out)
        gx = gw = None
        if ctx.needs_input_grad[0]:
            gx = (gz2 @ weight).reshape(*grad_output.shape[:-1], weight.shape[1])
        if ctx.needs_input_grad[1]:
            gw = gz2.T @ x.reshape(-1, x.shape[-1])
        colsum = gz2.cumsum(0)[-1] if gz2.shape[0] else gz2.sum(0)   # bias gradient, always
        gb = colsum if (ctx.has_bias and ctx.needs_input_grad[2]) else None
        return gx, gw, gb
'''))

MISTAKES.append(Mistake(
    'MyLinearFunction', 'a running sum of grad_output made whatever needs_input_grad says',
    'computed a tensor of shape (6, 4) (in aten.cumsum) that reaches none of the gradients '
    'it returns', '''
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        g2 = grad_output.reshape(-1, grad_output.shape[-1])
        running = g2.cumsum(0)                    # the bias gradient is its last row
        total = running[-1] if g2.shape[0] else g2.sum(0)
        gx = grad_output @ weight if ctx.needs_input_grad[0] else None
        gw = g2.T @ x.reshape(-1, x.shape[-1]) if ctx.needs_input_grad[1] else None
        gb = total if ctx.has_bias and ctx.needs_input_grad[2] else None
        return gx, gw, gb
'''))

MISTAKES.append(Mistake(
    'MyLinearFunction', 'G^T @ [x, 1] for weight and bias, the bias column built when frozen',
    "products for a bias column, grad_bias's work, done although the bias is frozen", '''
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y + bias if bias is not None else y
    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        n = ctx.needs_input_grad
        g2 = grad_output.reshape(-1, grad_output.shape[-1])
        x2 = x.reshape(-1, x.shape[-1])
        gx = gw = gb = None
        if n[0]:
            gx = grad_output @ weight
        if n[1]:
            both = g2.T @ torch.cat([x2, x2.new_ones(x2.shape[0], 1)], 1)
            gw = both[:, :-1]
            if ctx.has_bias and n[2]:
                gb = both[:, -1]
        elif ctx.has_bias and n[2]:
            gb = g2.sum(0)
        return gx, gw, gb
'''))

UNUSUAL.append(Unusual(
    'FusedLinearReLU', 'the mask packed 8 to a byte', '''
_BITS = torch.tensor([1, 2, 4, 8, 16, 32, 64, 128], dtype=torch.uint8)
def pack(mask):
    flat = mask.reshape(-1)
    pad = (-flat.numel()) % 8
    flat = torch.cat([flat, flat.new_zeros(pad)]).reshape(-1, 8).to(torch.uint8)
    return (flat * _BITS.to(flat.device)).sum(1, dtype=torch.uint8)
def unpack(packed, shape):
    numel = 1
    for s in shape: numel *= s
    bits = (packed[:, None] & _BITS.to(packed.device)) != 0
    return bits.reshape(-1)[:numel].reshape(shape)
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = x @ weight.T
        if bias is not None: z = z + bias
        n = ctx.needs_input_grad
        ctx.save_for_backward(x if n[1] else None, weight if n[0] else None, pack(z > 0))
        ctx.shape, ctx.has_bias = z.shape, bias is not None
        return z.clamp(min=0)
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, packed = ctx.saved_tensors
        on = unpack(packed, ctx.shape)
        out = grad_output.shape[-1]
        gz = torch.where(on, grad_output, 0)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]: gx = gz @ weight
        if ctx.needs_input_grad[1]: gw = gz.reshape(-1, out).T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]: gb = gz.reshape(-1, out).sum(0)
        return gx, gw, gb
'''))

UNUSUAL.append(Unusual(
    'MyLinearFunction', 'addmm forward, tensordot over the leading dims, grad_bias as ones @ G', '''
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        n = ctx.needs_input_grad
        ctx.save_for_backward(x if n[1] else None, weight if n[0] else None)
        ctx.bias_grad = bias is not None and n[2]
        x2 = x.reshape(-1, x.shape[-1])
        y2 = torch.addmm(bias, x2, weight.t()) if bias is not None else x2.mm(weight.t())
        return y2.reshape(*x.shape[:-1], weight.shape[0])
    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        n = ctx.needs_input_grad
        lead = list(range(grad_output.dim() - 1))
        gx = grad_output.matmul(weight) if n[0] else None
        gw = torch.tensordot(grad_output, x, dims=(lead, lead)) if n[1] else None
        gb = None
        if ctx.bias_grad:
            g2 = grad_output.reshape(-1, grad_output.shape[-1])
            gb = g2.new_ones(g2.shape[0]) @ g2
        return gx, gw, gb
'''))

UNUSUAL.append(Unusual(
    'FusedLinearReLU', 'F.linear then clamp_ in forward, masked_fill, einsums', '''
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = F.linear(x, weight, bias)
        on = z > 0
        n = ctx.needs_input_grad
        ctx.save_for_backward(on, x if n[1] else None, weight if n[0] else None)
        ctx.bias_grad = bias is not None and n[2]
        return z.clamp_(min=0)
    @staticmethod
    def backward(ctx, grad_output):
        on, x, weight = ctx.saved_tensors
        n = ctx.needs_input_grad
        gz = grad_output.masked_fill(~on, 0)
        gx = torch.einsum("...o,oi->...i", gz, weight) if n[0] else None
        gw = torch.einsum("...o,...i->oi", gz, x) if n[1] else None
        gb = torch.einsum("...o->o", gz) if ctx.bias_grad else None
        return gx, gw, gb
'''))

UNUSUAL.append(Unusual(
    'Bilinear', 'flattened matmuls, one intermediate built only when x1 or x2 is wanted', '''
class Bilinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, weight, bias=None):
        ctx.save_for_backward(x1, x2, weight)
        ctx.bias_grad = bias is not None and ctx.needs_input_grad[3]
        return F.bilinear(x1, x2, weight, bias)
    @staticmethod
    def backward(ctx, grad_output):
        x1, x2, weight = ctx.saved_tensors
        n = ctx.needs_input_grad
        out, n1, n2 = weight.shape
        lead = x1.shape[:-1]
        G = grad_output.reshape(-1, out)
        a, b = x1.reshape(-1, n1), x2.reshape(-1, n2)
        g1 = g2 = gw = gb = None
        if n[0] or n[1]:
            T = (G @ weight.reshape(out, n1 * n2)).reshape(-1, n1, n2)   # (M, n1, n2)
            if n[0]: g1 = (T @ b.unsqueeze(-1)).reshape(*lead, n1)
            if n[1]: g2 = (a.unsqueeze(1) @ T).reshape(*lead, n2)
        if n[2]:
            gw = (G.T @ (a.unsqueeze(2) * b.unsqueeze(1)).reshape(-1, n1 * n2)).reshape(out, n1, n2)
        if ctx.bias_grad: gb = G.sum(0)
        return g1, g2, gw, gb
'''))

UNUSUAL.append(Unusual(
    'Bilinear', 'each input gradient as F.bilinear with a permuted weight', '''
class Bilinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, weight, bias=None):
        ctx.save_for_backward(x1, x2, weight)
        ctx.has_bias = bias is not None
        return F.bilinear(x1, x2, weight, bias)
    @staticmethod
    def backward(ctx, grad_output):
        x1, x2, weight = ctx.saved_tensors
        n = ctx.needs_input_grad
        g1 = g2 = gw = gb = None
        if n[0]: g1 = F.bilinear(grad_output, x2, weight.permute(1, 0, 2))   # (n1, out, n2)
        if n[1]: g2 = F.bilinear(x1, grad_output, weight.permute(2, 1, 0))   # (n2, n1, out)
        if n[2]: gw = torch.einsum("...o,...i,...j->oij", grad_output, x1, x2)
        if ctx.has_bias and n[3]: gb = grad_output.reshape(-1, weight.shape[0]).sum(0)
        return g1, g2, gw, gb
'''))
