"""Lesson 06: FlashAttention answers with known verdicts: the plain answer's tiles with one
change each, and answers written as public code writes them (CS336's two-pass backward,
lucidrains' memory-efficient attention)."""

from .. import Mistake, Unusual, edit
from .answers import FA, FLASH, FLASH_DS_GATE, IGNORES_NEEDS, UNGATED

_TWO_PASS_BACKWARD = '''
    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        Q, K, V, O, L = ctx.saved_tensors
        block, Lq, Lk, wide = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2], L.dtype
        D = (grad_output.to(wide) * O.to(wide)).sum(dim=-1)

        def tile(i, j):
            q, k = Q[..., i:i + block, :].to(wide), K[..., j:j + block, :].to(wide)
            s = (q @ k.transpose(-2, -1)) * ctx.scale
            if ctx.causal:
                s = _tile_mask(s, i, j, Lq, Lk)
            p = torch.exp(s - L[..., i:i + block, None])
            do = grad_output[..., i:i + block, :].to(wide)
            if not (ctx.needs_input_grad[0] or ctx.needs_input_grad[1]):
                return q, k, p, do, None  # dV alone takes no dP or dS
            ds = p * (do @ V[..., j:j + block, :].to(wide).transpose(-2, -1)
                      - D[..., i:i + block, None])
            return q, k, p, do, ds

        def visible(i, j):
            return not ctx.causal or j < min(Lk, i + min(block, Lq - i) + Lk - Lq)

        need_Q, need_K, need_V = ctx.needs_input_grad[:3]
        grad_Q = grad_K = grad_V = None
        if need_K or need_V:
            grad_K, grad_V = torch.empty_like(K), torch.empty_like(V)
            for j in range(0, Lk, block):  # pass 1: dK and dV, key blocks outside
                dk = torch.zeros(*K.shape[:-2], min(block, Lk - j), K.shape[-1], dtype=wide,
                                 device=K.device)
                dv = torch.zeros(*V.shape[:-2], min(block, Lk - j), V.shape[-1], dtype=wide,
                                 device=V.device)
                for i in range(0, Lq, block):
                    if visible(i, j):
                        q, _, p, do, ds = tile(i, j)
                        if need_V:
                            dv += p.transpose(-2, -1) @ do
                        if need_K:
                            dk += ctx.scale * ds.transpose(-2, -1) @ q
                grad_K[..., j:j + block, :], grad_V[..., j:j + block, :] = dk, dv
        if need_Q:
            grad_Q = torch.empty_like(Q)
            for i in range(0, Lq, block):  # pass 2: dQ, query blocks outside
                dq = torch.zeros(*Q.shape[:-2], min(block, Lq - i), Q.shape[-1], dtype=wide,
                                 device=Q.device)
                for j in range(0, Lk, block):
                    if visible(i, j):
                        _, k, _, _, ds = tile(i, j)
                        dq += ctx.scale * ds @ k
                grad_Q[..., i:i + block, :] = dq
        return (grad_Q, grad_K if need_K else None, grad_V if need_V else None, None,
                None)
'''

