"""Lesson 11's surviving mutants that leave the answer correct (see tools.mutants.listed)."""

from .. import EquivalentMutant

_ROW_COPY = ("a copy of a per-row tensor forward just computed replaces it in the saved set: "
             "the same count of O(N) elements, the same values")
_ROW_CONTIGUOUS = ("a per-row tensor forward just computed (logsumexp, torch.where, !=) is "
                   "contiguous: .contiguous() returns it")
_ROW_WIDENED = ("the contract bounds what is saved besides the logits by its element count "
                "(O(N)), not its dtype; the gradients are unchanged")
_IGNORE_INDEX_GIVEN = ("the contract calls apply(logits, target, ignore_index) with ignore_index "
                       "always given: the default is never read")
_GRADIENT_COPY = ("a copy of the gradient .to() just made replaces it in the saved set: one "
                  "tensor of the input's shape, the same values, the original freed")

_CE_SAVE = "ctx.save_for_backward(logits, lse, safe_target, counted)"
_CE_SOLUTION_SAVE = _CE_SAVE + "  # one (N, C) tensor: logits"
_CE_DEFAULT = "def forward(ctx, logits, target, ignore_index=-100):"


EQUIVALENTS = []
for _exercise, _line in (("CrossEntropy", _CE_SOLUTION_SAVE), ("SmoothedCrossEntropy", _CE_SAVE)):
    for _name in ("lse", "safe_target", "counted"):
        _before = f"{_name}," if _name != "counted" else f"{_name})"
        for _operator, _suffix, _reason in (("save_copy", ".clone()", _ROW_COPY),
                                            ("add_copy", ".contiguous()", _ROW_CONTIGUOUS)):
            EQUIVALENTS.append(EquivalentMutant(
                _exercise, _operator, _line,
                _line.replace(f" {_before}", f" {_before[:-1]}{_suffix}{_before[-1]}", 1),
                _reason))
    for _name in ("lse,", "counted)"):
        EQUIVALENTS.append(EquivalentMutant(
            _exercise, "save_widened", _line,
            _line.replace(f" {_name}", f" {_name[:-1]}.double(){_name[-1]}", 1), _ROW_WIDENED))
EQUIVALENTS += [
    EquivalentMutant("CrossEntropy", "save_widened", _CE_SAVE,
                     _CE_SAVE.replace(" lse,", " lse.double(),"), _ROW_WIDENED),
    EquivalentMutant("CrossEntropy", "nudge_constant", _CE_DEFAULT,
                     _CE_DEFAULT.replace("-100", "-99"), _IGNORE_INDEX_GIVEN),
    EquivalentMutant("CrossEntropy", "nudge_constant", _CE_DEFAULT,
                     _CE_DEFAULT.replace("-100", "-101"), _IGNORE_INDEX_GIVEN),
    EquivalentMutant("linear_cross_entropy", "save_copy",
                     "ctx.save_for_backward(None if grad_x is None else grad_x.to(x.dtype),",
                     "ctx.save_for_backward(None if grad_x is None else "
                     "grad_x.to(x.dtype).clone(),", _GRADIENT_COPY),
    EquivalentMutant("linear_cross_entropy", "save_copy",
                     "None if grad_weight is None else grad_weight.to(weight.dtype))",
                     "None if grad_weight is None else grad_weight.to(weight.dtype).clone())",
                     _GRADIENT_COPY),
    EquivalentMutant("linear_cross_entropy", "save_copy",
                     "gw if gw is None else gw.to(weight.dtype))",
                     "gw if gw is None else gw.to(weight.dtype).clone())", _GRADIENT_COPY),
]

