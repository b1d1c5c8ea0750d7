// The shared feature (features/shared.ts): what every Project on a profile
// gets a copy of in its Namespace, kept equal to its source and to the
// profile, never lost to a profile or source that cannot be read, and a
// Secret's data never in what sync says.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as v from "valibot";
import { API_VERSION, NAMESPACES, ObservedChildren, RelatedObjects, SyncRequest, customize, sync, type Child, type SyncResponse } from "../sync.ts";
import { PROFILES as GUARDRAIL_PROFILES } from "../features/guardrails.ts";
import {
  CONFIG_MAPS,
  COPY_OF_ANNOTATION,
  INSTALL_NAMESPACE,
  MAX_SHARED,
  PROFILES,
  ROLES,
  ROLE_BINDINGS,
  SECRETS,
  SERVICE_ACCOUNTS,
  SHAREABLE_LABEL,
  SHARED_BY_LABEL,
  SHARED_RULES,
  SOURCE_MAX_BYTES,
  goJsonBytes,
  shared,
} from "../features/shared.ts";
import { SETTLED, at, escaped, namespaceOf, namespaces, project, ready, related, verdict, withObserved } from "./helpers.ts";
import { readManifest } from "../scripts/manifest.ts";

const SHOP = namespaceOf("shop");
// What must never show anywhere but in the Secret and its copy: base64 of "hunter2-registry-token".
const TOKEN = "aHVudGVyMi1yZWdpc3RyeS10b2tlbg==";
const OTHER_TOKEN = "c2Vjb25kLXRva2Vu";

type Source = { kind: "Secret" | "ConfigMap"; name: string; data?: Record<string, string>; type?: string; labels?: Record<string, string>; binaryData?: Record<string, string> };
const secret = (name: string, data: Record<string, string> = { ".dockerconfigjson": TOKEN }, type = "kubernetes.io/dockerconfigjson"): Source => ({ kind: "Secret", name, data, type });
const configMap = (name: string, data: Record<string, string> = { "ca.crt": "-----BEGIN CERTIFICATE-----" }): Source => ({ kind: "ConfigMap", name, data });

/** What customize's rules picked up: the profile `default` with this spec.shared, and these sources in the install's Namespace, shareable unless their labels say otherwise. */
function withSources(sharedSpec: unknown, sources: Source[] = [], profile = "default"): RelatedObjects {
  const objects = related({}, { [profile]: sharedSpec === undefined ? {} : { shared: sharedSpec } });
  objects[SECRETS] = {};
  objects[CONFIG_MAPS] = {};
  for (const { kind, name, labels = { [SHAREABLE_LABEL]: "true" }, ...fields } of sources) {
    (objects[kind === "Secret" ? SECRETS : CONFIG_MAPS] as Record<string, unknown>)[`${INSTALL_NAMESPACE}/${name}`] = {
      apiVersion: "v1",
      kind,
      metadata: { name, namespace: INSTALL_NAMESPACE, labels },
      ...fields,
    };
  }
  return objects;
}

const active = () => namespaces({ [SHOP]: "Active" });
const shop = (profile?: string) => project("shop", { spec: profile ? { profile } : {}, status: SETTLED });
const COPY_KINDS = ["Secret", "ConfigMap", "ServiceAccount", "Role", "RoleBinding"];
/** The copies an answer asks for: this feature's, by its label. */
const copiesIn = (answer: SyncResponse) =>
  answer.children.filter((child) => COPY_KINDS.includes(child.kind) && (child.metadata as { labels?: Record<string, string> }).labels?.[SHARED_BY_LABEL] !== undefined) as (Child & Record<string, any>)[];
const named = (answer: SyncResponse) => copiesIn(answer).map((child) => `${child.kind} ${child.metadata.name}`);
/** The children once Metacontroller has applied every copy the answer asks for. */
const applied = (answer: SyncResponse, children: ObservedChildren = active()) => withObserved(children, copiesIn(answer));

