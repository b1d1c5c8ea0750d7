// `npm run test:e2e`: the README's walkthrough, run for real against the
// current kubectl context. It needs a cluster with Metacontroller v4; where
// there is none it says so and exits 0, so that it never fails a machine
// without one.
//
// With WEBHOOK_URL=http://host:port/sync the CompositeController calls a
// webhook running outside the cluster (a local `npm start`) instead of the
// Deployment, for clusters whose pods cannot reach the npm registry.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseAllDocuments, stringify } from "yaml";
import { MANIFEST_PATH } from "./manifest.ts";

const PROJECT = "test";
const NAMESPACE = `proj-${PROJECT}`;
const TIMEOUT = "180s";

function kubectl(args: string[], input?: string) {
  const result = spawnSync("kubectl", args, { input, encoding: "utf8" });
  return { ok: result.status === 0, stdout: result.stdout ?? "", stderr: (result.stderr ?? "") + (result.error?.message ?? "") };
}

function must(args: string[], input?: string): string {
  const result = kubectl(args, input);
  if (!result.ok) throw new Error(`kubectl ${args.join(" ")} failed:\n${result.stderr}`);
  return result.stdout;
}

function step(what: string, action: () => void) {
  const started = Date.now();
  action();
  console.log(`ok   ${what} (${((Date.now() - started) / 1000).toFixed(1)}s)`);
}

function skip(why: string): never {
  console.log(`e2e skipped: ${why}`);
  process.exit(0);
}

/** k8s.yaml as applied: whole, or pointed at an outside webhook without the in-cluster one. */
function manifestToApply(webhookUrl: string | undefined): string {
  const text = readFileSync(MANIFEST_PATH, "utf8");
  if (!webhookUrl) return text;
  const inCluster = ["ConfigMap", "Service", "Deployment"];
  return parseAllDocuments(text)
    .map((document) => document.toJS())
    .filter((object) => !inCluster.includes(object.kind))
    .map((object) => {
      if (object.kind === "CompositeController") object.spec.hooks.sync.webhook.url = webhookUrl;
      return stringify(object);
    })
    .join("---\n");
}

function projectYaml(name: string, license: string) {
  return stringify({
    apiVersion: "agrrh.com/v1",
    kind: "Project",
    metadata: { name },
    spec: { description: "Created by test/e2e.ts", license },
  });
}

const annotation = (key: string) => must(["get", "namespace", NAMESPACE, "-o", `jsonpath={.metadata.annotations.${key}}`]);

// 0. Is there a cluster, and does it run Metacontroller?
const context = kubectl(["config", "current-context"]);
if (!context.ok) skip(`kubectl has no current context (${context.stderr.trim().split("\n")[0]})`);
if (!kubectl(["version", "--request-timeout=5s"]).ok) skip(`the cluster of context ${context.stdout.trim()} does not answer`);
if (!kubectl(["get", "crd", "compositecontrollers.metacontroller.k8s.io"]).ok) {
  skip("Metacontroller v4 is not installed (see the README's prerequisites)");
}

// Deleting the CRD deletes every Project and so every proj-* Namespace: only
// take k8s.yaml down again if this run is what put it up.
const installedBefore = kubectl(["get", "crd", "projects.agrrh.com"]).ok;
const webhookUrl = process.env["WEBHOOK_URL"];
const manifest = manifestToApply(webhookUrl);
console.log(`e2e against context ${context.stdout.trim()}, webhook ${webhookUrl ?? "in the cluster"}`);

try {
  step("1. apply k8s.yaml", () => {
    must(["apply", "-f", "-"], manifest);
    must(["wait", "--for=condition=Established", "crd/projects.agrrh.com", `--timeout=${TIMEOUT}`]);
    if (!webhookUrl) must(["-n", "meta-project", "rollout", "status", "deployment/controller", `--timeout=${TIMEOUT}`]);
  });

  step(`2. create Project ${PROJECT} and wait for Ready`, () => {
    must(["apply", "-f", "-"], projectYaml(PROJECT, "MIT"));
    must(["wait", "--for=condition=Ready", `project/${PROJECT}`, `--timeout=${TIMEOUT}`]);
  });

  step(`3. Namespace ${NAMESPACE} carries the description and license`, () => {
    assert.equal(annotation("description"), "Created by test/e2e.ts");
    assert.equal(annotation("license"), "MIT");
  });

  step("4. a changed license follows onto the Namespace", () => {
    must(["patch", "project", PROJECT, "--type=merge", "-p", '{"spec":{"license":"Apache-2.0"}}']);
    must(["wait", "--for=jsonpath={.metadata.annotations.license}=Apache-2.0", `namespace/${NAMESPACE}`, `--timeout=${TIMEOUT}`]);
  });

  step(`5. a deleted ${NAMESPACE} comes back`, () => {
    const uid = must(["get", "namespace", NAMESPACE, "-o", "jsonpath={.metadata.uid}"]);
    must(["delete", "namespace", NAMESPACE, `--timeout=${TIMEOUT}`]);
    const deadline = Date.now() + 180_000;
    while (!kubectl(["get", "namespace", NAMESPACE]).ok) {
      if (Date.now() > deadline) throw new Error(`${NAMESPACE} did not come back`);
      spawnSync("sleep", ["1"]);
    }
    assert.notEqual(must(["get", "namespace", NAMESPACE, "-o", "jsonpath={.metadata.uid}"]), uid);
    must(["wait", "--for=condition=Ready", `project/${PROJECT}`, `--timeout=${TIMEOUT}`]);
  });

  step("6. a Project whose name cannot become a Namespace is refused at admission", () => {
    const refused = kubectl(["create", "-f", "-"], projectYaml("my.project", "MIT"));
    assert.equal(refused.ok, false, "my.project was admitted");
    assert.match(refused.stderr, /at most 58 lowercase letters/);
  });

  step(`7. deleting Project ${PROJECT} deletes ${NAMESPACE}`, () => {
    must(["delete", "project", PROJECT, `--timeout=${TIMEOUT}`]);
    must(["wait", "--for=delete", `namespace/${NAMESPACE}`, `--timeout=${TIMEOUT}`]);
  });
} finally {
  // Clean up whatever the run made, also after a failure.
  kubectl(["delete", "project", PROJECT, "--ignore-not-found", `--timeout=${TIMEOUT}`]);
  if (installedBefore) {
    console.log("ok   cleaned up Project test; k8s.yaml was installed before this run, so it stays");
  } else {
    kubectl(["delete", "-f", "-", "--ignore-not-found", `--timeout=${TIMEOUT}`], manifest);
    console.log("ok   cleaned up Project test and everything k8s.yaml made");
  }
}
