# 어텐션과 트랜스포머 · Attention and Transformers
#   make book   - build the website into _build/html (creates .venv and installs on first use)
#   make test   - run every test: unit tests, chapters (nbval), bilingual/export/Colab checks,
#                 ruff and the website build with warnings as errors
#   make bench  - execute each chapter once and write the timing table (benchmarks/latest.md)

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
JOBS   ?= 2

export D2LITE_STRICT_FONTS := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1
export MPLBACKEND := Agg

.PHONY: install book test test-fast notebooks export bench lint clean

install: $(STAMP)

# A local CPU wheel of torch (pip's find-links) is used when there is one, so a CPU-only
# machine does not download the multi-gigabyte CUDA build; otherwise pip installs torch as usual.
$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --no-index --no-deps "torch>=2.2" 2>/dev/null || true
	$(PY) -m pip install -q -r requirements.txt -e .
	touch $@

book: install
	$(VENV)/bin/jupyter-book build . --builder html -W -n --keep-going

test: install
	$(PY) -m pytest -n $(JOBS) --dist loadscope tests book/*.ipynb --nbval-lax

# Everything but the website build and the chapters: seconds, for the edit-test loop.
test-fast: install
	$(PY) -m pytest -m "not book" tests

notebooks: install
	$(PY) -m d2lite.export
	$(PY) -m d2lite.book notebooks

bench: install
	$(PY) -m d2lite.bench

lint: install
	$(PY) -m ruff check d2lite tests _ext
	$(PY) -m ruff format --check d2lite tests _ext

clean:
	rm -rf _build
