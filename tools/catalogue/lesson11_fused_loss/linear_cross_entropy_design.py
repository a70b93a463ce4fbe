"""Lesson 11: linear_cross_entropy's design: where grad mode is asked, which gradients are
computed, what is built and kept (a one-hot of the whole batch, every chunk's softmax for a
second pass, a weight copy cached on id and _version, a logits buffer shared between calls),
what backward returns; correct answers that work row by row, split the chunks with
torch.split or recompute the logits in a second pass."""

from .. import Mistake, Unusual, edit
from .answers import LINEAR

CE, LCE, SCE = "CrossEntropy", "linear_cross_entropy", "SmoothedCrossEntropy"

_LCE_FLAG_SPLIT_F64 = '''
class LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size, grad_enabled):
        want_x = grad_enabled and ctx.needs_input_grad[0]
        want_w = grad_enabled and ctx.needs_input_grad[1]
        N = x.shape[0]
        acc = torch.float64
        w = weight.to(acc)
        total = torch.zeros((), dtype=acc, device=x.device)
        gx_parts, gw = [], (torch.zeros_like(w) if want_w else None)
        for xc, tc in zip(torch.split(x, chunk_size), torch.split(target, chunk_size)):
            xc = xc.to(acc)
            z = xc @ w.T
            lse = torch.logsumexp(z, 1)
            total = total + (lse - z.gather(1, tc[:, None]).squeeze(1)).sum()
            if want_x or want_w:
                G = torch.exp(z - lse[:, None])
                G.scatter_add_(1, tc[:, None], torch.full((len(tc), 1), -1.0, dtype=acc,
                                                           device=x.device))
                G.div_(N)
                if want_x:
                    gx_parts.append((G @ w).to(x.dtype))
                if want_w:
                    gw += G.T @ xc
        gx = torch.cat(gx_parts) if want_x else None
        ctx.save_for_backward(gx, None if gw is None else gw.to(weight.dtype))
        return (total / N).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        gx, gw = ctx.saved_tensors
        return (None if gx is None else torch.mul(gx, grad_output),
                None if gw is None else torch.mul(gw, grad_output), None, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    return LinearCrossEntropy.apply(x, weight, target, chunk_size, torch.is_grad_enabled())
'''


ROWWISE = '''
class LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size):
        want_x, want_weight = ctx.needs_input_grad[:2]
        N = x.shape[0]
        wide = torch.promote_types(x.dtype, torch.float32)
        weight_wide = weight.to(wide)
        loss = x.new_zeros((), dtype=wide)
        grad_x = x.new_empty(x.shape, dtype=wide) if want_x else None
        grad_weight = x.new_zeros(weight.shape, dtype=wide) if want_weight else None
        for start in range(0, N, chunk_size):
            rows = slice(start, start + chunk_size)
            x_chunk, target_chunk = x[rows].to(wide), target[rows]
            logits = x_chunk @ weight_wide.T
            picked = logits.gather(1, target_chunk[:, None])
            row_max = logits.amax(dim=1, keepdim=True)  #SHIFT
            probs = logits.sub_(row_max).exp_()
            sums = probs.sum(dim=1, keepdim=True)
            loss += (row_max + sums.log() - picked).sum()
            if want_x or want_weight:
                probs /= sums
                probs[torch.arange(len(target_chunk)), target_chunk] -= 1
                probs /= N
                for i in range(probs.shape[0]):  # grad_W = sum_i G_i^T x_i, row by row
                    if want_x:
                        grad_x[start + i] = weight_wide.T.mv(probs[i])
                    if want_weight:
                        grad_weight.addr_(probs[i], x_chunk[i])
            del logits, probs
        ctx.save_for_backward(None if grad_x is None else grad_x.to(x.dtype),
                              None if grad_weight is None else grad_weight.to(weight.dtype))
        return (loss / N).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        grad_x, grad_weight = ctx.saved_tensors
        return (None if grad_x is None else grad_output * grad_x,
                None if grad_weight is None else grad_output * grad_weight, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    if not torch.is_grad_enabled():
        x, weight = x.detach(), weight.detach()
    return LinearCrossEntropy.apply(x, weight, target, chunk_size)
'''


