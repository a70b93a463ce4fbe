"""Lesson 11: linear_cross_entropy's mistakes: all the logits at once, the grad-mode check
missing or asked inside forward, gradients always computed or the logits recomputed once per
gradient, accumulation in bfloat16, chunks averaged or cut short."""

from .. import CACHED_BY_TENSOR, Mistake, edit
from .answers import LINEAR
from .linear_cross_entropy_unusual import CUT_CROSS_ENTROPY, LIGER_IN_INPUT_DTYPE, UNUSUAL


LCE = "linear_cross_entropy"
_SPLIT = next(entry for entry in UNUSUAL if entry.name.startswith("torch.split for the chunks"))


LOOP_GRADS = '''                if want_x:
                    grad_x[rows] = probs @ weight_wide
                if want_weight:
                    grad_weight.addmm_(probs.T, x_chunk)'''


MISTAKES = [
    # a newcomer instructor's planted slip: named, but without an id insight could group by
    Mistake(LCE, "the composed loss, no Function", "not made by a custom Function", edit(
        LINEAR, ("    return LinearCrossEntropy.apply(x, weight, target, chunk_size, "
                 "torch.is_grad_enabled())", "    return F.cross_entropy(x @ weight.T, target)"))),
    # the reviewer's W2r: chunks, but autograd through them keeps every chunk's (c, V) tensor
    Mistake(LCE, "plain autograd through the chunked loop, no Function",
            "a (rows, V) tensor of every chunk", edit(
        LINEAR, ("    return LinearCrossEntropy.apply(x, weight, target, chunk_size, "
                 "torch.is_grad_enabled())",
                 "    total = 0\n"
                 "    for start in range(0, x.shape[0], chunk_size):\n"
                 "        rows = slice(start, start + chunk_size)\n"
                 "        total = total + F.cross_entropy(x[rows] @ weight.T, target[rows], "
                 "reduction='sum')\n"
                 "    return total / x.shape[0]"))),
    Mistake(LCE, "no grad-mode check", "but not under no_grad", edit(
        LINEAR, ("torch.is_grad_enabled())", "True)")), named=True, nbgrader=True),
    # the learner's slip (review 56): only numbers, once; the last chunk's gradient N/rows too large
    Mistake(LCE, "each chunk's G divided by its own rows, not N",
            "divides each chunk's G = P - Y by that chunk's own rows", edit(
                LINEAR, ("                probs /= N\n", "                probs /= len(target_chunk)\n")),
            named=True),
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
    Mistake(LCE, "both gradients always", "though weight does not require grad", edit(
        LINEAR, ("        want_x = grad_enabled and ctx.needs_input_grad[0]\n"
                 "        want_weight = grad_enabled and ctx.needs_input_grad[1]\n",
                 "        want_x = want_weight = grad_enabled and any(ctx.needs_input_grad[:2])\n")),
            named=True),
    Mistake(LCE, "all the logits at once", "creates a tensor of shape", edit(
        LINEAR, ("    return LinearCrossEntropy.apply(x, weight, target, chunk_size, "
                 "torch.is_grad_enabled())",
                 "    return LinearCrossEntropy.apply(x, weight, target, len(target), "
                 "torch.is_grad_enabled())")), named=True),
    Mistake(LCE, "accumulating in bfloat16", "a precision loss, not a wrong formula; accumulate "
            "the loss and the gradients in float32",
            edit(LINEAR, ("        wide = torch.promote_types(x.dtype, torch.float32)",
                           "        wide = x.dtype")), named=True),
    # the reviewer's witness: passed both passes while the grader's float16 cases were small
    Mistake(LCE, "G rounded to float16 before the two products",
            "as with G = (P - Y)/N rounded to float16 before the two products", edit(
                LINEAR, ("                probs /= N\n",
                         "                probs /= N\n"
                         "                probs = probs.to(x.dtype).to(wide)  # G in the input's dtype\n")),
            named=True),
    Mistake(LCE, "products in the input dtype, G included (Liger's, catalogued unusual before)",
            "as with G = (P - Y)/N rounded to float16 before the two products",
            LIGER_IN_INPUT_DTYPE.code),
    Mistake(LCE, "the mean of each chunk's mean", "averages the chunks' means", edit(
        LINEAR, ("            loss += (row_max + sums.log() - picked).sum()",
                 "            loss += (row_max + sums.log() - picked).mean()"),
        ("        return (loss / N).to(x.dtype)",
         "        return (loss / len(range(0, N, chunk_size))).to(x.dtype)")), named=True),
    # autograd inside forward is correct (the unusual entry of that name); asking it for both
    # gradients whenever one is needed spends the other's FLOPs
    Mistake(LCE, "autograd inside forward, both gradients always", "though weight does not require grad", edit(
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
    Mistake(LCE, "no max shift in the chunk's exp", "logits of magnitude 1e4", edit(
        LINEAR, ("row_max = logits.amax(dim=1, keepdim=True)",
                 "row_max = torch.zeros_like(logits[:, :1])"))),
    # float64 arithmetic for every input, and so no shift "needed": e^710 overflows float64
    Mistake(LCE, "float64 arithmetic with no max shift", "at float64 logits of magnitude 1e4", edit(
        LINEAR, ("wide = torch.promote_types(x.dtype, torch.float32)", "wide = torch.float64"),
        ("row_max = logits.amax(dim=1, keepdim=True)",
         "row_max = torch.zeros_like(logits[:, :1])"))),
    # grad_x from zeros: rows left unreached by torch.empty hold whatever memory was there, and
    # once in a full test run (not reproduced alone) the verdict was then unnamed (wrong-value)
    Mistake(LCE, "the loop stops before a short last chunk", "the short last chunk", edit(
        LINEAR, ("for start in range(0, N, chunk_size):",
                 "for start in range(0, N - chunk_size + 1, chunk_size):"),
        ("grad_x = torch.empty(", "grad_x = torch.zeros("))),
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
    Mistake('linear_cross_entropy', 'logits recomputed in backward once per gradient',
            'FLOPs of matrix products', edit(
                CUT_CROSS_ENTROPY,
                ("    # Cut Cross-Entropy's plan: forward keeps lse per row, backward recomputes chunk "
                 "by chunk", "    # Cut Cross-Entropy's plan, but backward recomputes the logits once "
                 "per gradient"),
                ("""        for s in range(0, N, c):
            xc = x[s:s + c].to(acc)
            g = torch.exp(xc @ w.T - lse[s:s + c, None])
            g[torch.arange(len(g), device=x.device), target[s:s + c]] -= 1
            g *= grad_output.to(acc) / N
            if gx is not None:
                gx[s:s + c] = g @ w
            if gw is not None:
                gw += g.T @ xc
""", """        for wanted in (gx, gw):  # one pass per gradient: the logits recomputed twice
            if wanted is None:
                continue
            for s in range(0, N, c):
                xc = x[s:s + c].to(acc)
                g = torch.exp(xc @ w.T - lse[s:s + c, None])
                g[torch.arange(len(g), device=x.device), target[s:s + c]] -= 1
                g *= grad_output.to(acc) / N
                if wanted is gx:
                    gx[s:s + c] = g @ w
                else:
                    gw += g.T @ xc
"""))),
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
    # the memory clause holds whichever gradients are needed: a shortcut to the composed ops
    # where none is builds the whole N x V logits as surely as forward would
    Mistake(LCE, "the composed ops under no_grad", "under torch.no_grad() creates a tensor", edit(
        LINEAR, ("def linear_cross_entropy(x, weight, target, chunk_size=1024):\n",
                 "def linear_cross_entropy(x, weight, target, chunk_size=1024):\n"
                 "    if not torch.is_grad_enabled():  # no gradient: nothing to fuse\n"
                 "        return F.cross_entropy(x @ weight.T, target)\n"))),
    # a converted copy of the weight cached between calls, keyed by the weight tensor: an
    # optimizer step changes the weight in place and the next call uses the old values (keyed by
    # the tensor, not its data_ptr, which a later tensor's memory can reuse by chance)
    Mistake(LCE, "a float32 weight copy cached between calls, keyed by the weight",
            "returned a stale loss", CACHED_BY_TENSOR + edit(
                LINEAR, ("        weight_wide = weight.to(wide)\n",
                         "        weight_wide = _cached((weight,), (wide,), lambda: weight.to(wide))\n")),
            named=True),
    # a make-mutants survivor: the loss-only path under no_grad summed float16 chunk losses
    Mistake(LCE, "a float16 running sum on the loss-only path under no_grad",
            "accumulate the loss in float32 whatever the grad mode", edit(
                _SPLIT.code, ("        wide = torch.promote_types(x.dtype, torch.float32)\n"
                              "        total",
                              "        wide = torch.promote_types(x.dtype, torch.float16)\n"
                              "        total"))),
]


# a review's answer (lesson 11, score 8): one grad_weight buffer per shape, reused by every
# call, so two calls in one graph share what they saved
MISTAKES += [
    Mistake(LCE, 'a grad_weight buffer kept between calls', 'failed with two calls in one graph', '''
_BUFFERS = {}

class LinearCrossEntropy(torch.autograd.Function):
    """F.cross_entropy(x @ weight.T, target) by chunks of rows, gradients computed in forward."""

    @staticmethod
    def forward(ctx, x, weight, target, chunk_size):
        # False under torch.no_grad() too: linear_cross_entropy then hands in detached inputs
        want_x, want_weight = ctx.needs_input_grad[:2]
        N = x.shape[0]
        wide = torch.promote_types(x.dtype, torch.float32)  # accumulate in float32 or wider
        weight_wide = weight.to(wide)
        loss = torch.zeros((), dtype=wide, device=x.device)
        grad_x = torch.empty(x.shape, dtype=wide, device=x.device) if want_x else None
        grad_weight = None
        if want_weight:
            key = (tuple(weight.shape), wide, weight.device)
            grad_weight = _BUFFERS.setdefault(key, torch.zeros(weight.shape, dtype=wide, device=x.device)).zero_()
        for start in range(0, N, chunk_size):
            rows = slice(start, start + chunk_size)
            x_chunk, target_chunk = x[rows].to(wide), target[rows]
            logits = x_chunk @ weight_wide.T  # (c, V): the one chunk-sized buffer
            picked = logits.gather(1, target_chunk[:, None])  # z_{i, y_i}
            row_max = logits.amax(dim=1, keepdim=True)
            probs = logits.sub_(row_max).exp_()  # in place: e^{z - max}, still one buffer
            sums = probs.sum(dim=1, keepdim=True)
            loss += (row_max + sums.log() - picked).sum()  # lse - z_{i, y_i}, row by row
            if want_x or want_weight:
                probs /= sums  # the softmax P
                probs[torch.arange(len(target_chunk), device=x.device), target_chunk] -= 1
                probs /= N  # G = (P - Y) / N for these rows
                if want_x:
                    grad_x[rows] = probs @ weight_wide
                if want_weight:
                    grad_weight.addmm_(probs.T, x_chunk)  # += G^T x, summed over chunks
            del logits, probs  # let this chunk go before the next one exists
        ctx.save_for_backward(None if grad_x is None else grad_x.to(x.dtype),
                              None if grad_weight is None else (grad_weight if grad_weight.dtype == weight.dtype else grad_weight.to(weight.dtype)))
        return (loss / N).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        grad_x, grad_weight = ctx.saved_tensors
        # new tensors: a second backward must find the saved gradients unchanged
        return (None if grad_x is None else grad_output * grad_x,
                None if grad_weight is None else grad_output * grad_weight,
                None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    """F.cross_entropy(x @ weight.T, target), never materialising the N x V logits."""
    # inside forward grad mode is always off: only the caller can see torch.no_grad(), and
    # detached inputs make forward's ctx.needs_input_grad say False
    if not torch.is_grad_enabled():
        x, weight = x.detach(), weight.detach()
    return LinearCrossEntropy.apply(x, weight, target, chunk_size)
'''),
]

# the course-wide rules the contract states: inputs untouched, tensors through save_for_backward
MISTAKES += [
    Mistake(LCE, "x scaled by 1/N in place for grad_weight", "modified its input x", edit(
        LINEAR, ("                probs /= N\n", ""),
        ("                    grad_x[rows] = probs @ weight_wide\n",
         "                    grad_x[rows] = probs @ weight_wide / N\n"),
        ("                    grad_weight.addmm_(probs.T, x_chunk)\n",
         "                    grad_weight.addmm_(probs.T, x_chunk.div_(N))  # x[rows] itself\n"))),
    Mistake(LCE, "the gradients kept on ctx", "stores a tensor as", edit(
        LINEAR, ("        ctx.save_for_backward(None if grad_x is None else grad_x.to(x.dtype),\n"
                 "                              None if grad_weight is None else "
                 "grad_weight.to(weight.dtype))\n",
                 "        ctx.grad_x = None if grad_x is None else grad_x.to(x.dtype)\n"
                 "        ctx.grad_weight = (None if grad_weight is None\n"
                 "                           else grad_weight.to(weight.dtype))\n"),
        ("        grad_x, grad_weight = ctx.saved_tensors\n",
         "        grad_x, grad_weight = ctx.grad_x, ctx.grad_weight\n"))),
]
