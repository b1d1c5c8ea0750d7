// `npm run test:e2e` is meant to be pointed at real clusters, so what it may
// touch is pinned here without one: it runs against a recording stand-in for
// kubectl (test/fake-kubectl) and the tests read back every call it made.
// What only a real cluster shows (that the steps pass) is the e2e's own job.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parse, parseAllDocuments } from "yaml";
import { MANIFEST_PATH } from "./manifest.ts";
import { spawnChild } from "./spawn-server.ts";

const fakeKubectlDirectory = fileURLToPath(new URL("fake-kubectl", import.meta.url));
const tsxCli = fileURLToPath(new URL("../node_modules/tsx/dist/cli.mjs", import.meta.url));
const MUTATING = ["create", "apply", "patch", "delete", "replace", "edit", "label", "annotate", "set", "scale"];
// Every object of k8s.yaml, as the stand-in names them, in apply order.
const K8S_YAML_OBJECTS = parseAllDocuments(readFileSync(MANIFEST_PATH, "utf8")).map((document) => {
  const { kind, metadata } = document.toJS();
  return `${kind} ${metadata.namespace ? `${metadata.namespace}/` : ""}${metadata.name}`;
});
const IN_CLUSTER_WEBHOOK = /^(ConfigMap|Service|NetworkPolicy|PodDisruptionBudget|Deployment) /;

type Rule = { when: string; exit?: number; stdout?: string; stderr?: string; hang?: boolean };
type Call = { args: string[]; objects: string[]; input?: string };
const EVERYTHING_EXISTS: Rule = { when: "^get -f - -o name --ignore-not-found", stdout: "it/exists\n" };

function startE2e(rules: Rule[], env: Record<string, string> = {}) {
  const log = join(mkdtempSync(join(tmpdir(), "e2e-")), "calls.jsonl");
  const e2e = spawnChild([process.execPath, tsxCli, "test/e2e.ts"], {
    PATH: `${fakeKubectlDirectory}:${process.env["PATH"]}`,
    FAKE_KUBECTL_LOG: log,
    FAKE_KUBECTL_RULES: JSON.stringify(rules),
    WEBHOOK_URL: undefined,
    ...env,
  });
  const calls = (): Call[] => {
    try {
      return readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line));
    } catch {
      return [];
    }
  };
  return { e2e, calls };
}

async function runE2e(rules: Rule[], env: Record<string, string> = {}) {
  const { e2e, calls } = startE2e(rules, env);
  const code = await e2e.exitCode("the e2e to finish", 30_000);
  return { code, output: e2e.output(), calls: calls() };
}

const verb = (call: Call) => call.args[0] ?? "";
const mutations = (calls: Call[]) => calls.filter((call) => MUTATING.includes(verb(call)));
const objectsOf = (calls: Call[], which: string) => calls.filter((call) => verb(call) === which).flatMap((call) => call.objects);
const runProject = (output: string) => /e2e run ([0-9a-f]{6}) /.exec(output)?.[1];

/**
 * Besides create and delete, only the run's own Projects and their Namespaces
 * are changed, and the CRD only where the run created it, to mark it for deletion.
 */
function assertChangesOnlyItsOwn(calls: Call[], project: string) {
  const createdCrd = objectsOf(calls, "create").includes("CustomResourceDefinition projects.agrrh.com");
  const own = [`project ${project}`, `namespace proj-${project}`, `project ${project}-taken`];
  for (const call of mutations(calls)) {
    if (verb(call) === "create" || (verb(call) === "delete" && call.args[1] === "-f")) continue;
    if (call.args[3] === "--dry-run=server") continue;
    const target = call.args.slice(1, 3).join(" ");
    const allowed = target === "crd projects.agrrh.com" ? createdCrd && verb(call) === "annotate" : own.includes(target);
    assert.ok(allowed, `kubectl ${call.args.join(" ")}`);
  }
  assert.deepEqual(calls.filter((call) => verb(call) === "apply"), [], "nothing is applied over what may be there");
}

