"""Lesson 11's transfer exercise: SmoothedCrossEntropy, F.cross_entropy with label smoothing
plus PaLM's z-loss (z_loss times the mean over the counted rows of logsumexp(logits) ** 2),
graded as CrossEntropy is: values, gradients, ignored rows, logits of magnitude 1e4, what it
saves, None for everything but the logits."""

import torch
import torch.nn.functional as F

from ...checks import (case, check_backward_by_hand, check_gradcheck, check_is_function,
                      check_no_ctx_tensors, check_values_and_gradients)
from ...contract import check_each_input_alone, covers
from ...domain import Case, Constant, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from .cross_entropy_mistakes import ignore_index_past_classes
from .fused_loss import (IGNORE_INDEX, STABLE_ROWS, _rows_apart, check_not_a_copy, guessed,
                         check_saved_precision, strided_logits)
from .smoothed_terms import NAME, SMOOTHED, loss_and_grad, smoothed_cross_entropy, which_term

def sce_values(rows, classes, device, *, ignored=(), ignore_index=-100, smoothing=0.1,
               z_loss=1e-2, seed=0, magnitude=3.0, dtype=torch.float64) -> dict:
    target = torch.randint(0, classes, (rows,), generator=torch.Generator().manual_seed(seed))
    target[list(ignored)] = ignore_index
    return {"logits": magnitude * sample((rows, classes), device, seed=seed + 1, dtype=dtype),
            "target": target.to(device), "ignore_index": ignore_index,
            "label_smoothing": smoothing, "z_loss": z_loss}


def describe(values: dict) -> str:
    ignored = int((values["target"] == values["ignore_index"]).sum())
    layout = "" if values["logits"].is_contiguous() else " (transposed in memory)"
    return (f"logits of shape {tuple(values['logits'].shape)}{layout}, "
            f"{str(values['logits'].dtype)[6:]}, {ignored} rows ignored "
            f"(ignore_index={values['ignore_index']}), label_smoothing="
            f"{values['label_smoothing']:g}, z_loss={values['z_loss']:g}")


def _variants(values: dict) -> dict:
    """Losses of two likely misreadings of the contract: the smoothing mass spread over the
    C - 1 classes that are not the target (fairseq's convention), and the z-loss averaged over
    every row, ignored ones included."""
    logits, target = values["logits"].detach(), values["target"]
    eps, z = values["label_smoothing"], values["z_loss"]
    counted = target != values["ignore_index"]
    N, C = logits.shape
    lse = torch.logsumexp(logits, -1)
    picked = logits.gather(1, torch.where(counted, target, 0)[:, None]).squeeze(1)
    variants = {}
    if eps and C > 1:
        others = (logits.sum(-1) - picked) / (C - 1)
        rows = lse - (1 - eps) * picked - eps * others + z * lse ** 2
        variants["other classes"] = rows[counted].mean()
    if z:
        variants["lse not squared"] = (smoothed_cross_entropy(logits, target,
                                                              values["ignore_index"], eps, 0.0)
                                       + z * lse[counted].mean())
    if z and not counted.all():
        variants["every row"] = (smoothed_cross_entropy(logits, target, values["ignore_index"],
                                                        eps, 0.0) + z * (lse ** 2).mean())
        variants["every row, over M"] = (smoothed_cross_entropy(
            logits, target, values["ignore_index"], eps, 0.0)
            + z * (lse ** 2).sum() / counted.sum())
        variants["counted rows, over N"] = (smoothed_cross_entropy(
            logits, target, values["ignore_index"], eps, 0.0) + z * (lse ** 2)[counted].sum() / N)
    if eps and not counted.all():
        variants["smoothing over every row"] = ((1 - eps) * F.cross_entropy(
            logits, target, ignore_index=values["ignore_index"]) + eps * (lse - logits.mean(-1))
            .mean() + z * (lse ** 2)[counted].mean())
    return variants


