"""Lesson 01 (sigmoid): answers with known verdicts for MySigmoid, MyReLU, ScaledSigmoid and
the transfer exercise Softplus, one module per exercise (its unusual answers, its mistakes, its
dtype slips and the state it keeps outside ctx), and in ``answers`` the builders that make an
answer from its forward and backward bodies, with the bodies several answers share."""

from . import (relu, review53, review54, review54b, review55, review55b, review56, review57,
               scaled_sigmoid, sigmoid, softplus)

UNUSUAL = (sigmoid.UNUSUAL + relu.UNUSUAL + scaled_sigmoid.UNUSUAL + softplus.UNUSUAL
           + review53.UNUSUAL + review54.UNUSUAL + review55.UNUSUAL + review55b.UNUSUAL
           + review56.UNUSUAL + review57.UNUSUAL)
MISTAKES = (sigmoid.MISTAKES + relu.MISTAKES + scaled_sigmoid.MISTAKES + softplus.MISTAKES
            + review53.MISTAKES + review54.MISTAKES + review54b.MISTAKES
            + review55.MISTAKES + review55b.MISTAKES + review56.MISTAKES
            + review57.MISTAKES)
