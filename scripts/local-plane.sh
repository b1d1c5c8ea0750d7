# Sourced by the scripts that run against a throwaway local control plane of
# their own (local-e2e.sh, walkthrough.sh), so that both start it, and stop
# it, the same way. `local_plane_up NAME STATE_DIR FAILURE_PATTERN` starts etcd,
# kube-apiserver, kube-controller-manager and Metacontroller from
# ${LOCAL_CONTROL_PLANE:-../shared/local-control-plane} on an empty etcd in
# STATE_DIR, then the webhook on the host exactly as the Deployment runs it
# (k8s.yaml's bundle on the pod's Node 24), and sets webhook_url. Everything
# it started stops when the script exits, on success, failure, a deadline or
# Ctrl-C; on a failure it first prints the webhook's last lines and
# Metacontroller's about the objects FAILURE_PATTERN matches. Where the
# control plane is absent it says so and the script exits 0.
local_plane_up() {
  local name=$1 state=$2
  failure_pattern=$3
  plane=$(realpath -m "${LOCAL_CONTROL_PLANE:-../shared/local-control-plane}")
  if [ ! -x "$plane/up.sh" ]; then
    echo "$name on a local control plane skipped: no $plane/up.sh (set LOCAL_CONTROL_PLANE to where it is)"
    exit 0
  fi
  # The control plane listens on fixed ports: one at a time on a machine.
  if curl -sk --max-time 2 https://127.0.0.1:16443/healthz >/dev/null 2>&1; then
    echo "$name on a local control plane refused: an API server already answers on 127.0.0.1:16443; stop it (down.sh) first" >&2
    exit 1
  fi

  export LOCAL_K8S_DIR=$state
  export KUBECONFIG=$LOCAL_K8S_DIR/kubeconfig
  export KUBECTL=$LOCAL_K8S_DIR/bin/kubectl
  # kubectl's discovery cache is kept per server address, and every run's
  # server is 127.0.0.1:16443: a cache of its own keeps one run from seeing the
  # kinds of another's.
  export KUBECACHEDIR=$LOCAL_K8S_DIR/kube-cache
  rm -rf "$KUBECACHEDIR"
  logs=$LOCAL_K8S_DIR/logs
  webhook_pid=
  trap local_plane_down EXIT
  trap 'exit 130' INT TERM

  # An empty cluster every time: nothing an earlier run left can matter.
  rm -rf "$LOCAL_K8S_DIR/data" "$logs"
  METACONTROLLER_LOG_LEVEL=${METACONTROLLER_LOG_LEVEL:-info} timeout 300 "$plane/up.sh"

  local node bundle port=
  { read -r node; read -r bundle; } < <(node --import tsx scripts/runtime-cache.ts)
  # The log exists before the webhook starts: its redirect happens in the
  # child, which a busy machine may run after the first read below.
  : >"$logs/webhook.log"
  PORT=0 HOST=127.0.0.1 "$node" "$bundle" >>"$logs/webhook.log" 2>&1 &
  webhook_pid=$!
  for _ in $(seq 1 100); do
    port=$(sed -n 's|^listening on http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$logs/webhook.log")
    [ -n "$port" ] && break
    kill -0 "$webhook_pid" 2>/dev/null || { echo "the webhook exited at start:" >&2; cat "$logs/webhook.log" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$port" ] || { echo "the webhook did not listen within 10 s" >&2; exit 1; }
  webhook_url=http://127.0.0.1:$port
  echo "webhook: $bundle on $("$node" --version), $webhook_url"
}

# `local_plane_apply`, after local_plane_up: k8s.yaml on that plane for a
# look by hand, as the e2e installs it with WEBHOOK_URL: what would run in a
# pod left out (no kubelet runs), the hooks at the webhook on the host.
local_plane_apply() {
  WEBHOOK_URL=$webhook_url node --import tsx --input-type=module -e \
    'const { manifestObjects } = await import("./test/e2e.ts"); console.log(JSON.stringify({ apiVersion: "v1", kind: "List", items: manifestObjects(process.env.WEBHOOK_URL) }))' |
    "$KUBECTL" apply -f -
}

local_plane_down() {
  local status=$?
  trap - EXIT INT TERM
  if [ "$status" -ne 0 ] && [ -d "$logs" ]; then
    echo "--- the webhook's last lines"; tail -n 30 "$logs/webhook.log" 2>/dev/null || true
    echo "--- Metacontroller's last lines about the run's objects"
    grep -aE "$failure_pattern" "$logs/metacontroller.log" 2>/dev/null | tail -n 30 || true
    echo "--- Metacontroller's last errors"
    grep -a '"level":"error"' "$logs/metacontroller.log" 2>/dev/null | tail -n 10 | cut -c1-400 || true
  fi
  # The webhook's own exit code is not the run's: the control plane goes down whatever it is.
  if [ -n "$webhook_pid" ] && kill -TERM "$webhook_pid" 2>/dev/null; then
    wait "$webhook_pid" 2>/dev/null || echo "the webhook exited with code $? after SIGTERM (see $logs/webhook.log)"
  fi
  DOWN_WIPE=1 timeout 120 "$plane/down.sh" || true
  exit "$status"
}
