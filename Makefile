# ksymlab entry point. See README.md.
PYTHON := /usr/bin/python3
# --strict-markers: a misspelt marker (e.g. @pytest.mark.e2 on a slow test) is an
# error, not a silently unselected test; the markers are registered in the conftests.
PYTEST := $(PYTHON) -m pytest --strict-markers
# The unit tests (not marked e2e) are spread over UNIT_JOBS pytest processes
# (python3-pytest-xdist; auto = one per core): much of their time is spent
# waiting on subprocesses, handshakes and a headless browser. The e2e tests run
# in one process: they share runs made once per pytest session
# (harness/tests/e2e_runs.py), which a second process would make again.
UNIT_JOBS ?= auto
# Extra arguments for the harness, e.g. make run RUN_ARGS="--variants exports --kvm"
RUN_ARGS ?=

.PHONY: all deps run build check unit bench mutants post-series post-series-build session clean-runs

all: run

deps:
	@harness/install-deps

## The A/B comparison: build (cached), boot, verify with gdb, write runs/latest/report.md.
run: deps
	$(PYTHON) -m harness run $(RUN_ARGS)

## A verification session a person drives: gdb at the variant's first snapshot with
## the project's commands (`help ksymlab`); V=exports,kallsyms: two side by side
## (docs/session.md). SESSION_ARGS passes more options (e.g. --kaslr).
V ?= exports
SESSION_ARGS ?=
session: deps
	$(PYTHON) -m harness session $(V) $(SESSION_ARGS)

## Only build the kernel variants into the cache.
build: deps
	$(PYTHON) -m harness build

## Every test: symcheck's C unit tests under ASan/UBSan, then pytest: the unit
## tests (UNIT_JOBS processes) beside the e2e tests (one process), which boot
## one-vCPU guests one at a time for most of their time and leave a core idle.
## The unit tests' output follows the e2e tests' (it is kept in a file meanwhile).
check: deps
	$(MAKE) -C symcheck all test
	@log=$$(mktemp /tmp/ksymlab-check-unit-XXXXXX.log); \
	$(PYTEST) -ra -n $(UNIT_JOBS) -m "not e2e" symcheck/tests harness/tests >$$log 2>&1 & \
	pid=$$!; echo "make check: the unit tests run beside the e2e tests, output in $$log"; \
	$(PYTEST) -ra --durations=30 -m e2e symcheck/tests harness/tests; e2e=$$?; \
	wait $$pid; unit=$$?; echo "---- the unit tests ($$log)"; cat $$log; \
	echo "make check: unit tests exit $$unit, e2e tests exit $$e2e"; \
	test $$unit -eq 0 && test $$e2e -eq 0

## Unit tests only (no kernel build, no guest).
unit: deps
	$(MAKE) -C symcheck all test
	$(PYTEST) -ra -n $(UNIT_JOBS) -m "not e2e" symcheck/tests harness/tests

## Benchmark (not a test): cold and warm wall times, then resolution, load and
## call cost per mode under QEMU -icount. BENCH_ARGS=--skip-cold leaves out the
## cold builds (about 20 minutes of both cores).
BENCH_ARGS ?=
bench: deps
	$(PYTHON) -m harness.tools.bench $(BENCH_ARGS)

## Mutation testing (not part of check): every mutant of mutants/catalogue.toml run
## through the harness on one variant; kill rate per kind to stdout and
## runs/mutants-<time>/mutants.{md,json}. MUTANTS_ARGS="--module" skips the
## series mutants (a kernel tree each); --only ID,... and --kind K select.
MUTANTS_ARGS ?=
mutants: deps
	$(MAKE) -C symcheck
	$(PYTHON) -m harness.tools.mutants $(MUTANTS_ARGS)

## The v2 series as its authors would post it (issue 41): git format-patch
## --cover-letter --base into patches/7.2/v2-post/ (committed) with checkpatch
## --strict, kernel-doc -Wall and get_maintainer.pl per patch (checks.md there).
## post-series-build also compiles each patch's files with W=1 before and after it
## (build.md; it needs the exports-v2-7.2 tree built; not part of check). POST_ARGS: --line,
## --series, --out DIR, --keep.
POST_ARGS ?=
post-series: deps
	$(PYTHON) -m harness.tools.postseries $(POST_ARGS)

post-series-build: deps
	$(PYTHON) -m harness.tools.postseries --build $(POST_ARGS)

clean-runs:
	rm -rf runs
