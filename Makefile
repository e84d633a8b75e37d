# 어텐션과 트랜스포머 · Attention and Transformers
#   make book   - build the website into _build/html (creates .venv and installs on first use)
#   make test   - run every test: unit tests, chapters (nbval), bilingual/export/Colab checks,
#                 ruff, the website build with warnings as errors and the browser tests
#   make browser - install Debian's chromium, fontconfig, fonts-nanum and nodejs with apt-get (as root)
#                  where a Chromium or a Korean font is missing: the one step that installs a browser
#   make pdf    - print the built website into one PDF per language (_build/pdf, _build/html/pdf)
#   make bench  - execute each chapter alone, then the book two at a time; write the timing table
#                 (benchmarks/latest.md)

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
JOBS   ?= 2
# The browser tests (tests/test_site.py) drive a Chromium that tools/ensure_browser.sh finds:
# $(CHROMIUM) when given (make test CHROMIUM=/path/to/chrome), else the system's or one that
# Playwright installed before. make test installs no browser and downloads nothing but packages
# from PyPI (pip, into .venv and the Colab-like environment).
CHROMIUM ?=
# The Colab-door pass of `make test` runs every chapter as another machine would (tools/portable.py):
# another seed offset and math-kernel path (defaults there: offset 5; AVX2 kernels on a CPU with
# AVX-512, else SSE4.2). Override to try others:
#   make test PORTABLE_OFFSET=3 PORTABLE_SIMD=sse42     (SIMD paths: native, avx2, sse42, cnr)
PORTABLE_OFFSET ?=
PORTABLE_SIMD ?=

export D2LITE_STRICT_FONTS := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: install browser book pdf test test-changed test-fast test-unit notebooks colab-env bench lint clean

install: $(STAMP)

# A local CPU wheel of torch (pip's find-links) is used when there is one, so a CPU-only
# machine does not download the multi-gigabyte CUDA build; otherwise pip installs torch as usual.
# --no-compile: pip would byte-compile every module it installs (half of its CPU time here:
# 56 s with, 28 s without, for requirements.txt); Python compiles what it imports, once, on use.
$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --no-compile --no-index --no-deps "torch>=2.2" 2>/dev/null || true
	$(PY) -m pip install -q --no-compile -r requirements.txt -e .
	touch $@

# Install what the browser tests need and is missing, from Debian's packages (apt-get, root only:
# chromium, fontconfig, fonts-nanum, nodejs); then print the Chromium found, or fail with one line.
browser:
	CHROMIUM=$(CHROMIUM) PY=$(PY) bash tools/ensure_browser.sh --install

# Chapters whose outputs are not cached yet run first, $(JOBS) at a time (tools/execute.py: every
# chapter computes on one thread, and Jupyter Book would run them one after another).
book: install
	$(PY) -m tools.execute --jobs $(JOBS)
	$(VENV)/bin/jupyter-book build . --builder html -W -n --keep-going

# The whole book as a PDF per language, printed by headless Chromium from the built website:
# _build/pdf/attention-transformers-{ko,en}.pdf, copied to _build/html/pdf/ (the download menu).
pdf: book
	D2LITE_CHROMIUM="$$(CHROMIUM=$(CHROMIUM) PY=$(PY) bash tools/ensure_browser.sh)" \
	  $(PY) -m tools.pdf

# Phase 1 executes every chapter once (nbval, which also fills the build's execution cache)
# beside the unit tests; phase 2 builds the website from that cache and tests it. Without a
# Chromium or a Korean font every other test still runs; then one line says what to install
# (tools/ensure_browser.sh only looks: it installs nothing).
# Both phases spread their work over $(JOBS) workers in the order conftest.py's schedule() gives:
# the longest units first (a chapter's cells, the PDFs' tests), each other test module whole.
# nbval runs bilingual copies of the chapters (both languages' figures, for the website) written
# to _build/nbval; tests/test_colab.py runs the English reader notebooks from an installed wheel.
# The $(JOBS) workers share the cores, so each kernel computes on one thread (OMP_NUM_THREADS, unless
# set): with more threads than free cores, PyTorch's threads spin-wait on one another; chapter 10's
# token-by-token decoding then took 420 s of CPU beside other work instead of 30 s on one thread.
NBVAL_DIR := _build/nbval
# Each phase ends with its 15 slowest tests (--durations): where the time of make test goes.
XDIST := -n $(JOBS) --dist loadscope --no-loadscope-reorder --durations=15

