"""Lesson 01 (sigmoid): answers with known verdicts for MySigmoid, MyReLU, ScaledSigmoid and
the transfer exercise Softplus: one module per exercise (its forms, its own mistakes, its dtype
slips), one per concept across them (``saving``: what forward saves; ``tails``: accuracy in
the tails; ``state``: state kept outside ctx; ``written``: tensors written in place, and x
returned as the output), and in ``answers`` the builders that make an answer from its forward
and backward bodies, with the bodies several answers share."""

from . import relu, saving, scaled_sigmoid, sigmoid, softplus, state, tails, written

UNUSUAL = sigmoid.UNUSUAL + relu.UNUSUAL + scaled_sigmoid.UNUSUAL + softplus.UNUSUAL
MISTAKES = (sigmoid.MISTAKES + relu.MISTAKES + scaled_sigmoid.MISTAKES + softplus.MISTAKES
            + saving.MISTAKES + tails.MISTAKES + state.MISTAKES + written.MISTAKES)
