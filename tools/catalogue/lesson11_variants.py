"""Lesson 11: answers from a second, independent review: the grad-mode check asked in the wrong
place, gradients recomputed in backward, and correct answers written another way."""

from tools.catalogue import Mistake, Unusual

UNUSUAL = [
    Unusual('CrossEntropy', 'boolean indexing of the counted rows only', '''
class CrossEntropy(torch.autograd.Function):
    # only the counted rows are indexed (boolean indexing), the gradient written into zeros
    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100):
        rows = (target != ignore_index).nonzero().squeeze(1)
        kept_targets = target[rows]
        sub = logits[rows]
        lse = torch.logsumexp(sub, 1)
        loss = (lse - sub.gather(1, kept_targets[:, None])[:, 0]).mean()
        ctx.save_for_backward(logits, rows, kept_targets, lse)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        logits, rows, kept_targets, lse = ctx.saved_tensors
        grad = torch.zeros_like(logits)
        p = torch.exp(logits[rows] - lse[:, None])
        p[torch.arange(len(rows), device=p.device), kept_targets] -= 1
        grad[rows] = p * (grad_output / len(rows))
        return grad, None, None
'''),
    Unusual('linear_cross_entropy', 'detached inputs under no_grad, no flag argument', '''
class LinearCrossEntropy(torch.autograd.Function):
    # forward reads only needs_input_grad; the wrapper detaches the inputs when grad mode is off
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size):
        want_x, want_w = ctx.needs_input_grad[:2]
        N = x.shape[0]
        acc = torch.promote_types(x.dtype, torch.float32)
        w = weight.to(acc)
        loss = torch.zeros((), dtype=acc, device=x.device)
        gx = torch.empty(x.shape, dtype=acc, device=x.device) if want_x else None
        gw = torch.zeros(weight.shape, dtype=acc, device=x.device) if want_w else None
        for s in range(0, N, chunk_size):
            xc = x[s:s + chunk_size].to(acc)
            tc = target[s:s + chunk_size]
            z = xc @ w.T
            lse = torch.logsumexp(z, 1)
            loss += (lse - z.gather(1, tc[:, None]).squeeze(1)).sum()
            if want_x or want_w:
                g = torch.softmax(z, 1)
                del z
                g[torch.arange(len(tc), device=x.device), tc] -= 1
                g /= N
                if want_x:
                    gx[s:s + chunk_size] = g @ w
                if want_w:
                    gw += g.T @ xc
                del g
            else:
                del z
        ctx.save_for_backward(gx if gx is None else gx.to(x.dtype),
                              gw if gw is None else gw.to(weight.dtype))
        return (loss / N).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        gx, gw = ctx.saved_tensors
        return (None if gx is None else gx * grad_output,
                None if gw is None else gw * grad_output, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    if not torch.is_grad_enabled():
        x, weight = x.detach(), weight.detach()
    return LinearCrossEntropy.apply(x, weight, target, chunk_size)
'''),
    Unusual('linear_cross_entropy', 'products in the input dtype, float32 softmax and accumulators (Liger)', '''
class LinearCrossEntropy(torch.autograd.Function):
    # forward reads only needs_input_grad; the wrapper detaches the inputs when grad mode is off
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size):
        want_x, want_w = ctx.needs_input_grad[:2]
        N = x.shape[0]
        acc = torch.promote_types(x.dtype, torch.float32)
        w = weight
        loss = torch.zeros((), dtype=acc, device=x.device)
        gx = torch.empty(x.shape, dtype=acc, device=x.device) if want_x else None
        gw = torch.zeros(weight.shape, dtype=acc, device=x.device) if want_w else None
        for s in range(0, N, chunk_size):
            xc = x[s:s + chunk_size]
            tc = target[s:s + chunk_size]
            z = (xc @ w.T).to(acc)
            lse = torch.logsumexp(z, 1)
            loss += (lse - z.gather(1, tc[:, None]).squeeze(1)).sum()
            if want_x or want_w:
                g = torch.softmax(z, 1)
                del z
                g[torch.arange(len(tc), device=x.device), tc] -= 1
                g /= N
                if want_x:
                    gx[s:s + chunk_size] = g.to(x.dtype) @ w
                if want_w:
                    gw += (g.T.to(x.dtype) @ xc).to(acc)
                del g
            else:
                del z
        ctx.save_for_backward(gx if gx is None else gx.to(x.dtype),
                              gw if gw is None else gw.to(weight.dtype))
        return (loss / N).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        gx, gw = ctx.saved_tensors
        return (None if gx is None else gx * grad_output,
                None if gw is None else gw * grad_output, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    if not torch.is_grad_enabled():
        x, weight = x.detach(), weight.detach()
    return LinearCrossEntropy.apply(x, weight, target, chunk_size)
'''),
]

