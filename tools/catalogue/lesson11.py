"""Lesson 11: correct-but-unusual fused losses and the mistakes the lesson names.

Most entries are the plain answers below with a line or two changed (``edit`` fails loudly if
a line is missing, so an entry cannot silently stop being the answer it names)."""

from tools.catalogue import Mistake, Unusual, edit

CE, LCE = "CrossEntropy", "linear_cross_entropy"

CROSS_ENTROPY = '''
class CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100):
        counted = target != ignore_index
        safe_target = torch.where(counted, target, 0)
        lse = torch.logsumexp(logits, dim=1)
        picked = logits.gather(1, safe_target[:, None]).squeeze(1)
        losses = torch.where(counted, lse - picked, 0.0)
        ctx.save_for_backward(logits, lse, safe_target, counted)
        return losses.sum() / counted.sum()

    @staticmethod
    def backward(ctx, grad_output):
        logits, lse, target, counted = ctx.saved_tensors
        grad_logits = torch.exp(logits - lse[:, None])
        rows = torch.arange(len(target), device=target.device)
        grad_logits[rows, target] -= 1
        scale = grad_output * counted / counted.sum()
        return grad_logits * scale[:, None], None, None
'''

LINEAR = '''
class LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size, grad_enabled):
        want_x = grad_enabled and ctx.needs_input_grad[0]
        want_weight = grad_enabled and ctx.needs_input_grad[1]
        N = x.shape[0]
        wide = torch.promote_types(x.dtype, torch.float32)
        weight_wide = weight.to(wide)
        loss = torch.zeros((), dtype=wide, device=x.device)
        grad_x = torch.empty(x.shape, dtype=wide, device=x.device) if want_x else None
        grad_weight = torch.zeros(weight.shape, dtype=wide, device=x.device) if want_weight else None
        for start in range(0, N, chunk_size):
            rows = slice(start, start + chunk_size)
            x_chunk, target_chunk = x[rows].to(wide), target[rows]
            logits = x_chunk @ weight_wide.T
            picked = logits.gather(1, target_chunk[:, None])
            row_max = logits.amax(dim=1, keepdim=True)
            probs = logits.sub_(row_max).exp_()
            sums = probs.sum(dim=1, keepdim=True)
            loss += (row_max + sums.log() - picked).sum()
            if want_x or want_weight:
                probs /= sums
                probs[torch.arange(len(target_chunk), device=x.device), target_chunk] -= 1
                probs /= N
                if want_x:
                    grad_x[rows] = probs @ weight_wide
                if want_weight:
                    grad_weight.addmm_(probs.T, x_chunk)
        ctx.save_for_backward(None if grad_x is None else grad_x.to(x.dtype),
                              None if grad_weight is None else grad_weight.to(weight.dtype))
        return (loss / N).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        grad_x, grad_weight = ctx.saved_tensors
        return (None if grad_x is None else grad_output * grad_x,
                None if grad_weight is None else grad_output * grad_weight,
                None, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    return LinearCrossEntropy.apply(x, weight, target, chunk_size, torch.is_grad_enabled())
'''

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


LOOP_GRADS = '''                if want_x:
                    grad_x[rows] = probs @ weight_wide
                if want_weight:
                    grad_weight.addmm_(probs.T, x_chunk)'''

UNUSUAL = [
    Unusual(CE, "log_softmax in forward, saving the logits and the target only", '''
class CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100):
        counted = target != ignore_index
        log_p = torch.log_softmax(logits, dim=1)
        picked = log_p.gather(1, torch.where(counted, target, 0)[:, None]).squeeze(1)
        ctx.save_for_backward(logits, target)
        ctx.ignore_index = ignore_index
        return -(picked * counted).sum() / counted.sum()

    @staticmethod
    def backward(ctx, grad_output):
        logits, target = ctx.saved_tensors
        counted = target != ctx.ignore_index
        one_hot = F.one_hot(torch.where(counted, target, 0), logits.shape[1]).to(logits.dtype)
        grad = (torch.softmax(logits, dim=1) - one_hot) * counted[:, None]
        return grad * (grad_output / counted.sum()), None, None
'''),
    Unusual(CE, "max shift by hand, a float weight per row", edit(
        CROSS_ENTROPY,
        ("        lse = torch.logsumexp(logits, dim=1)\n",
         "        row_max = logits.amax(dim=1)\n"
         "        lse = row_max + (logits - row_max[:, None]).exp().sum(1).log()\n"),
        ("        scale = grad_output * counted / counted.sum()",
         "        weights = counted.to(logits.dtype)\n"
         "        scale = grad_output * weights / weights.sum()"))),
    Unusual(CE, "one-hot by scatter, gradient with torch.where", edit(
        CROSS_ENTROPY,
        ("        rows = torch.arange(len(target), device=target.device)\n"
         "        grad_logits[rows, target] -= 1\n",
         "        one_hot = torch.zeros_like(grad_logits).scatter(1, target[:, None], 1.0)\n"
         "        grad_logits = grad_logits - one_hot\n"),
        ("        return grad_logits * scale[:, None], None, None",
         "        return torch.where(counted[:, None], grad_logits * scale[:, None], 0.0), "
         "None, None"))),
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
]

