#!/usr/bin/env bash
# `npm run kube-state-metrics`: kube-state-metrics built from its Go module
# into .cache/bin, where e2e step 72 finds it and runs it against the
# cluster with docs/kube-state-metrics.yaml. Once built at this version it is
# not built again. Run it outside any network namespace: the Go module
# proxy must be reachable. Cold, the build took 17 min on a busy 2-core
# machine (4.2 min of CPU, 380 MB of modules, 1.1 GB of build cache).
set -euo pipefail
cd "$(dirname "$0")/.."
version=v2.20.0
bin=.cache/bin/kube-state-metrics
built=$bin.version
if [ -x "$bin" ] && [ "$(cat "$built" 2>/dev/null)" = "$version" ]; then
  echo "$bin is kube-state-metrics $version, built already"
  exit 0
fi
command -v go >/dev/null || { echo "kube-state-metrics: no go on PATH to build it with" >&2; exit 1; }
echo "building kube-state-metrics $version from the Go module proxy into .cache/bin (minutes)"
GOBIN=$PWD/.cache/bin GOFLAGS=-mod=mod go install "k8s.io/kube-state-metrics/v2@$version"
echo "$version" >"$built"
echo "$bin is kube-state-metrics $version"
