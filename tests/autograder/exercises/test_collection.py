"""autograder.exercises: every lesson's exercises collected in the course's order."""

from autograder.exercises import EXERCISES


def test_the_transfer_exercises_come_last_in_their_lessons():
    """Is each transfer exercise collected after its lesson's other exercises?"""
    for lesson, last in [("03_ste", "StraightThroughSoftmax"),
                         ("04_double_backward", "NumpyTanh"),
                         ("05_checkpointing", "ReversibleCoupling")]:
        assert [n for n, e in EXERCISES.items() if e.lesson == lesson][-1] == last


def test_each_exercise_is_graded_from_its_own_lessons_package():
    """Does each lesson's folder hold its exercises' batteries, and no other lesson's?"""
    for name, exercise in EXERCISES.items():
        package = exercise.battery.__module__.split(".")[2]
        assert package.startswith(f"lesson{exercise.lesson[:2]}_"), (name, package)
