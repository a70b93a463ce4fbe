"""autograder.outside_ctx: per-call state in a module global is seen whatever the container and
whatever ran before (a dict keyed by id(ctx) need not grow: freed ids come back on a rerun)."""

import pytest
import torch

from autograder import outside_ctx
from autograder.errors import GradingError
from autograder.outside_ctx import check_no_state_outside_ctx


def _scaled(store: str, read: str, prelude: str = "") -> type:
    namespace = {"torch": torch}
    exec(prelude + "\nclass Scaled(torch.autograd.Function):\n"
         "    @staticmethod\n    def forward(ctx, x, scale):\n"
         f"        ctx.save_for_backward(x)\n        {store}\n        return scale * x\n"
         "    @staticmethod\n    def backward(ctx, g):\n"
         f"        x, = ctx.saved_tensors\n        return g * {read}, None\n", namespace)
    return namespace["Scaled"]


def _values() -> dict:
    return {"x": torch.ones(3, dtype=torch.float64), "scale": 2.5}


@pytest.mark.parametrize("prelude, store, read", [
    ("import weakref\nS = weakref.WeakKeyDictionary()", "S[ctx] = scale", "S[ctx]"),
    ("import weakref\nS = weakref.WeakValueDictionary()\nclass Box:\n    pass",
     "S[id(ctx)] = ctx.box = Box()", "2.5"),
    ("import weakref\nS = weakref.WeakSet()", "S.add(ctx)", "2.5"),
    ("import collections\nS = collections.deque()", "S.append(scale)", "S.pop()"),
    ("S = {0: None}", "S[0] = [scale]", "S[0][0]"),  # a value replaced: no new key
])
def test_per_call_state_in_any_container_is_named(prelude, store, read):
    with pytest.raises(GradingError, match="Scaled.forward kept state outside ctx: S in a "
                                           "module global") as error:
        check_no_state_outside_ctx(_scaled(store, read, prelude), "Scaled", _values())
    assert error.value.mistake == "Scaled/state-outside-ctx"


@pytest.mark.parametrize("prelude, store, said", [
    ("CALLS = 0", "global CALLS\n        CALLS += 1", r"CALLS in a module global \(went from"),
    ("TRACED = False", "global TRACED\n        TRACED = True", "TRACED in a module global"),
])
def test_a_counter_or_a_flag_in_a_global_is_named(prelude, store, said):
    """Rule 4's "not even a call counter": a global rebound to another number or flag holds
    no tensor and grows no container, and is still state every call shares."""
    with pytest.raises(GradingError, match=said):
        check_no_state_outside_ctx(_scaled(store, "2.5", prelude), "Scaled", _values())


@pytest.mark.parametrize("signature, store", [(", _calls=[0]", "_calls[0] += 1"),
                                              (", _calls=[]", "_calls.append(1)")])
def test_a_counter_in_a_mutable_default_is_named(signature, store):
    with pytest.raises(GradingError, match="kept state in its mutable default argument _calls"):
        check_no_state_outside_ctx(_defaulted(signature, store), "Scaled", _values())


def test_a_dict_keyed_by_a_reused_id_of_ctx_is_named_on_every_run():
    """A dict keyed by id(ctx) that forward fills and backward never empties is named on a
    rerun too, where the probe's ctx may get an id an earlier, freed ctx left as a key: the key
    is then no new one and the dict does not grow, but it holds this call's id(ctx)."""
    answer = _scaled("S[id(ctx)] = SCALE", "S[id(ctx)]", "S = {}\nSCALE = 2.5")
    for _ in range(3):  # stale keys pile up; some run's ctx may reuse one
        with pytest.raises(GradingError, match="S in a module global"):
            check_no_state_outside_ctx(answer, "Scaled", _values())
    namespace = answer.forward.__globals__
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    y = answer.apply(x, 2.5)
    namespace["S"].clear()
    namespace["S"][id(y.grad_fn)] = namespace["SCALE"]  # as a reused id would leave it
    shot = outside_ctx._snapshot(outside_ctx._namespaces(answer))
    change = outside_ctx._change(shot, shot, y.grad_fn, outside_ctx._namespaces(answer))
    assert change is not None and change[0][1] == "S"