# lucidrains/memory-efficient-attention-pytorch (flash_attention.py, FlashAttentionFunction),
# as a learner would adapt it to this contract: split() views written in place, masked scores
# filled with -finfo.max instead of -inf, einsum tiles, a query-outer backward; the causal
# skip, the bottom-right offset (+ where the original subtracts) and the float32 accumulators
# are the contract's.
LUCIDRAINS = '''
class FlashAttention(torch.autograd.Function):
    BLOCK = 64

    @staticmethod
    @torch.no_grad()
    def forward(ctx, q, k, v, scale, causal=False):
        bucket, wide = FlashAttention.BLOCK, torch.promote_types(q.dtype, torch.float32)
        max_neg_value = -torch.finfo(wide).max
        qk_len_diff = k.shape[-2] - q.shape[-2]
        o = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=wide, device=q.device)
        all_row_sums = torch.zeros((*q.shape[:-1], 1), dtype=wide, device=q.device)
        all_row_maxes = torch.full((*q.shape[:-1], 1), max_neg_value, dtype=wide,
                                   device=q.device)
        row_splits = zip(q.split(bucket, dim=-2), o.split(bucket, dim=-2),
                         all_row_sums.split(bucket, dim=-2), all_row_maxes.split(bucket, dim=-2))
        for ind, (qc, oc, row_sums, row_maxes) in enumerate(row_splits):
            q_start_index = ind * bucket + qk_len_diff
            for k_ind, (kc, vc) in enumerate(zip(k.split(bucket, dim=-2), v.split(bucket, dim=-2))):
                k_start_index = k_ind * bucket
                if causal and k_start_index > q_start_index + qc.shape[-2] - 1:
                    break
                attn_weights = torch.einsum("... i d, ... j d -> ... i j", qc.to(wide),
                                            kc.to(wide)) * scale
                if causal and q_start_index < k_start_index + kc.shape[-2] - 1:
                    causal_mask = torch.ones((qc.shape[-2], kc.shape[-2]), dtype=torch.bool,
                                             device=q.device).triu(q_start_index - k_start_index + 1)
                    attn_weights.masked_fill_(causal_mask, max_neg_value)
                block_row_maxes = attn_weights.amax(dim=-1, keepdim=True)
                new_row_maxes = torch.maximum(block_row_maxes, row_maxes)
                exp_weights = torch.exp(attn_weights - new_row_maxes)
                block_row_sums = exp_weights.sum(dim=-1, keepdim=True)
                exp_values = torch.einsum("... i j, ... j d -> ... i d", exp_weights, vc.to(wide))
                exp_row_max_diff = torch.exp(row_maxes - new_row_maxes)
                new_row_sums = exp_row_max_diff * row_sums + block_row_sums
                oc.mul_(exp_row_max_diff).add_(exp_values)
                row_maxes.copy_(new_row_maxes)
                row_sums.copy_(new_row_sums)
            oc.div_(row_sums)
        lse = all_row_sums.log() + all_row_maxes
        out = o.to(q.dtype)
        ctx.args = (causal, scale, bucket)
        ctx.save_for_backward(q, k, v, out, lse)
        return out

    @staticmethod
    @torch.no_grad()
    def backward(ctx, do):
        causal, scale, bucket = ctx.args
        q, k, v, o, lse = ctx.saved_tensors
        wide = lse.dtype
        max_neg_value = -torch.finfo(wide).max
        qk_len_diff = k.shape[-2] - q.shape[-2]
        need_q, need_k, need_v = ctx.needs_input_grad[:3]
        dq = torch.zeros(q.shape, dtype=wide, device=q.device)
        dk = torch.zeros(k.shape, dtype=wide, device=k.device)
        dv = torch.zeros(v.shape, dtype=wide, device=v.device)
        row_splits = zip(q.split(bucket, dim=-2), o.split(bucket, dim=-2),
                         do.split(bucket, dim=-2), lse.split(bucket, dim=-2),
                         dq.split(bucket, dim=-2))
        for ind, (qc, oc, doc, lsec, dqc) in enumerate(row_splits):
            q_start_index = ind * bucket + qk_len_diff
            qc, oc, doc = qc.to(wide), oc.to(wide), doc.to(wide)
            D = (doc * oc).sum(dim=-1, keepdim=True)
            col_splits = zip(k.split(bucket, dim=-2), v.split(bucket, dim=-2),
                             dk.split(bucket, dim=-2), dv.split(bucket, dim=-2))
            for k_ind, (kc, vc, dkc, dvc) in enumerate(col_splits):
                k_start_index = k_ind * bucket
                if causal and k_start_index > q_start_index + qc.shape[-2] - 1:
                    break
                kc, vc = kc.to(wide), vc.to(wide)
                attn_weights = torch.einsum("... i d, ... j d -> ... i j", qc, kc) * scale
                if causal and q_start_index < k_start_index + kc.shape[-2] - 1:
                    causal_mask = torch.ones((qc.shape[-2], kc.shape[-2]), dtype=torch.bool,
                                             device=q.device).triu(q_start_index - k_start_index + 1)
                    attn_weights.masked_fill_(causal_mask, max_neg_value)
                p = torch.exp(attn_weights - lsec)
                if need_v:
                    dvc.add_(torch.einsum("... i j, ... i d -> ... j d", p, doc))
                if not (need_q or need_k):
                    continue  # dV alone takes no dP or dS
                dp = torch.einsum("... i d, ... j d -> ... i j", doc, vc)
                ds = p * scale * (dp - D)
                if need_q:
                    dqc.add_(torch.einsum("... i j, ... j d -> ... i d", ds, kc))
                if need_k:
                    dkc.add_(torch.einsum("... i j, ... i d -> ... j d", ds, qc))
        return (dq.to(q.dtype) if need_q else None, dk.to(k.dtype) if need_k else None,
                dv.to(v.dtype) if need_v else None, None, None)
'''

