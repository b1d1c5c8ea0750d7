// `npm run uninstall` deletes a whole install, so what it deletes, in which
// order, and when it refuses is pinned here against a recording stand-in for
// kubectl. That it leaves nothing on a real cluster is e2e step 52's job.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import pluralize from "pluralize";
import { GROUP, PARENT, namespaceNameFor } from "../sync.ts";
import { PROFILE } from "../features/guardrails.ts"; // feature: guardrails
import { INTEGRATIONS_NAMESPACE } from "../features/integrations.ts"; // feature: integrations
import { SHAREABLE_LABEL } from "../features/shared.ts"; // feature: shared
import { standIn, type Call, type Rule } from "../scripts/kubectl.ts";
import { readManifest } from "../scripts/manifest.ts";
import { spawnChild, withTsx } from "./spawn-server.ts";
import { DELETION_ANNOTATION, INSTALL_NAMESPACE, Refusal, uninstall, type UninstallOptions } from "../scripts/uninstall.ts";

const MANIFEST = readManifest().objects;
const ROLE_OF_K8S_YAML = MANIFEST.find((object) => object.kind === "ClusterRole")!.metadata.name;
const MUTATING = /^(delete|annotate|patch|label|create|apply)$/;

const list = (items: unknown[]) => JSON.stringify({ items });
const projectItem = (name: string, spec: object = {}, uid = `uid-of-${name}`) => ({ metadata: { name, uid }, spec, status: { namespace: namespaceNameFor(name) } });
const binding = (kind: string, name: string, role: string, namespace?: string) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind,
  metadata: namespace ? { name, namespace } : { name },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
});

/** A cluster with the whole install, two Projects, a binding of one of its roles and one of an unrelated role. */
function installed(overrides: Rule[] = []): Rule[] {
  return [
    ...overrides,
    { when: "^auth can-i \\* \\* --all-namespaces", stdout: "yes\n" },
    { when: "^get -f - -o json --ignore-not-found", stdout: list(MANIFEST.map(({ kind, metadata }) => ({ kind, metadata }))) },
    { when: `^get ${PARENT.plural} -o json`, stdout: list([projectItem("shop"), projectItem("web")]) },
    {
      when: "^get clusterrolebindings,rolebindings",
      stdout: list([binding("ClusterRoleBinding", "everyone-binds-projects", ROLE_OF_K8S_YAML), binding("ClusterRoleBinding", "cluster-admin", "cluster-admin")]),
    },
    { when: "^get namespaces -o json", stdout: list([]) },
    { when: `^get ${PROFILE.plural} -o name`, stdout: `${PROFILE.kind.toLowerCase()}.${GROUP}/default\n` }, // feature: guardrails
  ];
}

async function run(rules: Rule[], options: Partial<UninstallOptions> = {}) {
  const { kubectl, calls } = standIn(rules);
  const lines: string[] = [];
  let refusal: Error | undefined;
  try {
    await uninstall({ kubectl, log: (line) => lines.push(line), signal: new AbortController().signal, ...options });
  } catch (failure) {
    if (!(failure instanceof Refusal)) throw failure;
    refusal = failure;
  }
  const changes = calls.filter((call) => MUTATING.test(call.args[0] ?? ""));
  return { calls, changes, output: lines.join("\n"), refusal };
}

const describeCall = (call: Call) => [...call.args, ...call.objects].join(" ");