def test_a_constant_table_forward_only_reads_passes():
    answer = _scaled("ctx.k = TABLE['k']", "ctx.k", "TABLE = {'k': 2.5}")
    check_no_state_outside_ctx(answer, "Scaled", _values())


def _defaulted(signature: str, store: str) -> type:
    """Scaled whose forward has ``signature``'s extra parameters and runs ``store``."""
    namespace = {"torch": torch}
    exec("class Scaled(torch.autograd.Function):\n"
         f"    @staticmethod\n    def forward(ctx, x, scale{signature}):\n"
         f"        ctx.save_for_backward(x)\n        ctx.scale = scale\n        {store}\n"
         "        return scale * x\n"
         "    @staticmethod\n    def backward(ctx, g):\n"
         "        return g * ctx.scale, None\n", namespace)
    return namespace["Scaled"]


@pytest.mark.parametrize("signature, store", [
    (", _cache={}", "_cache['y'] = x * 2"),
    (", _last=[]", "_last[:] = [x.detach()]"),
    (", *, _keep=set()", "_keep.add(x)"),
])
def test_a_tensor_kept_in_a_mutable_default_is_named(signature, store):
    with pytest.raises(GradingError, match="Scaled.forward kept state in its mutable default "
                                           "argument _") as error:
        check_no_state_outside_ctx(_defaulted(signature, store), "Scaled", _values())
    assert error.value.mistake == "Scaled/state-in-default-argument"


@pytest.mark.parametrize("signature, store", [
    (", _names={'k': 2.5}", "ctx.k = _names['k']"),  # read only
])
def test_a_default_read_only_passes(signature, store):
    check_no_state_outside_ctx(_defaulted(signature, store), "Scaled", _values())


def _called(function, shapes) -> None:
    """One forward and backward per shape, as a battery's checks make them."""
    for shape in shapes:
        x = torch.ones(shape, dtype=torch.float64, requires_grad=True)
        function.apply(x, 2.5).sum().backward()


def test_a_cache_whose_key_an_earlier_call_made_is_seen_over_the_battery():
    """A global cache keyed by shape: one call's check sees nothing once the key exists, but
    the battery as a whole filled it (rule 4)."""
    scaled = _scaled("C.setdefault(x.shape, x.new_ones(x.shape))", "C[x.shape] * 2.5",
                     prelude="C = {}")
    _called(scaled, [(3,)])  # the key exists before the battery starts
    with pytest.raises(GradingError, match=r"kept state outside ctx: C in a module global .*"
                                           r"over the calls grading made.*rule 4"):
        with outside_ctx.state_watched(scaled, "Scaled"):
            _called(scaled, [(3,), (2, 2)])


def test_a_default_dtype_never_put_back_is_seen_and_put_back():
    """A forward that sets the default dtype and never restores it fails rule 6 once the
    calls are over, whichever check made the call; the caller's dtype is back after."""
    scaled = _scaled("torch.set_default_dtype(torch.float64)", "2.5")
    with pytest.raises(GradingError, match=r"left the caller's default dtype changed .*rule 6"):
        with outside_ctx.state_watched(scaled, "Scaled"):
            _called(scaled, [(3,)])
    assert torch.get_default_dtype() == torch.float32


def test_a_function_that_keeps_nothing_passes_the_battery_watch():
    scaled = _scaled("pass", "2.5")
    with outside_ctx.state_watched(scaled, "Scaled"):
        _called(scaled, [(3,), (2, 2)])