describe("shared: the names", () => {
  test("the profile is the guardrails' ProjectProfile, and the install's Namespace is k8s.yaml's first", () => {
    assert.equal(PROFILES, GUARDRAIL_PROFILES);
    assert.equal(PROFILES, `ProjectProfile.${API_VERSION}`);
    const { objects } = readManifest();
    assert.equal(objects.find((object) => object?.kind === "Namespace")?.metadata.name, INSTALL_NAMESPACE);
  });

  test("each kind it copies is a group of children the CompositeController owns", () => {
    for (const group of [SECRETS, CONFIG_MAPS, SERVICE_ACCOUNTS, ROLES, ROLE_BINDINGS]) assert.ok(group in ObservedChildren.entries, group);
  });

  test("customize asks for the shareable Secrets and ConfigMaps by their label, in the install's Namespace alone, and for the profile once", () => {
    const rules = customize(project("shop", { spec: { profile: "gold" } })).relatedResources;
    for (const resource of ["secrets", "configmaps"]) {
      assert.deepEqual(
        rules.filter((rule) => rule.resource === resource),
        [{ apiVersion: "v1", resource, namespace: INSTALL_NAMESPACE, labelSelector: { matchLabels: { [SHAREABLE_LABEL]: "true" } } }],
      );
    }
    assert.deepEqual(rules.filter((rule) => rule.resource === "projectprofiles"), [{ apiVersion: API_VERSION, resource: "projectprofiles", names: ["gold"] }]);
  });

});

