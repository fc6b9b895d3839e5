#!/usr/bin/env bash
# Builds berth and the example image, then runs berth in the foreground on
# examples/pods/ against the local Docker engine (Ctrl-C stops berth; the
# pods keep running until their files are removed).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
export HOME="${HOME:-/root}" # go needs a cache directory

./scripts/ensure-deps.sh

export CGO_ENABLED=0
mkdir -p bin
go build -o bin/berth .
go build -o bin/testapp ./test/testapp
go run ./hack/buildimage -tag berth/testapp:1 -binary bin/testapp -path /testapp

exec ./bin/berth run --pods "$PWD/examples/pods" --root-dir "${BERTH_ROOT_DIR:-/var/lib/berth}" "$@"