def recognise(function, values: dict) -> str | None:
    """The named mistakes: dividing by N, a smoothing or z-loss term missing from grad, the
    smoothing spread over C - 1 classes, the z-loss over every row, a target that cannot be
    gathered when ignore_index is past the classes."""
    got = loss_and_grad(function, values)
    if got is None:
        return ignore_index_past_classes(NAME, values)
    if any(t.dtype != values["logits"].dtype for t in got):
        return None  # the dtype hint stands
    truth = SMOOTHED.reference(values["logits"].detach(), *list(values.values())[1:])
    for variant, loss in _variants(values).items():
        if not torch.allclose(loss, truth) and torch.allclose(got[0], loss):
            if variant == "other classes":
                return (f"{NAME} spreads label_smoothing over the C - 1 classes that are not "
                        "the target; PyTorch's smoothed target puts label_smoothing / C on "
                        "every class, the target included (so 1 - label_smoothing + "
                        "label_smoothing / C on the target)")
            if variant == "lse not squared":
                return (f"{NAME} adds z_loss * lse, not z_loss * lse ** 2: PaLM's z-loss "
                        "squares the log-sum-exp")
            counted = values["target"] != values["ignore_index"]
            if variant == "every row, over M":
                return (f"{NAME}'s z-loss counts the ignored rows: its loss is the one a "
                        f"sum of lse ** 2 over all {len(counted)} rows "
                        f"({int((~counted).sum())} of them ignored) gives, divided by "
                        f"M = {int(counted.sum())}, the number of counted rows")
            M, N = int(counted.sum()), len(counted)
            if variant == "smoothing over every row":
                return (f"{NAME} averages the smoothing term over every row, N = {N}, the "
                        "ignored ones included: like the cross-entropy, it is the mean over "
                        f"the M = {M} counted rows")
            if variant == "counted rows, over N":
                return (f"{NAME}'s z-loss divides the counted rows' sum of lse ** 2 by N = {N}, "
                        f"all the rows, where the mean is over the M = {M} counted rows")
            return (f"{NAME} averages the z-loss over every row; ignored rows do not count "
                    "for it either: the mean of lse ** 2 is over the counted rows, as the "
                    "cross-entropy's is")
    loss, grad = got
    counted = values["target"] != values["ignore_index"]
    logits = values["logits"].detach()
    M, N, C = counted.sum(), len(counted), logits.shape[1]
    truth_logits = logits.clone().requires_grad_()
    true_grad, = torch.autograd.grad(SMOOTHED.reference(truth_logits, *list(values.values())[1:]),
                                     truth_logits)
    if M < N and torch.allclose(grad, true_grad * M / N):
        return (f"{NAME} divides by N, all the rows, instead of the number of counted rows "
                "(target != ignore_index)")
    lse = torch.logsumexp(logits, -1, keepdim=True)
    probs = torch.exp(logits - lse)
    weight = counted[:, None] / M
    eps, z = values["label_smoothing"], values["z_loss"]
    z_term = 2 * z * lse * probs * weight  # the z-loss's part of the gradient, at g = 1
    tripled = loss_and_grad(function, values, 3.0) if torch.allclose(grad, true_grad) else None
    if tripled is not None and not torch.allclose(tripled[1], 3 * true_grad):
        if z and torch.allclose(tripled[1], 3 * true_grad - 2 * z_term):
            return (f"{NAME}'s z-loss gradient is not multiplied by grad_output: the gradient "
                    "is right for grad_output = 1, but for a loss times 3 only the "
                    "cross-entropy part is 3 times larger, the z-loss part stays as it was")
        return (f"{NAME}'s gradient is right for grad_output = 1 but not for a loss times 3: "
                "some term of your backward is not multiplied by grad_output")
    if z and torch.allclose(grad, true_grad - z_term + 2 * z * lse * weight):
        return (f"{NAME}'s z-loss gradient is 2 * z_loss * lse on every class of a row, the "
                "same number for each: the chain rule's d lse / dz factor is missing from "
                "d(lse ** 2)/dz")
    if eps and N != C and torch.allclose(grad, true_grad + eps / C * weight - eps / N * weight):
        return (f"{NAME}'s smoothing term in the gradient is label_smoothing / N, with N = "
                f"{N} the number of rows, where the loss's is label_smoothing / C, C = {C} "
                "the number of classes (logits.shape[1])")
    if eps and torch.allclose(grad, true_grad + eps / C * weight):
        return (f"{NAME}'s gradient misses the smoothing term: every entry of a counted row is "
                "off by the same amount; differentiate the row mean of -log p too (Hint 1), "
                "and check that piece against Hint 2's numbers")
    one_hot = F.one_hot(torch.where(counted, values["target"], 0), C).to(grad.dtype)
    if eps and torch.allclose(grad, true_grad - eps * (one_hot - 1 / C) * weight):
        return (f"{NAME}'s gradient is the unsmoothed loss's: your backward ignores "
                "label_smoothing (its loss may use it); weight the pieces of the gradient as "
                "your forward weights the pieces of the loss (Hint 2)")
    if eps and torch.allclose(grad, true_grad - eps * (probs - 1 / C) * weight):
        return (f"{NAME}'s gradient has (1 - label_smoothing) times exercise 1's, and nothing "
                "for the smoothing term: the row mean of -log p has a gradient too; check "
                "that piece against Hint 2's numbers")
    if z and torch.allclose(grad, true_grad - 2 * z * lse * probs * weight):
        return (f"{NAME}'s gradient misses the z-loss term: differentiate lse ** 2 through lse, "
                "as in exercise 1 (Hint 2 gives its value for one row)")
    if z and torch.allclose(grad, true_grad - z * lse * probs * weight):
        return (f"{NAME}'s z-loss gradient is half what it should be: the square's derivative "
                "has a factor 2")
    if z and not torch.allclose(lse, torch.ones_like(lse)) and \
            torch.allclose(grad, true_grad - 2 * z * (lse - 1) * probs * weight):
        return (f"{NAME}'s z-loss gradient is 2 * z_loss * softmax, with nothing for the "
                "log-sum-exp itself: it is right only for a row whose log-sum-exp is 1; what "
                "does the chain rule give for d(lse ** 2)/dz (Hint 2 gives it for one row)?")
    if not torch.allclose(loss, truth):
        return which_term(function, values)  # the hints below are about the gradient alone
    ignored = ~counted
    if ignored.any() and torch.allclose(grad[counted], true_grad[counted]) and \
            grad[ignored].abs().max() > 0:
        row = int(ignored.nonzero()[0])
        return (f"{NAME}'s gradient is right on every counted row, but not 0 on the ignored "
                f"ones (row {row} has target == ignore_index): an ignored row does not count, "
                "so multiply its whole gradient row by 0")
    lse_only = true_grad - z * (2 * lse - 1) * probs * weight  # z * softmax, d(z * lse)
    if z and not torch.allclose(lse_only, true_grad) and torch.allclose(grad, lse_only):
        return (f"{NAME}'s z-loss gradient is the derivative of z_loss * lse, but the loss "
                "has z_loss * lse ** 2: differentiate the square through lse (Hint 2 gives "
                "its value for one row)")
    if eps and C > 1:
        target = torch.where(counted, values["target"], 0)
        others = 1 - F.one_hot(target, C).to(grad.dtype)
        spread = true_grad + eps * (1 / C - others / (C - 1)) * weight  # fairseq's gradient
        if torch.allclose(grad, spread):
            return (f"{NAME}'s gradient spreads label_smoothing over the C - 1 classes that "
                    "are not the target (fairseq's convention), though its loss does not: "
                    "PyTorch's smoothed target puts label_smoothing / C on every class, the "
                    "target included: differentiate the loss your forward computes")
    return which_term(function, values)