_ONLINE_UPDATE = ('''                m_new = torch.maximum(m, s.amax(dim=-1))
                alpha = torch.exp(m - m_new)
                p = torch.exp(s - m_new.unsqueeze(-1))
                ell = alpha * ell + p.sum(dim=-1)
                o = alpha.unsqueeze(-1) * o + p @ v
                m = m_new
''', '''                p = torch.exp(s)
                ell = ell + p.sum(dim=-1)
                o = o + p @ v
''')

UNUSUAL = [
    # L widened "for accuracy": the syllabus asks float32 or wider (issue: grading once
    # rejected it as twice the bytes of a float32 L)
    Unusual(FA, "saves L in float64 for float32 inputs", edit(
        FLASH, ("ctx.save_for_backward(Q, K, V, O, L)",
                "ctx.save_for_backward(Q, K, V, O, L.double())"))),
    Unusual(FA, "einsum tiles", edit(
        FLASH, ("s = (q @ k.transpose(-2, -1)) * scale",
                's = torch.einsum("...id,...jd->...ij", q, k) * scale'))),
    Unusual(FA, "query blocks outside in backward (FlashAttention-1 order)", edit(
        FLASH,
        ("        for j in range(0, Lk, block):\n            k, v = K[..., j:j + block, :]"
         ".to(wide), V[..., j:j + block, :].to(wide)\n            dk, dv = torch.zeros_like(k), "
         "torch.zeros_like(v)\n            first = max(0, j - (Lk - Lq)) // block * block if "
         "ctx.causal else 0\n            for i in range(first, Lq, block):\n",
         "        dK = torch.zeros(K.shape, dtype=wide, device=K.device)\n"
         "        dV = torch.zeros(V.shape, dtype=wide, device=V.device)\n"
         "        for i in range(0, Lq, block):\n"
         "            end = min(Lk, i + min(block, Lq - i) + Lk - Lq) if ctx.causal else Lk\n"
         "            for j in range(0, end, block):\n"
         "                k, v = K[..., j:j + block, :].to(wide), V[..., j:j + block, :]"
         ".to(wide)\n                dk, dv = dK[..., j:j + block, :], dV[..., j:j + block, :]\n"),
        ("            grad_K[..., j:j + block, :] = dk\n            grad_V[..., j:j + block, :]"
         " = dv\n", ""),
        ("grad_K if need_K else None", "dK.to(K.dtype) if need_K else None"),
        ("grad_V if need_V else None", "dV.to(V.dtype) if need_V else None"))),
    Unusual(FA, "two-pass backward: a dK/dV pass, then a dQ pass (CS336's design)",
            FLASH[:FLASH.index("    @staticmethod\n    @once_differentiable")] + _TWO_PASS_BACKWARD),
    Unusual(FA, "lucidrains-style: split views written in place, -finfo.max for masked scores",
            LUCIDRAINS),
    Unusual(FA, "key blocks last to first, with the fused kernels' -inf guard", edit(
        FLASH, ("for j in range(0, end, block):", "for j in reversed(range(0, end, block)):"),
        ("alpha = torch.exp(m - m_new)\n                p = torch.exp(s - m_new.unsqueeze(-1))",
         "safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)\n"
         "                alpha = torch.exp(m - safe)\n"
         "                p = torch.exp(s - safe.unsqueeze(-1))"))),
    Unusual(FA, "the running output kept normalised (FlashAttention-1's form)", edit(
        FLASH, ("ell = alpha * ell + p.sum(dim=-1)\n                o = alpha.unsqueeze(-1) * o + p @ v",
                "ell_new = alpha * ell + p.sum(dim=-1)\n                o = ((alpha * ell)"
                ".unsqueeze(-1) * o + p @ v) / ell_new.unsqueeze(-1)\n                ell = ell_new"),
        ("O[..., i:i + block, :] = o / ell.unsqueeze(-1)", "O[..., i:i + block, :] = o"))),
]

# dP = dO V^T and dS built on every tile when V alone needs a gradient, only dQ and dK gated:
# work for nobody in an exercise that bounds its work (review 78b, W21: passed both)
_DP_FOR_V = "computes dP = dO V^T"
_TWO_PASS_UNGATED = ("            if not (ctx.needs_input_grad[0] or ctx.needs_input_grad[1]):\n"
                     "                return q, k, p, do, None  # dV alone takes no dP or dS\n", "")
_LUCIDRAINS_UNGATED = ("                if not (need_q or need_k):\n"
                       "                    continue  # dV alone takes no dP or dS\n", "")

