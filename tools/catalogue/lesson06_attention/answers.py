"""Lesson 06: the plain answers most entries edit (``edit`` checks that the line is there, so an
entry cannot silently stop being the mistake it names), the exercises' names, and the lines and
hints several exercises' entries share."""

from .. import edit

S, M = "ScaledDotProductAttention", "MemoryEfficientAttention"
FA, AB = "FlashAttention", "AttentionWithBias"

SDPA = '''
class ScaledDotProductAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        scores = (Q @ K.transpose(-2, -1)) * scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        P = torch.softmax(scores, dim=-1)
        ctx.save_for_backward(Q, K, V, P)
        ctx.scale = scale
        return P @ V

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        Q, K, V, P = ctx.saved_tensors
        need_Q, need_K, need_V = ctx.needs_input_grad[:3]
        grad_V = P.transpose(-2, -1) @ grad_output if need_V else None
        if not (need_Q or need_K):
            return None, None, grad_V, None, None
        grad_P = grad_output @ V.transpose(-2, -1)
        grad_S = P * (grad_P - (grad_P * P).sum(dim=-1, keepdim=True))
        grad_Q = ctx.scale * grad_S @ K if need_Q else None
        grad_K = ctx.scale * grad_S.transpose(-2, -1) @ Q if need_K else None
        return grad_Q, grad_K, grad_V, None, None
'''

MEMORY = '''
class MemoryEfficientAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        scores = (Q @ K.transpose(-2, -1)) * scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        lse = torch.logsumexp(scores, dim=-1, keepdim=True)
        output = (scores - lse).exp() @ V
        ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)
        ctx.scale = scale
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        Q, K, V, output, lse, mask = ctx.saved_tensors
        scores = (Q @ K.transpose(-2, -1)) * ctx.scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        P = (scores - lse.unsqueeze(-1)).exp()
        need_Q, need_K, need_V = ctx.needs_input_grad[:3]
        grad_V = P.transpose(-2, -1) @ grad_output if need_V else None
        if not (need_Q or need_K):
            return None, None, grad_V, None, None
        grad_P = grad_output @ V.transpose(-2, -1)
        grad_S = P * (grad_P - (grad_output * output).sum(dim=-1, keepdim=True))
        return (ctx.scale * grad_S @ K if need_Q else None,
                ctx.scale * grad_S.transpose(-2, -1) @ Q if need_K else None, grad_V, None, None)
'''

FLASH = '''
def _tile_mask(s, i, j, Lq, Lk):
    query = torch.arange(i, i + s.shape[-2], device=s.device)
    key = torch.arange(j, j + s.shape[-1], device=s.device)
    return s.masked_fill(key > query[:, None] + (Lk - Lq), float("-inf"))


class FlashAttention(torch.autograd.Function):
    BLOCK = 64

    @staticmethod
    def forward(ctx, Q, K, V, scale, causal=False):
        block, Lq, Lk = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2]
        wide = torch.promote_types(Q.dtype, torch.float32)
        O = Q.new_empty(*Q.shape[:-1], V.shape[-1])
        L = torch.empty(Q.shape[:-1], dtype=wide, device=Q.device)
        for i in range(0, Lq, block):
            q = Q[..., i:i + block, :].to(wide)
            m = torch.full(q.shape[:-1], float("-inf"), dtype=wide, device=Q.device)
            ell = torch.zeros_like(m)
            o = torch.zeros(*q.shape[:-1], V.shape[-1], dtype=wide, device=Q.device)
            end = min(Lk, i + q.shape[-2] + Lk - Lq) if causal else Lk
            for j in range(0, end, block):
                k, v = K[..., j:j + block, :].to(wide), V[..., j:j + block, :].to(wide)
                s = (q @ k.transpose(-2, -1)) * scale
                if causal:
                    s = _tile_mask(s, i, j, Lq, Lk)
                m_new = torch.maximum(m, s.amax(dim=-1))
                alpha = torch.exp(m - m_new)
                p = torch.exp(s - m_new.unsqueeze(-1))
                ell = alpha * ell + p.sum(dim=-1)
                o = alpha.unsqueeze(-1) * o + p @ v
                m = m_new
            O[..., i:i + block, :] = o / ell.unsqueeze(-1)
            L[..., i:i + block] = m + ell.log()
        ctx.save_for_backward(Q, K, V, O, L)
        ctx.scale, ctx.causal = scale, causal
        return O

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        Q, K, V, O, L = ctx.saved_tensors
        block, Lq, Lk, wide = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2], L.dtype
        D = (grad_output.to(wide) * O.to(wide)).sum(dim=-1)
        grad_Q = torch.zeros(Q.shape, dtype=wide, device=Q.device)
        grad_K, grad_V = torch.empty_like(K), torch.empty_like(V)
        for j in range(0, Lk, block):
            k, v = K[..., j:j + block, :].to(wide), V[..., j:j + block, :].to(wide)
            dk, dv = torch.zeros_like(k), torch.zeros_like(v)
            first = max(0, j - (Lk - Lq)) // block * block if ctx.causal else 0
            for i in range(first, Lq, block):
                q = Q[..., i:i + block, :].to(wide)
                do = grad_output[..., i:i + block, :].to(wide)
                s = (q @ k.transpose(-2, -1)) * ctx.scale
                if ctx.causal:
                    s = _tile_mask(s, i, j, Lq, Lk)
                p = torch.exp(s - L[..., i:i + block, None])
                if ctx.needs_input_grad[2]:
                    dv += p.transpose(-2, -1) @ do
                if not (ctx.needs_input_grad[0] or ctx.needs_input_grad[1]):
                    continue  # dV alone takes no dP or dS
                ds = p * (do @ v.transpose(-2, -1) - D[..., i:i + block, None])
                if ctx.needs_input_grad[0]:
                    grad_Q[..., i:i + block, :] += ctx.scale * ds @ k
                if ctx.needs_input_grad[1]:
                    dk += ctx.scale * ds.transpose(-2, -1) @ q
            grad_K[..., j:j + block, :] = dk
            grad_V[..., j:j + block, :] = dv
        need_Q, need_K, need_V = ctx.needs_input_grad[:3]
        return (grad_Q.to(Q.dtype) if need_Q else None, grad_K if need_K else None,
                grad_V if need_V else None, None, None)
'''

