"""The verdict format: what a sealed ``grade()`` publishes and the grader believes. Standard
library only, so that the grader reads verdicts without importing torch."""

import hashlib
import hmac
import json

KEY_FILE_VARIABLE = "AUTOGRADER_SEAL_KEY_FILE"
VERDICT_MIME = "application/vnd.autograd-course.verdict+json"


def sign(key: bytes, payload: str) -> str:
    return hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()


def verdict_payload(exercise: str, passed: bool, message: str, score: float | None = None) -> str:
    """The signed text of a verdict; ``score`` (the fraction earned) only for partial credit."""
    fields = {"exercise": exercise, "passed": passed, "message": message}
    if score is not None:
        fields["score"] = score
    return json.dumps(fields, sort_keys=True)


def read_verdicts(outputs, key: bytes, scores: bool = False) -> dict[str, tuple]:
    """The correctly signed verdicts among a cell's outputs, by exercise: (passed, message), or
    with ``scores`` (passed, message, score), the score None but for partial credit."""
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
            verdicts[fields["exercise"]] = (bool(fields["passed"]), str(fields["message"]))
            if scores:
                score = fields.get("score")
                verdicts[fields["exercise"]] += (None if score is None else float(score),)
    return verdicts
