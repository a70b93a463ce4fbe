# The front door. `make help` lists the targets.
VENV        ?= .venv
PYTHON      := $(VENV)/bin/python
INSTALLED   := $(VENV)/.installed
PORT        ?= 8888
COURSE_ROOT ?= instructor
WORKERS     ?= $(shell nproc)
PYTEST_ARGS ?=
LAB_ARGS    ?=
LESSONS     ?=
EXERCISES   ?=
NOTEBOOK    ?=
LESSON      ?=
STUDENT     ?=
EXERCISE    ?=
POINTS      ?=
NAME        ?=
AFTER       ?=
COMMENT     ?=
AUTOMATIC   ?=
FORCE       ?=
export COMMENT
# `make lab` is the learners' JupyterLab: nbgrader's instructor tools (Create Assignment,
# Formgrader, Course List) are switched off there; instructors run `jupyter lab` in the course root.
LEARNER_LAB := $(CURDIR)/tools/learner_lab
ROOT_FLAG   := $(if $(filter 0,$(shell id -u)),--allow-root)
export COURSE_ROOT

.DEFAULT_GOAL := help
.PHONY: help install lab test test-all notebooks release add-test autograde manual feedback grades insight results bench mutants generic clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(INSTALLED): requirements.txt pyproject.toml tools/install.sh
	@bash tools/install.sh $(VENV)
	@touch $@

install: $(INSTALLED) ## create .venv with the pinned course environment (CPU torch)

# One line through `env`, no shell: make runs JupyterLab itself, so a SIGTERM reaches it.
LAB_CONFIG  = $(LEARNER_LAB)$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH))
# the course's own workspace (open tabs, layout), not one another course left in ~/.jupyter
LAB_OPTIONS = --ServerApp.root_dir=course --ServerApp.port=$(PORT) --LabApp.extension_manager=readonly \
	--LabApp.workspaces_dir=$(VENV)/lab-workspaces
lab: $(INSTALLED) ## open JupyterLab on the course (PORT=8888)
	env JUPYTER_CONFIG_PATH=$(LAB_CONFIG) $(VENV)/bin/jupyter lab $(LAB_OPTIONS) $(ROOT_FLAG) $(LAB_ARGS)

# The course's own packages byte-compiled before the tests: each kernel, zygote and nbgrader run
# imports them, and where PYTHONDONTWRITEBYTECODE is set (CI's machines) none would cache them.
COMPILE     := $(PYTHON) -m compileall -qq -j 0 autograder grader widgets tools tests
# One pytest worker per core: a third worker on two cores made the run slower (847 s against 803 s).
TEST_WORKERS ?= $(shell nproc)
# Each xdist group on one worker, the groups in the order tests/conftest.py gives them (longest
# first), not xdist's own (the groups with the most tests first, whatever they cost).
TEST_DIST   := --dist loadgroup --no-loadscope-reorder

# the 30 slowest steps close the report: CI's budget is 15 minutes on 2 cores
test: $(INSTALLED) ## the tests CI runs: library, notebooks, nbgrader grading, server, browser
	$(COMPILE)
	$(PYTHON) -m tests.stranger
	$(PYTHON) -m pytest -n $(TEST_WORKERS) $(TEST_DIST) -m "not exhaustive" --durations=30 \
		$(PYTEST_ARGS)

test-all: $(INSTALLED) ## every test, the exhaustive tier too (run it before changing the grading library, a grader or a lesson)
	$(COMPILE)
	$(PYTHON) -m tests.stranger
	$(PYTHON) -m pytest -n $(TEST_WORKERS) $(TEST_DIST) $(PYTEST_ARGS)

notebooks: $(INSTALLED) ## regenerate course/ and solutions/ from lessons/
	$(PYTHON) -m tools.notebooks

release: $(INSTALLED) ## nbgrader generate_assignment for every lesson (LESSONS=...) into instructor/; REGRADE=1 after adding a test cell
	$(PYTHON) -m grader release $(LESSONS) $(if $(REGRADE),--regrade --workers $(WORKERS))

add-test: $(INSTALLED) ## add a test cell of yours to a lesson's source notebook: LESSON= NAME= POINTS= FILE=asserts.py (AFTER=a test cell; then make release)
	$(PYTHON) -m grader add-test $(LESSON) --name "$(NAME)" --points "$(POINTS)" --file "$(FILE)" \
		$(if $(AFTER),--after "$(AFTER)")

autograde: $(INSTALLED) ## autograde instructor/submitted/ in parallel (WORKERS=N), resumable
	$(PYTHON) -m grader autograde $(LESSONS) --workers $(WORKERS)

# COMMENT given, even empty (COMMENT= clears the comment), is passed on; not given, it is kept
MANUAL_COMMENT = $(if $(filter command environment,$(firstword $(origin COMMENT))),--comment "$$COMMENT")
manual: $(INSTALLED) ## points and/or a comment by hand: LESSON= STUDENT= EXERCISE= POINTS= COMMENT= (AUTOMATIC=1 drops the points); many at once: FILE=marks.csv
	$(PYTHON) -m grader manual $(if $(FILE),--file "$(FILE)",$(LESSON) --student "$(STUDENT)" \
		--exercise "$(EXERCISE)" $(strip $(if $(POINTS),--points $(POINTS)) \
		$(if $(AUTOMATIC),--automatic) $(MANUAL_COMMENT)))

feedback: $(INSTALLED) ## nbgrader generate_feedback for every lesson, WORKERS lessons at once; pages already current are kept (FORCE=1 writes all)
	$(PYTHON) -m grader feedback $(LESSONS) --workers $(WORKERS) $(if $(FORCE),--force)

grades: $(INSTALLED) ## export the gradebook to instructor/grades.csv, with status and reason
	$(PYTHON) -m grader grades $(LESSONS)

insight: $(INSTALLED) ## what the class got wrong, per exercise (after autograde): instructor/insight/ (NAMES=1: ids on the page)
	$(PYTHON) -m grader insight $(LESSONS) $(if $(NAMES),--names)

# one after the other (never side by side under -j), each with the same LESSONS=, WORKERS=, FORCE=, NAMES=
results: $(INSTALLED) ## make feedback, make grades and make insight in turn: what to rerun after make autograde or a regrade
	@$(MAKE) --no-print-directory feedback
	@$(MAKE) --no-print-directory grades
	@$(MAKE) --no-print-directory insight

bench: $(INSTALLED) ## grading, insight and widget timings, side by side
	$(PYTHON) -m tools.bench

mutants: $(INSTALLED) ## grade mutants of every answer (LESSONS=, EXERCISES=, NOTEBOOK=your lesson); fails on an unlisted survivor
	$(PYTHON) -m tools.mutants $(LESSONS) $(EXERCISES) $(if $(NOTEBOOK),--notebook $(NOTEBOOK)) --workers $(WORKERS)

generic: $(INSTALLED) ## per exercise, the catalogued mistakes the generic layer (the Function contract's rules) fails alone beside the full battery (LESSONS=, EXERCISES=)
	$(PYTHON) -m tools.generic_only $(LESSONS) $(EXERCISES) --workers $(WORKERS)

clean: ## remove caches and test artifacts (keeps .venv and instructor/)
	rm -rf artifacts .pytest_cache
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +
