// `npm run test:e2e` is meant to be pointed at real clusters, so what it may
// touch is pinned here without one: the e2e runs in-process against a
// recording stand-in for kubectl, and the tests read back every call it made.
// No process is started per call, and neither k8s.yaml nor any object sent
// is parsed twice, so a run in-process takes milliseconds; the tests that
// run the real command, to pin what only a process shows (its exit code,
// Ctrl-C), are most of the file's time. What only a real cluster shows (that the steps
// pass) is the e2e's own job, which CI runs on a local control plane.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { parse, parseAllDocuments } from "yaml";
import { runE2e as run, StepSkipped, stepRunner, type E2eOptions } from "./e2e.ts";
import { describeObject, kubectlProcess, standIn, type Call, type Rule } from "../scripts/kubectl.ts";
import { API_VERSION, GROUP, NAMESPACE_PREFIX, PARENT } from "../sync.ts";
import { GUARDRAIL_NAMES, PROFILE } from "../features/guardrails.ts"; // feature: guardrails
import { BUDGET } from "../features/budget.ts"; // feature: budget
import { INTEGRATIONS_NAMESPACE } from "../features/integrations.ts"; // feature: integrations
import { environmentNamespace } from "../features/environments.ts"; // feature: environments
import { readManifest } from "../scripts/manifest.ts";
import { schemaErrors } from "./cel.ts";
import { runObjects } from "./scale.ts";
import { spawnChild, withTsx } from "./spawn-server.ts";

const MUTATING = ["create", "apply", "patch", "delete", "replace", "edit", "label", "annotate", "set", "scale"];
// Every object of k8s.yaml, as the stand-in names them, in apply order.
const manifest = readManifest();
const K8S_YAML_OBJECTS = manifest.objects.map(describeObject);
// The webhook's own objects, which a run with WEBHOOK_URL leaves out: its
// Service, NetworkPolicy, PodDisruptionBudget, Deployment and the ConfigMaps it mounts.
const mounted: string[] = manifest.find("Deployment").spec.template.spec.volumes.flatMap((volume: any) =>
  (volume.projected?.sources ?? []).map((source: any) => source.configMap.name),
);
const IN_CLUSTER_WEBHOOK = new Set(
  manifest.objects
    .filter((object) => ["Service", "NetworkPolicy", "PodDisruptionBudget", "Deployment"].includes(object.kind) || (object.kind === "ConfigMap" && mounted.includes(object.metadata.name)))
    .map(describeObject),
);

const EVERYTHING_EXISTS: Rule = { when: "^get -f - -o name --ignore-not-found", stdout: "it/exists\n" };

function startE2e(rules: Rule[], options: Partial<E2eOptions> = {}) {
  const { kubectl, calls } = standIn(rules);
  const interrupt = new AbortController();
  let output = "";
  const print = (line: string) => (output += `${line}\n`);
  const code = run({
    kubectl,
    interrupted: interrupt.signal,
    cleanupInterrupted: new AbortController().signal,
    log: print,
    error: print,
    pollMs: 0,
    ...options,
  });
  return { code, calls, interrupt, output: () => output };
}

async function runE2e(rules: Rule[], options: Partial<E2eOptions> = {}) {
  const { code, calls, output } = startE2e(rules, options);
  return { code: await code, output: output(), calls };
}

// A server-side dry run changes nothing, even where a guard it tries is missing.
const isDryRun = (call: Call) => call.args.includes("--dry-run=server") || call.args.some((arg) => arg.includes("?dryRun=All"));
const verb = (call: Call) => (isDryRun(call) ? "dry-run" : (call.args[0] ?? ""));
const mutations = (calls: Call[]) => calls.filter((call) => MUTATING.includes(verb(call)));
const objectsOf = (calls: Call[], which: string) => calls.filter((call) => verb(call) === which).flatMap((call) => call.objects);
const runName = (output: string) => /e2e run ([0-9a-f]{6}) /.exec(output)?.[1];
// The names the run's kubectl calls use, from where they are defined.
const CRD = `${PARENT.plural}.${GROUP}`;
const CONTROLLER_NAMESPACE = manifest.find("Deployment").metadata.namespace;
// The role and binding of whom the guards trust.
const TRUSTED_CONTROLLERS = `${CRD}-controller`;

