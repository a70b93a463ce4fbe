"""Lesson 04 (double backward): answers with known verdicts for SwishFunction, CubeOnce and the
transfer exercise NumpyTanh, one module per exercise (its builder, its unusual answers and its
mistakes)."""

from . import (cube_once, learner55, numpy_tanh, review53, review54, review56, review56b,
               review57, review58, review58b, review58c, review59, review59b, review59c,
               review59d, review59e, review59f, review60, review60b, swish)

UNUSUAL = (swish.UNUSUAL + cube_once.UNUSUAL + numpy_tanh.UNUSUAL + review53.UNUSUAL
           + review54.UNUSUAL + review56.UNUSUAL
           + review56b.UNUSUAL + review57.UNUSUAL + review58.UNUSUAL
           + review58c.UNUSUAL + review59b.UNUSUAL + review59c.UNUSUAL
           + review59d.UNUSUAL + review59e.UNUSUAL + review59f.UNUSUAL
           + review60.UNUSUAL + review60b.UNUSUAL)
MISTAKES = (swish.MISTAKES + cube_once.MISTAKES + numpy_tanh.MISTAKES + review53.MISTAKES
            + review54.MISTAKES + learner55.MISTAKES + review56.MISTAKES
            + review56b.MISTAKES + review57.MISTAKES + review58.MISTAKES
            + review58b.MISTAKES + review58c.MISTAKES + review59.MISTAKES
            + review59b.MISTAKES + review59c.MISTAKES + review59d.MISTAKES
            + review59e.MISTAKES + review59f.MISTAKES + review60.MISTAKES
            + review60b.MISTAKES)
