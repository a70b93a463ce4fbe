"""grader.releases: what a regrade says of the manual grades and comments it kept."""

from grader.releases import kept_marks_line


def test_the_kept_marks_are_counted_in_words_that_fit():
    """Does a regrade say it kept every mark where none was lost, how many were lost where
    some were (and where they still are), and that there were none where there were none?"""
    assert kept_marks_line(2, 2) == "kept all 2 manual grades and comments"
    assert kept_marks_line(1, 1) == "kept the one manual grade or comment"
    assert kept_marks_line(0, 0) == "no manual grades or comments to keep"
    assert kept_marks_line(2, 3) == ("kept 2 of 3 manual grades and comments; 1 was on cells the "
                                     "lesson no longer has (the gradebook copy above still holds "
                                     "it)")