/**
 * Besides create and delete, only the run's own Projects and their Namespaces
 * are changed, and the CRD only where the run created it, to mark it for deletion.
 */
function assertChangesOnlyItsOwn(calls: Call[], project: string) {
  const createdCrd = objectsOf(calls, "create").includes(`CustomResourceDefinition ${CRD}`);
  const namespace = `${NAMESPACE_PREFIX}${project}`;
  const own = [
    `${PARENT.singular} ${project}`,
    `namespace ${namespace}`,
    `${PARENT.singular} ${project}-taken`,
    `${PARENT.singular} ${project}-guarded`, // feature: guardrails
    `${PROFILE.kind.toLowerCase()} ${project}`, // feature: guardrails
  ];
  const createdObjects = objectsOf(calls, "create");
  for (const call of mutations(calls)) {
    if (verb(call) === "create" || (verb(call) === "delete" && call.args[1] === "-f")) continue;
    // Lifting a guard, as the deliberate uninstall does, from what the run created.
    if (call.args[1] === "-f") {
      assert.ok(call.objects.length > 0 && call.objects.every((object) => createdObjects.includes(object)), `kubectl ${call.args.join(" ")} ${call.objects.join(", ")}`);
      continue;
    }
    const target = call.args.slice(1, 3).join(" ");
    const inOwnNamespace = call.args.join(" ").includes(`-n ${namespace} `);
    const allowed =
      target === `crd ${CRD}`
        ? createdCrd && ["annotate", "patch"].includes(verb(call))
        : own.includes(target) ||
          (target.startsWith(`rolebinding ${PARENT.singular}-`) && inOwnNamespace) || // feature: members
          (target === `resourcequota ${GUARDRAIL_NAMES.ResourceQuota}` && call.args.join(" ").includes(`-n ${namespace}-guarded `)) || // feature: guardrails
          false;
    assert.ok(allowed, `kubectl ${call.args.join(" ")}`);
  }
  assert.deepEqual(calls.filter((call) => verb(call) === "apply"), [], "nothing is applied over what may be there");
}

