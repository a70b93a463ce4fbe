"""The Function contract: the rules every Function of the course obeys, stated once.

The learner reads them on one page (``lessons/function_contract.md``, built into
``course/function_contract.md``); no exercise repeats them, and every exercise is graded on
them. A failed check that enforces a rule ends its first line with ``rule_reference(key)``, so
the learner can look the rule up. An exercise's own contract (its bullets, which
``tools.catalogue.contract_of`` maps to checks and witnesses) says only what it decides.
"""

from dataclasses import dataclass

PAGE = "function_contract.md"


@dataclass(frozen=True)
class Rule:
    number: int
    key: str
    title: str  # the page's heading for the rule, word for word


RULES = (
    Rule(1, "values", "The op's values and gradients, for every input it takes"),
    Rule(2, "gradients", "One gradient per input, `None` where none is needed"),
    Rule(3, "by-hand", "Backward is yours, in memory linear in the sizes"),
    Rule(4, "ctx", "A call keeps its state on its own `ctx`"),
    Rule(5, "unwritten", "Nothing written that you did not create"),
    Rule(6, "caller", "The caller's state is left as it was"),
)
RULE_KEYS = tuple(rule.key for rule in RULES)
_BY_KEY = {rule.key: rule for rule in RULES}


def rule(key: str) -> Rule:
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"no Function contract rule {key!r}; the rules are {RULE_KEYS}") from None


def rule_reference(key: str) -> str:
    """How a failure message names the rule it enforces: '(Function contract, rule 4: ...)'."""
    found = rule(key)
    return f"(Function contract, rule {found.number}: {found.title.replace('`', '')})"
