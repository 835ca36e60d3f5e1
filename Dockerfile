# Build: docker build --build-arg VERSION=$(git describe --tags --always) -t a2a-registry .
# Run:   docker run -p 127.0.0.1:8080:8080 -v registry-data:/data a2a-registry

FROM golang:1.26-bookworm AS build
WORKDIR /src
# SQLite comes from mattn/go-sqlite3, which needs cgo (gcc is in the image).
ENV CGO_ENABLED=1
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/registry ./cmd/registry

FROM debian:bookworm-slim
# ca-certificates: agents are fetched over HTTPS. The binary links glibc
# dynamically (cgo), which bookworm-slim provides.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 65532 --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin registry \
 && mkdir /data && chown 65532:65532 /data
COPY --from=build /out/registry /usr/local/bin/registry
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
# -p 127.0.0.1:8080:8080) or put an authenticating proxy in front.
ENV REGISTRY_LISTEN=0.0.0.0:8080 \
    REGISTRY_DB=sqlite:/data/registry.db \
    REGISTRY_INSECURE_ALLOW_REMOTE=true
ENTRYPOINT ["registry"]
CMD ["serve"]
