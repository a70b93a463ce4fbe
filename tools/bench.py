"""`make bench`: every benchmark of the course, each printing its own table."""

import importlib
import sys

BENCHMARKS = [
    ("grading", "tools.bench_grading"),
    ("class autograding", "tools.bench_class"),
    ("insight (300 learners x 14 lessons)", "tools.bench_insight"),
    ("feedback (make feedback, before and now)", "tools.bench_feedback"),
    ("checkpointing", "tools.bench_checkpointing"),
    ("attention", "tools.bench_attention"),
    ("norms (lesson 10)", "tools.bench_norms"),
    ("fused loss", "tools.bench_fused_loss"),
    ("kernels (lesson 13)", "tools.bench_kernels"),
    ("widget responsiveness", "widgets.bench"),
]


def main() -> None:
    selected = set(sys.argv[1:])
    for title, module_name in BENCHMARKS:
        if selected and title.split()[0] not in selected:
            continue
        print(f"=== {title} ({module_name}) ===", flush=True)
        module = importlib.import_module(module_name)
        print(module.run(), flush=True)
        print(flush=True)


if __name__ == "__main__":
    main()