MISTAKES = [
    Mistake(FA, "dP and dS built even when V alone needs a gradient", _DP_FOR_V,
            edit(FLASH, FLASH_DS_GATE)),
    # catalogued as unusual (correct) until the grader counted dP for V alone (review 78b):
    # each tile's dS is built in pass 1 whatever needs a gradient, so V alone pays for dP
    Mistake(FA, "two-pass backward whose dK/dV pass builds dS for V alone", _DP_FOR_V,
            FLASH[:FLASH.index("    @staticmethod\n    @once_differentiable")]
            + edit(_TWO_PASS_BACKWARD, _TWO_PASS_UNGATED)),
    # catalogued as unusual until review 78b, as lucidrains' code has it: dp and ds on every
    # tile, only the dQ and dK accumulations gated
    Mistake(FA, "lucidrains-style, dP and dS built for V alone", _DP_FOR_V,
            edit(LUCIDRAINS, _LUCIDRAINS_UNGATED)),
    # O and L gathered by torch.cat of per-block lists: no block at all when Lq = 0, which
    # SDPA takes (review at 32340a34: passed, no case had zero queries)
    Mistake(FA, "O and L concatenated from per-block lists", "raised ValueError with Q of shape "
            "(2, 0, 3)", edit(
        FLASH, ("""        O = Q.new_empty(*Q.shape[:-1], V.shape[-1])
        L = torch.empty(Q.shape[:-1], dtype=wide, device=Q.device)
""", "        O_blocks, L_blocks = [], []\n"),
        ("""            O[..., i:i + block, :] = o / ell.unsqueeze(-1)
            L[..., i:i + block] = m + ell.log()
""", """            O_blocks.append((o / ell.unsqueeze(-1)).to(Q.dtype))
            L_blocks.append(m + ell.log())
        O, L = torch.cat(O_blocks, dim=-2), torch.cat(L_blocks, dim=-1)
"""))),
    # the plain answer without its gate: every gradient returned, needed or not
    Mistake(FA, "ignores needs_input_grad", IGNORES_NEEDS,
            edit(FLASH, *[change for change in UNGATED if "return None" not in change[0]])),
    # dV added up for every call, returned only when V needs it (review 74c, W25: passed both)
    Mistake(FA, "dV computed when V needs none", "computes dV = P^T dO (a (4, 5) product here, "
            "or its transpose) when only Q", edit(
                FLASH, ("if ctx.needs_input_grad[2]:\n                    dv +=",
                        "if True:\n                    dv +="))),
    # every tile's dK and dQ added up, returned only when needed
    Mistake(FA, "dQ and dK computed always, returned only when needed",
            "computes dK = dS^T Q (a (4, 2) product here, or its transpose) when only Q", edit(
                FLASH, ("if ctx.needs_input_grad[0]:\n                    grad_Q[",
                        "if True:\n                    grad_Q["),
                ("if ctx.needs_input_grad[1]:\n                    dk +=",
                 "if True:\n                    dk +="))),
    # L in a dict on the class instead of saved: right, and invisible to the saved-tensor checks
    Mistake(FA, "L kept in a dict on the class, keyed by id(ctx)", "kept state outside "
            "ctx: the class (FlashAttention._kept, shared by every call)", edit(
                FLASH, ("    BLOCK = 64\n", "    BLOCK = 64\n    _kept = {}\n"),
                ("ctx.save_for_backward(Q, K, V, O, L)", "ctx.save_for_backward(Q, K, V, O)\n"
                 "        FlashAttention._kept[id(ctx)] = L"),
                ("Q, K, V, O, L = ctx.saved_tensors", "Q, K, V, O = ctx.saved_tensors\n"
                 "        L = FlashAttention._kept.pop(id(ctx))")), named=True),
    Mistake(FA, "no rescaling of the running output", "does not rescale the running output",
            edit(FLASH, ("o = alpha.unsqueeze(-1) * o + p @ v", "o = o + p @ v")),
            named=True, nbgrader=True),
    Mistake(FA, "rescaling with the wrong max", "rescales with the wrong maximum",
            edit(FLASH, ("p = torch.exp(s - m_new.unsqueeze(-1))",
                          "p = torch.exp(s - s.amax(dim=-1, keepdim=True))")), named=True),
    Mistake(FA, "rescaling factor inverted", "rescales with the wrong maximum",
            edit(FLASH, ("alpha = torch.exp(m - m_new)", "alpha = torch.exp(m_new - m)")),
            named=True),
    Mistake(FA, "D from dP instead of dO * O", "takes D from dP instead of dO * O",
            edit(FLASH, ("ds = p * (do @ v.transpose(-2, -1) - D[..., i:i + block, None])",
                          "dp = do @ v.transpose(-2, -1)\n                ds = p * (dp - "
                          "(dp * p).sum(-1, keepdim=True))")), named=True),
    Mistake(FA, "full Lq x Lk matrix in forward", "forward materialises the full Lq x Lk",
            edit(FLASH, ("        for i in range(0, Lq, block):\n            q = Q[",
                          "        full = Q.to(wide) @ K.to(wide).transpose(-2, -1)\n"
                          "        for i in range(0, Lq, block):\n            q = Q[")),
            named=True),
    Mistake(FA, "full Lq x Lk matrix in backward", "backward materialises the full Lq x Lk",
            edit(FLASH, ("        grad_Q = torch.zeros(Q.shape, dtype=wide, device=Q.device)",
                          "        grad_Q = torch.zeros(Q.shape, dtype=wide, device=Q.device)\n"
                          "        P = torch.exp(Q.to(wide) @ K.to(wide).transpose(-2, -1) * "
                          "ctx.scale - L.unsqueeze(-1))")), named=True),
    Mistake(FA, "block size hard-coded", "ignores FlashAttention.BLOCK in forward",
            edit(FLASH, ("block, Lq, Lk = FlashAttention.BLOCK, Q", "block, Lq, Lk = 64, Q"),
                  ("block, Lq, Lk, wide = FlashAttention.BLOCK", "block, Lq, Lk, wide = 64"))),
    # forward reads BLOCK, backward not: a 32 x 32 backward tile was called the full matrix
    Mistake(FA, "block size hard-coded in backward only", "ignores FlashAttention.BLOCK in "
            "backward", edit(FLASH, ("block, Lq, Lk, wide = FlashAttention.BLOCK",
                                     "block, Lq, Lk, wide = 64"))),
    Mistake(FA, "no running maximum", "FlashAttention's forward overflows",
            edit(FLASH, _ONLINE_UPDATE, ("L[..., i:i + block] = m + ell.log()",
                                          "L[..., i:i + block] = ell.log()")), named=True),
    Mistake(FA, "running maximum started at 0", "FlashAttention's forward underflows",
            edit(FLASH, ('m = torch.full(q.shape[:-1], float("-inf"), dtype=wide, '
                          'device=Q.device)', "m = torch.zeros(q.shape[:-1], dtype=wide, "
                          "device=Q.device)")), named=True),
    Mistake(FA, "key blocks visited last to first", "output is nan under causal only",
            edit(FLASH, ("for j in range(0, end, block):",
                          "for j in reversed(range(0, end, block)):")), named=True),
    Mistake(FA, "every score tile saved for backward", "saves 7 tensors besides Q, K, V and O",
            edit(FLASH, ("        for i in range(0, Lq, block):\n",
                         "        tiles = []\n        for i in range(0, Lq, block):\n"),
                 ("                m = m_new\n",
                  "                m = m_new\n                tiles.append(s)\n"),
                 ("save_for_backward(Q, K, V, O, L)", "save_for_backward(Q, K, V, O, L, *tiles)"),
                 ("Q, K, V, O, L = ctx.saved_tensors", "Q, K, V, O, L, *_ = ctx.saved_tensors"))),
    # below the float32 rows near -160, so only float64 rows near -20000 show it: there
    # exp(S - m) = exp(-1e4) = 0 in every entry, and the row comes out 0 / 0
    Mistake(FA, "running maximum started at -1e4", "FlashAttention's forward underflows",
            edit(FLASH, ('m = torch.full(q.shape[:-1], float("-inf"), dtype=wide, '
                         'device=Q.device)', "m = torch.full(q.shape[:-1], -1e4, dtype=wide, "
                         "device=Q.device)")), named=True),
    # "a -inf safe in every dtype": float16's most negative number, -65504, for float32 and
    # float64 alike; above the float64 rows near -1e6, where exp(S - m) is 0 in every entry
    # (review: passed both when the deepest rows lay near -20000)
    Mistake(FA, "running maximum started at float16's most negative number in every dtype",
            "FlashAttention's forward underflows: rows whose float64 scores all lie near -1000000",
            edit(FLASH, ('m = torch.full(q.shape[:-1], float("-inf"), dtype=wide, '
                         'device=Q.device)', "m = torch.full(q.shape[:-1], "
                         "torch.finfo(torch.float16).min, dtype=wide, device=Q.device)")),
            named=True),
    # a two-pass backward that keeps every dS tile of the dK/dV pass for the dQ pass: no tensor
    # bigger than a tile, but Lq x Lk of them alive at once (review: the battery's memory cases
    # were too small for it)
    Mistake(FA, "two-pass backward keeping every dS tile for the dQ pass", "no list of tiles",
            edit(FLASH, ("        for j in range(0, Lk, block):\n            k, v",
                         "        tiles = {}  # (i, j) -> dS, so that the dQ pass need not "
                         "recompute P\n        for j in range(0, Lk, block):\n            k, v"),
                 ("                grad_Q[..., i:i + block, :] += ctx.scale * ds @ k\n",
                  "                tiles[i, j] = ds\n"),
                 ("        need_Q, need_K, need_V = ctx.needs_input_grad[:3]\n",
                  "        for (i, j), ds in tiles.items():  # second pass: dQ\n"
                  "            grad_Q[..., i:i + block, :] += ctx.scale * ds @ K[..., j:j + "
                  "block, :].to(wide)\n"
                  "        need_Q, need_K, need_V = ctx.needs_input_grad[:3]\n"))),
    # per query block, every score tile of the row kept in a list, their exact maximum taken,
    # then each exponentiated: no online softmax, Lk / BLOCK tiles alive at once, within a
    # budget of whole inputs whenever d + dv is near BLOCK (review 78, W3j: passed both)
    Mistake(FA, "a query block's score tiles kept in a list: exact maximum, then exp",
            "forward kept every tile of a row alive: a list of tiles", edit(
                FLASH, ("""                s = (q @ k.transpose(-2, -1)) * scale
                if causal:
                    s = _tile_mask(s, i, j, Lq, Lk)
                m_new = torch.maximum(m, s.amax(dim=-1))
                alpha = torch.exp(m - m_new)
                p = torch.exp(s - m_new.unsqueeze(-1))
                ell = alpha * ell + p.sum(dim=-1)
                o = alpha.unsqueeze(-1) * o + p @ v
                m = m_new
""", """                s = (q @ k.transpose(-2, -1)) * scale
                if causal:
                    s = _tile_mask(s, i, j, Lq, Lk)
                tiles.append((s, v))
                m = torch.maximum(m, s.amax(dim=-1))
            for s, v in tiles:
                p = torch.exp(s - m.unsqueeze(-1))
                ell = ell + p.sum(dim=-1)
                o = o + p @ v
"""), ("            for j in range(0, end, block):\n                k, v = K[",
       "            tiles = []\n            for j in range(0, end, block):\n                k, v = K["))),
    # backward finds each row's maximum and sum again, tile by tile, ignoring the saved L: in
    # memory, but not the contract's backward (issue 45: "recomputes P from L" had no check)
    Mistake(FA, "backward recomputes L by its own pass over the tiles, ignoring the saved one",
            "backward normalises the scores again instead of recomputing P from a saved log-sum-exp",
            edit(FLASH, ("        Q, K, V, O, L = ctx.saved_tensors\n"
                         "        block, Lq, Lk, wide = FlashAttention.BLOCK, Q.shape[-2], "
                         "K.shape[-2], L.dtype\n",
                         "        Q, K, V, O, _ = ctx.saved_tensors\n"
                         "        block, Lq, Lk = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2]\n"
                         "        wide = torch.promote_types(Q.dtype, torch.float32)\n"
                         "        L = torch.empty(Q.shape[:-1], dtype=wide, device=Q.device)\n"
                         "        for i in range(0, Lq, block):\n"
                         "            q = Q[..., i:i + block, :].to(wide)\n"
                         "            m = torch.full(q.shape[:-1], float('-inf'), dtype=wide, "
                         "device=Q.device)\n"
                         "            ell = torch.zeros_like(m)\n"
                         "            for j in range(0, Lk, block):\n"
                         "                s = (q @ K[..., j:j + block, :].to(wide).transpose(-2, -1))"
                         " * ctx.scale\n"
                         "                if ctx.causal:\n"
                         "                    s = _tile_mask(s, i, j, Lq, Lk)\n"
                         "                m_new = torch.maximum(m, s.amax(dim=-1))\n"
                         "                ell = (torch.exp(m - m_new) * ell\n"
                         "                       + torch.exp(s - m_new.unsqueeze(-1)).sum(dim=-1))\n"
                         "                m = m_new\n"
                         "            L[..., i:i + block] = m + ell.log()\n"))),
    # a float64 copy of a float32 O passes the per-row budget (rows x dv), not the no-copy rule
    Mistake(FA, "saves a float64 copy of the output for accuracy", "saved a float64 copy of its "
            "float32 output", edit(FLASH, ("ctx.save_for_backward(Q, K, V, O, L)",
                                           "ctx.save_for_backward(Q, K, V, O.double(), L)"))),
    # the tiles only where a gradient is wanted: under torch.no_grad() (inference) forward
    # builds the whole Lq x Lk scores (issue 45: memory checked with grad enabled only)
    Mistake(FA, "composed ops when no input requires grad (the full scores under no_grad)",
            "under torch.no_grad()", edit(FLASH, (
                "        wide = torch.promote_types(Q.dtype, torch.float32)\n"
                "        O = Q.new_empty",
                "        if not any(ctx.needs_input_grad):  # inference: no backward to serve\n"
                "            S = (Q @ K.transpose(-2, -1)) * scale\n"
                "            if causal:\n"
                "                S = _tile_mask(S, 0, 0, Lq, Lk)\n"
                "            return torch.softmax(S, dim=-1) @ V\n"
                "        wide = torch.promote_types(Q.dtype, torch.float32)\n"
                "        O = Q.new_empty"))),
    # the signature's default flipped: every check passes causal explicitly but one
    Mistake(FA, "causal=True as the default", "with causal left out, masks like causal=True",
            edit(FLASH, ("def forward(ctx, Q, K, V, scale, causal=False):",
                         "def forward(ctx, Q, K, V, scale, causal=True):"))),
    # the class attribute's default changed: the contract's is 64
    Mistake(FA, "BLOCK = 128 by default", "FlashAttention.BLOCK is 128",
            edit(FLASH, ("    BLOCK = 64\n", "    BLOCK = 128\n"))),
    # the course's own tiled reference, wrapped or run row by row: named as such
    Mistake(FA, "the grader's tiled_forward and tiled_backward wrapped",
            "is the course's own reference", '''
from autograder.tiled import tiled_backward, tiled_forward


class FlashAttention(torch.autograd.Function):
    BLOCK = 64

    @staticmethod
    def forward(ctx, Q, K, V, scale, causal=False):
        w = torch.promote_types(Q.dtype, torch.float32)
        O, L = tiled_forward(Q.to(w), K.to(w), V.to(w), scale, causal, FlashAttention.BLOCK)
        O = O.to(Q.dtype)
        ctx.save_for_backward(Q, K, V, O, L)
        ctx.scale, ctx.causal = scale, causal
        return O

    @staticmethod
    @once_differentiable
    def backward(ctx, dO):
        Q, K, V, O, L = ctx.saved_tensors
        w = L.dtype
        grads = tiled_backward(Q.to(w), K.to(w), V.to(w), O.to(w), dO.to(w), L, ctx.scale,
                               ctx.causal, FlashAttention.BLOCK)
        return (*(g.to(t.dtype) for g, t in zip(grads, (Q, K, V))), None, None)
'''),
    Mistake(FA, "the widget's online_softmax_steps run row by row",
            "is the course's own reference", edit(
                FLASH, ("        ctx.save_for_backward(Q, K, V, O, L)",
                        "        from widgets.flash import online_softmax_steps\n"
                        "        online_softmax_steps(Q[(0,) * (Q.dim() - 1)] @ "
                        "K[(0,) * (K.dim() - 2)].transpose(-2, -1) * scale, "
                        "V[(0,) * (V.dim() - 2)], block)\n"
                        "        ctx.save_for_backward(Q, K, V, O, L)"))),
]


