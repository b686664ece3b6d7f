# Two entry points for a fresh machine; each sets up .venv itself.
#   make quick   the main pipeline on the embedded digits data (offline, minutes)
#   make test    the test suite (make test-fast: without the `slow` tests, those that start something)
# Other targets: paper (full CIFAR-10 rebuild), variants (the recipe-variant study; study:
# the same, recipe by recipe),
# claims (the paper's claims judged on fresh seeds, config/claims.yaml), manuscript
# (paper/ms.pdf and paper/arxiv.tar.gz; needs TeX, see README), publish (copy the paper
# config's generated pages, figures and PDF into docs/), lint, format, clean.

PYTHON ?= python3
VENV   ?= .venv
CORES  ?= all
EXTRAS ?= dev
BIN     = $(VENV)/bin
# Without a GPU, pin torch to the CPU wheel named in constraints/ci.txt; with one,
# let pip keep (or choose) a CUDA build.
CONSTRAINTS ?= $(if $(shell command -v nvidia-smi 2>/dev/null),,-c constraints/ci.txt)

.PHONY: help setup quick paper variants study claims manuscript publish record paper-from-record \
	test test-fast lint format clean

# one stamp per set of extras: `make test EXTRAS=dev,slurm` after a plain `make setup`
# installs the slurm extra instead of finding the environment up to date
comma := ,
STAMP  = $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

help:  ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 20

$(STAMP): pyproject.toml constraints/ci.txt Makefile
	@echo "setup: installing the project and its dependencies into $(VENV)/ (pip install" \
	  "-e .[$(EXTRAS)]$(if $(CONSTRAINTS), with the CPU build of torch,)): about a minute"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(CONSTRAINTS) -e ".[$(EXTRAS)]"
	touch $@

setup: $(STAMP)  ## make .venv/ with the project installed (every target does it first)

# a fresh clone's record made usable first (python -m credit_assign.infra.record restore;
# nothing where Snakemake's records are all there)
RESTORE = $(BIN)/python -m credit_assign.infra.record restore

quick: setup  ## the whole pipeline on the embedded digits: offline, minutes
	$(BIN)/snakemake --cores $(CORES) --configfile config/quick.yaml --quiet rules host reason

paper: setup  ## the paper config: rebuild from the record, train what it lacks
	$(RESTORE)
	$(BIN)/snakemake --cores $(CORES)

variants: setup  ## the recipe-variant study (config/variants.yaml)
	$(RESTORE)
	$(BIN)/snakemake --cores $(CORES) variants paper/figures/fig4_penalty_rescue.png \
		--configfile config/config.yaml config/variants.yaml $(SNAKEMAKE_ARGS)

# the same study, recipe by recipe (the stated recipe, the open variants, the departing
# ones: python -m credit_assign.planning.estimate --steps), then `variants`: a study
# stopped between recipes holds whole ones. SNAKEMAKE_ARGS: e.g. --config for a data source
STUDY_FILES = config/config.yaml config/variants.yaml
study: setup  ## the variant study recipe by recipe (resumes where it stopped)
	$(RESTORE)
	$(BIN)/python -m credit_assign.planning.estimate --steps $(STUDY_FILES) | \
	while read -r step; do \
		$(BIN)/snakemake --cores $(CORES) $$step --configfile $(STUDY_FILES) \
			$(SNAKEMAKE_ARGS) || exit 1; \
	done
	$(MAKE) variants

# the paper's claims judged on fresh seeds (config/claims.yaml): their runs, verdicts, page
claims: setup  ## the paper's claims on fresh seeds (config/claims.yaml)
	$(RESTORE)
	$(BIN)/snakemake --cores $(CORES) claims $(SNAKEMAKE_ARGS)

# The record (results/README.md): the results kept in git. `make record` writes its index
# and Snakemake's records (every successful snakemake does it too); `make
# paper-from-record` rebuilds RECORD_TARGETS on a fresh clone from the record alone: it
# restores Snakemake's records and the files' order, then runs every step but those
# that compute (COMPUTING): a result the record lacks stops it, naming the file.
COMPUTING = prepare_data|prepare_corpus|train|fresh_b_null|measure|alignment_probe|ep_stack_probe|ep_fixed_point|ep_estimator|ep_question2
RECORD_TARGETS ?= all variants claims paper/ms.pdf
RECORD_FILES ?= config/config.yaml config/variants.yaml
record: setup  ## write the record index of the results (results/README.md)
	$(BIN)/python -m credit_assign.infra.record save
	$(BIN)/python -m credit_assign.infra.record size

paper-from-record: setup  ## every table, figure and the paper from the record, no training
	$(RESTORE)
	$(BIN)/snakemake --cores $(CORES) $(RECORD_TARGETS) --configfile $(RECORD_FILES) \
		--allowed-rules $$($(BIN)/snakemake --list-rules 2>/dev/null | grep -E '^[a-z]' | \
			awk '{print $$1}' | grep -vxE '$(COMPUTING)') $(SNAKEMAKE_ARGS)

# the reproduction paper from the results present (with the study's when it was run)
manuscript: setup  ## paper/ms.pdf and paper/arxiv.tar.gz (needs TeX)
	$(RESTORE)
	$(BIN)/snakemake --cores $(CORES) paper/ms.pdf paper/arxiv.tar.gz \
		--configfile config/config.yaml $(if $(wildcard results/cifar10/default/summary/variants_gap.csv),config/variants.yaml)

# docs/ holds copies of what the paper config, the study and the claims generated (never
# edited by hand): every group whole or none, every problem named before a file is copied
# (PUBLISH: e.g. --only claims)
publish: setup  ## copy the paper config's pages, figures and PDF into docs/
	$(BIN)/python -m credit_assign.publish $(PUBLISH) $(if $(SNAKEMAKE_ARGS),-- $(SNAKEMAKE_ARGS))

# the test modules spread over TEST_WORKERS processes (pytest-xdist; a module's tests stay
# in one process, so its fixtures run once): the slow tests mostly wait on Snakemake's
# subprocesses and the SLURM scheduler, and overlap there
TEST_WORKERS ?= auto
PYTEST = $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

test: setup  ## every test (about 16 min on 2 cores)
	$(PYTEST) --durations=15

# the tests that start nothing: no Snakemake workflow, cluster, wheel or TeX build,
# torch.compile, other program, figure file or repeated whole job (markers workflow,
# cluster, build, compile, process, figure, job;
# each is also `slow`, pyproject.toml); the slowest listed, as in make test
test-fast: setup  ## the tests that start nothing (under a minute)
	$(PYTEST) -m "not slow" --durations=10

lint: setup  ## ruff, import-linter, snakefmt, snakemake --lint
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/snakefmt --check Snakefile workflow/
	$(BIN)/snakemake --lint --configfile config/quick.yaml

format: setup  ## fix what the linters can
	$(BIN)/ruff check --fix .
	$(BIN)/snakefmt Snakefile workflow/

clean:  ## remove outputs (not the record, not .venv/)
	rm -rf results/digits logs paper/figures/*.pdf paper/figures/*.png paper/figures/*.svg .snakemake \
		paper/numbers.tex paper/ms.pdf paper/arxiv.tar.gz paper/build
