"""The contract page's promise, walked over the generic checks' source: "where the check itself is
one of these rules, the line ends with it". Every ``GradingError`` raised in the grading library's
generic modules (``autograder/*.py``, ``autograder/exercises/shared/``) with the id of a rule's
mistake builds its hint with ``rule_reference``; ``GradingError`` itself keeps a case's
'(with ...)' before that reference (``tests/autograder/test_errors.py``)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "autograder"
GENERIC = sorted([*ROOT.glob("*.py"), *(ROOT / "exercises" / "shared").glob("*.py")])

# the ids of mistakes that break one of the Function contract's rules, by rule
RULE_KINDS = {
    "values": {"tensor-on-default-device", "registered-for-some-devices",
               "fake-on-default-device", "raises-on-empty", "raises-on-0-d",
               "wrong-output-dtype"},
    "gradients": {"reads-requires-grad-late", "reads-requires-grad", "gate-on-wrong-entry",
                  "computes-frozen-gradient"},
    "by-hand": {"asks-autograd", "builtin-backward-op"},
    "ctx": {"tensor-on-ctx", "saves-non-tensor", "output-not-saved", "state-on-class",
            "state-outside-ctx", "state-in-default-argument", "state-on-input",
            "state-shared-between-calls", "output-changed-by-later-call",
            "gradient-buffer-shared-between-calls", "second-backward-fails",
            "backward-changes-state-it-reads", "cache-keyed-by-input",
            "wrong-after-in-place-step", "bypasses-saved-tensors", "reads-unguarded-input",
            "saves-untracked-alias", "size-shared-between-calls",
            "requires-grad-shared-between-calls"},
    "unwritten": {"writes-input", "writes-grad-output", "backward-modifies-saved-tensor"},
    "caller": {"changes-caller-state"},
}
RULE_OF = {kind: key for key, kinds in RULE_KINDS.items() for kind in kinds}


def _kind(call: ast.Call) -> str | None:
    """The literal tail of ``mistake=f"{name}/kind"``, else None."""
    for keyword in call.keywords:
        if keyword.arg == "mistake":
            value = keyword.value
            if isinstance(value, ast.JoinedStr) and isinstance(value.values[-1], ast.Constant):
                return value.values[-1].value.rsplit("/", 1)[-1]
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value.rsplit("/", 1)[-1]
    return None


def _raises() -> list[tuple[str, int, str, ast.Call]]:
    found = []
    for path in GENERIC:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "GradingError"
                    and _kind(node) in RULE_OF):
                found.append((path.relative_to(ROOT.parent).as_posix(), node.lineno,
                              _kind(node), node))
    return found


def test_the_walk_finds_the_rule_checks():
    kinds = {kind for _, _, kind, _ in _raises()}
    assert {"tensor-on-ctx", "asks-autograd", "state-on-class", "tensor-on-default-device",
            "writes-grad-output"} <= kinds


@pytest.mark.parametrize("where, line, kind, call",
                         [pytest.param(*raised, id=f"{raised[0]}:{raised[1]}:{raised[2]}")
                          for raised in _raises()])
def test_a_rule_check_ends_its_first_line_with_the_rule(where, line, kind, call):
    hint = call.args[0] if call.args else None
    if isinstance(hint, ast.Name):
        return  # a hint built elsewhere (a variable), checked where it is built
    references = [node for node in ast.walk(call) if isinstance(node, ast.Call)
                  and getattr(node.func, "id", None) == "rule_reference"]
    assert references, f"{where}:{line} raises {kind} (rule {RULE_OF[kind]}) without its reference"
    keys = {ast.literal_eval(node.args[0]) for node in references}
    assert RULE_OF[kind] in keys, f"{where}:{line} names rule {keys}, not {RULE_OF[kind]}"
