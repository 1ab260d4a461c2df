# flowgrad: the web app (FastAPI + worker pool + Graphviz).
#   docker build -t flowgrad . && docker run --rm -p 8000:8000 flowgrad
# System and Python packages are installed by the Makefile's own steps (`make system`,
# `make .venv/.installed`: the same `pip install -e '.[test]'` as `make setup`), so the image and
# a developer machine cannot drift. Chromium (browser tests only) is left out of the image.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /srv/flowgrad
COPY Makefile ./
# Graphviz's `dot` and fonts, through the Makefile's system step
RUN make system APT_PACKAGES="graphviz fonts-dejavu-core" && rm -rf /var/lib/apt/lists/* \
    && dot -V

RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin flowgrad \
    && chown flowgrad:flowgrad /srv/flowgrad
USER flowgrad

COPY --chown=flowgrad:flowgrad pyproject.toml README.md ./
COPY --chown=flowgrad:flowgrad engine ./engine
COPY --chown=flowgrad:flowgrad sandbox ./sandbox
COPY --chown=flowgrad:flowgrad app ./app
# Python packages, through the Makefile's install step (the same one `make setup` runs)
RUN make .venv/.installed

COPY --chown=flowgrad:flowgrad templates ./templates
COPY --chown=flowgrad:flowgrad static ./static
COPY --chown=flowgrad:flowgrad examples ./examples

ENV FLOWGRAD_HOST=0.0.0.0 \
    FLOWGRAD_PORT=8000
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
    CMD [".venv/bin/python", "-c", "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"]
CMD [".venv/bin/python", "-m", "app"]
