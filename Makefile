# The two commands: `make run` and `make test`. See README.md.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000
# The demo serves the site's own error pages; `make run DEBUG=true` for Django's.
DEBUG ?= false

.PHONY: run test test-fast lint lock messages services browser worker beat clean

# The locks (requirements*.txt, compiled from requirements*.in with hashes): pip
# refuses any file whose hash is not in them. `make lock` recompiles them.
$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --disable-pip-version-check --require-hashes -r requirements.txt
	touch $@

$(VENV)/.dev-installed: $(VENV)/.installed requirements-dev.txt
	$(PIP) install --quiet --disable-pip-version-check --require-hashes -r requirements-dev.txt
	touch $@

## lock: recompile the locks from requirements*.in (new pins only where an .in asks;
## `make lock UPGRADE=1` takes the newest releases the .in files allow)
PIP_COMPILE = $(VENV)/bin/pip-compile --quiet --generate-hashes --allow-unsafe \
	--strip-extras --no-emit-index-url --no-emit-find-links $(if $(UPGRADE),--upgrade)
lock: $(VENV)/.dev-installed
	$(PIP_COMPILE) -o requirements.txt requirements.in
	$(PIP_COMPILE) -o requirements-dev.txt requirements-dev.in

## messages: compile locale/*/LC_MESSAGES/django.po (the site's words for
## allauth's pages) into the django.mo committed beside it; needs GNU gettext
messages:
	for po in locale/*/LC_MESSAGES/django.po; do msgfmt --check-format -o $${po%.po}.mo $$po; done

## run: set up the embedded default (SQLite, in-process tasks) and serve the demo
# Links in mail and feeds, and the arXiv User-Agent, name the server being started.
# So do a worker's and beat's beside it (`make worker PORT=8123`).
run worker beat: export MOMENTUM_SITE_URL ?= http://$(HOST):$(PORT)
run: $(VENV)/.installed
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	@echo "Emails (digests, sign-up) are written to $${MOMENTUM_VAR_DIR:-var}/mail/, one file per message."
	DJANGO_DEBUG=$(DEBUG) $(PY) manage.py runserver $(HOST):$(PORT)

## test: lint, check migrations and run the whole suite on PostgreSQL and Redis
test: $(VENV)/.dev-installed services browser lint
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest

## test-fast: the inner loop: lint and the suite without slow, browser and worker tests
test-fast: $(VENV)/.dev-installed lint
	$(PY) -m pytest -q -m "not slow" --ignore=tests/browser --ignore=tests/integration

lint: $(VENV)/.dev-installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

## services: start PostgreSQL and Redis if they are not running
services:
	bin/ensure-services

## browser: install Debian's Chromium for the Playwright tests, if missing
browser:
	bin/ensure-browser

worker: $(VENV)/.installed
	$(VENV)/bin/celery -A config.celery_app worker -Q ingest,fetch,tagging,email,judge,celery --loglevel=INFO

beat: $(VENV)/.installed
	$(VENV)/bin/celery -A config.celery_app beat --loglevel=INFO

clean:
	rm -rf $(VENV) var
