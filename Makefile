# Two set-up commands for a fresh machine: `make demo` and `make test`.
# Everything is installed into .venv; the Kafka jars into tools/kafka/libs (via Maven).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: install kafka telemetry-plugin lint codegen check-codegen test unit integration test-uvloop test-pythons docs demo bench clean chaos spark-demo fuzz install-kerberos compat-env

# setup.py and the C source too: a changed extension is rebuilt by the next `make`.
$(STAMP): pyproject.toml setup.py aiokafka/record/_cbuilder.c aiokafka/record/_cdecode.c aiokafka/producer/_cfuture.c aiokafka/consumer/_cready.c aiokafka/metrics/_csensor.c aiokafka/_cext.h
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,docs]'
	touch $(STAMP)

install: $(STAMP)

# Kerberos for the GSSAPI tests (tests/integration/test_gssapi.py): the MIT KDC programs
# from Debian's packages and the gssapi extra (built against libkrb5-dev). Idempotent;
# without apt-get or root (or `sudo -n`) it says so and does not fail: those tests then
# skip with the reason.
KRB5_PACKAGES := krb5-kdc krb5-admin-server krb5-user libkrb5-dev
install-kerberos: install
	@if { command -v krb5kdc || [ -x /usr/sbin/krb5kdc ]; } >/dev/null 2>&1 \
	    && command -v krb5-config >/dev/null 2>&1; then :; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	  echo "install-kerberos: no apt-get; install $(KRB5_PACKAGES) to run the GSSAPI tests"; \
	else \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO="sudo -n"; fi; \
	  APT="$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get -y -q"; \
	  $$APT install $(KRB5_PACKAGES) >/dev/null 2>&1 \
	  || { $$APT update >/dev/null 2>&1 && $$APT install $(KRB5_PACKAGES) >/dev/null 2>&1; } \
	  || echo "install-kerberos: could not apt-get install $(KRB5_PACKAGES); GSSAPI tests will skip"; \
	fi
	@$(PY) -c "import gssapi" 2>/dev/null || $(PY) -m pip install --quiet 'gssapi>=1.8' \
	  || echo "install-kerberos: could not build the gssapi package; GSSAPI tests will skip"

# aiokafka==0.14.0 from PyPI for tests/compat (its surface is compared with ours), in a
# virtualenv of its own since it has our import name: benchmark/.venvs/aiokafka014,
# shared with the benchmark harness (one requirement, clients.AIOKAFKA014_REQUIREMENT).
# Once; the tests create it too if it is missing.
compat-env: install
	@$(PY) -c "import benchmark.clients as c; c.ensure_venv(c.AIOKAFKA014_VENV, c.AIOKAFKA014_REQUIREMENT)" \
	  || echo "compat-env: could not install aiokafka==0.14.0 (tests/compat skips only if PyPI is unreachable)"

# Resolve the pinned Apache Kafka and its runtime dependencies from Maven Central (once).
kafka: install
	$(PY) -m tools.kafka fetch

# The broker-side KIP-714 plugin the telemetry tests start a broker with (javac against
# the jars above; tools/kafka/telemetry_plugin.py). Recompiled only when changed.
telemetry-plugin: kafka
	$(PY) -m tools.kafka telemetry-plugin

codegen: install
	$(PY) -m tools.codegen

check-codegen: install
	$(PY) -m tools.codegen --check

lint: install check-codegen
	$(PY) -m ruff check aiokafka tools tests benchmark examples
	$(PY) -m mypy

test: install kafka telemetry-plugin lint docs install-kerberos compat-env
	$(PY) -m pytest $(PYTEST_ARGS)
	$(PY) -m tools.pythons --versions 3.10,3.13

# The package on Python 3.10, 3.12 and 3.13 where they are installed (tools/pythons.py:
# a venv each under .venvs/, the C extensions must build, unit tests and the main
# integration tests; on 3.12+ also with the eager task factory). `make test` runs a
# short set on 3.10 and 3.13.
test-pythons: install kafka
	$(PY) -m tools.pythons --full

unit: install
	$(PY) -m pytest tests/unit $(PYTEST_ARGS)

integration: install kafka telemetry-plugin install-kerberos
	$(PY) -m pytest tests/integration $(PYTEST_ARGS)

# The unit, integration and compat suites with every async test on uvloop's event loop
# (tests/support/loops.py); `make test` runs tests/uvloop/ on it. AIOKAFKA_TEST_LOOP=eager
# (Python 3.12+) runs them with asyncio's eager task factory instead.
test-uvloop: install kafka telemetry-plugin install-kerberos compat-env
	AIOKAFKA_TEST_LOOP=uvloop $(PY) -m pytest tests/unit tests/integration tests/compat $(PYTEST_ARGS)

# HTML documentation into docs/_build/html (Sphinx, docs/conf.py); every warning is an
# error, all of them reported (--keep-going); -E rereads every page so none is skipped.
docs: install
	$(PY) -m sphinx -E -W --keep-going -q -b html docs docs/_build/html

demo: install kafka
	$(PY) examples/demo.py

# A PySpark streaming job on the `aiokafka` data source (JSON events, event-time windows,
# exactly-once to another topic) against a local broker; needs Java 17+ (docs/spark.md).
# pyspark comes with the dev extra (`install`); SPARK_LOCAL_IP keeps Spark on loopback.
spark-demo: install kafka
	SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON=$(abspath $(PY)) $(PY) examples/spark_pipeline.py

bench: install kafka
	$(PY) benchmark/run_all.py

# Faults on a three-broker cluster while clients run, then an independent check
# (tools/chaos): 20 faults, a few minutes; exits non-zero on a lost, duplicated or
# reordered record. CHAOS_ARGS e.g. `--seed 7` or `--client aiokafka014`.
CHAOS_ARGS ?=
chaos: install kafka
	$(PY) -m tools.chaos $(CHAOS_ARGS)

# Mutation fuzzing of every response decoder and record reader (tools/fuzz): 1,000,000
# inputs on two workers, under a minute; exits non-zero on an untyped error, an input
# over 100 ms or growth over 100 MB, with reproducers in tools/fuzz/failures/.
# A 20,000-input version runs in `make test`. FUZZ_ARGS e.g. `--seed 7 --inputs 5000000`.
FUZZ_ARGS ?=
fuzz: install
	$(PY) -m tools.fuzz $(FUZZ_ARGS)

clean:
	rm -rf $(VENV) .venvs .kafka .mypy_cache .ruff_cache .pytest_cache .hypothesis
