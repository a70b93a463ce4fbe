"""``python -m grader release|autograde|feedback|grades``: the instructor's command line."""

from .instructor import main

if __name__ == "__main__":
    main()
