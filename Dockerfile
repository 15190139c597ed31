# The fiscaliza image: the command line, the workers and (with the dockets) the web app.
FROM python:3.11.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY kernel ./kernel
COPY samples ./samples
COPY fiscaliza ./fiscaliza
COPY telemetry ./telemetry
COPY gtfs ./gtfs
COPY geofences ./geofences
COPY trips ./trips
COPY engine ./engine
COPY rules ./rules
COPY simulator ./simulator
COPY streams ./streams
COPY dashboards ./dashboards
COPY dockets ./dockets
COPY ingest ./ingest
COPY ops ./ops
COPY web ./web
# weasyprint (the autos' PDFs) sets text with Pango; DejaVu is the autos' typeface
RUN apt-get update && apt-get install -y --no-install-recommends libpango-1.0-0 libpangoft2-1.0-0 \
        fonts-dejavu-core && rm -rf /var/lib/apt/lists/*
RUN pip install ".[production]" && useradd --system --home /var/lib/fiscaliza fiscaliza \
    && mkdir -p /var/lib/fiscaliza && chown fiscaliza /var/lib/fiscaliza
USER fiscaliza
WORKDIR /var/lib/fiscaliza
ENTRYPOINT []
CMD ["fiscaliza", "--help"]
