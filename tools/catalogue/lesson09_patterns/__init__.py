"""Lesson 09 (backward patterns): answers with known verdicts for BroadcastMul, ProdOverDim,
Cumsum, IndexSelect, Normalize and the transfer exercise CumMax, one module per exercise, and
one per concept that spans them: ProdOverDim's zero counts (prod_zero_counts), how Normalize's
backward tells a row above eps from one below (normalize_eps_branch), gradients returned in a
wider dtype (returned_dtype) and state kept outside a call's ctx (state_outside_ctx). They are
built from the lesson's forwards and backward bodies (answers.py); domains.py holds what only the
generated domain checks separate."""

from . import (broadcast_mul, cummax, cumsum, domains, index_select, normalize,
               normalize_eps_branch, prod_over_dim, prod_zero_counts, returned_dtype,
               state_outside_ctx)

_MODULES = (broadcast_mul, prod_over_dim, prod_zero_counts, cumsum, index_select, normalize,
            normalize_eps_branch, cummax, returned_dtype, state_outside_ctx, domains)

UNUSUAL = tuple(entry for module in _MODULES for entry in getattr(module, "UNUSUAL", ()))
MISTAKES = tuple(entry for module in _MODULES for entry in module.MISTAKES)
