"""nbgrader's configuration in the learners' lab: `make lab` puts this folder on
JUPYTER_CONFIG_PATH, where the Validate button's server extension reads it.

Validate runs the whole notebook in a fresh kernel; nbgrader's own limits (30 s for a cell, 4 s
for its last output) fail the Setup cell on a loaded machine, where importing torch alone can take
half a minute, with a raw CellTimeoutError traceback. Each cell gets the limits grading gives it
(grader/execute.py): AUTOGRADER_CELL_TIMEOUT seconds (120 unless set), and 10 s for its output.
"""

from grader.settings import IOPUB_TIMEOUT, Settings

c = get_config()  # noqa: F821 (get_config is provided by nbgrader)
c.Execute.timeout = Settings.from_environment().cell_timeout
c.Execute.iopub_timeout = IOPUB_TIMEOUT
