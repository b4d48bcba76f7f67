# Set-up, build, tests and the demo. `make demo` and `make test` work on a fresh Debian machine:
# both install whatever is missing first (scripts/install-deps.sh).
SHELL := /bin/bash
.DEFAULT_GOAL := build
VENV := .venv
PY := $(VENV)/bin/python
JARS := pyclay/dataclay/_internal/jars
MVN := mvn -B -q -Dstyle.color=never
PYTEST := $(PY) -m pytest -q -p no:cacheprovider

.PHONY: deps build test test-java test-python test-integration demo clean

deps:
	scripts/install-deps.sh

# Java servers (shaded jars placed where the `dataclay` command finds them), Python protocol
# modules generated from proto/, pmclay installed (editable) into the virtualenv, and its wheel in dist/.
build: deps
	$(MVN) -DskipTests install
	mkdir -p $(JARS)
	# copied then renamed (a server started from the old jar keeps reading a whole file), and
	# only when changed: the jars build byte-identical, and a new jar needs new class archives
	for jar in logicmodule/target/logicmodule.jar dataservice/target/dataservice.jar; do \
	  cmp -s $$jar $(JARS)/$$(basename $$jar) || \
	  { cp $$jar $(JARS)/.new.jar && mv $(JARS)/.new.jar $(JARS)/$$(basename $$jar); }; done
	$(PY) pyclay/generate_protos.py
	# the distribution was called pyclay before 0.9: its egg-info (pyclay/ is on sys.path in an editable
	# install) and an old editable install would list a second distribution of the same package
	rm -rf pyclay/pyclay.egg-info
	if $(PY) -m pip show -q pyclay >/dev/null 2>&1; then $(PY) -m pip uninstall -q -y pyclay; fi
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	$(PY) scripts/class_archives.py
	# the wheel (dist/pmclay-<version>-py3-none-any.whl): jars and protocol modules included, built from
	# clean setuptools directories (they would otherwise carry modules deleted since into it); the rest of
	# build/ holds the homes of demo and benchmark clusters
	rm -rf build/lib build/bdist.* dist/pmclay-*.whl
	$(PY) -m pip wheel -q --no-deps --no-build-isolation -w dist .
	rm -rf build/lib build/bdist.*

test: build test-java test-python test-integration

test-java:
	$(MVN) test

test-python:
	$(PYTEST) pyclay/tests

test-integration:
	$(PYTEST) -n 2 --dist loadgroup --durations=25 tests

demo: build
	PATH="$(abspath $(VENV))/bin:$$PATH" scripts/demo.sh

clean:
	$(MVN) clean
	rm -rf $(JARS) pyclay/dataclay/_internal/proto build dist
