"""Checks generated from an exercise's declared domain (``autograder.domain``), the same for
every exercise: two calls in one graph, each constant across its range, every dtype with what
was saved, inputs of every layout, and the exercise's large, tied, far-apart and accumulation
cases. Each runs forward and backward against the float64 reference and names its clause.

Then the Function contract's rules (``autograder.function_contract``) that no exercise's
battery owns, the same for every exercise: the inputs left as given however forward is called,
``requires_grad`` changed after forward, ``None`` on every path, dimensions of size 1, empty and
0-d inputs, a new output at the arguments a shortcut fires on, backward by hand and in linear
memory, the caller's state, the default device. Each failure's first
line says what it tried and ends with the rule's reference."""

import contextlib
import itertools

import torch

from .checks import case, check_is_function, run_forward
from .comparison import compare, floating_outputs, fresh_leaves, on_cpu, reference_outputs
from .contract import covers
from .domain import Domain
from .errors import GradingError
from .grad_output_layout import check_grad_output_layout
from .inputs_kept import check_inputs_kept
from .outside_ctx import check_no_state_outside_ctx
from .caller_state import check_caller_state
from .default_device import check_default_device
from .late_requires_grad import check_requires_grad_fixed_at_forward
from .none_paths import check_none_on_every_path
from .per_call import check_per_call, with_constants
from .size_one import check_size_one
from .empty_and_scalar import check_empty_and_scalar
from .linear_memory import check_linear_memory
from .by_hand import check_by_hand
from .twice import check_backward_twice
from .returned_dtypes import check_returned_dtypes
from .fresh_output import check_fresh_output

# the rules' checks, by property name: their own first lines end with the rule's reference, so
# no case() wraps them
RULE_CHECKS = {"inputs kept": check_inputs_kept,
               "late requires grad": check_requires_grad_fixed_at_forward,
               "none on every path": check_none_on_every_path, "size one": check_size_one,
               "empty and 0-d": check_empty_and_scalar, "fresh output": check_fresh_output,
               "by hand": check_by_hand,
               "linear memory": check_linear_memory,
               "caller state": check_caller_state, "default device": check_default_device}


def check_domain(domain: Domain, submission, device: torch.device) -> None:
    """Every property ``domain`` implies, on ``device``, then no state kept outside ctx."""
    function = (domain.prepare(submission) if domain.prepare is not None
                else check_is_function(submission, domain.spec))
    clauses = domain.clauses()
    rules = domain.rule_properties()
    for name in domain.properties():
        if name in rules:
            continue
        # an optional input passed as None names its own case, the input with the clause:
        # the general words and the input's after them said the case twice
        with (contextlib.nullcontext() if name == "optional none"
              else case(f"{_what(name)}; contract: {clauses[name]}")):
            _PROPERTIES[name.split(" ")[0]](domain, function, device, name)
        covers(f"domain: {name}")
    # a battery's checks name shared state by its effect where they see one
    with case("one call, forward then backward"):
        check_no_state_outside_ctx(function, domain.spec.name, domain.values(device))
    for name in rules:  # last: a wrong answer the checks above fail keeps its hint
        RULE_CHECKS[name](domain, function, device)
        covers(f"domain: {name}")
    check_returned_dtypes(domain, function, device)  # rule 2's dtype, before the cast


_FIXED = {"per call": "two calls in one graph", "requires grad": "some inputs frozen",
          "optional none": "an optional input passed as None",
          "grad_output layout": "a grad_output that is not contiguous",
          "backward twice": "backward run twice",
          "rows apart": "rows of far-apart magnitude", "ties": "values one ulp apart",
          "large": "a large input",
          "accumulation": "a case that a narrower accumulator fails"}


def _what(name: str) -> str:
    kind, _, rest = name.partition(" ")
    return f"{rest} inputs" if kind in ("layout", "dtype") else _FIXED.get(name, name)


def _optional_none(domain: Domain, function, device, _name) -> None:
    """Each optional input passed as None in its place, not left out: forward then has one more
    input, and backward returns one more value."""
    for optional in domain.optional:
        values = domain.values(device)
        values[optional] = None
        with case(f"{optional}=None passed to apply; contract: "
                  f"{domain.clauses()['optional none']}"):
            compare(domain, function, fresh_leaves(values))


def _constant(domain: Domain, function, device, name: str) -> None:
    constant = name.removeprefix("constant ")
    default = domain.values(device)[constant]
    for point in domain.constants[constant].points():
        with case(f"{constant}={point!r}"):
            inputs = fresh_leaves(domain.values(device, **{constant: point}))
            _check_constant_used(domain, function, inputs, constant, default)
            compare(domain, function, inputs)