describe("shared: copies of the profile's sources", () => {
  test("a profile that shares nothing gives no copy", () => {
    assert.deepEqual(named(sync(shop(), active(), withSources(undefined, [secret("registry")]), at)), []);
  });

  test("a shared Secret is copied into the Project's Namespace with its type and data, labelled with its profile and annotated with its source", () => {
    const answer = sync(shop(), active(), withSources({ secrets: ["registry"] }, [secret("registry")]), at);
    assert.deepEqual(copiesIn(answer), [
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "registry", namespace: SHOP, labels: { [SHARED_BY_LABEL]: "default" }, annotations: { [COPY_OF_ANNOTATION]: `${INSTALL_NAMESPACE}/registry` } },
        type: "kubernetes.io/dockerconfigjson",
        data: { ".dockerconfigjson": TOKEN },
      },
    ]);
  });

  test("a shared ConfigMap is copied with its data and binaryData", () => {
    const source = { ...configMap("ca-bundle"), binaryData: { "ca.der": "AAEC" } };
    const [copy] = copiesIn(sync(shop(), active(), withSources({ configMaps: ["ca-bundle"] }, [source]), at));
    assert.deepEqual([copy?.kind, copy?.data, copy?.binaryData, copy?.type], ["ConfigMap", source.data, source.binaryData, undefined]);
  });

  test("the copies come in the answer that asks for the Namespace where Metacontroller makes them after it, the ConfigMap, made before it, in the next", () => {
    const related = withSources({ secrets: ["registry"], configMaps: ["ca-bundle"], serviceAccounts: ["deployer"] }, [secret("registry"), configMap("ca-bundle")]);
    assert.deepEqual(named(sync(project("shop"), namespaces(), related, at)), ["Secret registry", "ServiceAccount deployer"]);
    assert.deepEqual(named(sync(project("shop"), active(), related, at)), ["Secret registry", "ConfigMap ca-bundle", "ServiceAccount deployer"]);
  });

  test("once every copy is as its source, the Project is Ready and says how many it has", () => {
    const related = withSources({ secrets: ["registry"], configMaps: ["ca-bundle"] }, [secret("registry"), configMap("ca-bundle")]);
    const observed = applied(sync(shop(), active(), related, at));
    assert.deepEqual(verdict(sync(shop(), observed, related, at)), {
      status: "True",
      reason: "NamespaceActive",
      message: `Namespace ${SHOP} is Active, with 2 shared objects from ProjectProfile default.`,
    });
  });

  test("an edited source is followed: the copy asks for the new data, and the Project waits for it", () => {
    const before = withSources({ secrets: ["registry"] }, [secret("registry")]);
    const observed = applied(sync(shop(), active(), before, at));
    const after = withSources({ secrets: ["registry"] }, [secret("registry", { ".dockerconfigjson": OTHER_TOKEN })]);
    const answer = sync(shop(), observed, after, at);
    assert.deepEqual(copiesIn(answer)[0]?.data, { ".dockerconfigjson": OTHER_TOKEN });
    assert.deepEqual([ready(answer).reason, ready(answer).message], ["WaitingForSharedObjects", `Namespace ${SHOP} is Active; waiting for Secret registry to be as ProjectProfile default shares them.`]);
  });

  test("a key taken out of the source, or added to it, is not yet as asked while the copy differs", () => {
    const two = withSources({ secrets: ["registry"] }, [secret("registry", { a: TOKEN, b: OTHER_TOKEN }, "Opaque")]);
    const one = withSources({ secrets: ["registry"] }, [secret("registry", { a: TOKEN }, "Opaque")]);
    assert.equal(ready(sync(shop(), applied(sync(shop(), active(), two, at)), one, at)).reason, "WaitingForSharedObjects");
    assert.equal(ready(sync(shop(), applied(sync(shop(), active(), one, at)), two, at)).reason, "WaitingForSharedObjects");
  });

  test("taken out of the profile, a copy is no longer asked for, so Metacontroller deletes it, and the Project waits for that", () => {
    const sharing = withSources({ secrets: ["registry"] }, [secret("registry")]);
    const observed = applied(sync(shop(), active(), sharing, at));
    const answer = sync(shop(), observed, withSources({}, [secret("registry")]), at);
    assert.deepEqual(named(answer), []);
    assert.match(ready(answer).message, /waiting for Secret registry to be removed/);
  });

  test("a Secret not labelled shareable is never copied, even if it arrives", () => {
    const answer = sync(shop(), active(), withSources({ secrets: ["registry"] }, [{ ...secret("registry"), labels: { [SHAREABLE_LABEL]: "false" } }]), at);
    assert.deepEqual(named(answer), []);
    assert.equal(ready(answer).reason, "SharedSourceMissing");
  });

  test("a source in another namespace is no source", () => {
    const related = withSources({ secrets: ["registry"] });
    related[SECRETS] = { [`${SHOP}/registry`]: { apiVersion: "v1", kind: "Secret", metadata: { name: "registry", labels: { [SHAREABLE_LABEL]: "true" } }, data: { x: TOKEN } } };
    assert.deepEqual(named(sync(shop(), active(), related, at)), []);
  });

  test("SharedSourceMissing: a copy whose source is gone is kept as it is, and none is made where there is none", () => {
    const observed = applied(sync(shop(), active(), withSources({ secrets: ["registry"] }, [secret("registry")]), at));
    const gone = withSources({ secrets: ["registry", "other"] });
    const answer = sync(shop(), observed, gone, at);
    assert.deepEqual(copiesIn(answer).map((copy) => [copy.metadata.name, copy.data]), [["registry", { ".dockerconfigjson": TOKEN }]]);
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "SharedSourceMissing",
      message:
        `ProjectProfile default shares into Namespace ${SHOP} what cannot be copied: Secret ${INSTALL_NAMESPACE}/registry does not exist, or is not labelled ${SHAREABLE_LABEL}=true, so its copy is kept as it is; ` +
        `Secret ${INSTALL_NAMESPACE}/other does not exist, or is not labelled ${SHAREABLE_LABEL}=true, so its copy is not made. A cluster admin must create, label or fix the source, or take it out of the profile.`,
    });
  });

  test("SharedSourceUnusable: a ServiceAccount token, or a source too large for a copy's annotations, is not copied", () => {
    const token = secret("token", { token: TOKEN }, "kubernetes.io/service-account-token");
    const large = configMap("large", { big: "x".repeat(SOURCE_MAX_BYTES) });
    const answer = sync(shop(), active(), withSources({ secrets: ["token"], configMaps: ["large"] }, [token, large]), at);
    assert.deepEqual(named(answer), []);
    assert.equal(ready(answer).reason, "SharedSourceUnusable");
    assert.match(ready(answer).message, new RegExp(`Secret ${escaped(INSTALL_NAMESPACE)}/token is of a type that cannot be copied .*ConfigMap ${escaped(INSTALL_NAMESPACE)}/large is larger than the ${SOURCE_MAX_BYTES / 1024} KiB`));
  });

  test("a source just within the limit is copied; the limit counts what Go's JSON writes, six bytes for a <", () => {
    const fits = configMap("fits", { k: "x".repeat(SOURCE_MAX_BYTES - 7) });
    assert.equal(goJsonBytes(fits.data!), SOURCE_MAX_BYTES);
    assert.deepEqual(named(sync(shop(), active(), withSources({ configMaps: ["fits"] }, [fits]), at)), ["ConfigMap fits"]);
    assert.equal(goJsonBytes({ k: "<" }), 1 + 3 + 6 + 3);
    assert.equal(goJsonBytes({ k: "é\n" }), 1 + 3 + 2 + 2 + 3);
  });

  test("a ConfigMap whose weight is in its binaryData is measured with it: too large there, it is not copied", () => {
    const heavy = { ...configMap("firmware", { "version.txt": "1.2.3" }), binaryData: { "image.bin": "A".repeat(SOURCE_MAX_BYTES) } };
    const answer = sync(shop(), active(), withSources({ configMaps: ["firmware"] }, [heavy]), at);
    assert.deepEqual(named(answer), []);
    assert.equal(ready(answer).reason, "SharedSourceUnusable");
    assert.match(ready(answer).message, new RegExp(`ConfigMap ${escaped(INSTALL_NAMESPACE)}/firmware is larger than the ${SOURCE_MAX_BYTES / 1024} KiB`));
  });

  test("the limit counts data and binaryData together: at the limit the copy is made, a byte over it is not", () => {
    const data = { "version.txt": "1.2.3" };
    // Each key and value costs its bytes and 3 more (two quotes, a separator).
    const room = SOURCE_MAX_BYTES - goJsonBytes(data) - ("image.bin".length + 3) - 3;
    const fits = { ...configMap("firmware", data), binaryData: { "image.bin": "A".repeat(room) } };
    assert.equal(goJsonBytes({ ...fits.data, ...fits.binaryData }), SOURCE_MAX_BYTES);
    assert.deepEqual(named(sync(shop(), active(), withSources({ configMaps: ["firmware"] }, [fits]), at)), ["ConfigMap firmware"]);
    const over = { ...fits, binaryData: { "image.bin": "A".repeat(room + 1) } };
    assert.equal(ready(sync(shop(), active(), withSources({ configMaps: ["firmware"] }, [over]), at)).reason, "SharedSourceUnusable");
  });

  test("a Secret whose source changed type is left out of one answer, so that Metacontroller deletes it, then made afresh", () => {
    const observed = applied(sync(shop(), active(), withSources({ secrets: ["registry"] }, [secret("registry")]), at));
    const changed = withSources({ secrets: ["registry"] }, [secret("registry", { token: TOKEN }, "Opaque")]);
    const answer = sync(shop(), observed, changed, at);
    assert.deepEqual(named(answer), []);
    assert.equal(ready(answer).reason, "RemakingSharedObjects");
  });
});