describe("e2e: touches only what it creates", () => {
  test("an object of a kind the cluster does not serve yet counts as absent, so a fresh cluster gets k8s.yaml whole", async () => {
    // kubectl's answer when its discovery knows no such kind, as for a custom resource before its CRD.
    const unknownKind = manifest.objects.find((object) => object.apiVersion === API_VERSION && object.kind !== "CustomResourceDefinition");
    const rules: Rule[] = unknownKind
      ? [{ when: `^get -f - -o name --ignore-not-found ${describeObject(unknownKind)}$`, exit: 1, stderr: `error: resource mapping not found for name: "${unknownKind.metadata.name}": no matches for kind "${unknownKind.kind}" in version "${API_VERSION}"` }]
      : [];
    const { output } = await runE2e(rules);
    assert.match(output, /k8s\.yaml created by this run/);
    assert.ok(output.includes("ok   1. create k8s.yaml"), output);
  });

  test("on a cluster without k8s.yaml, a failing step still deletes exactly what the run created, newest first", async () => {
    // The stand-in answers every get with nothing, so step 3's annotation check fails.
    const { code, output, calls } = await runE2e([]);
    assert.equal(code, 1, output);
    const project = `e2e-${runName(output)}`;
    assert.deepEqual(objectsOf(calls, "create"), [...K8S_YAML_OBJECTS, `${PARENT.kind} ${project}`]);
    assert.deepEqual(objectsOf(calls, "delete"), [`${PARENT.kind} ${project}`, ...[...K8S_YAML_OBJECTS].reverse()]);
    assertChangesOnlyItsOwn(calls, project);
  });

  test("the cleanup lifts the guards against deleting what the run created, and nothing else's, as the deliberate uninstall does", async () => {
    const { output, calls } = await runE2e([]);
    const project = `e2e-${runName(output)}`;
    const lifts = calls.filter((call) => ["patch", "annotate"].includes(verb(call))).map((call) => `${verb(call)} ${call.objects[0] ?? call.args.slice(1, 3).join(" ")}`);
    // Newest first: the Project, then k8s.yaml backwards.
    const guarded = [...manifest.objects].reverse().flatMap((object) => {
      if (/^(Validating|Mutating)AdmissionPolicy/.test(object.kind)) return [`patch ${describeObject(object)}`];
      if (object.kind === "CompositeController") return [`patch ${describeObject(object)}`]; // feature: integrations
      const kept =
        object.kind === "CustomResourceDefinition" ||
        object.kind === PROFILE.kind || // feature: guardrails
        object.kind === BUDGET.kind || // feature: budget
        (object.kind === "Namespace" && object.metadata.name === CONTROLLER_NAMESPACE) ||
        (object.kind === "Namespace" && object.metadata.name === INTEGRATIONS_NAMESPACE) || // feature: integrations
        (/^ClusterRole(Binding)?$/.test(object.kind) && object.metadata.name === TRUSTED_CONTROLLERS);
      return kept ? [`annotate ${describeObject(object)}`] : [];
    });
    guarded.unshift(`patch ${PARENT.singular} ${project}`); // feature: deletion-protection
    assert.deepEqual(lifts, guarded);
    for (const call of calls.filter((candidate) => verb(candidate) === "annotate")) assert.ok(call.args.includes(`${GROUP}/allow-deletion=true`), call.args.join(" "));
    // feature: integrations
    const unhooked = calls.find((call) => verb(call) === "patch" && call.objects[0]?.startsWith("CompositeController "));
    assert.deepEqual(unhooked?.args.slice(3), ["--type=json", "-p", '[{"op":"remove","path":"/spec/hooks/finalize"}]'], "the finalize hook goes first");
    // end feature: integrations
    for (const call of calls.filter((candidate) => verb(candidate) === "patch" && candidate.args[1] === "-f")) {
      if (call.objects[0]?.startsWith("CompositeController ")) continue; // feature: integrations
      assert.deepEqual(call.args.slice(3), ["--type=merge", "-p", '{"metadata":{"finalizers":null}}']);
    }
    const installed = await runE2e([EVERYTHING_EXISTS]);
    const own = `e2e-${runName(installed.output)}`;
    const lifted = installed.calls.filter((call) => ["patch", "annotate"].includes(verb(call)));
    const ownLifted: string[] = [];
    ownLifted.push(`patch ${PARENT.singular} ${own}`); // feature: deletion-protection
    assert.deepEqual(lifted.map((call) => call.args.slice(0, 3).join(" ")), ownLifted, "an installed k8s.yaml stays as it is");
  });

  test("each run names its Project anew", async () => {
    const [first, second] = await Promise.all([runE2e([]), runE2e([])]);
    assert.notEqual(runName(first.output), runName(second.output));
  });

  test("a Project of the same name that exists fails the run and is left alone", async () => {
    const { code, output, calls } = await runE2e([
      { when: `^create -f - ${PARENT.kind} `, exit: 1, stderr: `Error from server (AlreadyExists): ${CRD} "x" already exists\n` },
    ]);
    assert.equal(code, 1);
    assert.match(output, /AlreadyExists/);
    assert.deepEqual(objectsOf(calls, "delete"), [...K8S_YAML_OBJECTS].reverse(), "only the k8s.yaml it created");
    assert.equal(mutations(calls).filter((call) => call.objects.some((object) => object.startsWith(`${PARENT.kind} `))).length, 1);
  });

  test("on a fresh install, the first Project is created only once the API server admits one", async () => {
    const notYet = `Error from server (ServiceUnavailable): Resource kind ${GROUP}/v1, Kind=${PARENT.kind} not found.\n`;
    const dryRun = `^create --dry-run=server -f - ${PARENT.kind} `;
    const { calls } = await runE2e([
      { when: dryRun, exit: 1, stderr: notYet, once: true },
      { when: dryRun, exit: 1, stderr: notYet, once: true },
    ]);
    const dryRuns = calls.flatMap((call, at) => (new RegExp(dryRun).test([...call.args, ...call.objects].join(" ")) ? [at] : []));
    const firstCreate = calls.findIndex((call) => verb(call) === "create" && call.objects.some((object) => object.startsWith(`${PARENT.kind} `)));
    assert.equal(dryRuns.length, 3, "two refused, the third admitted");
    assert.ok(dryRuns[2]! < firstCreate, "the Project is created after the admitted dry run");
  });

  test("on a fresh install, a dry run refused for any other reason fails the run at once, and cleans up", async () => {
    const { code, output, calls } = await runE2e([
      { when: `^create --dry-run=server -f - ${PARENT.kind} `, exit: 1, stderr: 'Error from server (Forbidden): admission webhook "x" denied the request\n' },
    ]);
    assert.equal(code, 1);
    assert.match(output, /dry-run create was refused: .*Forbidden/);
    assert.equal(calls.filter(isDryRun).length, 1, "not retried");
    assert.deepEqual(objectsOf(calls, "delete"), [...K8S_YAML_OBJECTS].reverse());
  });

  test("with WEBHOOK_URL, the CompositeController it creates calls that URL, and the in-cluster webhook is not created", async () => {
    const webhookUrl = "http://127.0.0.1:18080/sync";
    const { output, calls } = await runE2e([], { webhookUrl });
    const created = calls.filter((call) => verb(call) === "create" && !call.objects.some((object) => object.startsWith(`${PARENT.kind} `)));
    assert.deepEqual(created.flatMap((call) => call.objects), K8S_YAML_OBJECTS.filter((object) => !IN_CLUSTER_WEBHOOK.has(object)));
    assert.equal(calls.some((call) => call.args.includes("rollout")), false, "no Deployment to wait for");
    const controller = created.find((call) => call.objects[0]?.startsWith("CompositeController "));
    const { hooks } = parse(controller?.input ?? "").spec;
    assert.equal(hooks.sync.webhook.url, "http://127.0.0.1:18080/sync");
    assert.equal(hooks.customize.webhook.url, "http://127.0.0.1:18080/customize");
    assert.match(output, new RegExp(`webhook ${webhookUrl}`));
  });

  test("where k8s.yaml is installed, WEBHOOK_URL is refused before anything is changed", async () => {
    const { code, output, calls } = await runE2e([EVERYTHING_EXISTS], { webhookUrl: "http://127.0.0.1:18080/sync" });
    assert.equal(code, 1);
    assert.match(output, /e2e refused: k8s\.yaml is installed on this cluster, and WEBHOOK_URL would point/);
    assert.deepEqual(mutations(calls), []);
  });

  test("where k8s.yaml is installed, the run uses it as it is: none of it is created, changed or deleted", async () => {
    const { output, calls } = await runE2e([EVERYTHING_EXISTS]);
    const project = `e2e-${runName(output)}`;
    assert.deepEqual(objectsOf(calls, "create"), [`${PARENT.kind} ${project}`]);
    assert.deepEqual(objectsOf(calls, "delete"), [`${PARENT.kind} ${project}`]);
    assertChangesOnlyItsOwn(calls, project);
    assert.match(output, /k8s\.yaml was installed before this run, so it stays as it was/);
  });

  test("where k8s.yaml is partly installed, the run is refused before anything is changed", async () => {
    const { code, output, calls } = await runE2e([
      { when: `^get -f - -o name --ignore-not-found Namespace ${CONTROLLER_NAMESPACE}$`, stdout: `namespace/${CONTROLLER_NAMESPACE}\n` },
    ]);
    assert.equal(code, 1);
    assert.ok(output.includes(`e2e refused: k8s.yaml is partly installed (Namespace ${CONTROLLER_NAMESPACE} exist`), output);
    assert.deepEqual(mutations(calls), []);
  });

  test("Ctrl-C during a wait deletes what the run created and exits 130", async () => {
    const { code, calls, interrupt, output } = startE2e([{ when: "^wait --for=condition=Ready", hang: true }]);
    while (!calls.some((call) => call.args.includes("--for=condition=Ready"))) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    interrupt.abort();
    assert.equal(await code, 130, output());
    const project = new RegExp(`${PARENT.kind} (e2e-[0-9a-f]{6})`).exec(objectsOf(calls, "create").join(" "))?.[1];
    assert.deepEqual(objectsOf(calls, "delete"), [`${PARENT.kind} ${project}`, ...[...K8S_YAML_OBJECTS].reverse()]);
  });
});

