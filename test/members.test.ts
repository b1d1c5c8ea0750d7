// What the members feature (features/members.ts) adds to sync's answer:
// RoleBindings in the Project's Namespace, the role that reads the Project,
// and the access nobody declared taken back.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as v from "valibot";
import { GROUP, NAMESPACES, PARENT, PROJECT_LABEL, SyncRequest, LAST_APPLIED_ANNOTATION as CORE_LAST_APPLIED, sync, type Namespace, type ObservedChildren } from "../sync.ts";
import {
  CLUSTER_ROLES,
  CLUSTER_ROLE_BINDINGS,
  LAST_APPLIED_ANNOTATION,
  MAX_MEMBERS,
  MEMBER_RULES,
  PROJECTS,
  ROLE_BINDINGS,
  members,
  type ClusterRole,
  type ClusterRoleBinding,
  type RoleBinding,
} from "../features/members.ts";
import { INTEGRATIONS_NAMESPACE } from "../features/integrations.ts"; // feature: integrations
import { SETTLED, annotationsSpec, assertKeepsEveryNamespace, at, childrenOfKind, fixture, having, later, namespaceIn, namespaceOf, namespaces, project, ready, related, verdict, withObserved } from "./helpers.ts";
import { MEMBER_CASES } from "./members-cases.ts";

// Project shop's Namespace, and the name of the role and binding that let its members read it.
const SHOP = namespaceOf("shop");
const MEMBER_ROLE = `${PARENT.plural}.${GROUP}:shop:member`;

const accessIn = (answer: ReturnType<typeof sync>) =>
  childrenOfKind<RoleBinding | ClusterRole | ClusterRoleBinding>(answer, ["RoleBinding", "ClusterRole", "ClusterRoleBinding"]);
const roleBindingsIn = (answer: ReturnType<typeof sync>) => childrenOfKind<RoleBinding>(answer, ["RoleBinding"]);

describe("members: the names", () => {
  test("the feature spells the Project's API and Metacontroller's annotation as sync.ts does", () => {
    assert.deepEqual(PROJECTS, { group: GROUP, plural: PARENT.plural, singular: PARENT.singular });
    assert.equal(LAST_APPLIED_ANNOTATION, CORE_LAST_APPLIED);
  });
});

describe("members: a refusal keeps every Namespace", () => {
  test("InvalidMembers is the feature's one refusal", () => {
    assert.deepEqual(members.refusals, ["InvalidMembers"]);
  });

  test("InvalidMembers: every observed Namespace is in the answer, with the annotations the spec asks for", () => {
    const parent = project("shop", { spec: { members: [{ kind: "Robot", name: "r2", role: "view" }] } });
    assertKeepsEveryNamespace("InvalidMembers", { parent, children: having(SHOP) }, true);
  });
});