MISTAKES = [
    Mistake(CE, "softmax without the max shift", "logits of magnitude 1e4", edit(
        CROSS_ENTROPY, ("        lse = torch.logsumexp(logits, dim=1)\n",
                        "        lse = logits.exp().sum(1).log()\n")), named=True, nbgrader=True),
    Mistake(CE, "log of each probability", "logits of magnitude 1e4", edit(
        CROSS_ENTROPY, ("        picked = logits.gather(1, safe_target[:, None]).squeeze(1)\n"
                        "        losses = torch.where(counted, lse - picked, 0.0)\n",
                        "        p = torch.softmax(logits, dim=1)\n"
                        "        picked = p.gather(1, safe_target[:, None]).squeeze(1)\n"
                        "        losses = torch.where(counted, -picked.log(), 0.0)\n")),
            named=True),
    Mistake(CE, "dividing by N instead of the counted rows", "divides by N, all the rows", edit(
        CROSS_ENTROPY, ("        return losses.sum() / counted.sum()",
                        "        return losses.sum() / len(target)"),
        ("        scale = grad_output * counted / counted.sum()",
         "        scale = grad_output * counted / len(target)")), named=True),
    Mistake(CE, "ignored rows keep their gradient", "gives ignored rows", edit(
        CROSS_ENTROPY, ("        scale = grad_output * counted / counted.sum()\n"
                        "        return grad_logits * scale[:, None], None, None",
                        "        return grad_logits * grad_output / counted.sum(), None, None")),
            named=True),
    Mistake(CE, "saves the probabilities", "besides the logits", edit(
        CROSS_ENTROPY, ("        ctx.save_for_backward(logits, lse, safe_target, counted)",
                        "        ctx.save_for_backward(logits, torch.exp(logits - lse[:, None]),"
                        " safe_target, counted)"),
        ("        logits, lse, target, counted = ctx.saved_tensors\n"
         "        grad_logits = torch.exp(logits - lse[:, None])\n",
         "        logits, probs, target, counted = ctx.saved_tensors\n"
         "        grad_logits = probs.clone()\n")), named=True),
    Mistake(CE, "the softmax term alone, no one-hot", "the softmax term alone", edit(
        CROSS_ENTROPY, ("        grad_logits[rows, target] -= 1\n", ""))),
    Mistake(CE, "one_hot - softmax", "times -1", edit(
        CROSS_ENTROPY, ("        return grad_logits * scale[:, None], None, None",
                        "        return -grad_logits * scale[:, None], None, None"))),
    Mistake(CE, "a gradient for the target", "returned a gradient for target", edit(
        CROSS_ENTROPY, ("        return grad_logits * scale[:, None], None, None",
                        "        return grad_logits * scale[:, None], torch.zeros_like(logits[:, 0]),"
                        " None"))),
    Mistake(LCE, "no grad-mode check", "torch.is_grad_enabled()", edit(
        LINEAR, ("torch.is_grad_enabled())", "True)")), named=True, nbgrader=True),
    Mistake(LCE, "saved gradients scaled in place", "in place", edit(
        LINEAR, ("        return (None if grad_x is None else grad_output * grad_x,\n"
                 "                None if grad_weight is None else grad_output * grad_weight,",
                 "        return (None if grad_x is None else grad_x.mul_(grad_output),\n"
                 "                None if grad_weight is None else grad_weight.mul_(grad_output),")),
            named=True),
    Mistake(LCE, "backward ignores grad_output", "ignores grad_output", edit(
        LINEAR, ("        return (None if grad_x is None else grad_output * grad_x,\n"
                 "                None if grad_weight is None else grad_output * grad_weight,",
                 "        return (grad_x,\n                grad_weight,")), named=True),
    Mistake(LCE, "both gradients always", "ctx.needs_input_grad", edit(
        LINEAR, ("        want_x = grad_enabled and ctx.needs_input_grad[0]\n"
                 "        want_weight = grad_enabled and ctx.needs_input_grad[1]\n",
                 "        want_x = want_weight = grad_enabled and any(ctx.needs_input_grad[:2])\n")),
            named=True),
    Mistake(LCE, "all the logits at once", "creates a tensor of shape", edit(
        LINEAR, ("    return LinearCrossEntropy.apply(x, weight, target, chunk_size, "
                 "torch.is_grad_enabled())",
                 "    return LinearCrossEntropy.apply(x, weight, target, len(target), "
                 "torch.is_grad_enabled())")), named=True),
    Mistake(LCE, "accumulating in bfloat16", "accumulate the loss and the gradients in float32",
            edit(LINEAR, ("        wide = torch.promote_types(x.dtype, torch.float32)",
                           "        wide = x.dtype")), named=True),
    Mistake(LCE, "the mean of each chunk's mean", "averages the chunks' means", edit(
        LINEAR, ("            loss += (row_max + sums.log() - picked).sum()",
                 "            loss += (row_max + sums.log() - picked).mean()"),
        ("        return (loss / N).to(x.dtype)",
         "        return (loss / len(range(0, N, chunk_size))).to(x.dtype)")), named=True),
    Mistake(LCE, "autograd inside forward", "LinearCrossEntropy.forward calls", edit(
        LINEAR, ("            if want_x or want_weight:\n"
                 "                probs /= sums\n"
                 "                probs[torch.arange(len(target_chunk), device=x.device), "
                 "target_chunk] -= 1\n                probs /= N\n" + LOOP_GRADS,
                 "            if want_x or want_weight:\n"
                 "                with torch.enable_grad():\n"
                 "                    xc = x_chunk.detach().requires_grad_()\n"
                 "                    wc = weight_wide.detach().requires_grad_()\n"
                 "                    part = F.cross_entropy(xc @ wc.T, target_chunk, "
                 "reduction='sum') / N\n"
                 "                    gx, gw = torch.autograd.grad(part, (xc, wc))\n"
                 "                if want_x:\n                    grad_x[rows] = gx\n"
                 "                if want_weight:\n                    grad_weight += gw"))),
]