describe("e2e: a failure is readable in a CI log", () => {
  test("a failed step is named, with the cause, and the Project's status and events are printed before the cleanup", async () => {
    const { output } = await runE2e([
      { when: `^get ${PARENT.singular} e2e-[0-9a-f]{6} -o jsonpath=\\{\\.status\\}$`, stdout: '{"conditions":[{"reason":"WaitingForNamespace"}]}' },
      { when: "^get events ", stdout: `LAST SEEN   TYPE      REASON       OBJECT\n5s          Warning   SyncError    ${PARENT.singular}/x\n` },
    ]);
    const project = `e2e-${runName(output)}`;
    assert.match(output, /step "3\. [^"]+" failed: AssertionError/);
    const status = output.indexOf(`status of ${PARENT.kind} ${project}: {"conditions":[{"reason":"WaitingForNamespace"}]}`);
    const events = output.indexOf(`events of ${PARENT.kind} ${project}:\nLAST SEEN`);
    const cleanup = output.indexOf(`ok   cleaned up ${PARENT.kind} ${project}`);
    assert.ok(status >= 0 && events > status && cleanup > events, output);
    assert.match(output, /\ne2e: 2 passed, 1 failed, 0 skipped\n$/, "the closing line counts the steps");
  });
});

describe("e2e: a step that cannot run here says so", () => {
  test("a skipped step is reported skipped with its reason, counted apart from those passed, in the closing line docs/testing.md shows", async () => {
    const lines: string[] = [];
    const { step, summary } = stepRunner((line) => lines.push(line));
    await step("1. runs", async () => {});
    await step("72. needs a tool", async () => {
      throw new StepSkipped("the tool is not built");
    });
    await assert.rejects(step("73. fails", async () => assert.fail("wrong")), /step "73\. fails" failed/);
    assert.match(lines[0] ?? "", /^ok {3}1\. runs \(\d+\.\ds\)$/);
    assert.deepEqual(lines.slice(1), ["skip 72. needs a tool: the tool is not built"]);
    assert.equal(summary(true), "e2e: 1 passed, 1 failed, 1 skipped");
    const documented = /`(e2e: N passed, N failed, N skipped)`/.exec(readFileSync(new URL("../docs/testing.md", import.meta.url), "utf8"))?.[1];
    assert.equal(summary(false).replace(/\b\d+\b/g, "N"), documented, "docs/testing.md shows the closing line as the e2e prints it");
  });
});

