"""Lesson 12: the kind of answer issue 37 found passing elsewhere, a constant kept on the class
(each call's value overwrites the last), caught by the generated checks of its domain."""

from .. import Mistake
from .answers import _NORMS, _clip, _reversal


MISTAKES = [
    Mistake("GradientReversal", "alpha kept on the class (issue 37)",
            "GradientReversal.forward sets GradientReversal.alpha: a class attribute is shared",
            _reversal("        return -GradientReversal.alpha * grad_output, None\n", forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        GradientReversal.alpha = alpha
        return x.view_as(x)
''')),
    Mistake("ClipGradientNorm", "max_norm kept on the class (issue 37)",
            "ClipGradientNorm.forward sets ClipGradientNorm.max_norm: a class attribute is shared",
            _clip(_NORMS + "        m = ClipGradientNorm.max_norm\n"
                  "        return torch.where(norms > m, grad_output * (m / norms), grad_output), None\n",
                  forward='''
    @staticmethod
    def forward(ctx, x, max_norm):
        ClipGradientNorm.max_norm = max_norm
        return x.view_as(x)
''')),
]