describe("e2e: touches only what it creates", () => {
  test("on a cluster without k8s.yaml, a failing step still deletes exactly what the run created, newest first", async () => {
    // The stand-in answers every get with nothing, so step 3's annotation check fails.
    const { code, output, calls } = await runE2e([]);
    assert.equal(code, 1, output);
    const project = `e2e-${runProject(output)}`;
    assert.deepEqual(objectsOf(calls, "create"), [...K8S_YAML_OBJECTS, `Project ${project}`]);
    assert.deepEqual(objectsOf(calls, "delete"), [`Project ${project}`, ...[...K8S_YAML_OBJECTS].reverse()]);
    assertChangesOnlyItsOwn(calls, project);
  });

  test("the cleanup lifts the deletion protection of what the run created, and of nothing else", async () => {
    const { output, calls } = await runE2e([]);
    const project = `e2e-${runProject(output)}`;
    const lifts = calls.filter((call) => ["patch", "annotate"].includes(verb(call))).map((call) => call.args.slice(0, 4).join(" "));
    assert.deepEqual(lifts, [
      `patch project ${project} --type=merge`,
      "annotate crd projects.agrrh.com agrrh.com/allow-deletion=true",
    ]);
    const installed = await runE2e([EVERYTHING_EXISTS]);
    const own = `e2e-${runProject(installed.output)}`;
    const lifted = installed.calls.filter((call) => ["patch", "annotate"].includes(verb(call)));
    assert.deepEqual(lifted.map((call) => call.args.slice(0, 3).join(" ")), [`patch project ${own}`], "an installed CRD stays as it is");
  });

  test("each run names its Project anew", async () => {
    const [first, second] = await Promise.all([runE2e([]), runE2e([])]);
    assert.notEqual(runProject(first.output), runProject(second.output));
  });

  test("a Project of the same name that exists fails the run and is left alone", async () => {
    const { code, output, calls } = await runE2e([
      { when: "^create -f - Project ", exit: 1, stderr: 'Error from server (AlreadyExists): projects.agrrh.com "x" already exists\n' },
    ]);
    assert.equal(code, 1);
    assert.match(output, /AlreadyExists/);
    assert.deepEqual(objectsOf(calls, "delete"), [...K8S_YAML_OBJECTS].reverse(), "only the k8s.yaml it created");
    assert.equal(mutations(calls).filter((call) => call.objects.some((object) => object.startsWith("Project "))).length, 1);
  });

  test("with WEBHOOK_URL, the CompositeController it creates calls that URL, and the in-cluster webhook is not created", async () => {
    const webhookUrl = "http://127.0.0.1:18080/sync";
    const { output, calls } = await runE2e([], { WEBHOOK_URL: webhookUrl });
    const created = calls.filter((call) => verb(call) === "create" && !call.objects.some((object) => object.startsWith("Project ")));
    assert.deepEqual(created.flatMap((call) => call.objects), K8S_YAML_OBJECTS.filter((object) => !IN_CLUSTER_WEBHOOK.test(object)));
    assert.equal(calls.some((call) => call.args.includes("rollout")), false, "no Deployment to wait for");
    const controller = created.find((call) => call.objects[0]?.startsWith("CompositeController "));
    const { hooks } = parse(controller?.input ?? "").spec;
    assert.equal(hooks.sync.webhook.url, "http://127.0.0.1:18080/sync");
    assert.equal(hooks.customize.webhook.url, "http://127.0.0.1:18080/customize");
    assert.match(output, new RegExp(`webhook ${webhookUrl}`));
  });

  test("where k8s.yaml is installed, WEBHOOK_URL is refused before anything is changed", async () => {
    const { code, output, calls } = await runE2e([EVERYTHING_EXISTS], { WEBHOOK_URL: "http://127.0.0.1:18080/sync" });
    assert.equal(code, 1);
    assert.match(output, /e2e refused: k8s\.yaml is installed on this cluster, and WEBHOOK_URL would point/);
    assert.deepEqual(mutations(calls), []);
  });

  test("where k8s.yaml is installed, the run uses it as it is: none of it is created, changed or deleted", async () => {
    const { output, calls } = await runE2e([EVERYTHING_EXISTS]);
    const project = `e2e-${runProject(output)}`;
    assert.deepEqual(objectsOf(calls, "create"), [`Project ${project}`]);
    assert.deepEqual(objectsOf(calls, "delete"), [`Project ${project}`]);
    assertChangesOnlyItsOwn(calls, project);
    assert.match(output, /k8s\.yaml was installed before this run, so it stays as it was/);
  });

  test("where k8s.yaml is partly installed, the run is refused before anything is changed", async () => {
    const { code, output, calls } = await runE2e([
      { when: "^get -f - -o name --ignore-not-found Namespace meta-project$", stdout: "namespace/meta-project\n" },
    ]);
    assert.equal(code, 1);
    assert.match(output, /e2e refused: k8s\.yaml is partly installed \(Namespace meta-project exist/);
    assert.deepEqual(mutations(calls), []);
  });

  test("Ctrl-C during a wait deletes what the run created and exits 130", async () => {
    const { e2e, calls } = startE2e([{ when: "^wait --for=condition=Ready", hang: true }]);
    try {
      await e2e.waitFor(/ok {3}1\. create k8s\.yaml/, "step 1");
      const deadline = Date.now() + 20_000;
      while (!calls().some((call) => call.args.includes("--for=condition=Ready"))) {
        assert.ok(Date.now() < deadline, "the e2e reached its wait for Ready");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      e2e.process.kill("SIGINT");
      assert.equal(await e2e.exitCode("the e2e to clean up and exit", 20_000), 130, e2e.output());
      const project = /Project (e2e-[0-9a-f]{6})/.exec(objectsOf(calls(), "create").join(" "))?.[1];
      assert.deepEqual(objectsOf(calls(), "delete"), [`Project ${project}`, ...[...K8S_YAML_OBJECTS].reverse()]);
    } finally {
      e2e.kill();
    }
  });
});

describe("e2e: says why it does not run", () => {
  for (const [situation, rules, why] of [
    ["kubectl has no current context", [{ when: "^config current-context$", exit: 1, stderr: "error: current-context is not set\n" }], /kubectl has no current context \(error: current-context is not set\)/],
    ["the cluster does not answer", [{ when: "^version ", exit: 1 }], /the cluster of context fake does not answer/],
    ["Metacontroller is not installed", [{ when: "^get crd compositecontrollers", exit: 1 }], /Metacontroller v4 is not installed/],
  ] as const) {
    test(`where ${situation}, it is skipped with exit 0 and changes nothing`, async () => {
      const { code, output, calls } = await runE2e([...rules]);
      assert.equal(code, 0);
      assert.match(output, new RegExp(`^e2e skipped: ${why.source}`, "m"));
      assert.deepEqual(mutations(calls), []);
    });
  }

  test("without kubectl on PATH, it says kubectl is not installed", async () => {
    const { code, output } = await runE2e([], { PATH: mkdtempSync(join(tmpdir(), "empty-path-")) });
    assert.equal(code, 0);
    assert.equal(output, "e2e skipped: kubectl is not installed\n");
  });
});
