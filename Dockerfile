# Build: docker build --build-arg VERSION=$(git describe --tags --always) -t a2a-registry .
# Run:   docker run -p 127.0.0.1:8080:8080 -v registry-data:/data a2a-registry
# Several replicas on PostgreSQL with sign-in: deploy/compose.yaml, deploy/kubernetes/.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
# deploy/build.sh is the one build command; a test runs it too.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    VERSION="${VERSION}" sh deploy/build.sh /out/registry
# The SQLite volume's mount point, owned by the user the image runs as.
RUN mkdir -p /out/data && chown 65532:65532 /out/data

# distroless/base: glibc (the binary links it through cgo), CA certificates
# (agents are fetched over HTTPS), tzdata, no shell or package manager; the
# :nonroot tag runs as uid 65532.
FROM gcr.io/distroless/base-debian12:nonroot
COPY --from=build /out/registry /usr/local/bin/registry
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
VOLUME /data
EXPOSE 8080
# Settings come from the environment (flags would win over them), so every
# subcommand sees the same database: `docker run IMAGE import /cards/x.json`,
# `docker run IMAGE migrate`, `docker run -e REGISTRY_DB=postgres://… IMAGE`.
#
# Inside a container the server must listen on 0.0.0.0 to be reachable
# through the published port. Without sign-in configured the registry
# refuses a non-loopback address unless the operator opts in, which
# REGISTRY_INSECURE_ALLOW_REMOTE does here: anyone who can reach the port
# can register agents, so publish it only on a trusted network (e.g.
# -p 127.0.0.1:8080:8080) or configure sign-in (REGISTRY_OIDC_*).
ENV REGISTRY_LISTEN=0.0.0.0:8080 \
    REGISTRY_DB=sqlite:/data/registry.db \
    REGISTRY_INSECURE_ALLOW_REMOTE=true
# No curl in the image: the binary asks its own /readyz (database up,
# schema current, search index built).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["registry", "healthcheck"]
ENTRYPOINT ["registry"]
CMD ["serve"]