def _cached(key: str) -> str:
    """LINEAR with its float32 weight copy kept between calls under ``key``."""
    return edit(LINEAR, (_CLASS, "\n_CACHE = {}\n" + _CLASS),
                (_WIDE, f"        key = {key}\n"
                        "        if key not in _CACHE:\n"
                        "            _CACHE.clear()\n"
                        "            _CACHE[key] = weight.detach().to(wide)\n"
                        "        weight_wide = _CACHE[key]\n"))

_CLASS = "\nclass LinearCrossEntropy(torch.autograd.Function):\n"

_WIDE = "        weight_wide = weight.to(wide)\n"


def _workspace(store: str) -> str:
    """LINEAR with each chunk's logits written into a buffer kept in ``store`` between calls."""
    return edit(LINEAR, ("            logits = x_chunk @ weight_wide.T\n",
                         "            key = (len(x_chunk), weight.shape[0], wide, x.device)\n"
                         f"            if key not in {store}:\n"
                         f"                {store}.clear()\n"
                         f"                {store}[key] = torch.empty(key[:2], dtype=wide, "
                         "device=x.device)\n"
                         "            logits = torch.matmul(x_chunk, weight_wide.T, "
                         f"out={store}[key])\n"))



def _copies_per_chunk(copies: int) -> str:
    """The reviewer's loop, written without in-place ops (logits, the shifted logits, P and G
    each a tensor of its own), with ``copies`` clones of each chunk's logits kept to the end of
    the pass: 5 or 7 of them make 9 or 11 chunk-sized tensors alive at once."""
    return f'''
class LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size):
        want_x, want_w = ctx.needs_input_grad[:2]
        N = x.shape[0]
        wide = torch.promote_types(x.dtype, torch.float32)
        w = weight.to(wide)
        loss = torch.zeros((), dtype=wide, device=x.device)
        gx = torch.empty(x.shape, dtype=wide, device=x.device) if want_x else None
        gw = torch.zeros(weight.shape, dtype=wide, device=x.device) if want_w else None
        for s in range(0, N, chunk_size):
            r = slice(s, s + chunk_size)
            xc, tc = x[r].to(wide), target[r]
            logits = xc @ w.T
            extras = [logits.clone() for _ in range({copies})]
            lse = torch.logsumexp(logits, 1)
            loss += (lse - logits.gather(1, tc[:, None]).squeeze(1)).sum()
            if want_x or want_w:
                P = torch.exp(logits - lse[:, None])
                P[torch.arange(xc.shape[0], device=x.device), tc] -= 1
                G = P / N
                if want_x:
                    gx[r] = G @ w
                if want_w:
                    gw += G.T @ xc
            del logits, extras
        ctx.save_for_backward(None if gx is None else gx.to(x.dtype),
                              None if gw is None else gw.to(weight.dtype))
        return (loss / N).to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        gx, gw = ctx.saved_tensors
        return (None if gx is None else g * gx, None if gw is None else g * gw, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    if not torch.is_grad_enabled():
        x, weight = x.detach(), weight.detach()
    return LinearCrossEntropy.apply(x, weight, target, chunk_size)
'''

# the reviewer's: both passes right, but the first keeps every chunk's logits for the second
KEEP_CHUNKS = edit(
    LINEAR,
    ("        for start in range(0, N, chunk_size):\n",
     "        kept = []\n        for start in range(0, N, chunk_size):\n"),
    ("            loss += (row_max + sums.log() - picked).sum()\n"
     "            if want_x or want_weight:\n",
     "            loss += (row_max + sums.log() - picked).sum()\n"
     "            kept.append((probs, sums))\n"
     "        for start, (probs, sums) in zip(range(0, N, chunk_size), kept):\n"
     "            rows = slice(start, start + chunk_size)\n"
     "            x_chunk, target_chunk = x[rows].to(wide), target[rows]\n"
     "            if want_x or want_weight:\n"))