describe("uninstall: refuses before it deletes anything", () => {
  test("someone who is not a cluster admin is refused, and nothing is read or deleted", async () => {
    const { changes, refusal, calls } = await run(installed([{ when: "^auth can-i", stdout: "no\n", exit: 1 }]), { yes: true });
    assert.match(refusal?.message ?? "", /only a cluster admin can uninstall/);
    assert.deepEqual(changes, []);
    assert.equal(calls.length, 1);
  });

  test("with nobody at a terminal and no --yes, it lists what it would delete and deletes nothing", async () => {
    const { changes, refusal, output } = await run(installed());
    assert.match(refusal?.message ?? "", /run it again with --yes/);
    assert.deepEqual(changes, []);
    assert.ok(output.includes(`Project shop, and Namespace ${namespaceNameFor("shop")} with everything in it`), output);
    assert.match(output, /ClusterRoleBinding everyone-binds-projects, which binds a role of k8s\.yaml/);
    assert.doesNotMatch(output, /cluster-admin/);
    for (const object of MANIFEST) assert.ok(output.includes(`${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ""}${object.metadata.name}`), `${object.kind} ${object.metadata.name} listed`);
  });

  test("an answer other than the install's Namespace deletes nothing", async () => {
    const asked: string[] = [];
    const { changes, refusal } = await run(installed(), { confirm: async (question) => (asked.push(question), "yes") });
    assert.match(asked[0] ?? "", new RegExp(`Type ${INSTALL_NAMESPACE} to delete`));
    assert.match(refusal?.message ?? "", /not confirmed/);
    assert.deepEqual(changes, []);
  });

  test("a Project created between the listing and the admin's confirmation stops it before anything is deleted, and is never deleted", async () => {
    const listed = { when: `^get ${PARENT.plural} -o json`, once: true, stdout: list([projectItem("shop"), projectItem("web")]) };
    const since = { when: `^get ${PARENT.plural} -o json`, stdout: list([projectItem("shop"), projectItem("web"), projectItem("late")]) };
    let confirmed = false;
    const { calls, changes, output, refusal } = await run(installed([listed, since]), { confirm: async () => ((confirmed = true), INSTALL_NAMESPACE) });
    assert.ok(confirmed, "the admin was asked");
    assert.doesNotMatch(output, /late/, "not in the listing the admin confirmed");
    assert.match(refusal?.message ?? "", new RegExp(`the ${pluralize(PARENT.kind)} changed since they were listed\. Nothing was deleted: run it again\.`));
    assert.deepEqual(changes, []);
    assert.ok(!calls.some((call) => describeCall(call).includes("late")), calls.map(describeCall).join("\n"));
  });

  test("a Project listed but gone by the confirmation, and one made in its place under another name, stop it too", async () => {
    const listed = { when: `^get ${PARENT.plural} -o json`, once: true, stdout: list([projectItem("shop"), projectItem("web")]) };
    const swapped = { when: `^get ${PARENT.plural} -o json`, stdout: list([projectItem("shop"), projectItem("wet")]) };
    const { changes, refusal } = await run(installed([listed, swapped]), { confirm: async () => INSTALL_NAMESPACE });
    assert.match(refusal?.message ?? "", /changed since they were listed/);
    assert.deepEqual(changes, []);
  });

  test("a Project deleted and made anew under a listed name before the confirmation is another Project, and stops it too", async () => {
    const listed = { when: `^get ${PARENT.plural} -o json`, once: true, stdout: list([projectItem("shop"), projectItem("web")]) };
    const remade = { when: `^get ${PARENT.plural} -o json`, stdout: list([projectItem("shop"), projectItem("web", {}, "uid-of-another-web")]) };
    const { changes, refusal } = await run(installed([listed, remade]), { confirm: async () => INSTALL_NAMESPACE });
    assert.match(refusal?.message ?? "", /changed since they were listed/);
    assert.deepEqual(changes, []);
  });

  // feature: deletion-protection
  test("a Project with deletionProtection stops it before anything is deleted, with the command that lifts it", async () => {
    const guarded = { when: `^get ${PARENT.plural} -o json`, stdout: list([projectItem("shop"), projectItem("vault", { deletionProtection: true })]) };
    const { changes, refusal } = await run(installed([guarded]), { yes: true });
    assert.match(refusal?.message ?? "", /Project vault has deletionProtection.*kubectl patch project vault --type=merge -p '\{"spec":\{"deletionProtection":false\}\}'/);
    assert.deepEqual(changes, []);
  });

  test("a Project protected while the list was read stops it before anything is deleted", async () => {
    const listed = { when: `^get ${PARENT.plural} -o json`, once: true, stdout: list([projectItem("shop"), projectItem("web")]) };
    const protectedSince = { when: `^get ${PARENT.plural} -o json`, stdout: list([projectItem("shop"), projectItem("web", { deletionProtection: true })]) };
    const { changes, refusal } = await run(installed([listed, protectedSince]), { yes: true });
    assert.match(refusal?.message ?? "", /Project web has deletionProtection.*Nothing was deleted/);
    assert.deepEqual(changes, []);
  });
  // end feature: deletion-protection

  test("a cluster without the install is left as it is", async () => {
    const empty = [
      { when: "^get -f - -o json --ignore-not-found", stdout: list([]) },
      { when: `^get ${PARENT.plural}`, exit: 1, stderr: `error: the server doesn't have a resource type "${PARENT.plural}"` },
      { when: "^get clusterrolebindings,rolebindings", stdout: list([]) },
      { when: "^get \\S+ -o name", exit: 1, stderr: "error: the server doesn't have a resource type" },
    ];
    const { changes, output } = await run(installed(empty), { yes: true });
    assert.deepEqual(changes, []);
    assert.match(output, /nothing to delete/);
  });
});