SCE_MISTAKES = {  # a phrase of each hint recognise proves, and its stable id (first match)
    "(fairseq's convention), though its loss does not":
        f"{NAME}/gradient-smoothing-over-other-classes",
    "spreads label_smoothing over the C - 1 classes": f"{NAME}/smoothing-over-other-classes",
    "adds z_loss * lse, not": f"{NAME}/z-loss-not-squared",
    "averages the z-loss over every row": f"{NAME}/z-loss-over-every-row",
    "averages the smoothing term over every row": f"{NAME}/smoothing-over-every-row",
    "divides the counted rows' sum of lse ** 2 by N": f"{NAME}/z-loss-divided-by-all-rows",
    "divides by N, all the rows": f"{NAME}/divides-by-all-rows",
    "misses the smoothing term": f"{NAME}/misses-smoothing-term",
    "your backward ignores label_smoothing": f"{NAME}/gradient-ignores-smoothing",
    "nothing for the smoothing term": f"{NAME}/misses-mean-log-p-term",
    "misses the z-loss term": f"{NAME}/misses-z-loss-term",
    "half what it should be": f"{NAME}/z-loss-gradient-halved",
    "not 0 on the ignored ones": f"{NAME}/ignored-rows-get-gradient",
    "the derivative of z_loss * lse": f"{NAME}/z-loss-differentiated-as-lse",
    "z-loss counts the ignored rows": f"{NAME}/z-loss-over-every-row",
    "with nothing for the log-sum-exp itself": f"{NAME}/z-loss-gradient-without-lse",
    "is past the last class": f"{NAME}/ignored-target-not-a-class",
    "z-loss gradient is not multiplied by grad_output": f"{NAME}/z-loss-ignores-grad-output",
    "some term of your backward is not multiplied": f"{NAME}/term-ignores-grad-output",
    "the same number for each": f"{NAME}/z-loss-gradient-without-softmax",
    "label_smoothing / N, with N": f"{NAME}/smoothing-over-rows",
    "right without z-loss and right without": f"{NAME}/terms-combined-wrongly",
    "right without z-loss and wrong with it": f"{NAME}/z-loss-term-wrong",
    "right without label smoothing and wrong": f"{NAME}/smoothing-term-wrong",
}


