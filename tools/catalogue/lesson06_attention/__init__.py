"""Lesson 06 (attention): answers with known verdicts for ScaledDotProductAttention,
MemoryEfficientAttention, FlashAttention and the transfer exercise AttentionWithBias. Most are
a plain answer (``answers``) with one change, made by ``edit``. One module per exercise, with
FlashAttention's causal tiles and its accumulators in a half dtype apart; and two slips every
exercise can make: a .view on the standard multi-head layout (``multi_head_layout``) and a
backward without @once_differentiable (``once_differentiable``)."""

from . import (attention_bias, flash_attention, flash_causal, flash_low_precision,
               memory_efficient, multi_head_layout, once_differentiable, review53,
               review55, review55b, review55c, review56, scaled_dot_product)

UNUSUAL = (scaled_dot_product.UNUSUAL + memory_efficient.UNUSUAL + flash_attention.UNUSUAL
           + flash_causal.UNUSUAL + attention_bias.UNUSUAL + once_differentiable.UNUSUAL
           + review53.UNUSUAL + review55.UNUSUAL + review55b.UNUSUAL
           + review56.UNUSUAL)
MISTAKES = (scaled_dot_product.MISTAKES + memory_efficient.MISTAKES + flash_attention.MISTAKES
            + flash_causal.MISTAKES + flash_low_precision.MISTAKES + attention_bias.MISTAKES
            + multi_head_layout.MISTAKES + once_differentiable.MISTAKES + review53.MISTAKES
            + review55.MISTAKES + review55b.MISTAKES + review55c.MISTAKES
            + review56.MISTAKES)
