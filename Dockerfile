# Runtime image for the table's edge box: the rules engine and CLI today; the vision and edge
# services join it as they land. No torch: training happens elsewhere.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY rules ./rules
COPY vision ./vision
COPY edge ./edge
COPY paigow ./paigow
RUN pip install --no-cache-dir . \
    && useradd --create-home --uid 10001 paigow
USER paigow
ENTRYPOINT ["paigow"]
CMD ["rulesets"]
