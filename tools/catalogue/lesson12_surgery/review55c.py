"""Lesson 12, review 55c: a slack on the clipping threshold (norms > max_norm * 1.001, 1.01,
1.1) passed ClipGradientNorm and PerSampleClippedLinear, whose batteries had no row or sample
of norm just above max_norm; now rows and samples of norm max_norm * (1 + 2^-40), 1.0005 and
1.005, in float64 and float32, name the slack (the 1.1 slack was blamed on shared state by the
two-calls check before). A sum over chunks of 2 or 3 samples, which no contract clause
forbids, failed as "one step per sample": the loop probe now asks for steps of one sample."""
from .. import Mistake, Unusual, edit
from .review55 import _CLIP, _CLIP_RIGHT, _PS, _PS_RIGHT


def _clip_slack(factor: str) -> str:
    return edit(_CLIP, (_CLIP_RIGHT, f"        return torch.where(norms > m * {factor}, "
                                     "grad_output * (m / norms), grad_output), None\n"))


def _ps_slack(factor: str) -> str:
    return edit(_PS, (_PS_RIGHT, f"            f = torch.where(norms > m * {factor}, m / norms, "
                                 "torch.ones_like(norms))\n"
                                 "            grad_weight = (grad_output * f[:, None]).T @ x\n"))




def _chunks(k: int) -> str:
    return edit(_PS, (_PS_RIGHT, "            xs = x * (m / norms).clamp(max=1)[:, None]\n"
                                 "            grad_weight = x.new_zeros(weight.shape)\n"
                                 f"            for g_c, x_c in zip(grad_output.split({k}), xs.split({k})):\n"
                                 "                grad_weight = grad_weight + g_c.T @ x_c\n"))


UNUSUAL = [
    Unusual('PerSampleClippedLinear', 'a sum over chunks of 2 samples',
            _chunks(2)),
    Unusual('PerSampleClippedLinear', 'a sum over chunks of 3 samples',
            _chunks(3)),
]

MISTAKES = [
    Mistake('ClipGradientNorm', 'a relative slack of 1e-3 on the threshold',
            'unclipped (max_norm=1, float64): a slack on the threshold', _clip_slack('1.001')),
    Mistake('ClipGradientNorm', 'a relative slack of 1e-2 on the threshold',
            'a slack on the threshold', _clip_slack('1.01')),
    Mistake('ClipGradientNorm', 'a relative slack of 0.1 on the threshold (was: shared state)',
            'a slack on the threshold', _clip_slack('1.1')),
    Mistake('ClipGradientNorm', 'a slack of 1e-4 on the threshold, float32 rows only',
            'max_norm unclipped (max_norm=1, float32): a slack on the threshold',
            edit(_CLIP, (_CLIP_RIGHT, "        slack = 1.0001 if grad_output.dtype == torch.float32 else 1.0\n"
                                      "        return torch.where(norms > m * slack, grad_output * (m / norms), grad_output), None\n"))),
    Mistake('PerSampleClippedLinear', 'a relative slack of 1e-2 on the threshold',
            'unclipped (max_norm=1, float64): a slack on the threshold', _ps_slack('1.01')),
    Mistake('PerSampleClippedLinear', 'a relative slack of 0.1 on the threshold (was: shared state)',
            'a slack on the threshold', _ps_slack('1.1')),
    Mistake('PerSampleClippedLinear', 'a slack of 2e-3, float32 samples only',
            'max_norm unclipped (max_norm=1, float32): a slack on the threshold',
            edit(_PS, (_PS_RIGHT, "            slack = 1.002 if x.dtype == torch.float32 else 1.0\n"
                                  "            f = torch.where(norms > m * slack, m / norms, torch.ones_like(norms))\n"
                                  "            grad_weight = (grad_output * f[:, None]).T @ x\n"))),
    Mistake('PerSampleClippedLinear', 'a sum over chunks of 1 sample (a loop over samples)',
            'one step (or more) per sample', _chunks(1)),
]
