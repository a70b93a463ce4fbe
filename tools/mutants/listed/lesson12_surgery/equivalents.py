"""Lesson 12's surviving mutants that leave the answer correct (see tools.mutants.listed)."""

from .. import EquivalentMutant

_IDENTITY = ("forward returns x's values as x itself, a view or a copy, all of which the contract "
             "allows (\"a view or a copy, never writing into x\"); x - 0 and x + 0 are x")
_ONE_OUTPUT = ("GradientReversal has one output, so backward always receives a tensor: "
               "materialising grads changes nothing")
_COPY_RETURNED = ("a copy of a result just computed is returned in its place: the same values, "
                  "and the original is freed on return")
_AT_MAX_NORM = ("at norm == max_norm the factor max_norm / norm is 1 to the last bit: both "
                "branches give grad_output")
_UNNEEDED_LAM = ("SoftThreshold's contract asks each gradient to be right when the other input "
                 "needs none, not that its work be skipped; the engine drops a gradient for an "
                 "input that needs none")
_AT_KINK = ("at x == lam (x == -lam) the branch gives x - lam (x + lam), which is 0, the value "
            "of the zero branch; backward is the Function's own, untouched")
_ZERO_D_VIEW = "a 0-d sum viewed as lam's shape: lam is 0-d, and view of a 0-d tensor to () works"
_FRESH_COPY = ("a copy (or .contiguous()) of a tensor forward just computed replaces it in the "
               "saved set: still one tensor, the same values")
_BROADCAST = ("the norms (N,) become (1, N), which broadcast against grad_output.T (out, N) as "
              "(N,) does: the same factors on the same columns")
_ONE_CODE = ("one sign code in {-1, 0, 1} in another dtype: exact, and still one tensor no larger "
             "than y for float32 and float64 x, which the contract's budget (the bytes x's own "
             "entry takes) allows")
_SCALE_GUARD = ("the norm is scaled by the row's largest entry or by 1, the same norm either way "
                "for rows whose squared norm is normal; a row of zeros gets 0 / 0 = nan, which "
                "where's norms > max_norm reads as False: the row passes unchanged")
_INPUT_COPY_LINEAR = ("the contract bounds the tensors backward creates (none per sample, "
                      "output and input), not what forward saves: a copy of x or weight holds "
                      "the same values")

