"""Lesson 10 (normalisation layers): answers with known verdicts for LayerNormFunction,
RMSNormFunction, the RMSNorm module and GroupNormFunction, kept in one module per Function."""

from . import domains, group_norm, layer_norm, rms_norm, slips, variants

UNUSUAL = layer_norm.UNUSUAL + rms_norm.UNUSUAL + group_norm.UNUSUAL + variants.UNUSUAL
MISTAKES = (layer_norm.MISTAKES + rms_norm.MISTAKES + group_norm.MISTAKES + slips.MISTAKES
            + domains.MISTAKES)