# the catalogued unusual answers' saves: per-row tensors copied, made contiguous or widened
_BOOLEAN_SAVE = "ctx.save_for_backward(logits, rows, kept_targets, lse)"
_LOG_SOFTMAX_SAVE = "ctx.save_for_backward(logits, target)"
_FLOAT_MASK_SAVE = "ctx.save_for_backward(logits, lse, t, mask)"
_LIGER_SAVE = "ctx.save_for_backward(X, lse, torch.where(valid, Y, 0), valid)"
EQUIVALENTS += [
    EquivalentMutant("CrossEntropy", "add_copy", _BOOLEAN_SAVE,
                     _BOOLEAN_SAVE.replace("lse)", "lse.contiguous())"), _ROW_CONTIGUOUS),
    EquivalentMutant("CrossEntropy", "add_copy", _BOOLEAN_SAVE,
                     _BOOLEAN_SAVE.replace("rows,", "rows.contiguous(),"),
                     "rows, nonzero().squeeze(1) of a fresh (M, 1) result, is contiguous: "
                     ".contiguous() returns it"),
    EquivalentMutant("CrossEntropy", "save_copy", _LOG_SOFTMAX_SAVE,
                     _LOG_SOFTMAX_SAVE.replace("target)", "target.clone())"),
                     "a copy of the (N,) target: a saved tensor of N elements, as the contract "
                     "allows, with the same values"),
    EquivalentMutant("CrossEntropy", "add_copy", _CE_SAVE,
                     _CE_SAVE.replace("counted)", "counted.contiguous())"), _ROW_CONTIGUOUS),
    EquivalentMutant("CrossEntropy", "save_copy", _CE_SAVE,
                     _CE_SAVE.replace("counted)", "counted.clone())"), _ROW_COPY),
    EquivalentMutant("SmoothedCrossEntropy", "save_widened", _FLOAT_MASK_SAVE,
                     _FLOAT_MASK_SAVE.replace("lse,", "lse.double(),"), _ROW_WIDENED),
    EquivalentMutant("SmoothedCrossEntropy", "save_copy", _LIGER_SAVE,
                     _LIGER_SAVE.replace("lse,", "lse.clone(),"), _ROW_COPY),
    EquivalentMutant("linear_cross_entropy", "save_copy",
                     "ctx.save_for_backward(gx if gx is None else gx.to(x.dtype),",
                     "ctx.save_for_backward(gx if gx is None else gx.to(x.dtype).clone(),",
                     _GRADIENT_COPY),
]

# review 53's counted rows by index_select
_INDEX_SELECT_LOSS = ("loss = (torch.logsumexp(z, 1) - z.gather(1, target[rows, None]).squeeze(1))"
                      ".mean()")
EQUIVALENTS += [
    EquivalentMutant("CrossEntropy", "flip_keepdim", _INDEX_SELECT_LOSS,
                     _INDEX_SELECT_LOSS.replace("logsumexp(z, 1)", "logsumexp(z, 1, keepdim=True)"),
                     "(M, 1) minus (M,) broadcasts to (M, M), and the mean of lse_i - t_j over all "
                     "pairs is mean(lse) - mean(t): the same loss (an M x M temporary, which the "
                     "contract does not bound), and backward does not read it"),
    EquivalentMutant("CrossEntropy", "add_copy", "return loss", "return loss.clone()",
                     "the loss returned is a copy of a fresh scalar, the same value; nothing saved "
                     "refers to it"),
    EquivalentMutant("CrossEntropy", "add_copy", "return g, None, None",
                     "return g.clone(), None, None",
                     "g is a fresh tensor backward just made: its copy holds the same gradient, "
                     "and the contract bounds what forward saves, not backward's temporaries"),
]

# review 53's and review 57's grad-mode flag with torch.split: grad_weight copied as it is saved,
# and the -1 of the one-hot added by scatter_add_ from a src wider than its index
_SCATTER_WIDER = ("scatter_add_ reads src only where index has an entry: index is (rows, 1), "
                  "so src's second column is never read")
_FULL = "G.scatter_add_(1, tc[:, None], torch.full((len(tc), 1), -1.0, dtype=acc,"
_ONES = "G.scatter_add_(1, tc[:, None], -torch.ones(len(tc), 1, dtype=acc, device=x.device))"
_GW_SAVE = "ctx.save_for_backward(gx, None if gw is None else gw.to(weight.dtype))"
EQUIVALENTS += [
    EquivalentMutant("linear_cross_entropy", "save_copy", _GW_SAVE,
                     _GW_SAVE.replace("weight.dtype))", "weight.dtype).clone())"), _GRADIENT_COPY),
    EquivalentMutant("linear_cross_entropy", "nudge_constant", _FULL,
                     _FULL.replace("(len(tc), 1)", "(len(tc), 2)"), _SCATTER_WIDER),
    EquivalentMutant("linear_cross_entropy", "nudge_constant", _ONES,
                     _ONES.replace("len(tc), 1,", "len(tc), 2,"), _SCATTER_WIDER),
]

# SmoothedCrossEntropy's unusual answers (smoothed_cross_entropy, review 53): per-row tensors and
# masks saved as copies, made contiguous, widened or, for a 0/1 mask, narrowed
_MASK_NARROWED = ("a 0/1 mask holds its values exactly in float16 or float32: the same N "
                  "elements, and backward multiplies or selects by it all the same")
