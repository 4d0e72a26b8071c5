# ksymlab entry point. See README.md.
PYTHON := /usr/bin/python3
# --strict-markers: a misspelt marker (e.g. @pytest.mark.e2 on a slow test) is an
# error, not a silently unselected test; the markers are registered in the conftests.
PYTEST := $(PYTHON) -m pytest --strict-markers
# Extra arguments for the harness, e.g. make run RUN_ARGS="--variants exports --kvm"
RUN_ARGS ?=

.PHONY: all deps run build check unit bench mutants session clean-runs

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

## Every test: symcheck's C unit tests under ASan/UBSan, then pytest (symcheck
## against a Debian kernel, the harness, and the end-to-end A/B run).
check: deps
	$(MAKE) -C symcheck all test
	$(PYTEST) -ra --durations=30 symcheck/tests harness/tests

## Unit tests only (no kernel build, no guest).
unit: deps
	$(MAKE) -C symcheck all test
	$(PYTEST) -ra -m "not e2e" symcheck/tests harness/tests

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

clean-runs:
	rm -rf runs