describe("e2e: says why it does not run", () => {
  for (const [situation, rules, why] of [
    ["kubectl has no current context", [{ when: "^config current-context$", exit: 1, stderr: "error: current-context is not set\n" }], /kubectl has no current context \(error: current-context is not set\)/],
    ["the cluster does not answer", [{ when: "^version ", exit: 1 }], /the cluster of context fake does not answer/],
    ["Metacontroller is not installed", [{ when: "^get crd compositecontrollers", exit: 1 }], /Metacontroller v4 is not installed/],
  ] as const) {
    test(`where ${situation}, it is skipped with exit 0 and changes nothing; with E2E_REQUIRE_CLUSTER it fails`, async () => {
      const { code, output, calls } = await runE2e([...rules]);
      assert.equal(code, 0);
      assert.match(output, new RegExp(`^e2e skipped: ${why.source}`, "m"));
      assert.deepEqual(mutations(calls), []);
      const required = await runE2e([...rules], { requireCluster: true });
      assert.equal(required.code, 1);
      assert.match(required.output, new RegExp(`^e2e failed: ${why.source}.*, and E2E_REQUIRE_CLUSTER demands a cluster`, "m"));
    });
  }

  test("without kubectl, it says kubectl is not installed", async () => {
    const { code, output } = await runE2e([], { kubectl: kubectlProcess(join(tmpdir(), "no-such-dir", "kubectl")) });
    assert.equal(code, 0);
    assert.equal(output, "e2e skipped: kubectl is not installed\n");
  });
});

