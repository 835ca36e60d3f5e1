#!/bin/sh
# Builds the registry binary the way the image does; the Dockerfile runs
# this script, and deploy/deploy_test.go runs it too, so a build step that
# breaks is caught without a Docker engine.
#
# Usage: VERSION=v1.2.3 deploy/build.sh OUTPUT
set -eu
out="${1:?usage: deploy/build.sh OUTPUT}"
# SQLite comes from mattn/go-sqlite3, which needs cgo.
CGO_ENABLED=1 go build -trimpath -ldflags "-s -w -X main.version=${VERSION:-dev}" -o "$out" ./cmd/registry