describe("uninstall: the guards stay until nothing is left to guard", () => {
  test("the bindings of k8s.yaml's roles go first, so that nobody creates a Project meanwhile, then the Projects, then the kept objects are marked, the policies released and k8s.yaml deleted", async () => {
    const { calls, refusal } = await run(installed(), { yes: true });
    assert.equal(refusal, undefined);
    const order = calls.filter((call) => MUTATING.test(call.args[0] ?? "") || call.args[0] === "wait").map(describeCall);
    const at = (pattern: RegExp) => {
      const index = order.findIndex((call) => pattern.test(call));
      assert.notEqual(index, -1, `${pattern} in\n${order.join("\n")}`);
      return index;
    };
    const bindings = at(/^delete -f - --ignore-not-found ClusterRoleBinding everyone-binds-projects$/);
    const projects = at(new RegExp(`^delete ${PARENT.plural} shop web --ignore-not-found --wait=false$`));
    const emptied = at(new RegExp(`^wait --for=delete namespace/${namespaceNameFor("shop")} namespace/${namespaceNameFor("web")} `));
    const marked = at(new RegExp(`^annotate -f - ${DELETION_ANNOTATION.replaceAll(".", "\\.")}=true --overwrite .*CustomResourceDefinition`));
    const released = at(/^patch -f - --type=merge -p \{"metadata":\{"finalizers":null\}\} .*ValidatingAdmissionPolicy /);
    const deleted = at(new RegExp(`^delete -f - --ignore-not-found --timeout=\\S+ Namespace ${INSTALL_NAMESPACE}`));
    assert.ok(bindings < projects && projects < emptied && emptied < marked && marked < released && released < deleted, order.join("\n"));
    assert.ok(!order.some((call) => call.includes("cluster-admin")), "a binding of another role is left alone");
    assert.equal(calls.find((call) => describeCall(call) === order[deleted])?.objects.length, MANIFEST.length, "every object of k8s.yaml");
  });

  test("a Project that does not go within the deadline stops the uninstall with every guard in place", async () => {
    const stuck = { when: `^wait --for=delete ${PARENT.singular}/shop`, exit: 1, stderr: "timed out waiting for the condition" };
    const { changes, refusal } = await run(installed([stuck]), { yes: true });
    assert.match(refusal?.message ?? "", /did not go within [\s\S]*so the install and its guards stay[\s\S]*Deleted already: ClusterRoleBinding everyone-binds-projects, 2 Projects\b/);
    assert.deepEqual(changes.map(describeCall), ["delete -f - --ignore-not-found ClusterRoleBinding everyone-binds-projects", `delete ${PARENT.plural} shop web --ignore-not-found --wait=false`]);
  });

  test("a Project that someone created while the others went stops the uninstall with every guard in place", async () => {
    const late = { when: `^get ${PARENT.plural} -o name`, stdout: `${PARENT.singular}.${GROUP}/late\n` };
    const { changes, refusal } = await run(installed([late]), { yes: true });
    assert.match(refusal?.message ?? "", new RegExp(`${PARENT.singular}\\.${GROUP.replaceAll(".", "\\.")}/late came meanwhile`));
    assert.ok(!changes.some((call) => /^(annotate|patch)$/.test(call.args[0] ?? "") || describeCall(call).startsWith("delete -f - --ignore-not-found --timeout")), changes.map(describeCall).join("\n"));
  });
  test("a Namespace that does not go, something in it held by a finalizer, stops the uninstall before the guards go, saying what holds it", async () => {
    const held = { when: `^wait --for=delete namespace/`, exit: 1, stderr: "timed out waiting for the condition" };
    const holding = { when: "^get namespaces .* -o jsonpath", stdout: `${namespaceNameFor("shop")}: Some content in the namespace has finalizers remaining: robin.example/hold in 1 resource instances\n` };
    const { changes, refusal } = await run(installed([held, holding]), { yes: true });
    assert.match(refusal?.message ?? "", /these Namespaces did not go[\s\S]*finalizers remaining: robin\.example\/hold[\s\S]*the install and its guards stay/);
    assert.ok(!changes.some((call) => /^(annotate|patch)$/.test(call.args[0] ?? "")), changes.map(describeCall).join("\n"));
  });

  test("the Namespace of a Project an earlier run deleted is waited for too, and listed", async () => {
    const earlier = { when: "^get namespaces -o json", stdout: list([{ metadata: { name: namespaceNameFor("gone"), deletionTimestamp: "2026-12-02T00:00:00Z", ownerReferences: [{ apiVersion: `${GROUP}/v1`, kind: PARENT.kind, name: "gone", uid: "u" }] } }, { metadata: { name: "tenant-made", deletionTimestamp: "2026-12-02T00:00:00Z" } }]) };
    const { calls, output } = await run(installed([earlier]), { yes: true });
    assert.ok(output.includes(`Namespace ${namespaceNameFor("gone")}, whose ${PARENT.kind} is gone already, is still being deleted`), output);
    assert.ok(calls.some((call) => call.args[0] === "wait" && call.args.includes(`namespace/${namespaceNameFor("gone")}`)));
    assert.ok(!calls.some((call) => call.args.includes("namespace/tenant-made")), "one no Project owned");
  });
});