// Each test starts processes of its own, so they run at once.
describe("e2e: the command", { concurrency: true }, () => {
  // A kubectl that answers everything at once, except a wait for Ready, which it never finishes.
  const directory = mkdtempSync(join(tmpdir(), "e2e-kubectl-"));
  const kubectl = join(directory, "kubectl");
  writeFileSync(
    kubectl,
    '#!/bin/sh\ncase "$*" in\n  "config current-context") echo fake ;;\n  "wait --for=condition=Ready"*) exec sleep 60 ;;\nesac\nexit 0\n',
  );
  chmodSync(kubectl, 0o755);
  const e2e = (env: Record<string, string>) => spawnChild(withTsx("test/e2e.ts"), { WEBHOOK_URL: undefined, ...env });

  test("npm run test:e2e with E2E_REQUIRE_CLUSTER=1 and no kubectl exits 1; without it, 0", async () => {
    const missing = join(directory, "missing-kubectl");
    const [required, optional] = [e2e({ KUBECTL: missing, E2E_REQUIRE_CLUSTER: "1" }), e2e({ KUBECTL: missing })];
    assert.equal(await required.exitCode("the e2e to fail", 30_000), 1, required.output());
    assert.match(required.output(), /^e2e failed: kubectl is not installed/);
    assert.equal(await optional.exitCode("the e2e to skip", 30_000), 0, optional.output());
  });

  test("npm run test:e2e:local, where the local control plane is absent, says so and exits 0 without starting anything", async () => {
    const missing = join(directory, "no-control-plane");
    const child = spawnChild(["bash", "test/local-e2e.sh"], { LOCAL_CONTROL_PLANE: missing });
    assert.equal(await child.exitCode("the script to skip"), 0, child.output());
    assert.equal(child.output(), `e2e on a local control plane skipped: no ${missing}/up.sh (set LOCAL_CONTROL_PLANE to where it is)\n`);
  });

  test("Ctrl-C stops the run, cleans up and exits 130", async () => {
    const child = e2e({ KUBECTL: kubectl });
    try {
      await child.waitFor(/ok {3}1\. create k8s\.yaml/, "step 1");
      // Step 2 creates the Project, then waits on the kubectl that never ends.
      child.process.kill("SIGINT");
      assert.equal(await child.exitCode("the e2e to clean up and exit", 30_000), 130, child.output());
      assert.match(child.output(), /interrupted: cleaning up/);
      assert.ok(child.output().includes(`ok   cleaned up CustomResourceDefinition ${CRD}`), child.output());
    } finally {
      child.kill();
    }
  });
});