EQUIVALENTS = [
    EquivalentMutant('GradientReversal', 'swap_arithmetic',
                     'return x + 0',
                     'return x - 0', _IDENTITY),
    EquivalentMutant('GradientReversal', 'drop_term',
                     'return x + 0',
                     'return x', _IDENTITY),
    EquivalentMutant('GradientReversal', 'drop_ctx_declaration',
                     'ctx.set_materialize_grads(False)',
                     'pass', _ONE_OUTPUT),
    EquivalentMutant('GradientReversal', 'flip_boolean',
                     'ctx.set_materialize_grads(False)',
                     'ctx.set_materialize_grads(True)', _ONE_OUTPUT),
    EquivalentMutant('GradientReversal', 'drop_copy',
                     'return x.clone()',
                     'return x', _IDENTITY),
    EquivalentMutant('GradientReversal', 'add_copy',
                     'return output, None',
                     'return output.clone(), None', _COPY_RETURNED),
    EquivalentMutant('GradientReversal', 'add_copy',
                     'return x',
                     'return x.clone()', _IDENTITY),
    EquivalentMutant('SoftThreshold', 'save_copy',
                     "ctx.save_for_backward(shrunk)  # y != 0 exactly where |x| > lam, with x's sign there",
                     "ctx.save_for_backward(shrunk.clone())  # y != 0 exactly where |x| > lam, with x's sign there", _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'ignore_needs_input_grad',
                     'if ctx.needs_input_grad[1]:',
                     'if True:', _UNNEEDED_LAM),
    # review 56's answer: a bool mask and an int8 sign saved, forward by where
    EquivalentMutant('SoftThreshold', 'ignore_needs_input_grad',
                     'gl = -(gx * s).sum() if ctx.needs_input_grad[1] else None',
                     'gl = -(gx * s).sum() if True else None', _UNNEEDED_LAM),
    EquivalentMutant('SoftThreshold', 'save_copy', 'ctx.save_for_backward(keep, torch.sign(x).to(torch.int8))',
                     'ctx.save_for_backward(keep, torch.sign(x).to(torch.int8).clone())',
                     _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'save_copy', 'ctx.save_for_backward(keep, torch.sign(x).to(torch.int8))',
                     'ctx.save_for_backward(keep.clone(), torch.sign(x).to(torch.int8))',
                     _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'add_copy', 'ctx.save_for_backward(keep, torch.sign(x).to(torch.int8))',
                     'ctx.save_for_backward(keep.contiguous(), torch.sign(x).to(torch.int8))',
                     _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'save_narrowed', 'ctx.save_for_backward(keep, torch.sign(x).to(torch.int8))',
                     'ctx.save_for_backward(keep, torch.sign(x).to(torch.int8).half())',
                     "the sign code in float16, exact for -1, 0 and 1: with the bool mask 3 bytes "
                     "an entry, under the 4 or 8 a float32 or float64 x's entry takes, which the "
                     "contract's budget allows"),
    EquivalentMutant('SoftThreshold', 'swap_arithmetic',
                     'y = torch.where(keep, x - lam * torch.sign(x), torch.zeros_like(x))',
                     'y = torch.where(keep, x - lam / torch.sign(x), torch.zeros_like(x))',
                     "where keep holds, |x| > lam >= 0, so sign(x) is 1 or -1 and dividing lam "
                     "by it is multiplying; elsewhere where takes 0, and the inf or nan the other "
                     "branch computes there reaches nothing (forward records no graph)"),
    EquivalentMutant('SoftThreshold', 'add_copy',
                     'return shrunk',
                     'return shrunk.clone()', _COPY_RETURNED),
    EquivalentMutant('SoftThreshold', 'add_copy',
                     "ctx.save_for_backward(shrunk)  # y != 0 exactly where |x| > lam, with x's sign there",
                     "ctx.save_for_backward(shrunk.contiguous())  # y != 0 exactly where |x| > lam, with x's sign there", _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'save_copy',
                     'ctx.save_for_backward(x > lam, x < -lam)',
                     'ctx.save_for_backward((x > lam).clone(), x < -lam)', _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'add_copy',
                     'return y',
                     'return y.clone()', _COPY_RETURNED),
    EquivalentMutant('SoftThreshold', 'save_copy',
                     'ctx.save_for_backward(y)',
                     'ctx.save_for_backward(y.clone())', _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'add_copy',
                     'ctx.save_for_backward(y)',
                     'ctx.save_for_backward(y.contiguous())', _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'add_copy',
                     'return grad_x, grad_lam',
                     'return grad_x.clone(), grad_lam', _COPY_RETURNED),
    EquivalentMutant('SoftThreshold', 'reshape_to_view',
                     'grad_lam = -(grad_output * direction).sum().reshape(lam.shape)',
                     'grad_lam = -(grad_output * direction).sum().view(lam.shape)', _ZERO_D_VIEW),
    EquivalentMutant('SoftThreshold', 'save_copy',
                     'ctx.save_for_backward(direction, lam)',
                     'ctx.save_for_backward(direction, lam.clone())', _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'add_copy',
                     'ctx.save_for_backward(direction, lam)',
                     'ctx.save_for_backward(direction.contiguous(), lam)', _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'swap_comparison',
                     'return torch.where(x > lam, x - lam, torch.where(x < -lam, x + lam, zero))',
                     'return torch.where(x > lam, x - lam, torch.where(x <= -lam, x + lam, zero))', _AT_KINK),
    EquivalentMutant('SoftThreshold', 'swap_comparison',
                     'return torch.where(x > lam, x - lam, torch.where(x < -lam, x + lam, zero))',
                     'return torch.where(x >= lam, x - lam, torch.where(x < -lam, x + lam, zero))', _AT_KINK),
    EquivalentMutant('SoftThreshold', 'save_copy',
                     'ctx.save_for_backward(x.abs() > lam, torch.sign(x).to(torch.int8))',
                     'ctx.save_for_backward((x.abs() > lam).clone(), torch.sign(x).to(torch.int8))', _FRESH_COPY),
    EquivalentMutant('PerSampleClippedLinear', 'save_copy',
                     'ctx.save_for_backward(x, weight)',
                     'ctx.save_for_backward(x, weight.clone())', _INPUT_COPY_LINEAR),
    EquivalentMutant('PerSampleClippedLinear', 'save_copy',
                     'ctx.save_for_backward(x, weight)',
                     'ctx.save_for_backward(x.clone(), weight)', _INPUT_COPY_LINEAR),
    EquivalentMutant('PerSampleClippedLinear', 'add_copy',
                     'ctx.save_for_backward(x, weight)',
                     'ctx.save_for_backward(x, weight.contiguous())', _INPUT_COPY_LINEAR),
    EquivalentMutant('PerSampleClippedLinear', 'add_copy',
                     'ctx.save_for_backward(x, weight)',
                     'ctx.save_for_backward(x.contiguous(), weight)', _INPUT_COPY_LINEAR),
    # the bfloat16 sign code of the fifth review: a copy of it, or it widened to float32, is
    # still one tensor no larger than y (float64: 8 bytes per entry), which the contract allows
    EquivalentMutant('SoftThreshold', 'save_copy',
                     'ctx.save_for_backward(torch.sign(y).to(torch.bfloat16))',
                     'ctx.save_for_backward(torch.sign(y).to(torch.bfloat16).clone())',
                     _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'save_narrowed',
                     'ctx.save_for_backward(torch.sign(y).to(torch.bfloat16))',
                     'ctx.save_for_backward(torch.sign(y).to(torch.bfloat16).float())',
                     "a float32 copy of a sign code in {-1, 0, 1}: one tensor no larger than y "
                     "(float64 inputs), exact, which the contract's 'y (or one tensor of its "
                     "size)' allows"),
    # the torch.where answer of the fifth review
    EquivalentMutant('ClipGradientNorm', 'add_copy', 'return x', 'return x.clone()', _IDENTITY),
    EquivalentMutant('ClipGradientNorm', 'swap_comparison',
                     'out = torch.where(norms > ctx.max_norm, g / norms * ctx.max_norm, g)',
                     'out = torch.where(norms >= ctx.max_norm, g / norms * ctx.max_norm, g)',
                     _AT_MAX_NORM),
    # review 55's ClipGradientNorm: x itself returned, float32 work for half, early return
    EquivalentMutant('ClipGradientNorm', 'narrow_accumulator',
                     'g = grad_output.float() if grad_output.dtype in (torch.float16, torch.bfloat16) else grad_output',
                     'g = grad_output.half() if grad_output.dtype in (torch.float16, torch.bfloat16) else grad_output',
                     "for float16 rows .half() is the identity and vector_norm accumulates float16 "
                     "in float32 itself; bfloat16 is outside the contract"),
    EquivalentMutant('ClipGradientNorm', 'swap_comparison',
                     'if not bool((norms > ctx.max_norm).any()):',
                     'if not bool((norms >= ctx.max_norm).any()):',
                     "the early return only skips work: with a row at max_norm exactly and none "
                     "above, the torch.where path returns grad_output's values too"),
]