BIAS = '''
class AttentionWithBias(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q, K, V, bias, scale):
        P = torch.softmax((Q @ K.transpose(-2, -1)) * scale + bias, dim=-1)
        ctx.save_for_backward(Q, K, V, P)
        ctx.scale, ctx.bias_shape = scale, bias.shape
        return P @ V

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        Q, K, V, P = ctx.saved_tensors
        grad_Q = grad_K = grad_V = grad_bias = None
        if ctx.needs_input_grad[2]:
            grad_V = P.transpose(-2, -1) @ grad_output
        if any(ctx.needs_input_grad[:2]) or ctx.needs_input_grad[3]:
            grad_P = grad_output @ V.transpose(-2, -1)
            grad_S = P * (grad_P - (grad_P * P).sum(dim=-1, keepdim=True))
            if ctx.needs_input_grad[0]:
                grad_Q = ctx.scale * grad_S @ K
            if ctx.needs_input_grad[1]:
                grad_K = ctx.scale * grad_S.transpose(-2, -1) @ Q
            if ctx.needs_input_grad[3]:
                grad_bias = grad_S.sum_to_size(ctx.bias_shape)
        return grad_Q, grad_K, grad_V, grad_bias, None
'''

# FLASH's gate on dP and dS: without it, both are built for V alone (review 78b, W21)
FLASH_DS_GATE = ("                if not (ctx.needs_input_grad[0] or ctx.needs_input_grad[1]):\n"
                 "                    continue  # dV alone takes no dP or dS\n", "")
FILL = 'scores = scores.masked_fill(~mask, float("-inf"))'
# the gates taken out of SDPA, MEMORY or FLASH: every gradient computed and returned always
# (Function contract, rule 2), and the first line the generic check gives it
UNGATED = (("        need_Q, need_K, need_V = ctx.needs_input_grad[:3]\n", ""),
           ("        if not (need_Q or need_K):\n            return None, None, grad_V, None, "
            "None\n", ""),
           (" if need_Q else None", ""), (" if need_K else None", ""),
           (" if need_V else None", ""))
IGNORES_NEEDS = "returned a gradient for K with only Q requiring grad"
# every gradient computed, only the needed ones returned: right values, work for nobody
# (Function contract, rule 2; review 74c: passed Exercises 1 to 3)
COMPUTED_UNASKED = {
    S: (("grad_V = P.transpose(-2, -1) @ grad_output if need_V else None",
         "grad_V = P.transpose(-2, -1) @ grad_output"),
        ("        if not (need_Q or need_K):\n            return None, None, grad_V, None, "
         "None\n", ""),
        ("grad_Q = ctx.scale * grad_S @ K if need_Q else None",
         "grad_Q = ctx.scale * grad_S @ K"),
        ("grad_K = ctx.scale * grad_S.transpose(-2, -1) @ Q if need_K else None",
         "grad_K = ctx.scale * grad_S.transpose(-2, -1) @ Q"),
        ("return grad_Q, grad_K, grad_V, None, None",
         "return (grad_Q if need_Q else None, grad_K if need_K else None,\n"
         "                grad_V if need_V else None, None, None)")),
    M: (("grad_V = P.transpose(-2, -1) @ grad_output if need_V else None",
         "grad_V = P.transpose(-2, -1) @ grad_output"),
        ("        if not (need_Q or need_K):\n            return None, None, grad_V, None, "
         "None\n", ""),
        ("        return (ctx.scale * grad_S @ K if need_Q else None,\n"
         "                ctx.scale * grad_S.transpose(-2, -1) @ Q if need_K else None, grad_V, "
         "None, None)",
         "        grad_Q, grad_K = ctx.scale * grad_S @ K, ctx.scale * grad_S.transpose(-2, -1) @ Q\n"
         "        return (grad_Q if need_Q else None, grad_K if need_K else None,\n"
         "                grad_V if need_V else None, None, None)")),
}
TAKE_PART = "the masked scores still take part"


def _sdpa(*changes, name=S):
    return edit(SDPA, *changes) if name == S else edit(MEMORY, *changes)


def _bias(*changes):
    return edit(BIAS, *changes)
