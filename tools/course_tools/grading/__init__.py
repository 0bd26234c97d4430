"""Exercises for instructors: student releases, autograding in a sandbox, and the markers both read.

    python -m course_tools.grading release notebooks/ release/
    python -m course_tools.grading autograde submissions/ --source notebooks/ --out grades.csv
    python -m course_tools.grading merge-hand-grades --grades grades.csv

See the README's instructor guide for the whole cycle (release, distribute, collect, autograde, feedback).
"""

from .autograde import autograde
from .exercises import Exercise, ExerciseError, find_exercises
from .release import release, release_notebook
from .runner import Limits

__all__ = ["Exercise", "ExerciseError", "Limits", "autograde", "find_exercises", "release", "release_notebook"]