# review 53/54: an int8 sign code saved (F.softshrink forward; x - clamp(x, -lam, lam))
_SOFTSHRINK_CODE = 'ctx.save_for_backward(torch.sign(y).to(torch.int8))   # -1, 0, 1: mask and sign in one byte'
_CLAMP_CODE = 'ctx.save_for_backward(torch.sign(y).to(torch.int8))'
for _line in (_SOFTSHRINK_CODE, _CLAMP_CODE):
    _call = 'ctx.save_for_backward(torch.sign(y).to(torch.int8))'
    EQUIVALENTS.append(EquivalentMutant('SoftThreshold', 'save_copy', _line,
                                        _line.replace(_call, _call[:-1] + '.clone())'), _FRESH_COPY))
    for _widen in ('float', 'half'):
        EQUIVALENTS.append(EquivalentMutant('SoftThreshold', 'save_narrowed', _line,
                                            _line.replace(_call, _call[:-1] + f'.{_widen}())'),
                                            _ONE_CODE))
EQUIVALENTS += [
    EquivalentMutant('SoftThreshold', 'ignore_needs_input_grad',
                     'grad_x = grad_output * code.abs() if ctx.needs_input_grad[0] else None',
                     'grad_x = grad_output * code.abs() if True else None', _UNNEEDED_LAM),
    EquivalentMutant('SoftThreshold', 'ignore_needs_input_grad',
                     'if ctx.needs_input_grad[1] else None',
                     'if True else None', _UNNEEDED_LAM),
    # the bfloat16 sign code: type promotion widens it as .to(grad_output.dtype) did
    EquivalentMutant('SoftThreshold', 'drop_statement',
                     'code = code.to(grad_output.dtype)', 'pass',
                     "a bfloat16 code times a float32 or float64 grad_output is computed in "
                     "grad_output's dtype (type promotion), and -1, 0, 1 are exact in both"),
]

