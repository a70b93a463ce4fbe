"""Lesson 06 (attention): answers with known verdicts for ScaledDotProductAttention,
MemoryEfficientAttention, FlashAttention and the transfer exercise AttentionWithBias. Most are
a plain answer (``answers``) with one change, made by ``edit``. One module per exercise, with
FlashAttention's causal tiles, its tile shapes, its accumulators in a half dtype and what it
saves for half inputs apart; and the slips every exercise can make: the scale it is given
(``scale``), state kept outside ctx (``state_outside_ctx``), a .view on the standard
multi-head layout (``multi_head_layout``) and a backward without @once_differentiable
(``once_differentiable``)."""

from . import (attention_bias, flash_attention, flash_causal, flash_low_precision, flash_saves,
               flash_tile_shapes, memory_efficient, multi_head_layout, once_differentiable,
               scale, scaled_dot_product, state_outside_ctx)

UNUSUAL = (scaled_dot_product.UNUSUAL + memory_efficient.UNUSUAL + flash_attention.UNUSUAL
           + flash_causal.UNUSUAL + flash_saves.UNUSUAL + attention_bias.UNUSUAL
           + flash_low_precision.UNUSUAL + once_differentiable.UNUSUAL
           + state_outside_ctx.UNUSUAL)
MISTAKES = (scaled_dot_product.MISTAKES + memory_efficient.MISTAKES + flash_attention.MISTAKES
            + flash_causal.MISTAKES + flash_tile_shapes.MISTAKES + flash_saves.MISTAKES
            + flash_low_precision.MISTAKES + attention_bias.MISTAKES + multi_head_layout.MISTAKES
            + once_differentiable.MISTAKES + scale.MISTAKES + state_outside_ctx.MISTAKES)
