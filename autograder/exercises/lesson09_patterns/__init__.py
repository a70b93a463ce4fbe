"""Lesson 09 (patterns): the grading of BroadcastMul, ProdOverDim, Cumsum, IndexSelect, Normalize
and CumMax."""