def check_saved(forward, values: dict) -> None:
    rows = values["logits"].shape[0]
    for saved in forward.saved:
        if saved.role != "input logits" and saved.tensor.numel() > rows:
            check_not_a_copy(NAME, saved, values["logits"])
            raise GradingError(
                f"{NAME} saves a {str(saved.dtype)[6:]} tensor of shape {saved.shape} besides "
                f"the logits ({guessed(saved.dtype)}): {saved.tensor.numel()} elements kept for "
                f"backward at N={rows}, where the contract allows the logits and tensors of at "
                "most N elements; what does your backward read from it, and could it rebuild "
                "that from the logits?", mistake=f"{NAME}/saves-probabilities")


def check_nones(function, values: dict) -> None:
    """None for target (autograd would drop a gradient for an integer tensor silently)."""
    returned = []

    def backward(ctx, *grads):
        result = function.backward(ctx, *grads)
        returned.append(result if isinstance(result, tuple) else (result,))
        return result

    probe = type(function.__name__, (function,), {"backward": staticmethod(backward)})
    logits = values["logits"].detach().clone().requires_grad_()
    probe.apply(logits, *list(values.values())[1:]).backward()
    if len(returned[0]) == 5 and returned[0][1] is not None:
        raise GradingError(f"{NAME}.backward returned a gradient for target: return None for "
                           "everything but the logits", mistake=f"{NAME}/gradient-for-target")


def check_case(function, values: dict, *, rtol=1e-5, atol=1e-7) -> None:
    with case(describe(values)):
        try:
            forward, backward = check_values_and_gradients(function, SMOOTHED, values,
                                                           rtol=rtol, atol=atol)
        except GradingError as error:
            hint = recognise(function, values)
            if hint is None:
                raise
            raise GradingError(hint, str(error), mistake=SCE_MISTAKES) from error
        check_no_ctx_tensors(SMOOTHED, forward)
        check_backward_by_hand(SMOOTHED, backward)
        check_saved(forward, values)
        check_nones(function, values)


def check_stable(function, device, dtype) -> None:
    values = sce_values(6, 5, device, seed=7, ignored=(2,), magnitude=1e4, dtype=dtype,
                        z_loss=1e-4)
    with case(describe(values)):
        got = loss_and_grad(function, values)
        if got is not None and not (torch.isfinite(got[0]).all() and torch.isfinite(got[1]).all()):
            raise GradingError(f"{NAME} is not finite at logits of magnitude 1e4, where "
                               "F.cross_entropy is: use the log-sum-exp (shifted by the row's "
                               "maximum), never exp of raw logits or the log of a probability",
                               mistake=f"{NAME}/overflows-at-large-logits")
    tolerance = 1e-5 if dtype == torch.float64 else 1e-4
    check_case(function, values, rtol=tolerance, atol=tolerance)


