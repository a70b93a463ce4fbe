"""The verdict format: what a sealed ``grade()`` publishes and the grader believes. Standard
library only, so that the grader reads verdicts without importing torch."""

import hashlib
import hmac
import json
from typing import NamedTuple

KEY_FILE_VARIABLE = "AUTOGRADER_SEAL_KEY_FILE"
VERDICT_MIME = "application/vnd.autograd-course.verdict+json"


def sign(key: bytes, payload: str) -> str:
    return hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()


class Verdict(NamedTuple):
    """One exercise's outcome: passed, the message (its first line the hint), the fraction
    earned (partial credit only) and, for a failure, the mistake: a proven id or a category
    (``autograder.mistakes``)."""

    passed: bool
    message: str
    score: float | None = None
    mistake: str = ""


def verdict_payload(exercise: str, passed: bool, message: str, score: float | None = None,
                    mistake: str = "") -> str:
    """The signed text of a verdict; ``score`` (the fraction earned) only for partial credit,
    ``mistake`` only for a failure."""
    fields = {"exercise": exercise, "passed": passed, "message": message}
    if score is not None:
        fields["score"] = score
    if mistake:
        fields["mistake"] = mistake
    return json.dumps(fields, sort_keys=True)


def read_verdicts(outputs, key: bytes, scores: bool = False) -> dict[str, tuple]:
    """The correctly signed verdicts among a cell's outputs, by exercise: (passed, message), or
    with ``scores`` (passed, message, score), the score None but for partial credit."""
    return {exercise: tuple(found)[:3 if scores else 2]
            for exercise, found in read_signed(outputs, key).items()}


def read_signed(outputs, key: bytes) -> dict[str, Verdict]:
    """The correctly signed verdicts among a cell's outputs, by exercise, each in full."""
    verdicts = {}
    for output in outputs:
        data = output.get("data") if isinstance(output, dict) and output.get("output_type") in (
            "display_data", "execute_result") else None
        sealed = data.get(VERDICT_MIME) if isinstance(data, dict) else None
        if not isinstance(sealed, dict):
            continue
        payload, signature = sealed.get("payload"), sealed.get("signature")
        if not (isinstance(payload, str) and isinstance(signature, str)):
            continue
        try:  # bytes: compare_digest refuses non-ASCII str, and a forgery may contain any
            genuine = hmac.compare_digest(sign(key, payload).encode(), signature.encode())
        except UnicodeEncodeError:  # lone surrogates: never something we signed
            continue
        if genuine:
            fields = json.loads(payload)
            score = fields.get("score")
            verdicts[fields["exercise"]] = Verdict(
                bool(fields["passed"]), str(fields["message"]),
                None if score is None else float(score), str(fields.get("mistake", "")))
    return verdicts