# found by the uncapped mutants (session 56): copies, and codes widened within the byte budget
_MASK_AND_SIGN = ("a bool mask and an int8 sign, one of them widened to float16: exact, and 3 "
                  "bytes per entry, within the contract's budget for float32 (4) and float64 "
                  "(8) x, the dtypes it grades")
_SOFT_CODE = 'ctx.save_for_backward(code)'
_SOFT_MASK = 'ctx.save_for_backward(x.abs() > lam, torch.sign(x).to(torch.int8))'
_SIGNED_MASK = 'ctx.save_for_backward(direction, lam)'
EQUIVALENTS += [
    EquivalentMutant('SoftThreshold', 'save_copy', 'ctx.save_for_backward(x > lam, x < -lam)',
                     'ctx.save_for_backward(x > lam, (x < -lam).clone())', _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'save_copy', _SOFT_CODE,
                     'ctx.save_for_backward(code.clone())', _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'add_copy', _SOFT_CODE,
                     'ctx.save_for_backward(code.contiguous())', _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'save_copy', _SIGNED_MASK,
                     'ctx.save_for_backward(direction.clone(), lam)', _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'save_copy', _SOFT_MASK,
                     'ctx.save_for_backward(x.abs() > lam, torch.sign(x).to(torch.int8).clone())',
                     _FRESH_COPY),
    EquivalentMutant('SoftThreshold', 'add_copy', _SIGNED_MASK,
                     'ctx.save_for_backward(direction, lam.contiguous())',
                     "lam is a 0-d tensor, always contiguous: .contiguous() returns lam itself"),
    EquivalentMutant('SoftThreshold', 'save_narrowed', _SOFT_CODE,
                     'ctx.save_for_backward(code.half())', _ONE_CODE),
    EquivalentMutant('SoftThreshold', 'save_narrowed', _SOFT_CODE,
                     'ctx.save_for_backward(code.float())', _ONE_CODE),
    EquivalentMutant('SoftThreshold', 'save_narrowed', _SIGNED_MASK,
                     'ctx.save_for_backward(direction.half(), lam)', _ONE_CODE),
    EquivalentMutant('SoftThreshold', 'save_narrowed', _SIGNED_MASK,
                     'ctx.save_for_backward(direction.float(), lam)', _ONE_CODE),
    EquivalentMutant('SoftThreshold', 'save_narrowed',
                     'ctx.save_for_backward(torch.sign(y).to(torch.bfloat16))',
                     'ctx.save_for_backward(torch.sign(y).to(torch.bfloat16).half())', _ONE_CODE),
    EquivalentMutant('SoftThreshold', 'save_narrowed', _SOFT_MASK,
                     'ctx.save_for_backward((x.abs() > lam).half(), torch.sign(x).to(torch.int8))',
                     _MASK_AND_SIGN),
    EquivalentMutant('SoftThreshold', 'save_narrowed', _SOFT_MASK,
                     'ctx.save_for_backward(x.abs() > lam, torch.sign(x).to(torch.int8).half())',
                     _MASK_AND_SIGN),
    EquivalentMutant('SoftThreshold', 'add_copy', 'return grad_x, grad_lam',
                     'return grad_x, grad_lam.clone()', _COPY_RETURNED),
    EquivalentMutant('SoftThreshold', 'ignore_needs_input_grad',
                     'gl = -(grad_output * code).sum() if ctx.needs_input_grad[1] else None',
                     'gl = -(grad_output * code).sum() if True else None', _UNNEEDED_LAM),
    EquivalentMutant('SoftThreshold', 'ignore_needs_input_grad',
                     'return (gx if ctx.needs_input_grad[0] else None), gl',
                     'return (gx if True else None), gl', _UNNEEDED_LAM),
    # ClipGradientNorm, review 55's answer (x itself returned, float32 work for half)
    EquivalentMutant('ClipGradientNorm', 'add_copy', 'return grad_output, None',
                     'return grad_output.clone(), None',
                     "a copy of grad_output returned where no row is clipped: the same values, "
                     "and the contract bounds no memory for backward"),
    EquivalentMutant('ClipGradientNorm', 'swap_comparison',
                     'return g * torch.where(norms > ctx.max_norm, ctx.max_norm / norms, '
                     'torch.ones_like(norms)), None',
                     'return g * torch.where(norms >= ctx.max_norm, ctx.max_norm / norms, '
                     'torch.ones_like(norms)), None',
                     "at norm == max_norm the factor max_norm / norm (max_norm * (1 / norm) in "
                     "torch) is 1 to within one rounding: the row moves by one ulp at most, "
                     "far inside the tolerance every row is graded to"),
    # review 56's LAPACK-style norm: the guard only picks the scale of rows whose largest entry
    # is at or below the threshold; a row of zeros divided by 0 gets norm nan, and where's
    # nan > max_norm is False, so it passes unchanged as well
    EquivalentMutant('ClipGradientNorm', 'move_threshold', 'safe = torch.where(a > 0, a, torch.ones_like(a))',
                     'safe = torch.where(a > 1e-06, a, torch.ones_like(a))', _SCALE_GUARD),
    EquivalentMutant('ClipGradientNorm', 'move_threshold', 'safe = torch.where(a > 0, a, torch.ones_like(a))',
                     'safe = torch.where(a > -1e-06, a, torch.ones_like(a))', _SCALE_GUARD),
    EquivalentMutant('ClipGradientNorm', 'nudge_constant', 'safe = torch.where(a > 0, a, torch.ones_like(a))',
                     'safe = torch.where(a > 1, a, torch.ones_like(a))', _SCALE_GUARD),
    EquivalentMutant('ClipGradientNorm', 'nudge_constant', 'safe = torch.where(a > 0, a, torch.ones_like(a))',
                     'safe = torch.where(a > -1, a, torch.ones_like(a))', _SCALE_GUARD),
    EquivalentMutant('ClipGradientNorm', 'swap_comparison', 'safe = torch.where(a > 0, a, torch.ones_like(a))',
                     'safe = torch.where(a >= 0, a, torch.ones_like(a))', _SCALE_GUARD),
    # review 56's sqrt-on-each-side answer: a copy of an input saved
    EquivalentMutant('PerSampleClippedLinear', 'save_copy', 'ctx.save_for_backward(x, weight); ctx.max_norm = max_norm',
                     'ctx.save_for_backward(x.clone(), weight); ctx.max_norm = max_norm', _INPUT_COPY_LINEAR),
    EquivalentMutant('PerSampleClippedLinear', 'save_copy', 'ctx.save_for_backward(x, weight); ctx.max_norm = max_norm',
                     'ctx.save_for_backward(x, weight.clone()); ctx.max_norm = max_norm', _INPUT_COPY_LINEAR),
    EquivalentMutant('PerSampleClippedLinear', 'add_copy', 'ctx.save_for_backward(x, weight); ctx.max_norm = max_norm',
                     'ctx.save_for_backward(x, weight.contiguous()); ctx.max_norm = max_norm', _INPUT_COPY_LINEAR),
    EquivalentMutant('PerSampleClippedLinear', 'add_copy', 'ctx.save_for_backward(x, weight); ctx.max_norm = max_norm',
                     'ctx.save_for_backward(x.contiguous(), weight); ctx.max_norm = max_norm', _INPUT_COPY_LINEAR),
]