def check_float64_digits(function, values: dict) -> None:
    """The loss to float64's precision, on gradcheck's inputs and before it: a forward that
    loses digits (a float32 step) passes the value checks' tolerance, and gradcheck's finite
    differences would then blame backward for the forward's rounding."""
    with case(describe(values)):
        with torch.no_grad():
            loss = function.apply(*values.values())
        truth = SMOOTHED.reference(*values.values())
        if loss.dtype == torch.float64 and not torch.allclose(loss, truth, rtol=1e-12, atol=0):
            error = abs((loss - truth) / truth).item()
            raise GradingError(
                f"{NAME}'s forward loses float64's digits: its loss is off by {error:.1g} "
                "relative, about float32's precision, so some step of the forward runs in a "
                "narrower dtype than the float64 logits (gradcheck's finite differences would "
                "blame your backward for it)", mistake=f"{NAME}/forward-loses-float64-digits")


CASES = [  # rows, classes, ignored rows, ignore_index, label_smoothing, z_loss
    (5, 4, (), -100, 0.1, 1e-2), (6, 3, (1, 4), -100, 0.0, 0.0), (7, 5, (0, 2, 3), 2, 0.2, 0.0),
    (4, 6, (), -100, 0.0, 0.5), (1, 5, (), -100, 0.3, 0.1), (9, 7, tuple(range(8)), -1, 0.1, 0.01),
    (4, 1, (), -100, 0.1, 0.1), (6, 4, (0, 3), 4, 0.1, 1e-2), (5, 1, (1, 3), -100, 0.1, 0.1)]


def full(submission, device) -> None:
    function = check_is_function(submission, SMOOTHED)
    check_saved_precision(function, SMOOTHED, sce_values(6, 4, device, ignored=(1,), seed=9))
    for seed, (rows, classes, ignored, ignore_index, smoothing, z) in enumerate(CASES):
        check_case(function, sce_values(rows, classes, device, ignored=ignored,
                                        ignore_index=ignore_index, smoothing=smoothing,
                                        z_loss=z, seed=seed + 10))
    covers("ignored rows, ignore_index=-100")
    covers("ignore_index among the classes")
    covers("ignore_index past the classes")
    check_case(function, strided_logits(sce_values(5, 4, device, ignored=(2,), seed=18)))
    check_each_input_alone(function, SMOOTHED, sce_values(6, 4, device, ignored=(1, 4),
                                                          ignore_index=3, seed=17))
    for dtype in (torch.float64, torch.float32):
        check_stable(function, device, dtype)
    covers("logits of magnitude 1e4")
    check_float64_digits(function, sce_values(4, 3, device, ignored=(1,), seed=30))
    with case("gradcheck"):
        check_gradcheck(function, SMOOTHED, sce_values(4, 3, device, ignored=(1,), seed=30))


LATER_IN_LESSON = True  # the lesson's last exercise
EXERCISES = [
    Exercise(NAME, "11_fused_loss", full,
             example=lambda: tuple(sce_values(5, 4, "cpu", ignored=(1,)).values()),
             domain=Domain(SMOOTHED, lambda device, dtype=torch.float64, seed=0, ignore_index=-100,
                           label_smoothing=0.1, z_loss=1e-2:
                           sce_values(6 - seed % 2, 4, device, ignored=(1,),
                                      ignore_index=ignore_index,
                                      smoothing=label_smoothing, z_loss=z_loss, seed=seed,
                                      dtype=dtype),
                           constants={"ignore_index": IGNORE_INDEX,
                                      "label_smoothing": Constant(0.0, 1.0,
                                                                  "label_smoothing in [0, 1]"),
                                      "z_loss": Constant(0.0, 10.0, "z_loss >= 0",
                                                         also=(1e-4,))},
                           # two calls that count 4 and 3 rows (at ignore_index 3, both 4)
                           per_call_constants=(
                               {"ignore_index": -100, "label_smoothing": 0.0, "z_loss": 0.0},
                               {"ignore_index": 2, "label_smoothing": 1.0, "z_loss": 10.0}),
                           rows_apart=Case(_rows_apart(sce_values), STABLE_ROWS)),
             contract=("ignored rows, ignore_index=-100", "ignore_index among the classes",
                       "ignore_index past the classes", "logits of magnitude 1e4")),
]