# a natural loop that frees nothing by hand: logits, an int64 one-hot, P and G alive at once
ONE_HOT_PER_CHUNK = '''
class LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size):
        want_x, want_w = ctx.needs_input_grad[:2]
        N = x.shape[0]
        acc = torch.promote_types(x.dtype, torch.float32)
        w = weight.to(acc)
        loss = torch.zeros((), dtype=acc, device=x.device)
        gx = torch.zeros(x.shape, dtype=acc, device=x.device) if want_x else None
        gw = torch.zeros(weight.shape, dtype=acc, device=x.device) if want_w else None
        for s in range(0, N, chunk_size):
            xc = x[s:s + chunk_size].to(acc)
            logits = xc @ w.T
            lse = torch.logsumexp(logits, 1)
            onehot = F.one_hot(target[s:s + chunk_size], w.shape[0])
            loss = loss + (lse - (logits * onehot).sum(1)).sum()
            P = torch.exp(logits - lse[:, None])
            G = (P - onehot) / N
            if want_x:
                gx[s:s + chunk_size] = G @ w
            if want_w:
                gw = gw + G.T @ xc
        ctx.save_for_backward(gx.to(x.dtype) if want_x else None, gw.to(weight.dtype) if want_w else None)
        return (loss / N).to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        gx, gw = ctx.saved_tensors
        return (None if gx is None else g * gx, None if gw is None else g * gw, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    if not torch.is_grad_enabled():
        x, weight = x.detach(), weight.detach()
    return LinearCrossEntropy.apply(x, weight, target, chunk_size)
'''


UNUSUAL = [
    Unusual(LCE, "logits, an int64 one-hot, P and G per chunk, none freed by hand",
            ONE_HOT_PER_CHUNK),
    Unusual(LCE, "a grad-mode flag, torch.split, grad_x by torch.cat, float64 accumulators",
            _LCE_FLAG_SPLIT_F64),
    Unusual(LCE, "gradients row by row: weight.T.mv(G[i]) and grad_weight.addr_(G[i], x[i])",
            ROWWISE),
    # 8NdV with both gradients, not 6NdV: the contract bounds only the work of fewer gradients
    # (the syllabus's), and chunking over the vocabulary with an online log-sum-exp needs the
    # same second pass
    Unusual(LCE, "a loss pass, then a second pass recomputing every chunk's logits for the "
            "gradients", edit(
        LINEAR, ("            if want_x or want_weight:\n",
                 "        for start in range(0, N, chunk_size) if want_x or want_weight else ():\n"
                 "            rows = slice(start, start + chunk_size)\n"
                 "            x_chunk, target_chunk = x[rows].to(wide), target[rows]\n"
                 "            probs = torch.softmax(x_chunk @ weight_wide.T, 1)\n"
                 "            if True:\n"),
        ("                probs /= sums\n", ""))),
]

