"""Lesson 05's surviving mutants that are no hole (``tools.mutants.listed``): edits that
leave the answer within its contract, and edits of the CUDA random-state lines, which only a
GPU run of grading reaches (``make mutants`` grades on the CPU)."""

from .. import EquivalentMutant

SEQUENTIAL = "checkpoint_sequential"
CHECKPOINT = "CheckpointFunction"
# the lines that keep and restore each CUDA device's random state, as the solution and the
# catalogued answers write them
CUDA_ONLY = ("CUDA only: no CPU run reaches it, as a CPU tensor argument has no CUDA random "
             "state; grading on a GPU fails it")


def _devices_in_a_global(comment: str) -> tuple[str, str]:
    """(before, after) of the edit that keeps the solution's CUDA device list in a global."""
    before = ("ctx.devices = sorted({t.get_device() for t in tensors if t.is_cuda})\n"
              "ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in ctx.devices]\n"
              f"with torch.random.fork_rng(devices=ctx.devices):{comment}\n"
              "for device, state in zip(ctx.devices, ctx.cuda_states):")
    after = before.replace("ctx.devices", "_shared_devices").replace(
        "_shared_devices = ", "global _shared_devices; _shared_devices = ", 1)
    return before, after


EQUIVALENTS = [
    EquivalentMutant(SEQUENTIAL, "add_copy", "return x", "return x.clone()",
                     "the output cloned: the same values, and autograd passes the gradient "
                     "through clone unchanged"),
    EquivalentMutant(SEQUENTIAL, "add_copy", "return h", "return h.clone()",
                     "a segment's output cloned: the same values, and autograd passes the "
                     "gradient through clone unchanged"),
    # the catalogued answer with floor bounds whose last group runs plainly (review 52): one
    # bound too many adds a group of no layer after it, checkpointed
    EquivalentMutant(SEQUENTIAL, "nudge_constant",
                     "bounds = [i * n // segments for i in range(segments + 1)]",
                     "bounds = [i * n // segments for i in range(segments + 2)]",
                     "an extra group of no layer after the last, through CheckpointFunction: an "
                     "identity on the output, which the caller holds anyway, so the same values, "
                     "gradients and memory; every layer still runs once, in `segments` groups"),
    EquivalentMutant(SEQUENTIAL, "drop_statement", "layers = list(layers)", "pass",
                     "the contract's layers are a list or an nn.Sequential, which slice, len "
                     "and iterate alike, so the list() copy changes nothing"),
    EquivalentMutant(CHECKPOINT, "save_copy",
                     "ctx.save_for_backward(torch.get_rng_state(), *(args[i] for i in "
                     "ctx.positions))",
                     "ctx.save_for_backward(torch.get_rng_state().clone(), *(args[i] for i in "
                     "ctx.positions))",
                     "torch.get_rng_state() returns a new tensor, read by nothing else: saving "
                     "a clone of it keeps the same bytes (the original is freed at once)"),
    # CUDA only: check_random_state and check_two_calls (its first call on the GPU, its second
    # on the CPU) fail these where grading has a GPU
    EquivalentMutant(CHECKPOINT, "drop_statement", "torch.cuda.set_rng_state(state, device)",
                     "pass", CUDA_ONLY),
    EquivalentMutant(CHECKPOINT, "drop_statement", "torch.cuda.set_rng_state(cuda_state, device)",
                     "pass", CUDA_ONLY),
    EquivalentMutant(
        CHECKPOINT, "ctx_to_global",
        "ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in ctx.devices]\n"
        "for device, state in zip(ctx.devices, ctx.cuda_states):",
        "global _shared_cuda_states; _shared_cuda_states = [torch.cuda.get_rng_state(d) for d "
        "in ctx.devices]\nfor device, state in zip(ctx.devices, _shared_cuda_states):", CUDA_ONLY),
    EquivalentMutant(
        CHECKPOINT, "ctx_to_global",
        "ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in ctx.devices]\n"
        "for device, cuda_state in zip(ctx.devices, ctx.cuda_states):",
        "global _shared_cuda_states; _shared_cuda_states = [torch.cuda.get_rng_state(d) for d "
        "in ctx.devices]\nfor device, cuda_state in zip(ctx.devices, _shared_cuda_states):",
        CUDA_ONLY),
    EquivalentMutant(CHECKPOINT, "ctx_to_global",
                     *_devices_in_a_global("  # the caller's streams come back after"), CUDA_ONLY),
    EquivalentMutant(
        CHECKPOINT, "ctx_to_global",
        "ctx.devices = sorted({a.get_device() for a in args\n"
        "ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in ctx.devices]\n"
        "with torch.random.fork_rng(devices=ctx.devices):\n"
        "for device, cuda_state in zip(ctx.devices, ctx.cuda_states):",
        "global _shared_devices; _shared_devices = sorted({a.get_device() for a in args\n"
        "ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in _shared_devices]\n"
        "with torch.random.fork_rng(devices=_shared_devices):\n"
        "for device, cuda_state in zip(_shared_devices, ctx.cuda_states):", CUDA_ONLY),
    # the catalogued answer that puts the random state back by hand (review 05b)
    EquivalentMutant(CHECKPOINT, "drop_statement", "torch.cuda.set_rng_state(s, d)", "pass",
                     CUDA_ONLY),
    EquivalentMutant(CHECKPOINT, "nudge_constant", "for d, s in zip(ctx.cuda, caller[1]):",
                     "for d, s in zip(ctx.cuda, caller[0]):", CUDA_ONLY),
    # catalogued answers added in review 54
    EquivalentMutant(CHECKPOINT, "ctx_to_global",
                     "ctx.devices = sorted({t.get_device() for t in distinct if t.is_cuda})\n"
                     "ctx.states = (torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in "
                     "ctx.devices])\nwith torch.random.fork_rng(devices=ctx.devices):\n"
                     "for device, state in zip(ctx.devices, ctx.states[1]):",
                     "global _shared_devices; _shared_devices = sorted({t.get_device() for t in "
                     "distinct if t.is_cuda})\nctx.states = (torch.get_rng_state(), "
                     "[torch.cuda.get_rng_state(d) for d in _shared_devices])\n"
                     "with torch.random.fork_rng(devices=_shared_devices):\n"
                     "for device, state in zip(_shared_devices, ctx.states[1]):", CUDA_ONLY),
    EquivalentMutant(CHECKPOINT, "ctx_to_global",
                     "ctx.cuda = sorted({args[i].device.index for i in ctx.where if "
                     "args[i].is_cuda})\nctx.states = (torch.get_rng_state(), "
                     "[torch.cuda.get_rng_state(d) for d in ctx.cuda])\ncaller = "
                     "(torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in ctx.cuda])\n"
                     "for d, s in zip(ctx.cuda, ctx.states[1]):\nfor d, s in zip(ctx.cuda, "
                     "caller[1]):",
                     "global _shared_cuda; _shared_cuda = sorted({args[i].device.index for i in "
                     "ctx.where if args[i].is_cuda})\nctx.states = (torch.get_rng_state(), "
                     "[torch.cuda.get_rng_state(d) for d in _shared_cuda])\ncaller = "
                     "(torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in "
                     "_shared_cuda])\nfor d, s in zip(_shared_cuda, ctx.states[1]):\n"
                     "for d, s in zip(_shared_cuda, caller[1]):", CUDA_ONLY),
    # catalogued answers whose CUDA-state lines changed since (review 57's full mutant run)
    *(EquivalentMutant(CHECKPOINT, "nudge_constant", f"for {pair} in zip({devices}, {held}[1]):",
                       f"for {pair} in zip({devices}, {held}[0]):", CUDA_ONLY)
      for pair, devices, held in (("d, s", "ctx.gpus", "caller"),
                                  ("device, state", "ctx.devices", "ctx.states"),
                                  ("d, s", "ctx.cuda", "ctx.states"))),
    *(EquivalentMutant(
        CHECKPOINT, "ctx_to_global",
        f"ctx.{name} = sorted({{{found} if {cuda}}})\n"
        f"ctx.{kept} = (torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in ctx.{name}])\n"
        f"caller = (torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in ctx.{name}])\n"
        f"for d, s in zip(ctx.{name}, ctx.{kept}[1]):\nfor d, s in zip(ctx.{name}, caller[1]):",
        f"global _shared_{name}; _shared_{name} = sorted({{{found} if {cuda}}})\n"
        f"ctx.{kept} = (torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in "
        f"_shared_{name}])\n"
        f"caller = (torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in _shared_{name}])"
        f"\nfor d, s in zip(_shared_{name}, ctx.{kept}[1]):\n"
        f"for d, s in zip(_shared_{name}, caller[1]):", CUDA_ONLY)
      for name, kept, found, cuda in (
          ("gpus", "states", "t.device.index for t in tensors", "t.is_cuda"),
          ("cuda", "rng", "a.device.index for a in args", "torch.is_tensor(a) and a.is_cuda"))),
    EquivalentMutant(CHECKPOINT, "nudge_constant",
                     "ctx.slot[i] = found[0] if found else len(distinct)",
                     "ctx.slot[i] = found[-1] if found else len(distinct)",
                     "distinct gains a tensor only when it is not found, so found has at most one "
                     "index: found[-1] is found[0]"),
    # review 57's rounded bounds, the last group plain when x requires grad: the same two kinds
    EquivalentMutant(SEQUENTIAL, "nudge_constant",
                     "bounds = [round(i * n / segments) for i in range(segments + 1)]",
                     "bounds = [round(i * n / segments) for i in range(segments + 2)]",
                     "an extra group of no layer after the last, through CheckpointFunction: an "
                     "identity on the output, so the same values, gradients and memory"),
    *(EquivalentMutant(SEQUENTIAL, operator, "last = i == segments - 1 and x.requires_grad",
                       f"last = i == {after} and x.requires_grad",
                       "the last group checkpointed instead of run plainly, which the contract "
                       "allows either way: the same values, gradients and layer runs")
      for operator, after in (("swap_arithmetic", "segments + 1"),
                              ("nudge_constant", "segments - 0"), ("drop_term", "segments"))),
    EquivalentMutant(SEQUENTIAL, "drop_statement", "layers = tuple(layers)", "pass",
                     "the contract's layers are a list or an nn.Sequential, which slice, len "
                     "and iterate alike, so the tuple() copy changes nothing"),
    *(EquivalentMutant(SEQUENTIAL, operator,
                       "x = run(x) if i == segments - 1 else CheckpointFunction.apply(run, x)",
                       f"x = run(x) if i == {after} else CheckpointFunction.apply(run, x)",
                       "the last group checkpointed instead of run plainly, which the contract "
                       "allows either way: the same values, gradients and layer runs")
      for operator, after in (("swap_arithmetic", "segments + 1"),
                              ("nudge_constant", "segments - 0"), ("drop_term", "segments"))),
    EquivalentMutant(CHECKPOINT, "nudge_constant", "return (None,) * (1 + len(args))",
                     "return (None,) * (2 + len(args))",
                     "one None too many: autograd accepts extra trailing None gradients"),
    EquivalentMutant(  # review 59's u1: the caller's states put back by hand, not fork_rng
        CHECKPOINT, "ctx_to_global",
        "ctx.devices = sorted({t.get_device() for t in tensors if t.is_cuda})\n"
        "ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in ctx.devices]\n"
        "caller_cuda = [torch.cuda.get_rng_state(d) for d in ctx.devices]\n"
        "for device, state in zip(ctx.devices, ctx.cuda_states):\n"
        "for device, state in zip(ctx.devices, caller_cuda):",
        "global _shared_devices; _shared_devices = sorted({t.get_device() for t in tensors if "
        "t.is_cuda})\nctx.cuda_states = [torch.cuda.get_rng_state(d) for d in _shared_devices]\n"
        "caller_cuda = [torch.cuda.get_rng_state(d) for d in _shared_devices]\n"
        "for device, state in zip(_shared_devices, ctx.cuda_states):\n"
        "for device, state in zip(_shared_devices, caller_cuda):", CUDA_ONLY),
]