MISTAKES += [
    Mistake(LCE, "no max shift in the chunk's exp", "at float32 logits of magnitude 100", edit(
        LINEAR, ("row_max = logits.amax(dim=1, keepdim=True)",
                 "row_max = torch.zeros_like(logits[:, :1])"))),
    Mistake(CE, "ignore_index taken as -100 whatever is passed", "gives ignored rows", edit(
        CROSS_ENTROPY, ("counted = target != ignore_index", "counted = target != -100"))),
    Mistake(CE, "backward ignores grad_output", "ignores grad_output", edit(
        CROSS_ENTROPY, ("scale = grad_output * counted / counted.sum()",
                        "scale = counted / counted.sum()"))),
    Mistake(CE, "ignored targets made valid with clamp(min=0)", "past the last class", edit(
        CROSS_ENTROPY, ("safe_target = torch.where(counted, target, 0)",
                        "safe_target = target.clamp(min=0)"))),
    Mistake(LCE, "the loop stops before a short last chunk", "the short last chunk", edit(
        LINEAR, ("for start in range(0, N, chunk_size):",
                 "for start in range(0, N - chunk_size + 1, chunk_size):"))),
    # design (c), inputs detached under no_grad, with a forward that computes both gradients
    # whatever ctx.needs_input_grad says: the grader must not blame the wrapper
    Mistake(LCE, "detaching wrapper, forward ignores needs_input_grad",
            "although ctx.needs_input_grad is (False, False)", edit(
                LINEAR, ("        want_x = grad_enabled and ctx.needs_input_grad[0]\n"
                         "        want_weight = grad_enabled and ctx.needs_input_grad[1]\n",
                         "        want_x = want_weight = True\n"),
                ("    return LinearCrossEntropy.apply(x, weight, target, chunk_size, "
                 "torch.is_grad_enabled())",
                 "    if not torch.is_grad_enabled():\n"
                 "        x, weight = x.detach(), weight.detach()\n"
                 "    return LinearCrossEntropy.apply(x, weight, target, chunk_size, True)"))),
]