MISTAKES = [
    Mistake('CrossEntropy', 'softmax computed in place in the saved logits', 'modified its input logits in place', '''
class CrossEntropy(torch.autograd.Function):
    # index_put for the one-hot, the mask as float weights
    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100):
        w = (target != ignore_index).to(logits.dtype)
        safe = torch.where(target == ignore_index, torch.zeros_like(target), target)
        lse = logits.logsumexp(1)
        picked = logits.gather(1, safe.unsqueeze(1)).squeeze(1)
        ctx.save_for_backward(logits, lse, safe, w)
        return ((lse - picked) * w).sum() / w.sum()

    @staticmethod
    def backward(ctx, grad_output):
        logits, lse, safe, w = ctx.saved_tensors
        grad = logits.sub_(lse.unsqueeze(1)).exp_()
        grad.scatter_add_(1, safe.unsqueeze(1), -torch.ones_like(lse).unsqueeze(1))
        grad.mul_((grad_output * w / w.sum()).unsqueeze(1))
        return grad, None, None
'''),
    Mistake('linear_cross_entropy', 'gradients recomputed in backward (Cut Cross-Entropy)', 'FLOPs of matrix products', '''
class LinearCrossEntropy(torch.autograd.Function):
    # Cut Cross-Entropy's plan: forward keeps lse per row, backward recomputes chunk by chunk
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size):
        acc = torch.promote_types(x.dtype, torch.float32)
        lses, picked = [], []
        for s in range(0, x.shape[0], chunk_size):
            z = x[s:s + chunk_size].to(acc) @ weight.to(acc).T
            lses.append(torch.logsumexp(z, 1))
            picked.append(z.gather(1, target[s:s + chunk_size, None]).squeeze(1))
        lse = torch.cat(lses)
        ctx.save_for_backward(x, weight, target, lse)
        ctx.chunk_size = chunk_size
        return ((lse - torch.cat(picked)).mean()).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, target, lse = ctx.saved_tensors
        acc = lse.dtype
        N = x.shape[0]
        w = weight.to(acc)
        gx = torch.empty(x.shape, dtype=acc, device=x.device) if ctx.needs_input_grad[0] else None
        gw = torch.zeros(weight.shape, dtype=acc, device=x.device) if ctx.needs_input_grad[1] else None
        c = ctx.chunk_size
        for s in range(0, N, c):
            xc = x[s:s + c].to(acc)
            g = torch.exp(xc @ w.T - lse[s:s + c, None])
            g[torch.arange(len(g), device=x.device), target[s:s + c]] -= 1
            g *= grad_output.to(acc) / N
            if gx is not None:
                gx[s:s + c] = g @ w
            if gw is not None:
                gw += g.T @ xc
        return (None if gx is None else gx.to(x.dtype), None if gw is None else gw.to(weight.dtype), None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    return LinearCrossEntropy.apply(x, weight, target, chunk_size)
'''),
    Mistake('linear_cross_entropy', 'torch.is_grad_enabled() asked inside forward', 'torch.is_grad_enabled() answers True inside forward', '''
class LinearCrossEntropy(torch.autograd.Function):
    # forward reads only needs_input_grad; the wrapper detaches the inputs when grad mode is off
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size):
        want_x, want_w = (torch.is_grad_enabled() and n for n in ctx.needs_input_grad[:2])
        N = x.shape[0]
        acc = torch.promote_types(x.dtype, torch.float32)
        w = weight.to(acc)
        loss = torch.zeros((), dtype=acc, device=x.device)
        gx = torch.empty(x.shape, dtype=acc, device=x.device) if want_x else None
        gw = torch.zeros(weight.shape, dtype=acc, device=x.device) if want_w else None
        for s in range(0, N, chunk_size):
            xc = x[s:s + chunk_size].to(acc)
            tc = target[s:s + chunk_size]
            z = xc @ w.T
            lse = torch.logsumexp(z, 1)
            loss += (lse - z.gather(1, tc[:, None]).squeeze(1)).sum()
            if want_x or want_w:
                g = torch.softmax(z, 1)
                del z
                g[torch.arange(len(tc), device=x.device), tc] -= 1
                g /= N
                if want_x:
                    gx[s:s + chunk_size] = g @ w
                if want_w:
                    gw += g.T @ xc
                del g
            else:
                del z
        ctx.save_for_backward(gx if gx is None else gx.to(x.dtype),
                              gw if gw is None else gw.to(weight.dtype))
        return (loss / N).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        gx, gw = ctx.saved_tensors
        return (None if gx is None else gx * grad_output,
                None if gw is None else gw * grad_output, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    return LinearCrossEntropy.apply(x, weight, target, chunk_size)
''', named=True),
    Mistake('linear_cross_entropy', 'float32 gradients saved for bfloat16 inputs', 'saves grad_x as float32 for bfloat16 inputs', '''
class LinearCrossEntropy(torch.autograd.Function):
    # accumulates in float32, right, but saves the accumulators uncast: twice the bytes kept
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size):
        want_x, want_w = ctx.needs_input_grad[:2]
        N = x.shape[0]
        acc = torch.promote_types(x.dtype, torch.float32)
        w = weight.to(acc)
        loss = torch.zeros((), dtype=acc, device=x.device)
        gx = torch.empty(x.shape, dtype=acc, device=x.device) if want_x else None
        gw = torch.zeros(weight.shape, dtype=acc, device=x.device) if want_w else None
        for s in range(0, N, chunk_size):
            xc = x[s:s + chunk_size].to(acc)
            tc = target[s:s + chunk_size]
            z = xc @ w.T
            loss += (torch.logsumexp(z, 1) - z.gather(1, tc[:, None]).squeeze(1)).sum()
            if want_x or want_w:
                g = torch.softmax(z, 1)
                g[torch.arange(len(tc), device=x.device), tc] -= 1
                g /= N
                if want_x:
                    gx[s:s + chunk_size] = g @ w
                if want_w:
                    gw += g.T @ xc
        ctx.save_for_backward(gx, gw)
        return (loss / N).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        gx, gw = ctx.saved_tensors
        return (None if gx is None else gx * grad_output,
                None if gw is None else gw * grad_output, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    if not torch.is_grad_enabled():
        x, weight = x.detach(), weight.detach()
    return LinearCrossEntropy.apply(x, weight, target, chunk_size)
''', named=True),
]