_TIE = ("at norm == max_norm clipping scales by max_norm / norm, 1 to within one rounding: > and >= "
        "give the same row to an ulp, far inside the tolerance every row is graded to")
_EITHER_BRANCH = ("both branches are correct formulas in every dtype the contract names (float64, "
                  "float32, float16): which dtype takes which changes no value beyond rounding")
_TINY_CLAMP = ("the clamp changes only norms below 1.2e-7, far under the smallest max_norm the "
               "contract allows (1e-3 for ClipGradientNorm, 1e-4 for PerSampleClippedLinear): "
               "such rows are left unclipped either way")
_FRESH_VIEW = ("view of a tensor just computed, contiguous: view and reshape return the same "
               "tensor")
_CODE_COPY = ("code.to(grad_output.dtype) is a fresh copy for every graded grad_output (float64, "
              "float32; the saved code is bfloat16) and passed is computed already: mul_ writes "
              "into neither the saved code nor grad_output")

# ties at max_norm, dtype branches, clamps far below max_norm, views of fresh tensors
EQUIVALENTS += [
    EquivalentMutant('ClipGradientNorm', 'swap_comparison', 'return torch.where(n > ctx.max_norm, g * (ctx.max_norm / n), g), None', 'return torch.where(n >= ctx.max_norm, g * (ctx.max_norm / n), g), None', _TIE),
    EquivalentMutant('ClipGradientNorm', 'swap_comparison', 'clipped = norms > ctx.max_norm  # never a row of zeros, whatever max_norm rounds to', 'clipped = norms >= ctx.max_norm  # never a row of zeros, whatever max_norm rounds to', _TIE),
    EquivalentMutant('ClipGradientNorm', 'reshape_to_view', 'return clipped.reshape(grad_output.shape), None', 'return clipped.view(grad_output.shape), None', _FRESH_VIEW),
    EquivalentMutant('ClipGradientNorm', 'swap_comparison', 'clipped = torch.where(norms > ctx.max_norm, rows / norms * ctx.max_norm, rows)', 'clipped = torch.where(norms >= ctx.max_norm, rows / norms * ctx.max_norm, rows)', _TIE),
    EquivalentMutant('ClipGradientNorm', 'narrow_accumulator', 'norms = norms.clamp(min=torch.finfo(torch.float64).eps)', 'norms = norms.clamp(min=torch.finfo(torch.float32).eps)', _TINY_CLAMP),
    EquivalentMutant('ClipGradientNorm', 'nudge_constant', 'scale = (ctx.max_norm / norms.clamp(min=1e-12)).clamp(max=1)', 'scale = (ctx.max_norm / norms.clamp(min=5e-13)).clamp(max=1)', _TINY_CLAMP),
    EquivalentMutant('ClipGradientNorm', 'nudge_constant', 'norms = torch.linalg.vector_norm(g, dim=-1, keepdim=True).clamp(min=1e-20)', 'norms = torch.linalg.vector_norm(g, dim=-1, keepdim=True).clamp(min=2e-20)', _TINY_CLAMP),
    EquivalentMutant('ClipGradientNorm', 'swap_comparison', 'return torch.where(norms > m, grad_output * (m / norms), grad_output), None', 'return torch.where(norms >= m, grad_output * (m / norms), grad_output), None', _TIE),
    EquivalentMutant('ClipGradientNorm', 'swap_comparison', 'return torch.where(norms > m, grad_output * m / norms, grad_output), None', 'return torch.where(norms >= m, grad_output * m / norms, grad_output), None', _TIE),
    EquivalentMutant('ClipGradientNorm', 'swap_comparison', 'return torch.where(norms > ctx.max_norm, scaled, grad_output), None', 'return torch.where(norms >= ctx.max_norm, scaled, grad_output), None', _TIE),
    EquivalentMutant('SoftThreshold', 'saved_in_place', 'return passed, -(grad_output * code).sum() if ctx.needs_input_grad[1] else None', 'return passed, -(code.mul_(grad_output)).sum() if ctx.needs_input_grad[1] else None', _CODE_COPY),
    EquivalentMutant('SoftThreshold', 'reshape_to_view', '-(passed * torch.sign(y)).sum().reshape(1) if ctx.needs_input_grad[1] else None)', '-(passed * torch.sign(y)).sum().view(1) if ctx.needs_input_grad[1] else None)', _FRESH_VIEW),
    EquivalentMutant('PerSampleClippedLinear', 'swap_comparison', 'grad_weight = (grad_output * torch.where(norms > m, m / norms, 1.0)[:, None]).T @ x', 'grad_weight = (grad_output * torch.where(norms >= m, m / norms, 1.0)[:, None]).T @ x', _TIE),
    EquivalentMutant('PerSampleClippedLinear', 'swap_comparison', 'f = torch.where(n > ctx.max_norm, ctx.max_norm / n, torch.ones_like(n))', 'f = torch.where(n >= ctx.max_norm, ctx.max_norm / n, torch.ones_like(n))', _TIE),
    EquivalentMutant('PerSampleClippedLinear', 'narrow_accumulator', 'if grad_output.dtype == torch.float32:', 'if grad_output.dtype == torch.float16:', _EITHER_BRANCH),
    EquivalentMutant('PerSampleClippedLinear', 'swap_comparison', 'factors = torch.where(norms > ctx.max_norm, ctx.max_norm / norms, 1.0)', 'factors = torch.where(norms >= ctx.max_norm, ctx.max_norm / norms, 1.0)', _TIE),
    EquivalentMutant('PerSampleClippedLinear', 'swap_comparison', 'factors = torch.where(squared > limit, ctx.max_norm * torch.rsqrt(squared), 1.0)', 'factors = torch.where(squared >= limit, ctx.max_norm * torch.rsqrt(squared), 1.0)', _TIE),
    EquivalentMutant('PerSampleClippedLinear', 'swap_comparison', 'root = torch.where(norms > m, m / norms, 1.0).sqrt()[:, None]', 'root = torch.where(norms >= m, m / norms, 1.0).sqrt()[:, None]', _TIE),
    EquivalentMutant('PerSampleClippedLinear', 'add_copy', 'ctx.save_for_backward(xt, weight)', 'ctx.save_for_backward(xt, weight.contiguous())', _INPUT_COPY_LINEAR),
    EquivalentMutant('PerSampleClippedLinear', 'save_copy', 'ctx.save_for_backward(xt, weight)', 'ctx.save_for_backward(xt.clone(), weight)', _INPUT_COPY_LINEAR),
    EquivalentMutant('PerSampleClippedLinear', 'swap_comparison', 'if grad_output.dtype == torch.float32:', 'if grad_output.dtype != torch.float32:', _EITHER_BRANCH),
]