describe("scale: finds and deletes exactly what it creates", () => {
  test("every Project npm run scale creates carries the label it selects them by, and what it needs first is named after the run", () => {
    const { prerequisites, projects, namespaces, selector } = runObjects("scale-abc123", 3);
    const [key = "", value] = selector.split("=");
    assert.equal(projects.length, 3);
    assert.equal(namespaces, 1, "each Project has its one Namespace");
    for (const project of projects) {
      assert.equal(project.metadata.labels[key], value, `${project.metadata.name} is found by ${selector}`);
      assert.ok(project.metadata.name.startsWith("scale-abc123-"));
    }
    for (const object of prerequisites) assert.ok(object.metadata.name.startsWith("scale-abc123"), `${object.kind} is the run's own`);
    assert.equal(projects[0]?.spec["profile"], "scale-abc123", "the Projects name the run's own profile"); // feature: guardrails
  });

  test("what a run creates, with every option it takes, is what the CRDs admit", () => {
    const { prerequisites, projects } = runObjects("scale-abc123", 2, {
      integrations: 2, // feature: integrations
      requesters: 1, // feature: budget
      environments: 3, // feature: environments
    });
    for (const object of [...prerequisites, ...projects]) {
      const crd = readManifest().objects.find((each) => each.kind === "CustomResourceDefinition" && each.spec.names.kind === object.kind);
      if (crd) assert.deepEqual(schemaErrors(crd.spec.versions[0].schema.openAPIV3Schema, object), [], `${object.kind} ${object.metadata.name}`);
    }
  });

  // feature: guardrails & shared
  test("a run shares a Secret and a ConfigMap through its profile, and nothing where told not to", () => {
    const shared = (options: { shared?: boolean }) => {
      const { prerequisites } = runObjects("scale-abc123", 1, options);
      const sources = prerequisites.filter((object) => object.kind === "Secret" || object.kind === "ConfigMap").map((object) => object.kind);
      return { sources, spec: (prerequisites.find((object) => object.kind === PROFILE.kind)?.spec as { shared?: unknown }).shared };
    };
    assert.deepEqual(shared({}), { sources: ["Secret", "ConfigMap"], spec: { secrets: ["scale-abc123"], configMaps: ["scale-abc123"] } });
    assert.deepEqual(shared({ shared: false }), { sources: [], spec: undefined });
  });
  // end feature: guardrails & shared

  // feature: budget
  test("with requesters, each Project lists its creator as an admin, and the run's budget gives each exactly their share", () => {
    const { prerequisites, projects, creators } = runObjects("scale-abc123", 5, { requesters: 2 });
    assert.deepEqual(creators, ["scale-abc123-dev-0", "scale-abc123-dev-0", "scale-abc123-dev-0", "scale-abc123-dev-1", "scale-abc123-dev-1"]);
    projects.forEach((project, index) => assert.ok((project.spec["members"] as { name: string; role: string }[]).some((member) => member.name === creators[index] && member.role === "admin")));
    const budget = prerequisites.find((object) => object.kind === BUDGET.kind) as { spec: { groups: { group: string; projects: number }[] } };
    assert.deepEqual(budget.spec.groups, [{ group: "scale-abc123-devs", projects: 3 }]);
  });
  // end feature: budget

  // feature: environments
  test("with environments, each Project declares that many of the run's own, and the figures per Namespace divide by them", () => {
    const { projects, namespaces } = runObjects("scale-abc123", 2, { environments: 3 });
    assert.equal(namespaces, 3);
    const names = projects.flatMap((project) => (project.spec["environments"] as { name: string }[]).map((environment) => environmentNamespace(project.metadata.name, environment.name)));
    assert.deepEqual(
      names,
      ["0--scale-abc123-env-0", "0--scale-abc123-env-1", "0--scale-abc123-env-2", "1--scale-abc123-env-0", "1--scale-abc123-env-1", "1--scale-abc123-env-2"].map((tail) => `${NAMESPACE_PREFIX}scale-abc123-${tail}`),
    );
  });
  // end feature: environments

  // feature: environments & guardrails
  test("with two or more environments, the last is on a second profile of the run's, as a prod would be, and the others on the run's first", () => {
    const { prerequisites, projects } = runObjects("scale-abc123", 1, { environments: 3 });
    const profiles = prerequisites.filter((object) => object.kind === PROFILE.kind).map((object) => object.metadata.name);
    assert.deepEqual(profiles, ["scale-abc123", "scale-abc123-prod"]);
    assert.deepEqual(
      (projects[0]!.spec["environments"] as { profile?: string }[]).map((environment) => environment.profile),
      [undefined, undefined, "scale-abc123-prod"],
    );
    assert.equal(projects[0]!.spec["profile"], "scale-abc123");
    const { projects: alone } = runObjects("scale-abc123", 1, { environments: 1 });
    assert.deepEqual(alone[0]!.spec["environments"], [{ name: "scale-abc123-env-0" }], "one environment is on the Project's profile: the edit has a quota to reach");
  });
  // end feature: environments & guardrails

  // feature: environments & guardrails & budget
  test("with environments and developers, the developers may use each of the run's profiles", () => {
    const { prerequisites } = runObjects("scale-abc123", 2, { environments: 3, requesters: 2 });
    const use = prerequisites.find((object) => object.kind === "ClusterRole" && object.metadata.name === "scale-abc123");
    assert.deepEqual(use?.["rules"], [{ apiGroups: [GROUP], resources: [PROFILE.plural], resourceNames: ["scale-abc123", "scale-abc123-prod"], verbs: ["use"] }]);
  });
  // end feature: environments & guardrails & budget
});