describe("shared: ServiceAccounts, Roles and RoleBindings", () => {
  const rules = [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }];
  const workload = { serviceAccounts: ["deployer"], roles: [{ name: "reader", rules }], roleBindings: [{ name: "deployer-reads", role: "reader", serviceAccounts: ["deployer"] }] };

  test("a ServiceAccount and a Role are made as the profile says", () => {
    const copies = copiesIn(sync(shop(), active(), withSources(workload), at));
    assert.deepEqual(copies.map((copy) => [copy.kind, copy.metadata.name, copy.rules]), [
      ["ServiceAccount", "deployer", undefined],
      ["Role", "reader", rules],
    ]);
  });

  test("a RoleBinding to a Role waits for that Role's copy: never a Role a tenant made under its name", () => {
    const first = sync(shop(), active(), withSources(workload), at);
    assert.ok(!named(first).includes("RoleBinding deployer-reads"));
    assert.match(ready(first).message, /RoleBinding deployer-reads/);
    const binding = copiesIn(sync(shop(), applied(first), withSources(workload), at)).find((copy) => copy.kind === "RoleBinding");
    assert.deepEqual([binding?.roleRef, binding?.subjects], [
      { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reader" },
      [{ kind: "ServiceAccount", name: "deployer", namespace: SHOP }],
    ]);
  });

  test("a RoleBinding whose Role copy is gone (an admin's delete) is no longer asked for, so that no Role a tenant makes under that name is what it grants", () => {
    const first = sync(shop(), active(), withSources(workload), at);
    const settled = applied(sync(shop(), applied(first), withSources(workload), at));
    assert.ok(named(sync(shop(), settled, withSources(workload), at)).includes("RoleBinding deployer-reads"));
    const roleGone = structuredClone(settled);
    delete (roleGone[ROLES] as Record<string, unknown>)[`${SHOP}/reader`];
    assert.ok(!named(sync(shop(), roleGone, withSources(workload), at)).includes("RoleBinding deployer-reads"));
  });

  test("a RoleBinding to a ClusterRole grants it to the Project's own ServiceAccounts at once", () => {
    const spec = { roleBindings: [{ name: "ci-view", clusterRole: "view", serviceAccounts: ["ci", "deployer"] }] };
    const [binding] = copiesIn(sync(shop(), active(), withSources(spec), at));
    assert.deepEqual(binding?.subjects.map((subject: { namespace: string }) => subject.namespace), [SHOP, SHOP]);
    assert.deepEqual(binding?.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" });
  });

  test("a RoleBinding whose role the profile changes is left out of one answer, and made afresh", () => {
    const viewing = withSources({ roleBindings: [{ name: "ci", clusterRole: "view", serviceAccounts: ["ci"] }] });
    const observed = applied(sync(shop(), active(), viewing, at));
    const editing = withSources({ roleBindings: [{ name: "ci", clusterRole: "edit", serviceAccounts: ["ci"] }] });
    const answer = sync(shop(), observed, editing, at);
    assert.deepEqual(named(answer), []);
    assert.equal(ready(answer).reason, "RemakingSharedObjects");
  });

  test("a RoleBinding whose roleRef changes kind, from a Role to a ClusterRole of the same name, keeping its own name, is left out of one answer, and made afresh", () => {
    const toRole = { ...workload, roleBindings: [{ name: "deployer-reads", role: "reader", serviceAccounts: ["deployer"] }] };
    const first = sync(shop(), active(), withSources(toRole), at);
    const settled = applied(sync(shop(), applied(first), withSources(toRole), at));
    assert.deepEqual(copiesIn(sync(shop(), settled, withSources(toRole), at)).find((copy) => copy.kind === "RoleBinding")?.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reader" });
    const toClusterRole = { ...workload, roleBindings: [{ name: "deployer-reads", clusterRole: "reader", serviceAccounts: ["deployer"] }] };
    const answer = sync(shop(), settled, withSources(toClusterRole), at);
    assert.ok(!named(answer).includes("RoleBinding deployer-reads"));
    assert.equal(ready(answer).reason, "RemakingSharedObjects");
    assert.match(ready(answer).message, /RoleBinding deployer-reads/);
    // Once Metacontroller has deleted it, the binding comes back with the new kind.
    const gone = structuredClone(settled);
    delete (gone[ROLE_BINDINGS] as Record<string, unknown>)[`${SHOP}/deployer-reads`];
    const remade = copiesIn(sync(shop(), gone, withSources(toClusterRole), at)).find((copy) => copy.kind === "RoleBinding");
    assert.deepEqual(remade?.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "reader" });
  });

  // feature: members
  test("a shared RoleBinding is not the members' access: members still wait for the guardrails", () => {
    const guarded = related({}, { default: { resourceQuota: { hard: { pods: "1" } }, shared: { roleBindings: [{ name: "ci", clusterRole: "view", serviceAccounts: ["ci"] }] } } });
    guarded[SECRETS] = {};
    guarded[CONFIG_MAPS] = {};
    const spec = { members: [{ kind: "User", name: "dana", role: "admin" }] };
    const first = sync(project("shop", { spec }), active(), guarded, at);
    const observed = withObserved(active(), copiesIn(first));
    const answer = sync(project("shop", { spec }), observed, guarded, at);
    assert.deepEqual(answer.children.filter((child) => child.kind === "RoleBinding").map((child) => child.metadata.name), ["ci"]);
  });

  test("members get no access to a new Namespace until every copy is there, so that none can make an object of a shared name first", () => {
    const spec = { members: [{ kind: "User", name: "dana", role: "edit" }] };
    const sharing = withSources({ configMaps: ["ca-bundle"] }, [configMap("ca-bundle")]);
    const membersBindings = (answer: SyncResponse) => answer.children.filter((child) => child.kind === "RoleBinding").map((child) => child.metadata.name);
    const first = sync(project("shop", { spec }), active(), sharing, at);
    assert.deepEqual(membersBindings(first), [], "no RoleBinding before the ConfigMap's copy is there");
    const copied = withObserved(active(), copiesIn(first));
    assert.deepEqual(membersBindings(sync(project("shop", { spec }), copied, sharing, at)), ["project-edit-users"]);
  });

  test("while a shared source is missing, unlabelled or unusable, members of a new Namespace wait for its copy, and get access once it is made", () => {
    const spec = { members: [{ kind: "User", name: "dana", role: "edit" }] };
    const membersBindings = (answer: SyncResponse) => answer.children.filter((child) => child.kind === "RoleBinding").map((child) => child.metadata.name);
    const unlabelled = { ...secret("registry"), labels: {} };
    const token = secret("registry", { token: TOKEN }, "kubernetes.io/service-account-token");
    for (const sources of [[], [unlabelled], [token]]) {
      const answer = sync(project("shop", { spec }), active(), withSources({ secrets: ["registry"] }, sources), at);
      assert.deepEqual(membersBindings(answer), [], JSON.stringify(sources));
      assert.match(ready(answer).reason, /^SharedSource(Missing|Unusable)$/);
      assert.match(ready(answer).message, /take it out of the profile; members get access once they are in place\.$/);
    }
    const back = withSources({ secrets: ["registry"] }, [secret("registry")]);
    const first = sync(project("shop", { spec }), active(), back, at);
    assert.deepEqual([membersBindings(first), named(first)], [[], ["Secret registry"]], "the copy is asked for first");
    assert.deepEqual(membersBindings(sync(project("shop", { spec }), applied(first), back, at)), ["project-edit-users"]);
  });

  test("access once given stays while a source goes missing: the copy is kept, and members are not locked out", () => {
    const spec = { members: [{ kind: "User", name: "dana", role: "edit" }] };
    const sharing = withSources({ secrets: ["registry"] }, [secret("registry")]);
    const copied = applied(sync(project("shop", { spec }), active(), sharing, at));
    const granted = withObserved(copied, sync(project("shop", { spec }), copied, sharing, at).children.filter((child) => child.kind === "RoleBinding"));
    const answer = sync(project("shop", { spec, status: SETTLED }), granted, withSources({ secrets: ["registry", "gone"] }), at);
    assert.deepEqual(answer.children.filter((child) => child.kind === "RoleBinding").map((child) => child.metadata.name), ["project-edit-users"]);
  });

  // A Namespace made by hand before its Project, then brought under it.
  const madeAt = (namespaceTime: string, projectTime = "2026-12-01T10:00:00Z") => {
    const children = active();
    Object.assign(children[NAMESPACES]![SHOP]!.metadata!, { creationTimestamp: namespaceTime });
    const spec = { profile: "default", members: [{ kind: "User", name: "dana", role: "edit" }] };
    const parent = project("shop", { spec });
    Object.assign(parent.metadata, { creationTimestamp: projectTime });
    return { children, parent };
  };

  test("in a Namespace older than its Project, members get access though a copy is not there: an object of its name may be its team's own", () => {
    const { children, parent } = madeAt("2024-03-01T08:00:00Z");
    const sharing = withSources({ secrets: ["registry"], configMaps: ["ca-bundle"] }, [secret("registry"), configMap("ca-bundle")]);
    const answer = sync(parent, children, sharing, at);
    assert.ok(answer.children.some((child) => child.kind === "RoleBinding" && child.metadata.name === "project-edit-users"), "members are not locked out");
    const missing = withSources({ secrets: ["registry"] });
    assert.ok(sync(parent, children, missing, at).children.some((child) => child.metadata.name === "project-edit-users"), "nor while its source is missing");
  });

  test("a Namespace made after its Project (by it, or by hand while it waited) is a new one: members wait for every copy there", () => {
    for (const [namespaceTime, projectTime] of [["2026-12-01T10:00:01Z", "2026-12-01T10:00:00Z"], ["2026-12-01T10:00:00Z", "2026-12-01T10:00:00Z"]]) {
      const { children, parent } = madeAt(namespaceTime!, projectTime);
      const answer = sync(parent, children, withSources({ secrets: ["registry"] }, [secret("registry")]), at);
      assert.ok(!answer.children.some((child) => child.metadata.name === "project-edit-users"), `${namespaceTime} after ${projectTime}`);
    }
  });
  // end feature: members
});

describe("shared: what a profile may not share", () => {
  const broken: [string, unknown, string][] = [
    ["a name that is no DNS label", { secrets: ["Registry"] }, SHARED_RULES.name],
    ["default, which every Namespace has", { serviceAccounts: ["default"] }, SHARED_RULES.reserved],
    ["a name of the other features' project-*", { roles: [{ name: "project-quota", rules: [{ verbs: ["get"] }] }] }, SHARED_RULES.reserved],
    ["a name of Kubernetes' kube-*", { configMaps: ["kube-root-ca"] }, SHARED_RULES.reserved],
    ["the integrations' Role and RoleBinding", { roleBindings: [{ name: "integrations", clusterRole: "view", serviceAccounts: ["ci"] }] }, SHARED_RULES.reserved],
    ["a name twice", { secrets: ["a", "a"] }, SHARED_RULES.unique],
    [`more than ${MAX_SHARED}`, { secrets: Array.from({ length: MAX_SHARED + 1 }, (_, index) => `s${index}`) }, SHARED_RULES.most],
    ["a Role without verbs", { roles: [{ name: "r", rules: [{ resources: ["pods"] }] }] }, SHARED_RULES.rules],
    ["a Role without rules", { roles: [{ name: "r", rules: [] }] }, SHARED_RULES.rules],
    ["a RoleBinding with both role and clusterRole", { roles: [{ name: "r", rules: [{ verbs: ["get"] }] }], roleBindings: [{ name: "b", role: "r", clusterRole: "view", serviceAccounts: ["ci"] }] }, SHARED_RULES.roleRef],
    ["a RoleBinding with neither", { roleBindings: [{ name: "b", serviceAccounts: ["ci"] }] }, SHARED_RULES.roleRef],
    ["a RoleBinding to a Role the profile does not share", { roleBindings: [{ name: "b", role: "their-role", serviceAccounts: ["ci"] }] }, SHARED_RULES.roleRef],
    ["a RoleBinding to no ServiceAccount", { roleBindings: [{ name: "b", clusterRole: "view", serviceAccounts: [] }] }, SHARED_RULES.subjects],
    ["a RoleBinding to a ServiceAccount of another namespace", { roleBindings: [{ name: "b", clusterRole: "view", serviceAccounts: ["kube-system:admin"] }] }, SHARED_RULES.subjects],
    ["a list that is no list", { secrets: "registry" }, ""],
  ];
  for (const [what, spec, rule] of broken) {
    test(`InvalidSharedObjects: ${what}; the copies are kept as they are`, () => {
      const observed = applied(sync(shop(), active(), withSources({ secrets: ["registry"] }, [secret("registry")]), at));
      const answer = sync(shop(), observed, withSources(spec, [secret("registry", { other: OTHER_TOKEN })]), at);
      assert.equal(ready(answer).reason, "InvalidSharedObjects");
      assert.match(ready(answer).message, new RegExp(`^ProjectProfile default breaks its rules \\(spec\\.shared.*${escaped(rule)}.*\\), so the shared objects in Namespace ${SHOP} are left as they are`));
      assert.deepEqual(copiesIn(answer).map((copy) => [copy.metadata.name, copy.data]), [["registry", { ".dockerconfigjson": TOKEN }]]);
    });
  }

  test("InvalidSharedObjects: a profile that shares objects under a name longer than a label holds, which every copy carries", () => {
    const long = "p".repeat(64);
    const answer = sync(shop(long), active(), withSources({ secrets: ["registry"] }, [secret("registry")], long), at);
    assert.deepEqual([ready(answer).reason, named(answer)], ["InvalidSharedObjects", []]);
    assert.match(ready(answer).message, new RegExp(escaped(SHARED_RULES.profileName)));
    assert.deepEqual(named(sync(shop("p".repeat(63)), active(), withSources({ secrets: ["registry"] }, [secret("registry")], "p".repeat(63)), at)), ["Secret registry"]);
  });

  test("InvalidSharedObjects is a refusal the webhook logs", () => {
    assert.deepEqual(shared.refusals, ["InvalidSharedObjects"]);
  });

  test("a missing profile, the guardrails' to report, keeps every copy as it is", () => {
    const observed = applied(sync(shop("gold"), active(), withSources({ secrets: ["registry"] }, [secret("registry")], "gold"), at));
    const answer = sync(shop("gold"), observed, withSources({}, [secret("registry")], "other"), at);
    assert.equal(ready(answer).reason, "ProfileNotFound");
    assert.deepEqual(named(answer), ["Secret registry"]);
  });
});

describe("shared: a request whose Secrets cannot be read", () => {
  test("is refused in words that never echo what the Secret holds", () => {
    for (const data of [{ token: 42 }, TOKEN]) {
      const request = { parent: shop(), children: active(), related: withSources({ secrets: ["registry"] }) } as Record<string, any>;
      request["related"][SECRETS][`${INSTALL_NAMESPACE}/registry`] = { apiVersion: "v1", kind: "Secret", metadata: { name: "registry", labels: { [SHAREABLE_LABEL]: "true" } }, data };
      const checked = v.safeParse(SyncRequest, request);
      assert.equal(checked.success, false);
      const messages = JSON.stringify(checked.issues?.map((issue) => issue.message));
      assert.ok(!messages.includes(TOKEN) && !messages.includes("42"), messages);
    }
  });
});

describe("shared: what a tenant cannot do with it", () => {
  test("an object a tenant made under a shared name is never taken over: sync only asks for the copy, and says the name is taken where no copy is", () => {
    // Not a child: without the Project's controller-uid label, which only
    // Metacontroller may write, Metacontroller neither adopts nor changes it.
    const answer = sync(shop(), active(), withSources({ secrets: ["registry"] }, [secret("registry")]), at);
    assert.equal(ready(answer).reason, "WaitingForSharedObjects");
    assert.match(ready(answer).message, new RegExp(`of these, Secret registry is not in Namespace ${escaped(SHOP)} yet: where an object of that name is there already and is no copy, it is left as it is and its copy is not made`));
  });

  test("the status names each object a copy waits for, and ways out that keep that object's data: never its delete", () => {
    const sharing = withSources({ secrets: ["registry", "tls"], configMaps: ["ca-bundle"] }, [secret("registry"), secret("tls"), configMap("ca-bundle")]);
    const first = sync(shop(), active(), sharing, at);
    // The ConfigMap's copy is made; the two Secrets' names are held by objects that are no copies.
    const observed = applied(first, active());
    for (const group of [SECRETS]) observed[group] = {};
    const { reason, message } = ready(sync(shop(), observed, sharing, at));
    assert.equal(reason, "WaitingForSharedObjects");
    assert.match(
      message,
      new RegExp(
        `of these, Secret registry, Secret tls are not in Namespace ${escaped(SHOP)} yet: .*until its team moves what it holds to another name, ` +
          `or a cluster admin takes the name out of ProjectProfile default or gives the Project a profile that does not share it\\)`,
      ),
    );
    assert.doesNotMatch(message, /ConfigMap ca-bundle is not|delete/);
  });

  test("a Secret's data never shows in the status, whatever sync says", () => {
    // Every reason this feature gives: waiting to copy, to follow an edit, Ready, a source missing or unusable, a type to remake, a profile that breaks the rules.
    const token = secret("token", { token: OTHER_TOKEN }, "kubernetes.io/service-account-token");
    const before = [secret("registry"), token];
    const edited = [secret("registry", { ".dockerconfigjson": OTHER_TOKEN }), token];
    const retyped = [secret("registry", { x: OTHER_TOKEN }, "Opaque"), token];
    const observed = applied(sync(shop(), active(), withSources({ secrets: ["registry"] }, before), at));
    const reasons = new Set<string>();
    for (const spec of [{ secrets: ["registry"] }, { secrets: ["registry", "token"] }, { secrets: ["registry", "gone"] }, { secrets: ["Registry"] }, {}]) {
      for (const children of [active(), observed]) {
        for (const sources of [before, edited, retyped]) {
          const { status } = sync(shop(), children, withSources(spec, sources), at);
          reasons.add(status.conditions[0]!.reason);
          const text = JSON.stringify(status);
          for (const secretText of [TOKEN, OTHER_TOKEN, Buffer.from(TOKEN, "base64").toString()]) assert.ok(!text.includes(secretText), `${JSON.stringify(spec)}: ${text}`);
        }
      }
    }
    assert.deepEqual([...reasons].sort(), ["InvalidSharedObjects", "NamespaceActive", "RemakingSharedObjects", "SharedSourceMissing", "SharedSourceUnusable", "WaitingForSharedObjects"]);
  });
});
