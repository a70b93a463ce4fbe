"""FlashAttention's accumulators: long key and query loops, in float16, where whatever was
accumulated in the input's dtype (the running output, D = rowsum(dO * O), dQ, dK, dV) shows
against a float64 reference, and which product was rounded to half when one was."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ...errors import GradingError
from .attention import attention_reference
from .flash_probes import NAME, block_size, flash_values

# the accumulation cases' tolerances, relative to |value| + 1: long_key_loop at the class's
# BLOCK (the domain's case) and at BLOCK 16, long_query_loop; and the lesson's solution's own
# errors there, measured in float16 (quoted in the messages)
ACCUMULATION, KEY_LOOP, LONG_QUERIES = 2.5e-4, 1.5e-4, 1e-3
SOLUTION = {"output": 5.2e-5, "grad_Q": 7.4e-5, "grad_K": 6.3e-5, "grad_V": 4.6e-5}
LONG_QUERY_SOLUTION = 3.0e-4


def long_key_loop(device, dtype) -> dict:
    """1024 keys for each of 64 queries (16 key blocks of 64, 64 of 16). In the second batch
    element every key has the same value row (4 times a random one) and K is shifted by 1: the
    output is that row exactly and grad_Q, grad_K are 0, so whatever was accumulated in the
    input's dtype shows. Measured in float16 against float64, relative to |value| + 1, at BLOCK
    64: the lesson's solution is off by 7.4e-5 at most; with its running output kept in
    float16, the output by 1.6e-3; with D = rowsum(dO * O) in float16, grad_Q by 5.1e-3 (the
    output exact). At BLOCK 16 (64 key blocks) the solution is still off by 7.4e-5, while dQ
    accumulated in float16 is off by 2.9e-4 (key blocks visited first to last) or 5.6e-4 (last
    to first); at BLOCK 64 the latter was only 1.75e-4."""
    made = flash_values((2,), 64, 1024, 16, 16, device, seed=4)
    V, K = made["V"].clone(), made["K"].clone()
    V[1] = (4 * V[1, :1]).expand_as(V[1])
    K[1] += 1
    return {**made, "Q": made["Q"].to(dtype), "K": K.to(dtype), "V": V.to(dtype),
            "scale": 0.25}


def long_query_loop(device, dtype) -> dict:
    """16 query blocks of 64 for 64 keys, the second batch element's queries all one row, so
    that they share one row of probabilities; with ``query_loop_grad_output`` there (one row of
    dO for the first 512 queries, minus it for the rest) grad_K and grad_V are 0, sums over the
    query blocks that grow to about 8 and come back. Measured in float16 against float64,
    relative to |value| + 1: the lesson's solution is off by 3.0e-4 at most; with dK, dV kept
    in float16, grad_K by 5.0e-2 (1.2e-3 on the random first element alone)."""
    made = flash_values((2,), 1024, 64, 16, 16, device, seed=4)
    Q = made["Q"].clone()
    Q[1] = Q[1, :1].expand_as(Q[1])
    return {**made, "Q": Q.to(dtype), "K": made["K"].to(dtype), "V": made["V"].to(dtype),
            "scale": 0.25}


def query_loop_grad_output(shape, device) -> torch.Tensor:
    """Random dO, but in the second batch element one row for the first half of the queries
    and minus it for the second (float16 numbers, so that casting keeps them)."""
    grad_output = torch.randn(shape, generator=torch.Generator().manual_seed(5),
                              dtype=torch.float64)
    half = shape[-2] // 2
    row = grad_output[1, :1]
    grad_output[1] = torch.cat([row.expand(half, -1), -row.expand(shape[-2] - half, -1)])
    return grad_output.half().double().to(device)


def _errors(function, values: dict, wide: dict, grad_output) -> dict | None:
    """The learner's output and gradients on ``values``, each's largest error against the
    float64 reference relative to |value| + 1; None where the code raises."""
    try:
        inputs = {n: v.clone().requires_grad_() if isinstance(v, torch.Tensor) else v
                  for n, v in values.items()}
        output = function.apply(*inputs.values())
        grads = torch.autograd.grad(output, [inputs[n] for n in "QKV"],
                                    grad_output.to(output.dtype))
    except Exception:  # the learner's code may raise anything: no probe, no named cause
        return None
    errors = {}
    for name, got in zip(("output", "grad_Q", "grad_K", "grad_V"), (output, *grads)):
        true = wide[name]
        if not isinstance(got, torch.Tensor) or got.shape != true.shape:
            return None
        errors[name] = ((got.detach().double() - true).abs() / (true.abs() + 1)).max().item()
    return errors


class _HalfProducts(TorchDispatchMode):
    """(result's last two sizes, the size summed over) of every matrix product whose result
    is float16."""

    def __init__(self):
        super().__init__()
        self.products: list[tuple] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if name in ("mm", "bmm", "addmm", "baddbmm") and result.dtype == torch.float16:
            first = args[1] if name in ("addmm", "baddbmm") else args[0]
            self.products.append((tuple(result.shape[-2:]), first.shape[-1]))
        return result


def dp_in_half(function) -> bool:
    """Does backward leave a tile of dP = dO V^T in float16? On float16 inputs with d 3 and
    dv 5, in tiles of 4: dP's tiles are the only products summed over the 5 value columns
    whose result has neither d nor dv columns (the scores sum over d; dQ, dK and dV over a
    tile's rows or keys). False where the code raises."""
    values = flash_values((2,), 8, 8, 3, 5, "cpu", seed=7, dtype=torch.float16)
    try:
        with block_size(function, 4):
            inputs = {n: v.clone().requires_grad_() if isinstance(v, torch.Tensor) else v
                      for n, v in values.items()}
            output = function.apply(*inputs.values())
            with _HalfProducts() as half:
                torch.autograd.grad(output, [inputs["Q"], inputs["K"]],
                                    torch.ones_like(output))
    except Exception:  # noqa: BLE001 - the learner's code may raise anything: no probe
        return False
    return any(inner == 5 and shape[-1] not in (3, 5) for shape, inner in half.products)


def check_accumulation(function, device) -> None:
    """float16 inputs accumulate in float32: on ``long_key_loop`` and ``long_query_loop``, a
    value off by more than the case's tolerance is named a precision loss only when the same
    code in float32 matches to 1e-5; otherwise the domain's check says which value differs
    (the key loop), or it is said to be off (the query loop, no domain case)."""
    keys = torch.randn((2, 64, 16), generator=torch.Generator().manual_seed(5),
                       dtype=torch.float64).to(device)
    with block_size(function, 16):  # 64 key blocks: dQ kept in float16 rounds 64 times
        _check_case(function, long_key_loop(device, torch.float16), keys, KEY_LOOP, False)
    _check_case(function, long_query_loop(device, torch.float16),
                query_loop_grad_output((2, 1024, 16), device), LONG_QUERIES, True)


def _check_case(function, values: dict, grad_output, tolerance: float, queries: bool) -> None:
    """One case of ``check_accumulation``, against the float64 reference."""
    Lq, Lk = values["Q"].shape[-2], values["K"].shape[-2]
    fresh = {n: v.double().requires_grad_() if isinstance(v, torch.Tensor) else v
             for n, v in values.items()}
    expected = attention_reference(fresh["Q"], fresh["K"], fresh["V"], fresh["scale"])
    truth = dict(zip(("grad_Q", "grad_K", "grad_V"), torch.autograd.grad(
        expected, [fresh[n] for n in "QKV"], grad_output)), output=expected.detach())
    errors = _errors(function, values, truth, grad_output)
    if errors is None or max(errors.values()) <= tolerance:
        return
    what = next(n for n, e in errors.items() if e > tolerance)
    own = LONG_QUERY_SOLUTION if queries else SOLUTION[what]
    off = (f"{NAME}'s {what} in float16 is off by {errors[what]:.3g} (relative to |value| + 1) "
           f"over {Lk} keys for {Lq} queries: the tolerance is {tolerance:g}, and the lesson's "
           f"solution, which accumulates in float32, is off by {own:.2g} here")
    single = {n: v.float() if isinstance(v, torch.Tensor) else v for n, v in values.items()}
    wide = _errors(function, single, truth, grad_output)
    if wide is None or wide[what] > 1e-5:  # wrong in float32 too: no precision loss proven
        if queries:
            raise GradingError(off)
        return
    advice = ("keep the running output, maximum and sum in float32 across the key loop and "
              "cast O at the end" if what == "output" else
              "the output matches, and grad_K and grad_V are sums over the query blocks: "
              "accumulate dK and dV in float32 across the query loop, casting at the end"
              if queries and what in ("grad_K", "grad_V") else
              "the output matches, but grad_Q and grad_K lose precision together: every "
              "tile's dP = dO V^T is a product of float16 blocks left in float16; widen the "
              "blocks of dO and V to float32 before the product"
              if what == "grad_Q" and errors["grad_K"] > tolerance and dp_in_half(function)
              else
              "the output matches, but grad_Q and grad_K both lose precision: "
              "what every tile's dS takes from outside the tiles, D = rowsum(dO * O), is "
              "rounded to float16; widen dO and O to float32 before the product and its sum"
              if what == "grad_Q" and errors["grad_K"] > tolerance else
              "the output, grad_K and grad_V match, and grad_Q alone loses precision: dQ is "
              "summed over the key blocks in float16; accumulate it in float32 "
              "across the key loop, casting at the end" if what == "grad_Q" else
              "the output matches, so backward keeps something in float16: compute "
              "D = rowsum(dO * O) and accumulate dQ, dK, dV in float32, casting at the end")
    raise GradingError(f"{off}; yours matches in float32 (to {wide[what]:.1g}): a precision "
                       f"loss, not a wrong formula; {advice}", mistake={
                           "keep the running output": f"{NAME}/running-output-in-half",
                           "sums over the query blocks": f"{NAME}/dk-dv-accumulated-in-half",
                           "both lose precision": f"{NAME}/row-sum-d-in-half",
                           "every tile's dP": f"{NAME}/dp-in-half",
                           "grad_Q alone loses": f"{NAME}/backward-accumulates-in-half",
                           "backward keeps": f"{NAME}/backward-accumulates-in-half"})