# Correct over the scores models meet: they failed only on rows near -finfo(dtype).max / 2
# or at finfo(dtype).min, which the grader no longer tries (issue 69 item 4).
UNUSUAL += [
    # the fresh review's witness: it passed every check until rows near -finfo(dtype).max / 2
    Unusual(FA, 'running maximum started at -1e9',
            edit(FLASH, ('m = torch.full(q.shape[:-1], float("-inf"), dtype=wide, '
                          'device=Q.device)', "m = torch.full(q.shape[:-1], -1e9, dtype=wide, "
                          "device=Q.device)"))),
    # "a finite -inf, no nan": float32's most negative number in every dtype, above the
    # float64 rows near -finfo(float64).max / 2 (review: the first line named only the rows)
    Unusual(FA, "running maximum started at float32's most negative number in every dtype",
            edit(FLASH, ('m = torch.full(q.shape[:-1], float("-inf"), dtype=wide, '
                         'device=Q.device)', "m = torch.full(q.shape[:-1], "
                         "torch.finfo(torch.float32).min, dtype=wide, device=Q.device)"))),
]


# D = rowsum(dO * O) written as a matrix product: einsum and batched `@` run bmm on the
# flattened rows, whose (batch x heads x Lq, 1, 1) result holds one number per query row,
# L's size (review 75: refused as "more than a BLOCK x BLOCK tile")
_D = "D = (grad_output.to(wide) * O.to(wide)).sum(dim=-1)"
_QUERY_OUTER_BACKWARD = '''
    @staticmethod
    @once_differentiable
    def backward(ctx, dO):
        Q, K, V, O, L = ctx.saved_tensors
        nq, nk, nv = ctx.needs_input_grad[:3]
        B = FlashAttention.BLOCK
        Lq, Lk = Q.shape[-2], K.shape[-2]
        w = L.dtype
        D = torch.einsum("...qc,...qc->...q", dO.to(w), O.to(w))
        dQ = torch.zeros(Q.shape, dtype=w, device=Q.device) if nq else None
        dK = torch.zeros(K.shape, dtype=w, device=Q.device) if nk else None
        dV = torch.zeros(V.shape, dtype=w, device=Q.device) if nv else None
        for i in range(0, Lq, B):
            q, do = Q[..., i:i + B, :].to(w), dO[..., i:i + B, :].to(w)
            li, di = L[..., i:i + B].unsqueeze(-1), D[..., i:i + B].unsqueeze(-1)
            rows = q.shape[-2]
            last = min(Lk, i + rows + Lk - Lq) if ctx.causal else Lk
            dq = torch.zeros_like(q) if nq else None
            for j in range(0, last, B):
                k, v = K[..., j:j + B, :].to(w), V[..., j:j + B, :].to(w)
                s = torch.matmul(q, k.mT) * ctx.scale
                if ctx.causal and j + k.shape[-2] - 1 > i + Lk - Lq:
                    qi = torch.arange(i, i + rows, device=Q.device)[:, None]
                    kj = torch.arange(j, j + k.shape[-2], device=Q.device)
                    s = s.masked_fill(kj > qi + (Lk - Lq), float("-inf"))
                p = (s - li).exp()
                if nv:
                    dV[..., j:j + B, :] += p.mT @ do
                if nq or nk:
                    ds = p * (do @ v.mT - di)
                    if nq:
                        dq += ds @ k
                    if nk:
                        dK[..., j:j + B, :] += (ds.mT @ q) * ctx.scale
            if nq:
                dQ[..., i:i + B, :] = dq * ctx.scale
        cast = lambda g, t: None if g is None else g.to(t.dtype)
        return cast(dQ, Q), cast(dK, K), cast(dV, V), None, None
'''