describe("members get access through RoleBindings", () => {
  const active = namespaces({ [SHOP]: "Active" });
  // The issue's example: one member of each kind, and two roles shared.
  const members = [
    { kind: "User", name: "alice@example.com", role: "admin" },
    { kind: "Group", name: "shop-devs", role: "edit" },
    { kind: "ServiceAccount", namespace: "ci", name: "deployer", role: "edit" },
    { kind: "User", name: "auditor", role: "view" },
  ];
  // A Project that was Ready once, so that what it waits for is told in detail.
  const shop = (list: unknown[] = members, fields: Parameters<typeof project>[1] = {}) =>
    project("shop", { status: SETTLED, ...fields, spec: { ...annotationsSpec("Web shop"), members: list } });
  const roleBindingsOf = roleBindingsIn;
  // What the example asks for once its Namespace is Active, and the children with all of it in place.
  const asked = roleBindingsOf(sync(shop(), active, related(), at));
  const access = accessIn(sync(shop(), active, related(), at));
  const inPlace = withObserved(active, access);

  test("each role gets one RoleBinding per kind of member, and per namespace for ServiceAccounts, bound to the ClusterRole of that role", () => {
    assert.deepEqual(asked, [
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "project-admin-users", namespace: SHOP },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
        subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "alice@example.com" }],
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "project-edit-groups", namespace: SHOP },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
        subjects: [{ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "shop-devs" }],
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "project-edit-serviceaccounts-ci", namespace: SHOP },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
        subjects: [{ kind: "ServiceAccount", name: "deployer", namespace: "ci" }],
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "project-view-users", namespace: SHOP },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
        subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "auditor" }],
      },
    ]);
  });

  test("members of one name never share a RoleBinding, so Metacontroller's merge by name cannot collapse them", () => {
    const sameNames = [
      { kind: "ServiceAccount", namespace: "ci", name: "deployer", role: "edit" },
      { kind: "ServiceAccount", namespace: "release", name: "deployer", role: "edit" },
      { kind: "User", name: "ops", role: "edit" },
      { kind: "Group", name: "ops", role: "edit" },
    ];
    const bindings = roleBindingsOf(sync(shop(sameNames), active, related(), at));
    for (const binding of bindings) {
      const names = binding.subjects.map((subject) => subject.name);
      assert.equal(new Set(names).size, names.length, `${binding.metadata.name}: ${names.join(", ")}`);
    }
    assert.deepEqual(
      bindings.flatMap((binding) => binding.subjects.map((subject) => `${subject.kind} ${"namespace" in subject ? `${subject.namespace}/` : ""}${subject.name}`)).sort(),
      ["Group ops", "ServiceAccount ci/deployer", "ServiceAccount release/deployer", "User ops"],
    );
  });

  test("members of one role and kind share their RoleBinding, subjects sorted", () => {
    const editors = [{ kind: "User", name: "carol", role: "edit" }, { kind: "User", name: "bob", role: "edit" }];
    assert.deepEqual(
      roleBindingsOf(sync(shop(editors), active, related(), at)).map((binding) => [binding.metadata.name, binding.subjects.map((subject) => subject.name)]),
      [["project-edit-users", ["bob", "carol"]]],
    );
  });

  test("a subject added by hand to a RoleBinding leaves it out of the answer, so Metacontroller deletes it, and says why", () => {
    // What a Namespace admin could do: add a subject to one of the Project's RoleBindings.
    const handEdited = withObserved(active, access);
    (handEdited[ROLE_BINDINGS]![`${SHOP}/project-view-users`] as RoleBinding).subjects.push({ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "mallory" });
    const answer = sync(shop(), handEdited, related(), at);
    assert.deepEqual(roleBindingsOf(answer).map((binding) => binding.metadata.name), ["project-admin-users", "project-edit-groups", "project-edit-serviceaccounts-ci"]);
    assert.equal(accessIn(answer).length, access.length - 1, "only that RoleBinding is left out");
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "RevokingUndeclaredAccess",
      message:
        "RoleBinding project-view-users grants User mallory, which spec.members does not declare. " +
        "Metacontroller deletes it, and it is created again as declared; add members to spec.members instead.",
    });
    // Once it is gone, it is asked for again, as declared.
    delete handEdited[ROLE_BINDINGS]![`${SHOP}/project-view-users`];
    assert.deepEqual(accessIn(sync(shop(), handEdited, related(), at)), access);
  });

  test("a subject Metacontroller applied before and the spec no longer asks for is not undeclared: the merge removes it", () => {
    const withoutAuditor = sync(shop(members.filter((member) => member.name !== "auditor")), inPlace, related(), at);
    assert.equal(ready(withoutAuditor).reason, "WaitingForRoleBindings");
    assert.equal(accessIn(withoutAuditor).length, access.length - 1, "only project-view-users goes: nobody holds view");
  });

  test("the same members in any order give the same answer, byte for byte", () => {
    const first = JSON.stringify(sync(shop(), active, related(), at));
    for (const order of [[...members].reverse(), [members[2], members[0], members[3], members[1]]]) {
      assert.equal(JSON.stringify(sync(shop(order), active, related(), at)), first);
    }
  });

  test("a Project without members asks for no RoleBinding", () => {
    for (const list of [[], null]) {
      const answer = sync(shop(list as unknown[]), active, related(), at);
      assert.deepEqual(answer.children.map((child) => child.kind), ["Namespace"]);
      assert.equal(answer.status.members, 0);
    }
  });

  test("where nothing guards the Namespace, the RoleBindings come in the answer that asks for it, as Metacontroller makes them after it", () => {
    assert.deepEqual(sync(shop(), namespaces(), related(), at).children.map((child) => child.kind), ["Namespace", "ClusterRole", "ClusterRoleBinding", "RoleBinding", "RoleBinding", "RoleBinding", "RoleBinding"]);
  });

  test("while the Namespace is not Active, no RoleBinding is asked for; the members' role on the Project stays", () => {
    for (const observed of [namespaces({ [SHOP]: "Terminating" }), namespaces({ [SHOP]: null })]) {
      assert.deepEqual(sync(shop(), observed, related(), at).children.map((child) => child.kind), ["Namespace", "ClusterRole", "ClusterRoleBinding"]);
    }
  });

  test("no RoleBinding goes into a Namespace of that name that is someone else's; the members may still read why", () => {
    assert.deepEqual(sync(shop(), namespaces(), related({ [SHOP]: { phase: "Active" } }), at).children.map((child) => child.kind), ["ClusterRole", "ClusterRoleBinding"]);
  });

  test("removing a member removes its subject; removing the last member of a role removes that RoleBinding", () => {
    const after = sync(shop(members.filter((member) => member.name !== "deployer" && member.role !== "view")), inPlace, related(), at);
    assert.deepEqual(
      roleBindingsOf(after).map((binding) => [binding.metadata.name, binding.subjects.map((subject) => subject.name)]),
      [
        ["project-admin-users", ["alice@example.com"]],
        ["project-edit-groups", ["shop-devs"]],
      ],
    );
  });

  test("status.members counts the members listed, for kubectl get projects", () => {
    assert.equal(sync(shop(), namespaces(), related(), at).status.members, 4);
  });

  test("Ready waits until every RoleBinding is observed, and names those still missing", () => {
    const answer = sync(shop(), active, related(), at);
    assert.deepEqual(
      verdict(answer),
      {
        status: "False",
        reason: "WaitingForRoleBindings",
        message: `Namespace ${SHOP} is Active; waiting for RoleBinding project-admin-users, project-edit-groups, project-edit-serviceaccounts-ci, project-view-users; ClusterRoleBinding ${MEMBER_ROLE}; ClusterRole ${MEMBER_ROLE} to be as asked.`,
      },
    );
  });

  test("Ready is True once every RoleBinding is observed as asked", () => {
    const answer = sync(shop(), inPlace, related(), at);
    assert.deepEqual(
      verdict(answer),
      {
        status: "True",
        reason: "NamespaceActive",
        message: `Namespace ${SHOP} is Active, with project-admin-users, project-edit-groups, project-edit-serviceaccounts-ci, project-view-users as asked.`,
      },
    );
  });

  test("a RoleBinding observed with other subjects is not as asked yet", () => {
    const stale = access.map((object) => (object.metadata.name === "project-edit-groups" ? { ...object, subjects: [] } : object));
    const message = ready(sync(shop(), withObserved(active, stale), related(), at)).message;
    assert.equal(message, `Namespace ${SHOP} is Active; waiting for RoleBinding project-edit-groups to be as asked.`);
  });

  test("a RoleBinding of a role nobody holds any more keeps Ready False until Metacontroller has removed it", () => {
    const withoutViewers = members.filter((member) => member.role !== "view");
    const answer = sync(shop(withoutViewers), inPlace, related(), at);
    assert.equal(
      ready(answer).message,
      `Namespace ${SHOP} is Active; waiting for ClusterRoleBinding ${MEMBER_ROLE} to be as asked, ` +
        "and RoleBinding project-view-users to be removed.",
      "the auditor still reads the Project until Metacontroller has taken them off",
    );
    assert.equal(roleBindingsOf(answer).some((binding) => binding.metadata.name === "project-view-users"), false);
  });

  test("syncing the returned status again is a fixed point, with RoleBindings observed as asked", () => {
    const first = sync(shop(), inPlace, related(), at);
    assert.deepEqual(sync(shop(members, { status: structuredClone(first.status) }), inPlace, related(), later), first);
  });

  test("a real request from Metacontroller, RoleBindings under <namespace>/<name>, is Ready as it is", () => {
    const request = v.parse(SyncRequest, fixture("members-sync"));
    const answer = sync(request.parent, request.children, request.related, later);
    assert.equal(ready(answer).reason, "NamespaceActive", ready(answer).message);
    assert.deepEqual(answer.status, request.parent.status);
  });

  for (const { what, members: list, breaks } of MEMBER_CASES.filter((memberCase) => memberCase.breaks)) {
    test(`members that break a rule get InvalidMembers and no RoleBinding: ${what}`, () => {
      const answer = sync(shop(list), active, related(), at);
      assert.equal(ready(answer).reason, "InvalidMembers");
      assert.ok(breaks && ready(answer).message.includes(MEMBER_RULES[breaks]), ready(answer).message);
      assert.match(ready(answer).message, /Until that is fixed, no member has access\.$/);
      assert.deepEqual(answer.children.map((child) => child.kind), ["Namespace"], "the Namespace stays, access goes");
    });
  }

  test("a member listed twice is named at the index of its repeat, with the index of the first", () => {
    const list = [members[0], members[1], { kind: "User", name: "alice@example.com", role: "view" }];
    assert.equal(
      ready(sync(shop(list), active, related(), at)).message,
      `spec.members[2]: User alice@example.com again, as at [0]; ${MEMBER_RULES.once}. Until that is fixed, no member has access.`,
    );
  });

  test("too many members are counted in the message", () => {
    const list = Array.from({ length: MAX_MEMBERS + 1 }, (_, index) => ({ kind: "User", name: `user-${index}`, role: "view" }));
    assert.equal(
      ready(sync(shop(list), active, related(), at)).message,
      `spec.members: ${MAX_MEMBERS + 1} members listed; ${MEMBER_RULES.most}. Until that is fixed, no member has access.`,
    );
  });

  test("the InvalidMembers message says which member breaks which rule", () => {
    const list = [members[0], { kind: "ServiceAccount", name: "deployer", role: "edit" }];
    assert.equal(
      ready(sync(shop(list), active, related(), at)).message,
      `spec.members[1]: ${MEMBER_RULES.serviceAccount}. Until that is fixed, no member has access.`,
    );
  });
});


