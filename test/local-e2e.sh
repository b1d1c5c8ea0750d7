#!/usr/bin/env bash
# `npm run test:e2e:local`: the e2e on a local control plane of its own, as CI
# runs it. It starts etcd, kube-apiserver, kube-controller-manager and
# Metacontroller from ../shared/local-control-plane on an empty etcd, runs the
# webhook on the host exactly as the Deployment runs it (k8s.yaml's bundle on
# the pod's Node 24), runs `npm run test:e2e` against both with a cluster
# required, and stops everything it started, on success, failure, a deadline
# or Ctrl-C (scripts/local-plane.sh). On a failure it prints the webhook's and
# Metacontroller's last lines about the run before stopping them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/local-plane.sh
local_plane_up e2e "$PWD/.cache/local-k8s" 'e2e-'
# helm for the chart's step, built from its Go module the first time (which
# needs the Go module proxy: `npm run runtime-cache` builds it beforehand),
# once there is a plane to run it on.
HELM=$(node --import tsx scripts/helm.ts)

# The steps that restart Metacontroller stop and start it, which only a plane
# of the run's own allows: stopped by its pid file, within a minute, started as up.sh
# starts it. They add about three minutes; on a busy 2-core machine the whole
# run took 20, hence its deadline.
pidfile=$LOCAL_K8S_DIR/run/metacontroller.pid
export METACONTROLLER_STOP="pid=\$(cat $pidfile); kill \$pid; for _ in \$(seq 600); do kill -0 \$pid 2>/dev/null || exit 0; sleep 0.1; done; exit 1"
export METACONTROLLER_START="UP_ONLY=metacontroller METACONTROLLER_LOG_LEVEL=${METACONTROLLER_LOG_LEVEL:-info} timeout 120 $plane/up.sh >/dev/null"

HELM=$HELM WEBHOOK_URL=$webhook_url WEBHOOK_LOG=$logs/webhook.log METACONTROLLER_LOG=$logs/metacontroller.log E2E_REQUIRE_CLUSTER=1 timeout 1800 node --import tsx test/e2e.ts
