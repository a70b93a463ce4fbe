"""Lesson 06: what FlashAttention saves for float16 and bfloat16 inputs, where .to(float32) is
no longer a no-op: Q, K and V saved as float32 copies (for both half dtypes, or float16 only),
the float32 accumulator of O saved while O rounded is returned, and Q * scale saved in place
of Q. And a correct answer: a running maximum started at finfo(wide).min with key blocks
visited last to first."""

from .. import Mistake, Unusual, edit
from .answers import FA, FLASH

_SAVE = "ctx.save_for_backward(Q, K, V, O, L)"
_RESTORED = (("grad_Q.to(Q.dtype) if", "grad_Q.to(ctx.in_dtype) if"),
             ("grad_K if", "grad_K.to(ctx.in_dtype) if"), ("grad_V if", "grad_V.to(ctx.in_dtype) if"))

MISTAKES = [
    Mistake(FA, "Q, K and V saved as float32 copies for half inputs",
            "saved a float32 copy of its bfloat16 input Q", edit(
                FLASH, (_SAVE, "ctx.save_for_backward(Q.to(wide), K.to(wide), V.to(wide), O, "
                               "L)\n        ctx.in_dtype = Q.dtype"),
                *_RESTORED)),
    Mistake(FA, "V saved as a float32 copy for float16 inputs only",
            "saved a float32 copy of its float16 input V", edit(
                FLASH, (_SAVE, "ctx.save_for_backward(Q, K, V.float() if V.dtype == "
                               "torch.float16 else V, O, L)"),
                ("grad_V if need_V", "grad_V.to(K.dtype) if need_V"))),
    Mistake(FA, "the float32 accumulator of O saved for half inputs, O rounded returned",
            "saves a float32 tensor of the output's shape", edit(
                FLASH, ("O = Q.new_empty(*Q.shape[:-1], V.shape[-1])",
                        "O = torch.empty(*Q.shape[:-1], V.shape[-1], dtype=wide, "
                        "device=Q.device)"),
                ("        return O\n", "        return O.to(Q.dtype)\n"))),
    Mistake(FA, "Q * scale saved in place of Q", "does not save its input Q itself", edit(
        FLASH, (_SAVE, "ctx.save_for_backward(Q * scale, K, V, O, L)"),
        ("s = (q @ k.transpose(-2, -1)) * ctx.scale", "s = q @ k.transpose(-2, -1)"),
        ("dk += ctx.scale * ds.transpose(-2, -1) @ q", "dk += ds.transpose(-2, -1) @ q"))),
]

UNUSUAL = [
    Unusual(FA, "running maximum started at finfo(wide).min, key blocks last to first", edit(
        FLASH, ("for j in range(0, end, block):", "for j in reversed(range(0, end, block)):"),
        ('m = torch.full(q.shape[:-1], float("-inf"), dtype=wide, device=Q.device)',
         "m = torch.full(q.shape[:-1], torch.finfo(wide).min, dtype=wide, device=Q.device)"))),
]
