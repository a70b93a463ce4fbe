"""autograder.probes: what a Function saved, kept on ctx, and did in backward."""

import functools

import torch

from autograder import probes
from autograder.probes import same_tensor, trace_backward, trace_forward
from tests.autograder.catalogued import mistake
from tools.solutions import solution


def x_of(*shape, requires_grad=True):
    values = torch.randn(shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    return values.requires_grad_(requires_grad)


class SavesIntermediate(torch.autograd.Function):
    """Saves a new tensor that is neither an input nor the output."""

    @staticmethod
    def forward(ctx, x):
        doubled = 2 * x
        ctx.save_for_backward(doubled)
        return doubled * x

    @staticmethod
    def backward(ctx, grad_output):
        doubled, = ctx.saved_tensors
        return grad_output * 2 * doubled


class SavesViews(torch.autograd.Function):
    """Saves a reshaped view of its input and a view of its output."""

    @staticmethod
    def forward(ctx, x):
        y = x * 3
        ctx.save_for_backward(x.reshape(-1), y.view(-1))
        return y

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 3


class TestSameTensor:
    """same_tensor: one tensor, seen the same way."""

    def test_a_tensor_is_itself(self):
        """Is a tensor the same as itself and as a detached alias?"""
        x = x_of(3)
        assert same_tensor(x, x) and same_tensor(x, x.detach())

    def test_copies_and_other_views_differ(self):
        """Are a clone, a reshaped view and a slice all different tensors?"""
        x = x_of(2, 3)
        assert not same_tensor(x, x.clone())
        assert not same_tensor(x, x.reshape(-1))
        assert not same_tensor(x, x[:1])

    def test_empty_tensors_are_never_the_same(self):
        """Can two empty tensors never be mistaken for each other?"""
        empty = x_of(0)
        assert not same_tensor(empty, empty)


class TestTraceForward:
    """trace_forward: what forward passed to save_for_backward and kept on ctx."""

    def test_saved_input(self):
        """Is a saved input recorded with its role, shape, dtype and bytes?"""
        x = x_of(2, 3)
        trace = trace_forward(solution("Square"), {"x": x})
        assert [s.role for s in trace.saved] == ["input x"]
        saved, = trace.saved
        assert (saved.shape, saved.dtype, saved.nbytes) == ((2, 3), torch.float64, 48)
        assert trace.saved_bytes == 48
        torch.testing.assert_close(trace.output, x.detach() ** 2)

    def test_saved_output(self):
        """Is a saved output recorded as the output?"""
        trace = trace_forward(solution("MySigmoid"), {"x": x_of(4)})
        assert [s.role for s in trace.saved] == ["output"]

    def test_saved_intermediate(self):
        """Is a new tensor recorded as an intermediate?"""
        trace = trace_forward(SavesIntermediate, {"x": x_of(4)})
        assert [s.role for s in trace.saved] == ["intermediate"]

    def test_views_count_as_what_they_view(self):
        """Does a reshaped view of the input count as the input, and one of the output as the
        output (they cost no memory of their own)?"""
        trace = trace_forward(SavesViews, {"x": x_of(2, 3)})
        assert [s.role for s in trace.saved] == ["input x", "output"]

    def test_inputs_are_named(self):
        """Are saved inputs told apart by name, and a boolean mask by dtype?"""
        trace = trace_forward(solution("FusedLinearReLU"),
                              {"x": x_of(5, 3), "weight": x_of(4, 3), "bias": x_of(4)})
        assert [s.role for s in trace.saved] == ["input x", "input weight", "intermediate"]
        assert trace.saved[2].dtype == torch.bool and trace.saved[2].nbytes == 20

    def test_ctx_tensor_attribute(self):
        """Is a tensor stored as ctx.y found, with its path?"""
        trace = trace_forward(mistake("MySigmoid", "output kept as ctx.y"), {"x": x_of(3)})
        assert trace.ctx_tensor_attributes == ["ctx.y"]
        assert trace.saved == []

    def test_nested_ctx_tensor_attribute(self):
        """Is a tensor hidden in a dict of lists on ctx found, with its full path?"""
        trace = trace_forward(mistake("MySigmoid", "output hidden in a list on ctx"),
                              {"x": x_of(3)})
        assert trace.ctx_tensor_attributes == ["ctx.cache['saved'][0]"]

    def test_plain_ctx_attributes_are_fine(self):
        """Are Python floats on ctx recorded but not reported as tensors?"""
        trace = trace_forward(solution("WeightedSum"),
                              {"x1": x_of(3), "x2": x_of(3), "w1": 0.5, "w2": 2.0})
        assert trace.ctx_tensor_attributes == []
        assert trace.ctx_attributes == {"w1": 0.5, "w2": 2.0}

    def test_no_input_requires_grad(self):
        """Without any input requiring grad there is no ctx: does tracing still work?"""
        trace = trace_forward(solution("Square"), {"x": x_of(3, requires_grad=False)})
        assert trace.ctx_tensor_attributes == [] and trace.ctx_attributes == {}


class TestTraceBackward:
    """trace_backward: the gradients, ops, FLOPs and autograd re-entry of one backward."""

    def test_gradients_align_with_inputs(self):
        """Is there one gradient per input, None where an input needs none?"""
        x1, x2 = x_of(3), x_of(3, requires_grad=False)
        inputs = [x1, x2, 0.5, 2.0]
        output = solution("WeightedSum").apply(*inputs)
        trace = trace_backward(output, inputs, torch.ones(3, dtype=torch.float64))
        assert len(trace.grads) == 4
        torch.testing.assert_close(trace.grads[0], torch.full((3,), 0.5, dtype=torch.float64))
        assert trace.grads[1:] == (None, None, None)

    def test_counts_matmul_flops(self):
        """Are the two gradient matmuls of a linear layer counted, 2 * m * n * k each?"""
        x, weight = x_of(6, 3), x_of(4, 3)
        output = solution("MyLinearFunction").apply(x, weight)
        trace = trace_backward(output, [x, weight], torch.ones(6, 4, dtype=torch.float64),
                               count_flops=True)
        assert trace.flops == 2 * (2 * 6 * 3 * 4)

    def test_skipped_matmul_costs_nothing(self):
        """When only x needs grad, does a backward that checks needs_input_grad do one matmul?"""
        x, weight = x_of(6, 3), x_of(4, 3, requires_grad=False)
        output = solution("MyLinearFunction").apply(x, weight)
        trace = trace_backward(output, [x, weight], torch.ones(6, 4, dtype=torch.float64),
                               count_flops=True)
        assert trace.flops == 2 * 6 * 3 * 4

    def test_flops_are_counted_only_when_asked(self):
        """Is a backward traced without count_flops left uncounted (None, not 0: no check may
        read a count nobody took)?"""
        x, weight = x_of(6, 3), x_of(4, 3)
        output = solution("MyLinearFunction").apply(x, weight)
        assert trace_backward(output, [x, weight], torch.ones(6, 4, dtype=torch.float64)).flops \
            is None

    def test_logs_builtin_backward_ops(self):
        """Is aten.sigmoid_backward logged when backward calls it?"""
        x = x_of(3)
        output = mistake("MySigmoid", "built-in sigmoid_backward").apply(x)
        trace = trace_backward(output, [x], torch.ones(3, dtype=torch.float64))
        assert "sigmoid_backward" in trace.ops
        assert trace.reentered_autograd == []

    def test_logs_composite_backward_ops(self):
        """Is aten.index_select_backward logged, though it decomposes before a dispatch mode
        sees it (CompositeImplicitAutograd), both as a packet and as an overload?"""

        class CallsIndexSelectBackward(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, op):
                ctx.op = op
                return x[[1, 0, 1]]

            @staticmethod
            def backward(ctx, grad_output):
                return ctx.op(grad_output, [2], 0, torch.tensor([1, 0, 1])), None

        packet = torch.ops.aten.index_select_backward
        for op in (packet, packet.default):
            x = x_of(2)
            trace = trace_backward(CallsIndexSelectBackward.apply(x, op), [x, op],
                                   torch.ones(3, dtype=torch.float64))
            assert "index_select_backward" in trace.ops
            torch.testing.assert_close(trace.grads[0], torch.tensor([1.0, 2.0],
                                                                    dtype=torch.float64))

    def test_hand_written_backward_logs_plain_ops(self):
        """Does a hand-written backward log only ordinary ops?"""
        x = x_of(3)
        output = solution("MySigmoid").apply(x)
        trace = trace_backward(output, [x], torch.ones(3, dtype=torch.float64))
        assert trace.ops and not any("backward" in op for op in trace.ops)

    def test_detects_reentry(self):
        """Is torch.autograd.grad inside backward recorded, but not the tracer's own call?"""
        x = x_of(3)
        output = mistake("MySigmoid", "asks autograd inside backward").apply(x)
        trace = trace_backward(output, [x], torch.ones(3, dtype=torch.float64))
        assert trace.reentered_autograd == ["torch.autograd.grad"]

    def test_names_the_torch_function_the_backward_called(self):
        """Is autograd reached through torch.func named as the learner wrote it?"""

        class CallsVjp(solution("MySigmoid")):
            @staticmethod
            def backward(ctx, grad_output):
                y, = ctx.saved_tensors
                return torch.func.vjp(torch.sigmoid, torch.logit(y))[1](grad_output)[0]

        x = x_of(3)
        trace = trace_backward(CallsVjp.apply(x), [x], torch.ones(3, dtype=torch.float64))
        assert trace.reentered_autograd[0] == "torch.autograd.grad through torch.func"

    def test_detects_tensor_backward(self):
        """Is Tensor.backward inside backward recorded too?"""

        class CallsTensorBackward(solution("MySigmoid")):
            @staticmethod
            def backward(ctx, grad_output):
                y, = ctx.saved_tensors
                with torch.enable_grad():
                    x = torch.logit(y).detach().requires_grad_()
                    torch.sigmoid(x).backward(grad_output)
                return x.grad

        x = x_of(3)
        output = CallsTensorBackward.apply(x)
        trace = trace_backward(output, [x], torch.ones(3, dtype=torch.float64))
        assert trace.reentered_autograd[0] == "Tensor.backward"

    def test_detects_entry_points_bound_before_the_watch(self):
        """Is autograd reached through a name imported before tracing (``from torch.autograd
        import grad, backward``) recorded, at the engine, under the entry point's name?"""
        from torch.autograd import backward, grad

        class ImportedGrad(solution("MySigmoid")):
            @staticmethod
            def backward(ctx, grad_output):
                y, = ctx.saved_tensors
                with torch.enable_grad():
                    x = torch.logit(y).detach().requires_grad_()
                    return grad(torch.sigmoid(x), x, grad_output)[0]

        class ImportedBackward(solution("MySigmoid")):
            @staticmethod
            def backward(ctx, grad_output):
                y, = ctx.saved_tensors
                with torch.enable_grad():
                    x = torch.logit(y).detach().requires_grad_()
                    backward(torch.sigmoid(x), grad_output)
                return x.grad

        for function, name in ((ImportedGrad, "torch.autograd.grad"),
                               (ImportedBackward, "torch.autograd.backward")):
            x = x_of(3)
            trace = trace_backward(function.apply(x), [x], torch.ones(3, dtype=torch.float64))
            assert trace.reentered_autograd == [name]

    def test_entry_points_are_put_back(self):
        """After tracing, even a backward that raised, are autograd's entry points (and the
        torch.ops call methods OpLog wraps) the originals?"""
        def entry_points():
            return (torch.autograd.grad, torch.autograd.backward, torch.Tensor.backward,
                    torch.autograd._engine_run_backward,
                    torch._ops.OpOverload.__call__, torch._ops.OpOverloadPacket.__call__)

        originals = entry_points()
        x = x_of(3)
        stub_backward = mistake("Square", "backward left as the stub")
        try:
            trace_backward(stub_backward.apply(x), [x],
                           torch.ones(3, dtype=torch.float64))
        except NotImplementedError:
            pass
        assert entry_points() == originals

    def test_the_grader_s_own_calls_are_not_counted(self):
        """Is autograd reached by the grader's own code (lesson 13 runs a compiled kernel's CPU
        pass through torch.autograd.grad) left out, while the learner's call inside it counts?"""
        calls = []
        grader = {"__name__": "autograder.exercises.lesson13_kernels.kernel_domain",
                  "torch": torch}
        exec("def through_the_grader(y, x):\n"
             "    return torch.autograd.grad(y, x)\n", grader)
        x = x_of(2)
        with probes._watch_reentry(calls):
            grader["through_the_grader"]((x * x).sum(), x)
        assert calls == []

        class AsksAutograd(solution("MySigmoid")):
            @staticmethod
            def backward(ctx, grad_output):
                y, = ctx.saved_tensors
                with torch.enable_grad():
                    x = torch.logit(y).detach().requires_grad_()
                    return torch.autograd.grad(torch.sigmoid(x), x, grad_output)[0]

        with probes._watch_reentry(calls):
            grader["through_the_grader"](AsksAutograd.apply(x).sum(), x)
        assert calls == ["torch.autograd.grad"]

    def test_watch_records_only_inside(self):
        """Does _watch_reentry record calls made inside the block and none after it?"""
        calls = []
        x = x_of(2)
        with probes._watch_reentry(calls):
            torch.autograd.grad((x * x).sum(), x)
        torch.autograd.grad((x * x).sum(), x)
        assert calls == ["torch.autograd.grad"]


def test_reachable_finds_a_tensor_a_call_keeps_but_not_one_inside_an_input():
    """Given the Function's inputs, does ``reachable`` find a tensor kept inside a partial, a
    closure, a default, a bound method or a plain object, with its path, and leave alone what a
    run_fn the caller passed closes over?"""
    reachable = probes.reachable
    kept = torch.ones(2)

    def closing():
        return kept

    def defaulting(a=kept):
        return a

    class Holder:
        def __init__(self):
            self.tensor = kept

        def method(self):
            return self.tensor

    def callers_run_fn():
        return kept

    for value, path in [(functools.partial(torch.add, kept), "ctx.f.args[0]"),
                        (closing, "ctx.f's closure variable kept"),
                        (defaulting, "ctx.f.__defaults__[0]"),
                        (Holder().method, "ctx.f.__self__.tensor"), (Holder(), "ctx.f.tensor")]:
        assert [p for p, _ in reachable(value, "ctx.f", inputs=())] == [path]
        assert list(reachable(value, "ctx.f")) == []  # without inputs: lists, tuples, dicts only
    assert list(reachable(callers_run_fn, "ctx.f", inputs=(callers_run_fn,))) == []
