"""Lesson 11: correct answers to linear_cross_entropy written another way than the lesson's
(an online log-sum-exp over vocabulary chunks, no Function under no_grad, Liger-Kernel's
dtypes)."""

from .. import Unusual, edit
from .answers import LINEAR


LCE = "linear_cross_entropy"


# Chunks over the vocabulary: an online log-sum-exp over column blocks of the weight, then a
# second pass for the gradients. Its tiles are (N, chunk_size), within the contract when V >= N.
BY_VOCABULARY = '''
class LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size, wanted):
        want_x, want_weight = (w and n for w, n in zip(wanted, ctx.needs_input_grad))
        N, V = x.shape[0], weight.shape[0]
        wide = torch.promote_types(x.dtype, torch.float32)
        xw, ww = x.to(wide), weight.to(wide)
        m = torch.full((N,), float("-inf"), dtype=wide, device=x.device)
        s = torch.zeros(N, dtype=wide, device=x.device)
        picked = (xw * ww[target]).sum(1)
        for j in range(0, V, chunk_size):
            tile = xw @ ww[j:j + chunk_size].T
            m_new = torch.maximum(m, tile.amax(1))
            s = s * torch.exp(m - m_new) + torch.exp(tile - m_new[:, None]).sum(1)
            m = m_new
        lse = m + s.log()
        grad_x = torch.zeros_like(xw) if want_x else None
        grad_weight = torch.zeros_like(ww) if want_weight else None
        if want_x or want_weight:
            for j in range(0, V, chunk_size):
                tile = torch.exp(xw @ ww[j:j + chunk_size].T - lse[:, None])
                hit = (target >= j) & (target < j + chunk_size)
                tile[hit, target[hit] - j] -= 1
                tile /= N
                if want_x:
                    grad_x += tile @ ww[j:j + chunk_size]
                if want_weight:
                    grad_weight[j:j + chunk_size] = tile.T @ xw
        ctx.save_for_backward(None if grad_x is None else grad_x.to(x.dtype),
                              None if grad_weight is None else grad_weight.to(weight.dtype))
        return ((lse - picked).sum() / N).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        grad_x, grad_weight = ctx.saved_tensors
        return (None if grad_x is None else grad_output * grad_x,
                None if grad_weight is None else grad_output * grad_weight, None, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    wanted = (torch.is_grad_enabled(),) * 2
    return LinearCrossEntropy.apply(x, weight, target, chunk_size, wanted)
'''


UNUSUAL = [
    # each chunk's gradients from torch.autograd.grad inside forward, as Liger-Kernel's chunked
    # losses do: within the work and memory bounds, since autograd is asked only for what is
    # needed and its graph lives one chunk (a mistake before: rule 3 is about backward)
    Unusual(LCE, "autograd inside forward", edit(
        LINEAR, ("            if want_x or want_weight:\n"
                 "                probs /= sums\n"
                 "                probs[torch.arange(len(target_chunk), device=x.device), "
                 "target_chunk] -= 1\n                probs /= N\n"
                 "                if want_x:\n"
                 "                    grad_x[rows] = probs @ weight_wide\n"
                 "                if want_weight:\n"
                 "                    grad_weight.addmm_(probs.T, x_chunk)",
                 "            if want_x or want_weight:\n"
                 "                with torch.enable_grad():\n"
                 "                    xc = x_chunk.detach().requires_grad_(want_x)\n"
                 "                    wc = weight_wide.detach().requires_grad_(want_weight)\n"
                 "                    part = F.cross_entropy(xc @ wc.T, target_chunk, "
                 "reduction='sum') / N\n"
                 "                    leaves = [t for t in (xc, wc) if t.requires_grad]\n"
                 "                    grads = list(torch.autograd.grad(part, leaves))\n"
                 "                if want_x:\n                    grad_x[rows] = grads.pop(0)\n"
                 "                if want_weight:\n                    grad_weight += grads.pop(0)"))),
    Unusual(LCE, "chunks over the vocabulary, an online log-sum-exp", BY_VOCABULARY),
    Unusual(LCE, "torch.logsumexp and a one-hot per chunk, the gradient summed with +=", edit(
        LINEAR,
        ("            row_max = logits.amax(dim=1, keepdim=True)\n"
         "            probs = logits.sub_(row_max).exp_()\n"
         "            sums = probs.sum(dim=1, keepdim=True)\n"
         "            loss += (row_max + sums.log() - picked).sum()\n",
         "            lse = torch.logsumexp(logits, dim=1, keepdim=True)\n"
         "            loss += (lse - picked).sum()\n"),
        ("                probs /= sums\n"
         "                probs[torch.arange(len(target_chunk), device=x.device), target_chunk]"
         " -= 1\n                probs /= N\n",
         "                one_hot = F.one_hot(target_chunk, logits.shape[1])\n"
         "                probs = (torch.exp(logits - lse) - one_hot) / N\n"),
        ("grad_weight.addmm_(probs.T, x_chunk)", "grad_weight += probs.T @ x_chunk"))),
    Unusual(LCE, "torch.split for the chunks, and no Function at all under no_grad", edit(
        LINEAR,
        ("        for start in range(0, N, chunk_size):\n"
         "            rows = slice(start, start + chunk_size)\n"
         "            x_chunk, target_chunk = x[rows].to(wide), target[rows]\n",
         "        pieces = zip(x.split(chunk_size), target.split(chunk_size))\n"
         "        for index, (x_chunk, target_chunk) in enumerate(pieces):\n"
         "            start = index * chunk_size\n"
         "            rows = slice(start, start + len(target_chunk))\n"
         "            x_chunk = x_chunk.to(wide)\n"),
        ("    return LinearCrossEntropy.apply(x, weight, target, chunk_size, "
         "torch.is_grad_enabled())",
         "    if not torch.is_grad_enabled():  # nothing to differentiate: the loss alone\n"
         "        wide = torch.promote_types(x.dtype, torch.float32)\n"
         "        total = sum(F.cross_entropy(xc.to(wide) @ weight.to(wide).T, tc, "
         "reduction='sum')\n"
         "                    for xc, tc in zip(x.split(chunk_size), target.split(chunk_size)))\n"
         "        return (total / len(target)).to(x.dtype)\n"
         "    return LinearCrossEntropy.apply(x, weight, target, chunk_size, True)"))),
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
    # products in the input dtype, G included: a mistake since the grader's float16 case at
    # N = V = 2048 (linear_cross_entropy_mistakes.py holds it)
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

# the last entry multiplies G in float16 for float16 inputs: it fails, and is a mistake
LIGER_IN_INPUT_DTYPE = UNUSUAL.pop()

# the contract bounds the work, not where the gradients are computed: Cut Cross-Entropy's plan
CUT_CROSS_ENTROPY = '''
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
'''
UNUSUAL.append(Unusual('linear_cross_entropy', 'gradients recomputed in backward (Cut Cross-Entropy)',
                      CUT_CROSS_ENTROPY))

# G = (P - Y)/N built for every chunk whatever is needed, only the two products guarded: under
# no_grad it does O(NV) elementwise work no gradient needs, which the contract does not bound
# (it bounds matrix products, and those it skips)
UNUSUAL.append(Unusual(LCE, "G built in every grad mode, only the products skipped", edit(
    LINEAR, ("            if want_x or want_weight:\n                probs /= sums\n",
             "            if True:\n                probs /= sums\n"))))