describe("members: nothing outside its own places is the Project's", () => {
  const dana = [{ kind: "User", name: "dana", role: "admin" }];
  const shop = () => project("shop", { spec: { members: dana } });
  const nothingRelated = related();
  const settled = () => {
    let children = namespaces({ [SHOP]: "Active" });
    for (let round = 0; round < 3; round += 1) {
      const answer = sync(shop(), children, nothingRelated, at);
      children = withObserved(namespaces({ [SHOP]: "Active" }), answer.children.filter((child) => child.kind !== "Namespace") as any);
    }
    return children;
  };
  const adminsIn = (namespace: string): RoleBinding => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "project-admin-users", namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
    subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "dana" }],
  });
  const planted = (children: ObservedChildren, objects: any[]) => withObserved(children, objects);

  test("settled, a Project with one admin is Ready, and asks for no object outside its Namespace but its members' role and its binding", () => {
    const answer = sync(shop(), settled(), nothingRelated, at);
    assert.equal(ready(answer).reason, "NamespaceActive", ready(answer).message);
  });

  test("the members' role lets them read, list by name, watch, change and delete this one Project, and nothing else (the self-service policy keeps changes to its admins)", () => {
    const role = accessIn(sync(shop(), settled(), nothingRelated, at)).find((object): object is ClusterRole => object.kind === "ClusterRole");
    assert.deepEqual(role, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: MEMBER_ROLE },
      rules: [{ apiGroups: [GROUP], resources: ["projects"], resourceNames: ["shop"], verbs: ["get", "list", "watch", "update", "patch", "delete"] }],
    });
  });

  test("the members' role and its binding are owned by the Project's Namespace too, once it is observed: they outlast the Project until the Namespace goes, so a member's kubectl delete sees it go", () => {
    const before = accessIn(sync(shop(), namespaces(), nothingRelated, at)).filter((object) => object.kind !== "RoleBinding");
    assert.deepEqual(before.map((object) => [object.kind, object.metadata]), [["ClusterRole", { name: MEMBER_ROLE }], ["ClusterRoleBinding", { name: MEMBER_ROLE }]], "no owner but the Project before the Namespace is there");
    const children = settled();
    children[NAMESPACES][SHOP]!.metadata = { ...children[NAMESPACES][SHOP]!.metadata, uid: "namespace-uid" };
    const owner = { apiVersion: "v1", kind: "Namespace", name: SHOP, uid: "namespace-uid" };
    const after = accessIn(sync(shop(), children, nothingRelated, at)).filter((object) => object.kind !== "RoleBinding");
    assert.deepEqual(after.map((object) => [object.kind, object.metadata]), [["ClusterRole", { name: MEMBER_ROLE, ownerReferences: [owner] }], ["ClusterRoleBinding", { name: MEMBER_ROLE, ownerReferences: [owner] }]]);
    assert.equal(ready(sync(shop(), children, nothingRelated, at)).reason, "NamespaceActive", "the owner is no change to wait for");
  });

  test("an object labelled as the Project's in another Namespace is named as a stray and left out, so Metacontroller deletes it", () => {
    const children = planted(settled(), [adminsIn(namespaceOf("other"))]);
    const answer = sync(shop(), children, nothingRelated, at);
    const places = [
      `Namespace ${SHOP}`,
      "its place in its requester's budget", // feature: budget
      "the objects that let its members read it",
      `its Jobs, ServiceAccount and ConfigMap in Namespace ${INTEGRATIONS_NAMESPACE}`, // feature: integrations
    ];
    // The last of three or more after a comma and "and", of two after "and" alone, as the features kept make them.
    const where = places.length > 2 ? `${places.slice(0, -1).join(", ")}, and ${places.at(-1)}` : places.join(" and ");
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "RemovingStrayChildren",
      message: `RoleBinding ${namespaceOf("other")}/project-admin-users carry this Project's controller-uid label outside ${where}, so they are not its children: Metacontroller deletes them.`,
    });
    assert.ok(!answer.children.some((child) => "namespace" in child.metadata && child.metadata.namespace === namespaceOf("other")), "not asked for");
    assert.deepEqual(answer.children, sync(shop(), settled(), nothingRelated, at).children, "the same children as without it");
  });

  test("a ClusterRole or ClusterRoleBinding labelled as the Project's, but not its members' role or one of its bindings, is a stray", () => {
    const role = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "cluster-admin-copy" }, rules: [] };
    const binding = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `${MEMBER_ROLE}x` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [],
    };
    for (const stray of [role, binding]) {
      const answer = sync(shop(), planted(settled(), [stray as any]), nothingRelated, at);
      assert.equal(ready(answer).reason, "RemovingStrayChildren", stray.kind);
      assert.match(ready(answer).message, new RegExp(`^${stray.kind} ${stray.metadata.name.replaceAll(".", "\\.")} carry`));
    }
  });

  // feature: guardrails
  test("a RoleBinding labelled as the Project's in another Namespace is no access given: members still wait for the guardrails", () => {
    const isolated = related({}, { default: { networkPolicy: {} } });
    const answer = sync(shop(), planted(namespaces({ [SHOP]: "Active" }), [adminsIn(namespaceOf("other"))]), isolated, at);
    assert.deepEqual(roleBindingsIn(answer), [], "no access before the guardrails are there");
  });
  // end feature: guardrails
});