# The Colab-like environment's base (tools/colab_env.py --base: torch and the declared
# dependencies, no d2lite) needs only the system's Python: it installs beside .venv, on the
# other core, and then colab-env adds the wheel.
COLAB_BASE := _build/colab-venv/.base

test:
	@$(MAKE) --no-print-directory -j2 install $(COLAB_BASE)
	@$(MAKE) --no-print-directory colab-env
	@mkdir -p _build; \
	chromium=$$(CHROMIUM=$(CHROMIUM) PY=$(PY) bash tools/ensure_browser.sh 2>_build/.browser); \
	browser=$$?; cat _build/.browser >&2; \
	export D2LITE_CHROMIUM="$$chromium" OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1}; \
	export D2LITE_PORTABLE_OFFSET="$(PORTABLE_OFFSET)" D2LITE_PORTABLE_SIMD="$(PORTABLE_SIMD)"; \
	$(PY) -m tools.notebooks --test-dir $(NBVAL_DIR) >/dev/null \
	  && $(PY) -m pytest $(XDIST) -m "not book" tests $(NBVAL_DIR)/*.ipynb --nbval-lax \
	  && $(PY) -m pytest $(XDIST) -m book tests; status=$$?; \
	if [ $$browser != 0 ]; then tail -n 1 _build/.browser >&2; exit 1; fi; \
	exit $$status

# The library's own tests (d2lite's modules, the scalar checks, the bad-input table, the
# host-synchronization counts, the d2l layer, the package layout), on both cores: the edit-test
# loop for library work. tests/test_ci.py checks that every library test module is listed.
UNIT_TESTS := $(addprefix tests/test_,attention.py bptt.py checks.py corpus.py d2l_compat.py \
	diagrams.py diagrams_bahdanau.py diagrams_efficient.py diagrams_lm.py diagrams_lstm.py \
	diagrams_multihead.py diagrams_positional.py diagrams_transformer.py diagrams_vit.py \
	door.py efficient.py fast_attention.py \
	gpu_ready.py layout.py lm.py multihead.py plot.py pooling.py positional.py promises.py \
	rnn.py seq2seq.py shipped.py text.py train.py transformer.py utils.py views.py vit.py)

test-unit: install
	$(PY) -m pytest -q -n $(JOBS) $(UNIT_TESTS)

# The chapters whose source, library or environment changed since they last passed here
# (tools/changed.py keeps their fingerprints in _build/changed); make test still runs them all.
test-changed: install
	$(PY) -m tools.changed --run

# Everything but the website build and the chapters, for the edit-test loop of tools and pages.
test-fast: install
	$(PY) -m pytest -m "not book and not colab" tests

# The readers' notebooks notebooks/ko and notebooks/en (plain Jupyter markdown, one language).
notebooks: install
	$(PY) -m tools.export
	$(PY) -m tools.notebooks

# A bare virtual environment with the d2lite wheel, as Colab has it (tests/test_colab.py).
colab-env: install $(COLAB_BASE)
	$(PY) -m tools.colab_env

$(COLAB_BASE): pyproject.toml tools/colab_env.py tools/core.py
	$(PYTHON) -m tools.colab_env --base && touch $@

bench: install
	$(PY) -m tools.bench

lint: install
	$(PY) -m ruff check d2lite tests _ext conftest.py tools notebooks

clean:
	rm -rf _build