def _self_check_verdicts(answer, runs: int, monkeypatch, tmp_path) -> list[str]:
    """``self_check`` run ``runs`` times in this process on ``answer`` (an exercise whose
    battery calls it on two shapes): the first line of each failure, "passed" for a pass."""
    from autograder.exercise import Exercise
    from autograder.exercises import EXERCISES
    from autograder.grading import self_check

    monkeypatch.chdir(tmp_path)  # self_check records its outcome beside the notebook
    monkeypatch.setitem(EXERCISES, "Scaled", Exercise(
        "Scaled", "00_template", lambda function, device: _called(function, [(3,), (2, 2)])))
    verdicts = []
    for _ in range(runs):
        try:
            self_check("Scaled", answer)
            verdicts.append("passed")
        except GradingError as error:
            verdicts.append(str(error).splitlines()[0])
    return verdicts


@pytest.mark.parametrize("prelude, store, read", [
    ("C = {}", "C.setdefault(x.shape, x.new_ones(x.shape))", "C[x.shape] * 2.5"),
    ("C = {}", "C.setdefault(x.dim(), {}).setdefault(x.shape, x.new_ones(x.shape))",
     "C[x.dim()][x.shape] * 2.5"),  # a dict of dicts, filled per shape
    ("C = None", "global C\n        C = x.new_ones(3) if C is None else C", "2.5"),
])
def test_a_rerun_in_one_process_gives_the_first_run_s_verdict(monkeypatch, tmp_path,
                                                              prelude, store, read):
    """A cache the first self-check filled held every key the second one asked for, so the
    second saw nothing change and passed, in a kernel where grading (a fresh one) fails: each
    place an earlier battery changed starts as it was before that battery, and holds what it
    held again after."""
    answer = _scaled(store, read, prelude=prelude)
    verdicts = _self_check_verdicts(answer, 3, monkeypatch, tmp_path)
    assert all("kept state outside ctx: C in a module global" in v for v in verdicts), verdicts
    assert len(set(verdicts)) == 1, verdicts
    held = answer.forward.__globals__["C"]
    assert held is not None and (not isinstance(held, dict) or len(held) == 2)


def _closing_over_a_cache() -> type:
    """Scaled made by a factory: its forward fills a dict it closes over, one entry per shape."""
    namespace = {"torch": torch}
    exec("def make():\n    cache = {}\n\n"
         "    class Scaled(torch.autograd.Function):\n"
         "        @staticmethod\n        def forward(ctx, x, scale):\n"
         "            ctx.scale = cache.setdefault(x.shape, x.new_full((), scale))\n"
         "            return scale * x\n"
         "        @staticmethod\n        def backward(ctx, g):\n"
         "            return g * ctx.scale, None\n"
         "    return Scaled\n", namespace)
    return namespace["make"]()


@pytest.mark.parametrize("make, said", [
    (lambda: _defaulted(", _cache={}", "_cache.setdefault(x.shape, x.new_ones(x.shape))"),
     "_cache in a mutable default argument of Scaled.forward"),
    (_closing_over_a_cache, "cache in a variable the method closes over"),
])
def test_a_rerun_sees_a_cache_in_a_default_or_a_closure(monkeypatch, tmp_path, make, said):
    """The self-check filled the cache a mutable default or a closure holds; the hidden test's
    grading, next in the same kernel, starts from it as the self-check did."""
    verdicts = _self_check_verdicts(make(), 2, monkeypatch, tmp_path)
    assert all(said in v for v in verdicts) and len(set(verdicts)) == 1, verdicts