def _check_constant_used(domain: Domain, function, inputs: dict, constant: str, default) -> None:
    """Forward's output at ``inputs`` is not, to the last bit, the one it gives with the
    constant's default where the reference's two outputs differ: a forward that uses a value
    of its own whatever it is given (a default, a fixed number) is named for what it ignores."""
    default = default.item() if isinstance(default, torch.Tensor) else default
    point = inputs[constant]
    if (point.item() if isinstance(point, torch.Tensor) else point) == default:
        return
    at_default = fresh_leaves(with_constants(inputs, {constant: default}))
    try:  # the reference first, on the CPU: the default may not fit these inputs (targets
        # equal to the point's ignore_index are out of range under the default's)
        expected = [reference_outputs(domain, on_cpu(values))[0]
                    for values in (inputs, at_default)]
        with torch.no_grad():
            got = [[o.clone().cpu() for o in floating_outputs(  # copies: a kept buffer shows
                run_forward(function, domain.spec, fresh_leaves(values)).output)]
                for values in (inputs, at_default)]
    except (GradingError, RuntimeError, ValueError, TypeError, IndexError):
        return  # compare names what went wrong
    same = all(a.shape == b.shape and torch.equal(a, b) for a, b in zip(*got))
    differ = any(a.shape != b.shape or not torch.allclose(a, b, rtol=1e-9, atol=1e-12)
                 for a, b in zip(*expected))
    if same and differ:
        raise GradingError(
            f"{domain.spec.name} gives the same output for {constant}={_shown(point)} as for "
            f"{constant}={default!r}, where the contract's outputs differ: forward does not use "
            f"the {constant} it is given (a default or a number of its own in its place)",
            mistake=f"{domain.spec.name}/constant-ignored")


def _shown(value) -> str:
    return repr(value.item() if isinstance(value, torch.Tensor) else value)


def _dtype(domain: Domain, function, device, name: str) -> None:
    dtype = getattr(torch, name.removeprefix("dtype "))
    compare(domain, function, fresh_leaves(domain.values(device, dtype=dtype)))


def _layout(domain: Domain, function, device, name: str) -> None:
    """Every input the layout applies to in it at once, then each alone, the others
    contiguous: a kernel that copes with all inputs strided (or none) may still assume one
    layout per input (a ``.view`` valid only while another input is contiguous)."""
    layout = name.removeprefix("layout ")
    values = domain.values(device)
    inputs = fresh_leaves(values, layout, domain.layout_inputs)
    strided = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and not v.is_leaf]
    if not strided:
        raise ValueError(f"no input of {domain.spec.name}'s domain can be {layout}: declare "
                         "the layouts its contract allows")
    compare(domain, function, inputs)
    for alone in strided if len(strided) > 1 else ():
        with case(f"{alone} alone {layout}"):
            compare(domain, function, fresh_leaves(values, layout, (alone,)))


def _grad_output(domain: Domain, function, device, _name) -> None:
    check_grad_output_layout(domain, function, device)


def _case(domain: Domain, function, device, name: str) -> None:
    part = {"accumulation": domain.accumulation, "large": domain.large, "ties": domain.ties,
            "rows": domain.rows_apart}[name.split(" ")[0]]
    compare(domain, function, fresh_leaves(part.values(device, part.dtype)), part.tolerance)


def _requires_grad(domain: Domain, function, device, _name) -> None:
    """Several of the floating inputs requiring grad, the others frozen (every such subset up
    to four inputs; past that all but one; each input alone is every battery's
    ``check_each_input_alone``): a backward's frozen-input paths, where it may skip work, write
    into grad_output or pick the wrong gradient."""
    values = domain.values(device)
    names = [n for n, v in values.items() if isinstance(v, torch.Tensor) and v.is_floating_point()]
    for wanted in requires_grad_subsets(names):
        with case(f"only {' and '.join(wanted)} requiring grad"):
            inputs = fresh_leaves(values)
            for name in names:
                inputs[name].requires_grad_(name in wanted)
            compare(domain, function, inputs)


def requires_grad_subsets(names: list[str]) -> list[tuple[str, ...]]:
    """The subsets of ``names``, of two or more but not all, the requires-grad property tries."""
    if len(names) <= 4:
        return [subset for size in range(2, len(names))
                for subset in itertools.combinations(names, size)]
    return [tuple(n for n in names if n != left_out) for left_out in names]


def _twice(domain: Domain, function, device, _name) -> None:
    check_backward_twice(function, domain.spec, domain.values(device),
                         may_raise=domain.second_backward_may_raise)


_PROPERTIES = {"per": check_per_call, "requires": _requires_grad, "backward": _twice,
               "constant": _constant, "dtype": _dtype, "layout": _layout,
               "grad_output": _grad_output, "accumulation": _case, "large": _case, "ties": _case,
               "rows": _case, "optional": _optional_none}
