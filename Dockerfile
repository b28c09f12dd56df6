# vllm-triage: the GitHub App server. Configuration comes only from environment variables (see docs/app.md).
FROM python:3.12-slim AS build
WORKDIR /src
RUN python -m venv /opt/venv
COPY pyproject.toml README.md constraints.txt ./
COPY bot ./bot
# the exact versions of constraints.txt (.ci/lock-constraints), so two builds of one commit install the same
RUN /opt/venv/bin/pip install --no-cache-dir --constraint constraints.txt '.[postgres]'

FROM python:3.12-slim
RUN useradd --create-home --uid 10001 triage \
    && mkdir -p /data \
    && chown triage /data
COPY --from=build /opt/venv /opt/venv
COPY rules /app/rules
COPY templates /app/templates
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    VLLM_TRIAGE_RULES_DIR=/app/rules \
    VLLM_TRIAGE_TEMPLATES_DIR=/app/templates \
    DATABASE_URL=sqlite:////data/vllm-triage.sqlite3 \
    HOST=0.0.0.0 \
    PORT=8080
USER 10001
WORKDIR /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8080'), timeout=4)"]
CMD ["vllm-triage", "serve"]
