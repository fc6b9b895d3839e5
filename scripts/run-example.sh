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

cat <<EOF

berth starts below, in the foreground, on examples/pods/ (Ctrl-C stops berth;
the pods keep running until their files are removed). In another terminal:

  bin/berth get pods                         # web, configured and legacy-hello, Running
  curl http://127.0.0.1:18080/               # the web pod (hostPort 18080)
  curl http://127.0.0.1:18082/               # the configured pod: its ConfigMap's greeting
  bin/berth logs web -c sidecar
  bin/berth describe pod web

  bin/berth kubeconfig > /tmp/berth.kubeconfig
  kubectl --kubeconfig /tmp/berth.kubeconfig get pods

  Edit or remove a file in examples/pods/ and watch berth follow it.

EOF
exec ./bin/berth run --pods "$PWD/examples/pods" --root-dir "${BERTH_ROOT_DIR:-/var/lib/berth}" "$@"
