# The bookstore service in a container: built on the official Swift image, run on a slim
# Debian with only the C libraries the binary links (libsqlite3, libpq, libxml2 for the
# model files). See docker-compose.yml for running it against PostgreSQL.
#
#   docker build -t bookstore .
#   docker run --rm -p 8080:8080 -v bookstore-data:/data bookstore

# ---- build --------------------------------------------------------------------------
FROM swift:6.3-bookworm AS build

RUN apt-get update \
 && apt-get install -y --no-install-recommends pkg-config libsqlite3-dev libpq-dev \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src
# Dependencies first, so a change to the sources reuses the resolved packages' layer.
COPY Package.swift ./
RUN swift package resolve

COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product bookstore --static-swift-stdlib \
 && mkdir -p /staging/bin \
 && cp "$(swift build -c release --show-bin-path)/bookstore" /staging/bin/

# The models, mapping files and seed catalogue the binary reads at run time.
COPY Migrations /staging/Migrations
COPY Seeds /staging/Seeds

# ---- run ----------------------------------------------------------------------------
FROM debian:bookworm-slim AS runtime

RUN apt-get update \
 && apt-get install -y --no-install-recommends libsqlite3-0 libpq5 libxml2 ca-certificates tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /data --uid 1000 bookstore

COPY --from=build /staging /app

USER bookstore
WORKDIR /data
# Listening on 0.0.0.0, the service refuses to start without write keys: mount a file of
# them that uid 1000 can read and name it, e.g.
# `-v "$PWD/secrets/bookstore-write-keys:/run/secrets/bookstore-write-keys:ro" -e BOOKSTORE_WRITE_KEY_FILE=/run/secrets/bookstore-write-keys`.
ENV BOOKSTORE_RESOURCES=/app \
    BOOKSTORE_STORE=sqlite:///data/bookstore.sqlite \
    BOOKSTORE_HOST=0.0.0.0 \
    BOOKSTORE_PORT=8080
EXPOSE 8080
VOLUME /data

# SIGTERM from `docker stop` lets requests in flight finish and cancels a migration safely.
ENTRYPOINT ["/app/bin/bookstore"]
CMD ["serve"]
