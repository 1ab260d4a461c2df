# flowgrad: the web app (FastAPI + sandbox worker pool + Graphviz), as operators run it.
#   docker build -t flowgrad . && docker run --rm --init --read-only --tmpfs /tmp -p 8000:8000 flowgrad
# Runtime dependencies only, pinned in requirements/runtime.lock, installed in a stage of their own before any
# code is copied (a code change reuses that layer); code owned by root, run as an unprivileged user; tini as
# PID 1 (reaps the sandbox's killed run processes); writes go to /tmp only (a read-only root filesystem works).
# docker/wheels/ may hold the lock's wheels (scripts/docker_smoke.sh fills it) for a build without an index.
FROM python:3.11-slim-bookworm AS deps
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
COPY requirements/runtime.lock /tmp/runtime.lock
COPY docker/wheels/ /tmp/wheels/
# binutils only here, for `strip`: the wheels' own extension modules carry their symbol tables (uvloop 11 MB,
# kiwisolver 5 MB, fontTools 7 MB); the vendored libraries under *.libs/ are left as auditwheel patched them
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends binutils >/dev/null
# MKL's libraries the engine loads (engine/mkl.py REQUIRED, a test keeps the two equal): its other threading layers,
# interfaces and cluster libraries (~190 MB) and its OpenMP/TBB dependencies are removed (MKL runs sequential)
ENV MKL_KEEP="libmkl_rt.so.2 libmkl_core.so.2 libmkl_intel_lp64.so.2 libmkl_sequential.so.2 libmkl_vml_cmpt.so.2 libmkl_def.so.2 libmkl_mc3.so.2 libmkl_avx2.so.2 libmkl_avx512.so.2 libmkl_vml_def.so.2 libmkl_vml_mc3.so.2 libmkl_vml_avx2.so.2 libmkl_vml_avx512.so.2"
RUN python3 -m venv /opt/venv \
    && if ls /tmp/wheels/*.whl >/dev/null 2>&1; then local_only="--no-index --find-links /tmp/wheels"; fi \
    && /opt/venv/bin/pip install -q $local_only -r /tmp/runtime.lock \
    && /opt/venv/bin/pip uninstall -q -y setuptools intel-openmp intel-cmplr-lib-ur tbb tcmlib umf \
    && cd /opt/venv/lib && for f in libmkl_*; do case " $MKL_KEEP " in *" $f "*) ;; *) rm -f "$f" ;; esac; done \
    && /opt/venv/bin/pip uninstall -q -y pip \
    && find /opt/venv -name '*.cpython-*.so' -not -path '*.libs/*' -exec strip --strip-unneeded {} + \
    && find /opt/venv/lib/python3*/site-packages -mindepth 2 -type d -name tests -prune -exec rm -rf {} + \
    && find /opt/venv -path '*/matplotlib/mpl-data/sample_data' -prune -exec rm -rf {} + \
    && python3 -m compileall -q /opt/venv/lib >/dev/null
# NOTE: bytecode compiled now (+40 MB): a read-only root cannot cache it, and each worker would compile numpy and
# matplotlib again at start (8.5 s instead of 2.5 s on a loaded 2-core machine: past worker_start_timeout_s)

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH \
    HOME=/tmp \
    XDG_CACHE_HOME=/tmp/.cache \
    MPLCONFIGDIR=/tmp/matplotlib \
    FLOWGRAD_HOST=0.0.0.0 \
    FLOWGRAD_PORT=8000
# Graphviz's `dot` and its fonts; tini as init; the font cache built now (a read-only root cannot write it later)
RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends graphviz fonts-dejavu-core tini \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /usr/share/doc/* /usr/share/man/* \
    && fc-cache -f >/dev/null && dot -V \
    && useradd --no-create-home --home-dir /tmp --uid 10001 --shell /usr/sbin/nologin flowgrad
COPY --from=deps /opt/venv /opt/venv

WORKDIR /srv/flowgrad
# code last, owned by root (the runtime user can read it, not rewrite it); compiled now, nothing written later
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY sandbox ./sandbox
COPY app ./app
COPY templates ./templates
COPY static ./static
COPY examples ./examples
RUN python3 -m compileall -q engine sandbox app && dot -c

USER flowgrad
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python3", "-c", "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=4).status != 200)"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["python3", "-m", "app"]