describe("uninstall: what is an admin's own", () => {
  const role = (kind: string, name: string, apiGroups: string[], more: object = {}) => ({ apiVersion: "rbac.authorization.k8s.io/v1", kind, metadata: { name, ...more }, rules: [{ apiGroups, resources: ["*"], verbs: ["use"] }] });
  const theirs = [
    { when: "^get clusterroles,roles", stdout: list([
      role("ClusterRole", "use-our-group", [GROUP]),
      role("ClusterRole", "cluster-admin", ["*"]),
      role("ClusterRole", `${PARENT.plural}.${GROUP}:shop:owned`, [GROUP], { ownerReferences: [{ apiVersion: `${GROUP}/v1`, kind: PARENT.kind, name: "shop" }] }),
    ]) },
    { when: "^get clusterrolebindings,rolebindings", stdout: list([binding("ClusterRoleBinding", "team-uses-our-group", "use-our-group"), binding("ClusterRoleBinding", "cluster-admin", "cluster-admin")]) },
  ];
  const DELETE_THEIRS = "delete -f - --ignore-not-found ClusterRoleBinding team-uses-our-group ClusterRole use-our-group";

  test("an admin's own roles naming the install's group, and their bindings, are listed and kept, with the command that deletes them; Metacontroller's and unrelated roles are not theirs", async () => {
    const { output, changes } = await run(installed(theirs), { yes: true });
    assert.match(output, /These roles and bindings of yours name the install's resources[^\n]*\n  ClusterRoleBinding team-uses-our-group\n  ClusterRole use-our-group\n/);
    assert.doesNotMatch(output, /ClusterRole (cluster-admin|.*:shop:owned)/);
    assert.ok(!changes.some((call) => describeCall(call) === DELETE_THEIRS), "kept under --yes");
    assert.match(output, /to delete them: kubectl delete clusterrolebinding team-uses-our-group; kubectl delete clusterrole use-our-group$/);
  });

  test("at a terminal, the admin is offered to delete them too, and a yes deletes them once the install is gone", async () => {
    const answers = [INSTALL_NAMESPACE, "yes"];
    const asked: string[] = [];
    const { changes, refusal } = await run(installed(theirs), { confirm: async (question) => (asked.push(question), answers.shift() ?? "") });
    assert.equal(refusal, undefined);
    assert.match(asked[1] ?? "", /Delete those roles and bindings of yours too\?/);
    assert.equal(describeCall(changes.at(-1)!), DELETE_THEIRS);
  });

  test("any other answer keeps them", async () => {
    const answers = [INSTALL_NAMESPACE, "no"];
    const { changes } = await run(installed(theirs), { confirm: async () => answers.shift() ?? "" });
    assert.ok(!changes.some((call) => describeCall(call) === DELETE_THEIRS));
  });

  test("what the admin keeps in the install's Namespaces is listed as theirs, which a reinstall will not have", async () => {
    const rules: Rule[] = [];
    // feature: shared
    rules.push({ when: `^get secrets,configmaps -n ${INSTALL_NAMESPACE} -l ${SHAREABLE_LABEL}=true`, stdout: list([{ apiVersion: "v1", kind: "Secret", metadata: { name: "registry", namespace: INSTALL_NAMESPACE } }]) });
    // end feature: shared
    // feature: integrations
    rules.push({ when: `^get secrets -n ${INTEGRATIONS_NAMESPACE}`, stdout: list([
      { apiVersion: "v1", kind: "Secret", type: "Opaque", metadata: { name: "gitlab-token", namespace: INTEGRATIONS_NAMESPACE } },
      { apiVersion: "v1", kind: "Secret", type: "kubernetes.io/service-account-token", metadata: { name: "a-token", namespace: INTEGRATIONS_NAMESPACE } },
      { apiVersion: "v1", kind: "Secret", type: "Opaque", metadata: { name: "handed-over", namespace: INTEGRATIONS_NAMESPACE, ownerReferences: [{ apiVersion: `${GROUP}/v1`, kind: PARENT.kind, name: "shop" }] } },
    ]) });
    // end feature: integrations
    const { output } = await run(installed(rules), { yes: true });
    const theirs = output.split("\n").filter((line) => / (a source the|credentials the)/.test(line));
    assert.deepEqual(theirs, [
      `  Secret ${INSTALL_NAMESPACE}/registry, a source the Projects' profiles share`, // feature: shared
      `  Secret ${INTEGRATIONS_NAMESPACE}/gitlab-token, credentials the integrations run with`, // feature: integrations
    ]);
    if (theirs.length) assert.match(output, /these are yours, and a reinstall will not have them/);
  });
});

describe("uninstall: the command", () => {
  test("npm run uninstall with an unknown argument exits 2 and names it", async () => {
    const child = spawnChild(withTsx("scripts/uninstall.ts", "--force"), { KUBECTL: "/nonexistent/kubectl" });
    assert.equal(await child.exitCode("npm run uninstall to exit"), 2, child.output());
    assert.match(child.output(), /unknown argument --force; the only one is --yes/);
  });
});