def test_a_fixed_answer_beside_a_cache_an_earlier_run_filled_passes(monkeypatch, tmp_path):
    """The learner fixes the answer but the kernel still holds the old cache: it is no state of
    the fixed answer's calls, which pass; the cache is left as it was."""
    answer = _scaled("C.setdefault(x.shape, x.new_ones(x.shape))", "C[x.shape] * 2.5",
                     prelude="C = {}\nTABLE = {'k': 2.5}")
    assert _self_check_verdicts(answer, 1, monkeypatch, tmp_path) != ["passed"]
    namespace = answer.forward.__globals__
    exec("class Fixed(torch.autograd.Function):\n"
         "    @staticmethod\n    def forward(ctx, x, scale):\n"
         "        ctx.k = TABLE['k']\n        return scale * x\n"
         "    @staticmethod\n    def backward(ctx, g):\n        return g * ctx.k, None\n",
         namespace)
    assert _self_check_verdicts(namespace["Fixed"], 2, monkeypatch, tmp_path) == ["passed"] * 2
    assert len(namespace["C"]) == 2 and namespace["TABLE"] == {"k": 2.5}


_REMEMBERED = {}
_UNRELATED = {}


def _remember(ctx, x):
    _REMEMBERED[id(ctx)] = x


class _KeepsStateThroughAHelper(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        _remember(ctx, x)
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2


class _ReadsGlobals(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        globals()["_UNRELATED"][id(ctx)] = x
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2


def test_only_the_globals_an_answer_names_are_searched_for_its_ctx():
    """Is a global that holds this call's id(ctx) the answer's state only when its code names
    it, directly or through a helper it calls (ids are reused: a dict an earlier answer left in
    the kernel may hold a freed ctx's id), and every global where it calls globals()?"""
    from autograder.outside_ctx import _named_globals

    named = _named_globals(_KeepsStateThroughAHelper, globals())
    assert {"_remember", "_REMEMBERED"} <= named and "_UNRELATED" not in named
    assert _named_globals(_ReadsGlobals, globals()) is None


@pytest.mark.parametrize("forward, backward, where", [
    ("", "if not hasattr(ctx, 'twice'):\n            ctx.twice = 2 * x\n        ",
     "ctx.twice"),
    ("", "ctx.cache = [2 * x]\n        ", r"ctx.cache\[0\]"),
    ("ctx.twice = None\n        ", "ctx.twice = 2 * x\n        ", "ctx.twice"),  # rebound
])
def test_a_tensor_backward_keeps_on_ctx_is_named(forward, backward, where):
    """Rule 4: a tensor backward puts on ctx (a cache for the next backward) outlives backward
    with the graph, out of autograd's sight: after an in-place change of x, a second backward of
    a retained graph gives a stale gradient where autograd raises. Named like the forward case,
    with the rule."""
    namespace = {"torch": torch}
    exec("class Square(torch.autograd.Function):\n"
         "    @staticmethod\n    def forward(ctx, x):\n"
         f"        ctx.save_for_backward(x)\n        {forward}return x ** 2\n"
         "    @staticmethod\n    def backward(ctx, g):\n"
         f"        x, = ctx.saved_tensors\n        {backward}return g * 2 * x\n", namespace)
    with pytest.raises(GradingError, match=f"Square's backward stores a tensor as {where}: it "
                       r"lives as long as the graph.*\(Function contract, rule 4: ") as error:
        check_no_state_outside_ctx(namespace["Square"], "Square", {"x": torch.ones(3)})
    assert error.value.mistake == "Square/tensor-on-ctx"


@pytest.mark.parametrize("backward", [
    "ctx.calls = getattr(ctx, 'calls', 0) + 1\n        ",  # a number on ctx: no tensor
    "ctx.shape = x.shape\n        ",
])
def test_numbers_and_shapes_backward_puts_on_ctx_pass(backward):
    namespace = {"torch": torch}
    exec("class Square(torch.autograd.Function):\n"
         "    @staticmethod\n    def forward(ctx, x):\n"
         "        ctx.save_for_backward(x)\n        return x ** 2\n"
         "    @staticmethod\n    def backward(ctx, g):\n"
         f"        x, = ctx.saved_tensors\n        {backward}return g * 2 * x\n", namespace)
    check_no_state_outside_ctx(namespace["Square"], "Square", {"x": torch.ones(3)})