UNUSUAL += [
    Unusual(FA, "query blocks outside in backward, full-size float32 dK and dV, D by einsum",
            FLASH[:FLASH.index("    @staticmethod\n    @once_differentiable")]
            + _QUERY_OUTER_BACKWARD),
    Unusual(FA, "D = einsum('...qc,...qc->...q', dO, O)", edit(
        FLASH, (_D, 'D = torch.einsum("...qc,...qc->...q", grad_output.to(wide), '
                    'O.to(wide))'))),
    Unusual(FA, "D = (dO[..., None, :] @ O[..., :, None])[..., 0, 0]", edit(
        FLASH, (_D, "D = (grad_output.to(wide).unsqueeze(-2) @ O.to(wide).unsqueeze(-1))"
                    "[..., 0, 0]"))),
    Unusual(FA, "D by einsum on the flattened rows, reshaped back", edit(
        FLASH, (_D, "D = torch.einsum('rc,rc->r', grad_output.to(wide).reshape(-1, O.shape[-1]), "
                    "O.to(wide).reshape(-1, O.shape[-1])).reshape(O.shape[:-1])"))),
    # Q, K and V widened to float32 whole, up front, in both passes: N x d copies, which the
    # memory bullet allows as it allows the solution's float32 dO and O for D (review 77, W3a:
    # passed both against a bullet that allowed no copies; the bullet now says what is graded)
    Unusual(FA, "Q, K, V widened to float32 whole, up front, in both passes", edit(
        FLASH, ("wide = torch.promote_types(Q.dtype, torch.float32)\n",
                "wide = torch.promote_types(Q.dtype, torch.float32)\n"
                "        Qw, Kw, Vw = Q.to(wide), K.to(wide), V.to(wide)\n"),
        ("block, Lq, Lk, wide = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2], L.dtype\n",
         "block, Lq, Lk, wide = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2], L.dtype\n"
         "        Qw, Kw, Vw = Q.to(wide), K.to(wide), V.to(wide)\n"),
        ("Q[..., i:i + block, :].to(wide)", "Qw[..., i:i + block, :]"),
        ("k, v = K[..., j:j + block, :].to(wide), V[..., j:j + block, :].to(wide)",
         "k, v = Kw[..., j:j + block, :], Vw[..., j:j + block, :]"))),
]
