# Runtime image for a table's edge box: `paigow run`. No torch: models are trained elsewhere and
# shipped as ONNX. Build: docker build -t paigow-edge .   Run: see docker-compose.yml.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 PAIGOW_MODELS=/app/models
WORKDIR /app
COPY pyproject.toml README.md constraints.txt ./
COPY rules ./rules
COPY vision ./vision
COPY edge ./edge
COPY paigow ./paigow
COPY models ./models
RUN pip install --no-cache-dir -c constraints.txt . \
    && useradd --create-home --uid 10001 paigow \
    && mkdir -p /data \
    && chown paigow /data
USER 10001
VOLUME ["/data"]
EXPOSE 9108
# Healthy while the metrics endpoint answers (the service's own alarms go out on /health).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9108/metrics', timeout=4)"]
ENTRYPOINT ["paigow"]
CMD ["run", "--config", "/config/edge.yaml"]