_Q_SAVE = "ctx.save_for_backward(logits, lse, target)"
_SAVED = {(_LIGER_SAVE, "valid)"): ("clone", "contiguous", "double", "float", "half"),
          (_LIGER_SAVE, "lse,"): ("contiguous", "double"),
          (_LIGER_SAVE, "0),"): ("clone",),
          (_FLOAT_MASK_SAVE, "lse,"): ("clone", "contiguous"),
          (_FLOAT_MASK_SAVE, "t,"): ("clone", "contiguous"),
          (_FLOAT_MASK_SAVE, "mask)"): ("clone", "contiguous", "double"),
          (_Q_SAVE, "lse,"): ("clone", "contiguous", "double"),
          (_Q_SAVE, "target)"): ("clone", "contiguous")}
_OPERATORS = {"clone": ("save_copy", _ROW_COPY), "contiguous": ("add_copy", _ROW_CONTIGUOUS),
              "double": ("save_widened", _ROW_WIDENED), "float": ("save_narrowed", _MASK_NARROWED),
              "half": ("save_narrowed", _MASK_NARROWED)}
for (_line, _name), _methods in _SAVED.items():
    for _method in _methods:
        _operator, _reason = _OPERATORS[_method]
        EQUIVALENTS.append(EquivalentMutant(
            "SmoothedCrossEntropy", _operator, _line,
            _line.replace(f" {_name}", f" {_name[:-1]}.{_method}(){_name[-1]}", 1), _reason))
_CLAMP = "t = target.clamp(min=0) * (target != ignore_index)"
_Q_FULL = "1, t[:, None], torch.full((len(t), 1), 1.0 - label_smoothing, dtype=logits.dtype,"
_Q_FULL_BACKWARD = "torch.full((len(target), 1), 1.0 - ctx.eps, dtype=logits.dtype,"
EQUIVALENTS += [
    EquivalentMutant("SmoothedCrossEntropy", "nudge_constant", _CLAMP,
                     _CLAMP.replace("min=0", "min=-1"),
                     "only an ignored row's target can be negative, and the mask multiplies it "
                     "by 0 either way"),
    EquivalentMutant("SmoothedCrossEntropy", "nudge_constant", _Q_FULL,
                     _Q_FULL.replace("(len(t), 1)", "(len(t), 2)"), _SCATTER_WIDER),
    EquivalentMutant("SmoothedCrossEntropy", "nudge_constant", _Q_FULL_BACKWARD,
                     _Q_FULL_BACKWARD.replace("(len(target), 1)", "(len(target), 2)"),
                     _SCATTER_WIDER),
]

# CrossEntropy's unusual answers, every mutant (--cap 0, review 57 round C): per-row tensors
# saved as copies, made contiguous, widened or narrowed (a 0/1 mask), and three no-op edits
_TARGETS_COPY = ("a copy of an (N,) or (M,) integer tensor forward just made or was given: a "
                 "saved tensor of at most N elements, as the contract allows, the same values")
_TARGETS_CONTIGUOUS = ("target and the per-row tensors forward makes are 1-D and contiguous: "
                       ".contiguous() returns them")
_CE_ROWS = {(_BOOLEAN_SAVE, "rows,"): ("clone",), (_BOOLEAN_SAVE, "kept_targets,"):
            ("clone", "contiguous"), (_BOOLEAN_SAVE, "lse)"): ("clone",),
            (_CE_SAVE, "lse,"): ("clone", "contiguous"),
            (_CE_SAVE, "safe_target,"): ("clone", "contiguous"),
            (_CE_SAVE, "counted)"): ("double", "float", "half"),
            ("ctx.save_for_backward(logits.detach(), target)", "target)"): ("clone", "contiguous"),
            (_LOG_SOFTMAX_SAVE, "target)"): ("contiguous",)}
_CE_REASONS = {"clone": ("save_copy", _TARGETS_COPY),
               "contiguous": ("add_copy", _TARGETS_CONTIGUOUS),
               "double": ("save_widened", _ROW_WIDENED), "float": ("save_narrowed", _MASK_NARROWED),
               "half": ("save_narrowed", _MASK_NARROWED)}
