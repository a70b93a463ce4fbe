"""Lesson 04 (double backward): answers with known verdicts for SwishFunction, CubeOnce and the
transfer exercise NumpyTanh, one module per exercise: its builders, its unusual answers and its
mistakes (``cube_once`` also builds on ``numpy_tanh``'s NumPy prelude)."""

from . import cube_once, numpy_tanh, swish

UNUSUAL = swish.UNUSUAL + cube_once.UNUSUAL + numpy_tanh.UNUSUAL
MISTAKES = swish.MISTAKES + cube_once.MISTAKES + numpy_tanh.MISTAKES
