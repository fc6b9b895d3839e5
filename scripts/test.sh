#!/usr/bin/env bash
# Runs berth's whole test suite against a real Docker engine, installing and
# starting what it needs on a Debian machine. Extra arguments go to go test.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
export HOME="${HOME:-/root}" # go needs a cache directory

./scripts/ensure-deps.sh

export CGO_ENABLED=0
go vet ./...
# -p 1: packages run one at a time, since some tests restart dockerd or load
# the engine, and the machine has two cores.
go test -count=1 -p 1 -timeout 30m "$@" ./...
# Pod Security levels against Kubernetes' own evaluator: a module of its own,
# so the evaluator's dependencies stay out of berth's go.mod.
(cd test/psa && go vet ./... && go test -count=1 "$@" ./...)
# The real kubectl the e2e tests build: a module of its own too, so that
# kubectl's dependencies stay out of berth's go.mod.
(cd test/kubectl && go vet ./...)
