#!/usr/bin/env bash
# `npm run walkthrough [-- --check]`: docs/cluster.md's commands on a throwaway
# local control plane of its own (scripts/local-plane.sh, as the e2e's), their
# outputs written back into the page, or with --check compared with it
# (scripts/walkthrough.ts). Its state is in LOCAL_K8S_DIR if set, else in
# .cache/walkthrough-k8s, apart from the e2e's.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/local-plane.sh
local_plane_up walkthrough "${LOCAL_K8S_DIR:-$PWD/.cache/walkthrough-k8s}" .

# What scripts/walkthrough.ts checks that the cluster it talks to is this one.
WALKTHROUGH_CLUSTER_UID=$("$KUBECTL" get namespace kube-system -o 'jsonpath={.metadata.uid}')
export WALKTHROUGH_CLUSTER_UID
WEBHOOK_URL=$webhook_url timeout 600 node --import tsx scripts/walkthrough.ts "$@"
