"""Why lesson 10's equivalent mutants are equivalent: the reasons both lists share."""

_X_COPY = ("the contract's budget has room for x's size in x's dtype, x or the normalised x: a "
           "copy of x costs what the normalised x costs, and holds x's values")

_STATISTIC_COPY = ("a copy of a per-row statistic forward just computed replaces it in the "
                   "saved set: the same count of per-row tensors, the same values")

_OUTPUT_COPY = ("a copy of a result just computed is returned in its place: the same values, "
                "and the original is freed on return")

_SHIFTED_ONE_PASS = ("the one-pass variance on x shifted by each row's first element loses at "
                     "most a factor of about D to cancellation, not the offset squared: float32 "
                     "keeps the accuracy the contract asks for without widening")

_SIZE_ONE_DIMS = ("a 1-D parameter, and per_channel only appends size-1 dims: view allows that "
                  "for any stride")

_FRESH_VIEW = ("a fresh elementwise result is contiguous: view gives what reshape gives")