MISTAKES = [
    # the reviewer's: within one chunk, copies of its logits alive beside P and G (the old
    # probe's allowance for x and weight hid about four chunks)
    Mistake(LCE, "eight copies of each chunk's logits kept to the end of the loop",
            "one chunk makes more chunk-sized tensors than it needs alive together", edit(
        LINEAR, ("            logits = x_chunk @ weight_wide.T\n",
                 "            logits = x_chunk @ weight_wide.T\n"
                 "            snapshots = [logits.clone() for _ in range(8)]\n"),
        ("                    grad_weight.addmm_(probs.T, x_chunk)\n",
         "                    grad_weight.addmm_(probs.T, x_chunk)\n            del snapshots\n"))),
    # the reviewer's (wrong_lce.py extra5 / extra7): 9 and 11 chunk-sized tensors alive in
    # one chunk, which passed while the probe's V*d equalled chunk*V
    *(Mistake(LCE, f"{copies} clones of each chunk's logits alive beside P and G",
              "one chunk makes more chunk-sized tensors than it needs alive together",
              _copies_per_chunk(copies)) for copies in (5, 7)),
    # eight clones: 12 alive of 16 chunks, named per chunk and not as every chunk kept
    Mistake(LCE, "8 clones of each chunk's logits alive beside P and G",
            "one chunk makes more chunk-sized tensors than it needs alive together",
            _copies_per_chunk(8)),
    Mistake(LCE, "every chunk's softmax kept in a list, the gradients in a second pass",
            "are the chunks all alive at once", KEEP_CHUNKS),
    # the reviewer's: a logits buffer reused across calls, where two threads share it
    Mistake(LCE, "a logits buffer kept between calls in a module global",
            "_WORKSPACE in a module global",
            edit(_workspace("_WORKSPACE"), ("\nclass LinearCrossEntropy",
                                            "\n_WORKSPACE = {}\n\n\nclass LinearCrossEntropy"))),
    Mistake(LCE, "a logits buffer kept between calls on the class",
            "LinearCrossEntropy._workspace, shared by every call",
            edit(_workspace("LinearCrossEntropy._workspace"),
                 ("class LinearCrossEntropy(torch.autograd.Function):\n",
                  "class LinearCrossEntropy(torch.autograd.Function):\n    _workspace = {}\n\n"))),
    Mistake(LCE, "an (N, V) one-hot built once, sliced per chunk",
            "is not a matrix product, so this is no chunk's logits", edit(
        LINEAR, ("        for start in range(0, N, chunk_size):\n",
                 "        Y = F.one_hot(target, weight.shape[0]).to(wide)\n"
                 "        for start in range(0, N, chunk_size):\n"),
        ("probs[torch.arange(len(target_chunk), device=x.device), target_chunk] -= 1",
         "probs -= Y[rows]"))),
    Mistake(LCE, "only x detached under no_grad", "reach both x and weight?", edit(
        LINEAR, ("    return LinearCrossEntropy.apply(x, weight, target, chunk_size, "
                 "torch.is_grad_enabled())",
                 "    if not torch.is_grad_enabled():\n        x = x.detach()\n"
                 "    return LinearCrossEntropy.apply(x, weight, target, chunk_size, True)"))),
    Mistake(LCE, "row by row with mv and addr_, no grad-mode check",
            "but not under no_grad", edit(
        ROWWISE, ("    if not torch.is_grad_enabled():\n        x, weight = x.detach(), weight.detach()\n",
                  ""))),
    Mistake(LCE, "row by row with mv and addr_, grad_weight always computed",
            "are still spent, though weight does not require grad", edit(
        ROWWISE, ("grad_weight = x.new_zeros(weight.shape, dtype=wide) if want_weight else None",
                  "grad_weight = x.new_zeros(weight.shape, dtype=wide)"),
        ("                    if want_weight:\n                        grad_weight.addr_",
         "                    if True:\n                        grad_weight.addr_"),
        ("None if grad_weight is None else grad_weight.to(weight.dtype)",
         "grad_weight.to(weight.dtype) if want_weight else None"))),
    Mistake(LCE, "the saved gradients themselves returned when grad_output == 1",
            "returned the tensor forward saved, itself", edit(
        LINEAR, ("        grad_x, grad_weight = ctx.saved_tensors\n",
                 "        grad_x, grad_weight = ctx.saved_tensors\n"
                 "        if grad_output == 1:  # nothing to scale: hand them back as they are\n"
                 "            return grad_x, grad_weight, None, None, None\n"))),
    Mistake(LCE, "a float32 weight copy cached between calls, keyed on id, data_ptr, shape, "
            "dtype and _version", "returned a stale loss, from a cache kept between calls",
            _cached("(id(weight), weight.data_ptr(), tuple(weight.shape), weight.dtype, "
                    "weight._version, wide)")),
    Mistake(LCE, "a float32 weight copy cached between calls, keyed on id and _version",
            "returned a stale loss, from a cache kept between calls",
            _cached("(id(weight), weight._version, wide)")),
]