for (_line, _name), _methods in _CE_ROWS.items():
    for _method in _methods:
        _operator, _reason = _CE_REASONS[_method]
        EQUIVALENTS.append(EquivalentMutant(
            "CrossEntropy", _operator, _line,
            _line.replace(f" {_name}", f" {_name[:-1]}.{_method}(){_name[-1]}", 1), _reason))
_PICKED = "loss = (lse - sub.gather(1, kept_targets[:, None])[:, 0]).mean()"
_SCALE = "scale = grad_output * counted / counted.sum()"
EQUIVALENTS += [
    EquivalentMutant("CrossEntropy", "add_copy", "return grad, None, None",
                     "return grad.clone(), None, None",
                     "grad is a fresh tensor backward just made: its copy is the same gradient"),
    EquivalentMutant("CrossEntropy", "nudge_constant", _PICKED,
                     _PICKED.replace("[:, 0]", "[:, -1]"),
                     "gather with an (M, 1) index gives (M, 1): column -1 is column 0"),
    EquivalentMutant("CrossEntropy", "swap_arithmetic", _SCALE,
                     _SCALE.replace("grad_output * counted", "grad_output / counted"),
                     "a counted row divides by True (1), as it multiplied; an ignored row's inf "
                     "or nan is replaced by 0 by the torch.where that returns the gradient"),
    EquivalentMutant("CrossEntropy", "change_dim", _INDEX_SELECT_LOSS,
                     _INDEX_SELECT_LOSS.replace("squeeze(1)", "squeeze(0)"),
                     "the gathered (M, 1) stays (M, 1) (or (1,) at M = 1), and lse - it "
                     "broadcasts to (M, M), whose mean is mean(lse) - mean(t): the same loss, "
                     "as with keepdim above; backward does not read it"),
]

EQUIVALENTS += [
    EquivalentMutant('linear_cross_entropy', 'save_copy',
                     'ctx.save_for_backward(gx.to(x.dtype) if want_x else None, '
                     'gw.to(weight.dtype) if want_w else None)',
                     'ctx.save_for_backward(gx.to(x.dtype) if want_x else None, '
                     'gw.to(weight.dtype).clone() if want_w else None)', _GRADIENT_COPY),
]

_CCE_SAVE = "ctx.save_for_backward(x, weight, target, lse)"
_CCE_CHUNK = ("chunk_size only sets how backward splits the rows, not any value: a chunk size "
              "left by another call gives the same gradients")
_CCE_INPUT_COPY = ("Cut Cross-Entropy saves the inputs themselves: a copy of x, weight or target "
                   "is still of an input's shape and dtype (the contract's bound), same values")
EQUIVALENTS += [
    EquivalentMutant('linear_cross_entropy', 'ctx_to_class_attribute',
                     'ctx.chunk_size = chunk_size\nc = ctx.chunk_size',
                     'LinearCrossEntropy.chunk_size = chunk_size\nc = LinearCrossEntropy.chunk_size',
                     reason=_CCE_CHUNK),
    EquivalentMutant('linear_cross_entropy', 'ctx_to_global',
                     'ctx.chunk_size = chunk_size\nc = ctx.chunk_size',
                     'global _shared_chunk_size; _shared_chunk_size = chunk_size\n'
                     'c = _shared_chunk_size', reason=_CCE_CHUNK),
    EquivalentMutant('linear_cross_entropy', 'save_copy', _CCE_SAVE,
                     'ctx.save_for_backward(x, weight.clone(), target, lse)', reason=_CCE_INPUT_COPY),
    EquivalentMutant('linear_cross_entropy', 'add_copy', _CCE_SAVE,
                     'ctx.save_for_backward(x.contiguous(), weight, target, lse)',
                     reason=_CCE_INPUT_COPY),
    EquivalentMutant('linear_cross_entropy', 'add_copy', _CCE_SAVE,
                     'ctx.save_for_backward(x, weight, target.contiguous(), lse)',
                     reason=_CCE_INPUT_COPY),
]

# the (N, 2) stack of the log-sum-exp and the counted mask (a catalogued unusual answer)
_STACKED_SAVE = ("ctx.save_for_backward(logits, torch.stack([lse, counted.to(lse.dtype)], 1), "
                 "safe_target)")
EQUIVALENTS.append(EquivalentMutant(
    "CrossEntropy", "save_copy", _STACKED_SAVE,
    _STACKED_SAVE.replace("1), safe_target)", "1).clone(), safe_target)"),
    "a copy of the (N, 2) stack torch.stack just made replaces it in the saved set: the same "
    "O(N) elements, the same values, the stack itself freed"))
