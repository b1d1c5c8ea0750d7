// What `sync` answers for what Metacontroller observed: the rules a user of the
// controller sees as Namespaces and as the Project's status.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as v from "valibot";
import {
  SyncRequest,
  WORST_BYTES_PER_UNIT,
  WORST_FIXED_BYTES,
  ANNOTATIONS_MAX_BYTES,
  PROJECT_NAME_RULE,
  MEMBER_RULES,
  MAX_MEMBERS,
  NAMESPACES,
  PROTECTED_BY_LABEL,
  PROJECT_LABEL,
  ROLE_BINDINGS,
  REFUSALS,
  annotationBytes,
  customize,
  isValidNamespaceName,
  sync,
  compareQuantities,
  LIMIT_RANGES,
  NETWORK_POLICIES,
  POD_SECURITY_LABEL,
  PROFILE_LABEL,
  PROFILE_RULES,
  RESOURCE_QUOTAS,
  type LimitRange,
  type NetworkPolicy,
  type ProfileSpec,
  type ResourceQuota,
  type SyncResponse,
  type Namespace,
  type ObservedChildren,
  type Project,
  type Refusal,
  type RelatedObjects,
  type RoleBinding,
} from "../sync.ts";
import { accessIn, clock, deepFreeze, fixture, guardrailsIn, namespaceIn, namespaces, project, related, roleBindingsIn, withObserved } from "./helpers.ts";
import { MEMBER_CASES } from "./member-cases.ts";
import { PROFILE_CASES } from "./profile-cases.ts";

const at = clock("2026-11-30T12:00:00.123Z");
const later = clock("2026-12-01T08:30:00Z");

function ready(answer: ReturnType<typeof sync>) {
  const [condition] = answer.status.conditions;
  assert.ok(condition);
  return condition;
}

/** What a user reads off the Ready condition, without the times. */
function verdict(answer: ReturnType<typeof sync>) {
  const { status, reason, message } = ready(answer);
  return { status, reason, message };
}

describe("sync: the desired Namespace", () => {
  test("a new Project asks for Namespace proj-<name> with its description and license", () => {
    const answer = sync(project("test", { spec: { description: "Test project", license: "MIT" } }), namespaces(), related(), at);
    assert.deepEqual(answer.children, [
      {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "proj-test", labels: { [PROJECT_LABEL]: "test" }, annotations: { description: "Test project", license: "MIT" } },
      },
    ]);
  });

  test("a Project without spec gets license WTFPL and an empty description", () => {
    const namespace = namespaceIn(sync(project("bare"), namespaces(), related(), at));
    assert.deepEqual(namespace?.metadata.annotations, { description: "", license: "WTFPL" });
  });

  test("a Project with null spec fields gets the same defaults", () => {
    for (const spec of [null, { description: null, license: null }]) {
      const namespace = namespaceIn(sync(project("bare", { spec }), namespaces(), related(), at));
      assert.deepEqual(namespace?.metadata.annotations, { description: "", license: "WTFPL" });
    }
  });

  test("an empty license is kept, not replaced by the default", () => {
    const namespace = namespaceIn(sync(project("test", { spec: { license: "" } }), namespaces(), related(), at));
    assert.equal(namespace?.metadata.annotations.license, "");
  });

  test("the Namespace is asked for again, unchanged, once it exists", () => {
    const spec = { description: "d", license: "MIT" };
    const first = sync(project("test", { spec }), namespaces(), related(), at);
    const steady = sync(project("test", { spec }), namespaces({ "proj-test": "Active" }), related(), at);
    assert.deepEqual(steady.children, first.children);
  });

  test("a changed spec asks for the new annotations on the existing Namespace", () => {
    const answer = sync(project("test", { spec: { license: "Apache-2.0" } }), namespaces({ "proj-test": "Active" }), related(), at);
    assert.equal(namespaceIn(answer)?.metadata.annotations.license, "Apache-2.0");
  });

  test("a Namespace the Project owns under another name, as an older naming rule gave, is kept as observed", () => {
    const children = namespaces({ "proj-test": "Active", "proj-old-name": "Active" });
    children[NAMESPACES]["proj-old-name"]!.metadata = { name: "proj-old-name", annotations: { license: "GPL", owner: "ops" } };
    const answer = sync(project("test"), children, related(), at);
    assert.deepEqual(answer.children.slice(1), [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "proj-old-name", labels: { [PROJECT_LABEL]: "test" }, annotations: { license: "GPL" } } },
    ]);
    assert.equal(answer.status.namespaces, 2);
    assert.match(ready(answer).message, / It also owns Namespace proj-old-name, kept as it is: delete it by hand once nobody needs it\.$/);
  });

  test("only apiVersion, kind, name, the Project's label and annotations are set: Metacontroller adds its own label and the owner", () => {
    const namespace = namespaceIn(sync(project("test"), namespaces(), related(), at));
    assert.deepEqual(Object.keys(namespace ?? {}), ["apiVersion", "kind", "metadata"]);
    assert.deepEqual(Object.keys(namespace?.metadata ?? {}), ["name", "labels", "annotations"]);
    assert.deepEqual(namespace?.metadata.labels, { [PROJECT_LABEL]: "test" });
  });
});

describe("sync: names that cannot become a Namespace", () => {
  const longest = "a".repeat(58);
  for (const name of ["my.project", "a".repeat(59), "Upper", "under_score", "ends-with-"]) {
    test(`Project "${name.length > 20 ? `${name.length} characters` : name}" asks for no Namespace and says why`, () => {
      const answer = sync(project(name), namespaces(), related(), at);
      assert.deepEqual(answer.children, []);
      assert.equal(answer.status.namespace, undefined);
      assert.equal(ready(answer).status, "False");
      assert.equal(ready(answer).reason, "InvalidName");
      assert.equal(ready(answer).message, `proj-${name} cannot be a Namespace name: ${PROJECT_NAME_RULE}. Recreate the Project under such a name.`);
      assert.match(ready(answer).message, /a Project name must be at most 58 /, "the Project's limit, not the Namespace's 63");
    });
  }

  test("a 58-character name is the longest that still works", () => {
    assert.equal(sync(project(longest), namespaces(), related(), at).children.length, 1);
    assert.equal(isValidNamespaceName(`proj-${longest}`), true);
    assert.equal(isValidNamespaceName(`proj-${longest}a`), false);
  });

});

describe("sync: annotations the API server would refuse", () => {
  const kib = 1024;
  function withDescription(description: string) {
    return sync(project("big", { spec: { description, license: "MIT" } }), namespaces(), related(), at);
  }

  // Metacontroller's copy of the desired object doubles the description: 120 KiB fits in 256 KiB, 130 KiB does not.
  test("a 120 KiB description still gets its Namespace", () => {
    assert.equal(withDescription("x".repeat(120 * kib)).children.length, 1);
  });

  test("a 130 KiB description, twice over the 256 KiB limit with Metacontroller's copy, gets no Namespace and a reason", () => {
    const answer = withDescription("x".repeat(130 * kib));
    assert.deepEqual(answer.children, []);
    assert.equal(ready(answer).status, "False");
    assert.equal(ready(answer).reason, "SpecTooLarge");
    assert.match(ready(answer).message, /Kubernetes allows 262144/);
  });

  test("the quick worst-case bound never counts fewer bytes than the exact count", () => {
    for (const unit of ["a", "é", "<", "\u2028", "\u0001", "😀", "\ud800"]) {
      for (const length of [0, 1, 1000]) {
        const namespace = namespaceIn(sync(project("a".repeat(58), { spec: { description: unit.repeat(length), license: unit } }), namespaces(), related(), at));
        assert.ok(namespace);
        const units = unit.length * (length + 1);
        assert.ok(annotationBytes(namespace) <= WORST_FIXED_BYTES + WORST_BYTES_PER_UNIT * units, `${JSON.stringify(unit)} x ${length}`);
      }
    }
  });

  test("the count is every annotation key and value, Metacontroller's key and its JSON copy, and 256 bytes for its label", () => {
    const namespace = namespaceIn(sync(project("a", { spec: { description: "d", license: "MIT" } }), namespaces(), related(), at));
    assert.ok(namespace);
    const copy = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"proj-a","labels":{"${PROJECT_LABEL}":"a"},"annotations":{"description":"d","license":"MIT"}}}`;
    const expected =
      "metacontroller.k8s.io/last-applied-configuration".length + copy.length + 256 + "description".length + 1 + "license".length + 3;
    assert.equal(annotationBytes(namespace), expected);
  });

  // One character more in the description costs itself in UTF-8 plus itself in the JSON copy, as Go writes it.
  for (const [character, bytes] of [
    ["a", 1 + 1],
    ["é", 2 + 2],
    ['"', 1 + 2],
    ["<", 1 + 6],
    [">", 1 + 6],
    ["&", 1 + 6],
    ["\u2028", 3 + 6],
    ["\u2029", 3 + 6],
    ["😀", 4 + 4],
  ] as const) {
    test(`${JSON.stringify(character)} in a description counts ${bytes} bytes`, () => {
      const count = (description: string) => {
        const namespace = namespaceIn(sync(project("a", { spec: { description } }), namespaces(), related(), at));
        assert.ok(namespace);
        return annotationBytes(namespace);
      };
      assert.equal(count(`x${character}`) - count("x"), bytes);
    });
  }

  test("annotations of exactly 256 KiB get their Namespace; one byte more does not", () => {
    const bytesFor = (description: string) =>
      annotationBytes({ apiVersion: "v1", kind: "Namespace", metadata: { name: "proj-big", labels: { [PROJECT_LABEL]: "big" }, annotations: { description, license: "MIT" } } });
    const room = ANNOTATIONS_MAX_BYTES - bytesFor("");
    // "x" costs 2 bytes and '"' costs 3: together they reach any count.
    const exactly = '"'.repeat(room % 2) + "x".repeat((room - 3 * (room % 2)) / 2);
    assert.equal(bytesFor(exactly), ANNOTATIONS_MAX_BYTES);
    assert.equal(withDescription(exactly).children.length, 1);
    const oneMore = exactly.replace("x", '"');
    assert.equal(bytesFor(oneMore), ANNOTATIONS_MAX_BYTES + 1);
    assert.equal(ready(withDescription(oneMore)).reason, "SpecTooLarge");
  });

});

describe("sync: a Namespace of that name that is not the Project's", () => {
  const taken = related({ "proj-test": { phase: "Active" } });

  test("customize asks for Namespace proj-<name> and the default profile by name, so that both are sent whoever owns them", () => {
    assert.deepEqual(customize(project("test")), {
      relatedResources: [
        { apiVersion: "v1", resource: "namespaces", names: ["proj-test"] },
        { apiVersion: "agrrh.com/v1", resource: "projectprofiles", names: ["default"] },
      ],
    });
  });

  test("customize asks for nothing for a name that cannot be a Namespace's, and sync still says why without it", () => {
    assert.deepEqual(customize(project("Bad.Name")), { relatedResources: [] });
    // With no rule, Metacontroller sends no Namespace group at all.
    const request = { parent: project("Bad.Name"), children: namespaces(), related: {} };
    const parsed = v.parse(SyncRequest, request);
    assert.equal(ready(sync(parsed.parent, parsed.children, parsed.related, at)).reason, "InvalidName");
  });

  test("a Namespace that exists but is not the Project's is a NamespaceConflict", () => {
    const answer = sync(project("test"), namespaces(), taken, at);
    assert.deepEqual(
      verdict(answer),
      {
        status: "False",
        reason: "NamespaceConflict",
        message:
          "Namespace proj-test already exists and is not this Project's, so it is left as it is. " +
          "Delete it if nobody needs it, or recreate this Project under another name; once it is gone, " +
          "this Project gets its own.",
      },
    );
    assert.equal(answer.status.namespaces, 0);
    assert.equal(answer.status.namespace, undefined, "kubectl get projects names no Namespace that is someone else's");
  });

  test("the taken Namespace is not asked for, so Metacontroller neither changes it nor keeps failing to create it", () => {
    assert.deepEqual(sync(project("test", { spec: { license: "MIT" } }), namespaces(), taken, at).children, []);
  });

  test("the conflict names the owner: another Project that holds the name", () => {
    const owned = related({ "proj-test": { phase: "Active", owners: [{ kind: "Project", name: "legacy", controller: true }] } });
    assert.match(ready(sync(project("test"), namespaces(), owned, at)).message, /^Namespace proj-test already exists and belongs to Project legacy,/);
  });

  test("of several owners, the controller is the one named", () => {
    const owners = [
      { kind: "ConfigMap", name: "keeper" },
      { kind: "Project", name: "legacy", controller: true },
    ];
    const owned = related({ "proj-test": { owners } });
    assert.match(ready(sync(project("test"), namespaces(), owned, at)).message, /belongs to Project legacy,/);
  });

  test("a taken Namespace that is being deleted: the Project gets its own once it is gone", () => {
    const leaving = related({ "proj-test": { phase: "Terminating" } });
    const message = ready(sync(project("test"), namespaces(), leaving, at)).message;
    assert.match(message, /It is being deleted; this Project gets its own once it is gone\.$/);
  });

  test("once the taken Namespace is gone, the Project asks for its own", () => {
    const parent = project("test");
    const conflict = sync(parent, namespaces(), taken, at);
    const freed = sync({ ...parent, status: conflict.status }, namespaces(), related(), later);
    assert.equal(ready(freed).reason, "WaitingForNamespace");
    assert.deepEqual(freed.children.map((namespace) => namespace.metadata.name), ["proj-test"]);
    assert.equal(ready(freed).lastTransitionTime, ready(conflict).lastTransitionTime, "still False, so no transition");
  });

  test("the Project's own Namespace, which is related too, is no conflict", () => {
    const answer = sync(project("test"), namespaces({ "proj-test": "Active" }), taken, at);
    assert.equal(ready(answer).reason, "NamespaceActive");
    assert.equal(answer.children.length, 1);
  });

  test("a name that cannot become a Namespace is reported as such, even if something of that name is related", () => {
    const answer = sync(project("my.project"), namespaces(), related({ "proj-my.project": {} }), at);
    assert.equal(ready(answer).reason, "InvalidName");
  });
});

describe("sync: members get access through RoleBindings", () => {
  const active = namespaces({ "proj-shop": "Active" });
  // The issue's example: one member of each kind, and two roles shared.
  const members = [
    { kind: "User", name: "alice@example.com", role: "admin" },
    { kind: "Group", name: "shop-devs", role: "edit" },
    { kind: "ServiceAccount", namespace: "ci", name: "deployer", role: "edit" },
    { kind: "User", name: "auditor", role: "view" },
  ];
  const shop = (list: unknown[] = members, fields: Parameters<typeof project>[1] = {}) =>
    project("shop", { ...fields, spec: { description: "Web shop", license: "MIT", members: list } });
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
        metadata: { name: "project-admin-users", namespace: "proj-shop" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
        subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "alice@example.com" }],
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "project-edit-groups", namespace: "proj-shop" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
        subjects: [{ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "shop-devs" }],
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "project-edit-serviceaccounts-ci", namespace: "proj-shop" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
        subjects: [{ kind: "ServiceAccount", name: "deployer", namespace: "ci" }],
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "project-view-users", namespace: "proj-shop" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
        subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "auditor" }],
      },
    ]);
  });

  test("members of one name never share a RoleBinding, so Metacontroller's merge by name cannot collapse them", () => {
    const sameNames = [
      { kind: "ServiceAccount", namespace: "ci", name: "deployer", role: "edit" },
      { kind: "ServiceAccount", namespace: "prod", name: "deployer", role: "edit" },
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
      ["Group ops", "ServiceAccount ci/deployer", "ServiceAccount prod/deployer", "User ops"],
    );
  });

  test("members of one role and kind share their RoleBinding, subjects sorted", () => {
    const team = [{ kind: "User", name: "carol", role: "edit" }, { kind: "User", name: "bob", role: "edit" }];
    assert.deepEqual(
      roleBindingsOf(sync(shop(team), active, related(), at)).map((binding) => [binding.metadata.name, binding.subjects.map((subject) => subject.name)]),
      [["project-edit-users", ["bob", "carol"]]],
    );
  });

  test("a subject added by hand to a RoleBinding leaves it out of the answer, so Metacontroller deletes it, and says why", () => {
    // What a Namespace admin could do: add a subject to one of the Project's RoleBindings.
    const handEdited = withObserved(active, access);
    handEdited[ROLE_BINDINGS]["proj-shop/project-view-users"]?.subjects?.push({ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "mallory" });
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
    delete handEdited[ROLE_BINDINGS]["proj-shop/project-view-users"];
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

  test("before the Namespace is observed, or while it is not Active, the answer holds the Namespace only", () => {
    for (const observed of [namespaces(), namespaces({ "proj-shop": "Terminating" }), namespaces({ "proj-shop": null })]) {
      assert.deepEqual(sync(shop(), observed, related(), at).children.map((child) => child.kind), ["Namespace"]);
    }
  });

  test("no RoleBinding goes into a Namespace of that name that is someone else's", () => {
    assert.deepEqual(sync(shop(), namespaces(), related({ "proj-shop": { phase: "Active" } }), at).children, []);
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
        message: "Namespace proj-shop is Active; waiting for RoleBinding project-admin-users, project-edit-groups, project-edit-serviceaccounts-ci, project-view-users; ClusterRoleBinding projects.agrrh.com:shop:reader:users, projects.agrrh.com:shop:reader:groups, projects.agrrh.com:shop:reader:serviceaccounts-ci; ClusterRole projects.agrrh.com:shop:reader to be as asked.",
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
        message: "Namespace proj-shop is Active, with project-admin-users, project-edit-groups, project-edit-serviceaccounts-ci, project-view-users as asked.",
      },
    );
  });

  test("a RoleBinding observed with other subjects is not as asked yet", () => {
    const stale = access.map((object) => (object.metadata.name === "project-edit-groups" ? { ...object, subjects: [] } : object));
    const message = ready(sync(shop(), withObserved(active, stale), related(), at)).message;
    assert.equal(message, "Namespace proj-shop is Active; waiting for RoleBinding project-edit-groups to be as asked.");
  });

  test("a RoleBinding of a role nobody holds any more keeps Ready False until Metacontroller has removed it", () => {
    const withoutViewers = members.filter((member) => member.role !== "view");
    const answer = sync(shop(withoutViewers), inPlace, related(), at);
    assert.equal(
      ready(answer).message,
      "Namespace proj-shop is Active; waiting for ClusterRoleBinding projects.agrrh.com:shop:reader:users to be as asked, " +
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

describe("sync: no answer costs a Project a Namespace it has", () => {
  // Metacontroller deletes every observed child an answer leaves out, and a
  // Namespace takes all it holds with it. Every answer in which sync does not
  // carry out the spec is tried here against an observation that already has
  // the Namespace, with annotations of its own: a refusal added to REFUSALS
  // without a case here does not compile.
  const observedAnnotations = { description: "what was there", license: "MIT", "team.example.com/owner": "ops" };
  const having = (...names: string[]) => {
    const children = namespaces(Object.fromEntries(names.map((name) => [name, "Active"])));
    for (const name of names) children[NAMESPACES][name]!.metadata = { name, annotations: { ...observedAnnotations } };
    return children;
  };
  const cases: Record<Refusal, { parent: Project; children: ObservedChildren; related?: RelatedObjects }> = {
    InvalidName: { parent: project("my.project"), children: having("proj-my.project") },
    SpecTooLarge: { parent: project("big", { spec: { description: "a".repeat(140_000) } }), children: having("proj-big") },
    InvalidMembers: { parent: project("shop", { spec: { members: [{ kind: "Robot", name: "r2", role: "view" }] } }), children: having("proj-shop") },
    // The name is taken by someone else's Namespace; the one the Project owns under an older name stays.
    NamespaceConflict: { parent: project("shop"), children: having("proj-shop-old"), related: related({ "proj-shop": { phase: "Active" } }) },
    ProfileNotFound: { parent: project("shop", { spec: { profile: "gone" } }), children: having("proj-shop") },
    InvalidProfile: { parent: project("shop"), children: having("proj-shop"), related: related({}, { default: { podSecurity: "lenient" } }) },
  };
  for (const reason of REFUSALS) {
    test(`${reason}: every observed Namespace is in the answer, with the annotations sync owns as they were`, () => {
      const { parent, children, related: relatedObjects = related() } = cases[reason];
      const answer = sync(parent, children, relatedObjects, at);
      assert.equal(ready(answer).reason, reason);
      for (const name of Object.keys(children[NAMESPACES])) {
        const kept = answer.children.find((child) => child.kind === "Namespace" && child.metadata.name === name) as Namespace | undefined;
        assert.ok(kept, `${name} is in the answer`);
        if (reason !== "InvalidMembers") assert.deepEqual(kept.metadata.annotations, { description: "what was there", license: "MIT" });
      }
    });
  }

  test("a Project whose spec is too large still names its Namespace in the status", () => {
    const { parent, children } = cases.SpecTooLarge;
    assert.equal(sync(parent, children, related(), at).status.namespace, "proj-big");
  });

  test("without a Namespace yet, a refused Project asks for none and names none", () => {
    const answer = sync(cases.SpecTooLarge.parent, namespaces(), related(), at);
    assert.deepEqual(answer.children, []);
    assert.equal(answer.status.namespace, undefined);
  });
});

describe("sync: guardrails from the Project's profile", () => {
  // A profile like k8s.yaml's default, written as an admin might.
  const team: ProfileSpec = {
    resourceQuota: { hard: { "requests.cpu": "2", "limits.memory": "8Gi", pods: "20" } },
    limitRange: { default: { cpu: "0.5", memory: "512Mi" }, defaultRequest: { cpu: "100m" } },
    networkPolicy: { allowFromNamespaces: ["ingress-nginx"] },
    podSecurity: "baseline",
  };
  const profiles = (spec: ProfileSpec | Record<string, unknown> = team) => related({}, { default: spec });
  const active = () => namespaces({ "proj-shop": "Active" });
  const dana = [{ kind: "User", name: "dana", role: "admin" }];
  const shop = (spec: NonNullable<Project["spec"]> = {}) => project("shop", { spec });
  const kinds = (answer: SyncResponse) => answer.children.map((child) => `${child.kind} ${child.metadata.name}`);
  /** The children as Metacontroller leaves them once it has applied the answer. */
  const applied = (answer: SyncResponse, children = active()) => {
    const observed = withObserved(children, [...guardrailsIn(answer), ...accessIn(answer)]);
    const namespace = namespaceIn(answer);
    if (namespace) observed[NAMESPACES][namespace.metadata.name]!.metadata = structuredClone(namespace.metadata);
    return observed;
  };
  const quotaIn = (answer: SyncResponse) => guardrailsIn(answer).find((guardrail) => guardrail.kind === "ResourceQuota") as ResourceQuota | undefined;

  test("an Active Namespace gets the profile's ResourceQuota, LimitRange and NetworkPolicy, each labelled with the profile", () => {
    const answer = sync(shop(), active(), profiles(), at);
    const labels = { [PROFILE_LABEL]: "default" };
    assert.deepEqual(guardrailsIn(answer), [
      { apiVersion: "v1", kind: "ResourceQuota", metadata: { name: "project-quota", namespace: "proj-shop", labels }, spec: { hard: team.resourceQuota!.hard } },
      {
        apiVersion: "v1",
        kind: "LimitRange",
        metadata: { name: "project-limits", namespace: "proj-shop", labels },
        // A default request left out is the default limit, as the API server fills it in.
        spec: { limits: [{ type: "Container", default: { cpu: "0.5", memory: "512Mi" }, defaultRequest: { cpu: "100m", memory: "512Mi" } }] },
      },
      {
        apiVersion: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: { name: "project-isolation", namespace: "proj-shop", labels },
        spec: {
          podSelector: {},
          policyTypes: ["Ingress"],
          ingress: [
            {
              from: [
                { podSelector: {} },
                { namespaceSelector: { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["ingress-nginx"] }] } },
              ],
            },
          ],
        },
      },
    ]);
    assert.equal(answer.status.profile, "default");
  });

  test("the Namespace enforces the profile's Pod Security level from its creation", () => {
    const answer = sync(shop(), namespaces(), profiles(), at);
    assert.deepEqual(namespaceIn(answer)?.metadata.labels, { [PROJECT_LABEL]: "shop", [POD_SECURITY_LABEL]: "baseline" });
    assert.deepEqual(kinds(answer), ["Namespace proj-shop"], "no guardrail before the Namespace is Active");
  });

  test("isolation without other namespaces admits the Project's own pods only", () => {
    const answer = sync(shop(), active(), profiles({ networkPolicy: {} }), at);
    const [policy] = guardrailsIn(answer) as NetworkPolicy[];
    assert.deepEqual(policy?.spec.ingress, [{ from: [{ podSelector: {} }] }]);
  });

  test("an empty profile asks for no guardrail and no Pod Security label", () => {
    const answer = sync(shop(), active(), profiles({}), at);
    assert.deepEqual(kinds(answer), ["Namespace proj-shop"]);
    assert.deepEqual(namespaceIn(answer)?.metadata.labels, { [PROJECT_LABEL]: "shop" });
  });

  test("members get access only once the guardrails are in place, so that nothing they run escapes them", () => {
    const first = sync(shop({ members: dana }), active(), profiles(), at);
    assert.deepEqual(roleBindingsIn(first), []);
    assert.deepEqual(verdict(first), {
      status: "False",
      reason: "WaitingForGuardrails",
      message:
        "Namespace proj-shop is Active; waiting for ResourceQuota project-quota; LimitRange project-limits; " +
        "NetworkPolicy project-isolation to be as its profile says; members get access once they are in place.",
    });
    const second = sync(shop({ members: dana }), applied(first), profiles(), at);
    assert.deepEqual(roleBindingsIn(second).map((binding) => binding.metadata.name), ["project-admin-users"]);
    const settled = sync(shop({ members: dana }), applied(second), profiles(), at);
    assert.equal(ready(settled).reason, "NamespaceActive");
  });

  test("access once given is not taken back while a deleted guardrail is made again", () => {
    const settled = applied(sync(shop({ members: dana }), applied(sync(shop({ members: dana }), active(), profiles(), at)), profiles(), at));
    delete settled[RESOURCE_QUOTAS]["proj-shop/project-quota"];
    const answer = sync(shop({ members: dana }), settled, profiles(), at);
    assert.ok(quotaIn(answer), "the quota is asked for again");
    assert.deepEqual(roleBindingsIn(answer).map((binding) => binding.metadata.name), ["project-admin-users"]);
    assert.equal(ready(answer).reason, "WaitingForGuardrails");
  });

  test("a quantity the API server stored another way is asked for as stored, so the answer is a fixed point", () => {
    const first = sync(shop(), active(), profiles(), at);
    const observed = applied(first);
    // The API server writes 0.5 CPU as 500m.
    (observed[LIMIT_RANGES]["proj-shop/project-limits"]!["spec"] as any).limits[0].default.cpu = "500m";
    const again = sync(shop(), observed, profiles(), at);
    const [, limitRange] = guardrailsIn(again) as [ResourceQuota, LimitRange];
    assert.equal(limitRange.spec.limits[0].default?.cpu, "500m");
    assert.equal(ready(again).reason, "NamespaceActive");
    assert.deepEqual(sync(project("shop", { spec: {}, status: again.status }), observed, profiles(), later).status, again.status);
  });

  test("a quota raised by hand is put back and reported until it is", () => {
    const observed = applied(sync(shop(), active(), profiles(), at));
    (observed[RESOURCE_QUOTAS]["proj-shop/project-quota"]!["spec"] as any).hard.pods = "1000";
    const answer = sync(shop(), observed, profiles(), at);
    assert.equal(quotaIn(answer)?.spec.hard["pods"], "20");
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "WaitingForGuardrails",
      message: "Namespace proj-shop is Active; waiting for ResourceQuota project-quota to be as its profile says.",
    });
  });

  test("a NetworkPolicy narrowed by hand to some pods, which the merge cannot undo, is left out once so that it is made afresh", () => {
    const observed = applied(sync(shop(), active(), profiles(), at));
    (observed[NETWORK_POLICIES]["proj-shop/project-isolation"]!["spec"] as any).podSelector = { matchLabels: { app: "db" } };
    const answer = sync(shop(), observed, profiles(), at);
    assert.deepEqual(kinds(answer), ["Namespace proj-shop", "ResourceQuota project-quota", "LimitRange project-limits"]);
    assert.equal(ready(answer).reason, "WaitingForGuardrails");
    delete observed[NETWORK_POLICIES]["proj-shop/project-isolation"];
    assert.ok(kinds(sync(shop(), observed, profiles(), at)).includes("NetworkPolicy project-isolation"), "and asked for again");
  });

  test("an edited profile changes the quota of every Project that uses it", () => {
    const observed = applied(sync(shop(), active(), profiles(), at));
    const raised = { ...team, resourceQuota: { hard: { ...team.resourceQuota!.hard, pods: "50" } } };
    assert.equal(quotaIn(sync(shop(), observed, profiles(raised), at))?.spec.hard["pods"], "50");
  });

  test("a part taken out of the profile is removed from the Namespace, and Ready waits for it", () => {
    const observed = applied(sync(shop(), active(), profiles(), at));
    const { networkPolicy: _, ...withoutIsolation } = team;
    const answer = sync(shop(), observed, profiles(withoutIsolation), at);
    assert.deepEqual(kinds(answer), ["Namespace proj-shop", "ResourceQuota project-quota", "LimitRange project-limits"]);
    assert.deepEqual(verdict(answer).message, "Namespace proj-shop is Active; waiting for NetworkPolicy project-isolation to be removed.");
  });

  test("a Project naming another profile gets that one's guardrails, and customize asks for it", () => {
    const large = { resourceQuota: { hard: { pods: "100" } } };
    const answer = sync(shop({ profile: "large" }), active(), related({}, { default: team, large }), at);
    assert.deepEqual(quotaIn(answer)?.spec.hard, { pods: "100" });
    assert.equal(quotaIn(answer)?.metadata.labels[PROFILE_LABEL], "large");
    assert.deepEqual(customize(shop({ profile: "large" })).relatedResources[1], { apiVersion: "agrrh.com/v1", resource: "projectprofiles", names: ["large"] });
  });

  test("a new Project naming a profile that does not exist gets no Namespace, and says why", () => {
    const answer = sync(shop({ profile: "large" }), namespaces(), profiles(), at);
    assert.deepEqual(answer.children, []);
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "ProfileNotFound",
      message:
        "ProjectProfile large does not exist, so no Namespace is created without guardrails. " +
        "Set spec.profile to one that does (kubectl get projectprofiles), or ask a cluster admin to create it.",
    });
  });

  test("while its profile is missing, a Project keeps its guardrails and Pod Security label exactly as observed", () => {
    const observed = applied(sync(shop({ members: dana }), applied(sync(shop({ members: dana }), active(), profiles(), at)), profiles(), at));
    (observed[RESOURCE_QUOTAS]["proj-shop/project-quota"]!["spec"] as any).hard.pods = "7";
    const answer = sync(shop({ members: dana, description: "changed" }), observed, related({}, {}), at);
    assert.equal(ready(answer).reason, "ProfileNotFound");
    assert.match(ready(answer).message, /^ProjectProfile default does not exist, so Namespace proj-shop keeps the guardrails it has/);
    assert.deepEqual(namespaceIn(answer)?.metadata, {
      name: "proj-shop",
      labels: { [PROJECT_LABEL]: "shop", [POD_SECURITY_LABEL]: "baseline" },
      annotations: { description: "", license: "WTFPL" },
    });
    assert.equal(quotaIn(answer)?.spec.hard["pods"], "7", "as observed, not as any profile says");
    assert.deepEqual(kinds(answer).slice(1, 4), ["ResourceQuota project-quota", "LimitRange project-limits", "NetworkPolicy project-isolation"]);
    assert.deepEqual(roleBindingsIn(answer).map((binding) => binding.metadata.name), ["project-admin-users"], "access is not the profile's");
    assert.equal(answer.status.profile, "default", "the profile the guardrails came from");
  });

  test("a profile that breaks its rules is reported with where and why, and the guardrails are kept", () => {
    const observed = applied(sync(shop(), active(), profiles(), at));
    const answer = sync(shop(), observed, profiles({ ...team, limitRange: { default: { cpu: "1" }, defaultRequest: { cpu: "2" } } }), at);
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "InvalidProfile",
      message:
        `ProjectProfile default breaks its rules (spec.limitRange: ${PROFILE_RULES.requestOverLimit}), so Namespace proj-shop ` +
        "keeps the guardrails it has, and is otherwise left as it is. A cluster admin must fix it.",
    });
    assert.equal(guardrailsIn(answer).length, 3);
  });

  for (const { what, spec, breaks } of PROFILE_CASES.filter((profileCase) => profileCase.breaks)) {
    test(`a profile that breaks a rule gets its Projects InvalidProfile naming it: ${what}`, () => {
      assert.ok(breaks);
      const answer = sync(shop(), active(), profiles(spec), at);
      assert.equal(ready(answer).reason, "InvalidProfile");
      assert.ok(ready(answer).message.includes(PROFILE_RULES[breaks]), ready(answer).message);
    });
  }

  test("quantities compare by value, whatever their units", () => {
    for (const [a, b] of [["1Gi", "1024Mi"], ["0.5", "500m"], ["1k", "1000"], ["1.5Gi", "1536Mi"], ["0.001", "1m"], ["2E", "2000P"]]) {
      assert.equal(compareQuantities(a!, b!), 0, `${a} = ${b}`);
    }
    for (const [a, b] of [["1G", "1Gi"], ["999m", "1"], ["1Mi", "1.049M"], ["128Mi", "0.126Gi"]]) {
      assert.equal(compareQuantities(a!, b!), -1, `${a} < ${b}`);
      assert.equal(compareQuantities(b!, a!), 1, `${b} > ${a}`);
    }
  });
});

describe("sync: deletion protection", () => {
  test("a protected Project's Namespace carries its name under the protection label", () => {
    const answer = sync(project("shop", { spec: { deletionProtection: true } }), namespaces(), related(), at);
    assert.deepEqual(namespaceIn(answer)?.metadata.labels, { [PROJECT_LABEL]: "shop", [PROTECTED_BY_LABEL]: "shop" });
  });

  test("an unprotected Project's Namespace asks for no protection label, so the one it had is removed", () => {
    for (const deletionProtection of [false, null, undefined]) {
      const answer = sync(project("shop", { spec: { deletionProtection } }), namespaces({ "proj-shop": "Active" }), related(), at);
      assert.deepEqual(namespaceIn(answer)?.metadata.labels, { [PROJECT_LABEL]: "shop" });
    }
  });

  test("the protection follows the spec even when the rest of it cannot be carried out", () => {
    const spec = { description: "a".repeat(140_000), deletionProtection: true };
    const answer = sync(project("big", { spec }), namespaces({ "proj-big": "Active" }), related(), at);
    assert.equal(ready(answer).reason, "SpecTooLarge");
    assert.deepEqual(namespaceIn(answer)?.metadata.labels, { [PROJECT_LABEL]: "big", [PROTECTED_BY_LABEL]: "big" });
  });
});

describe("sync: status", () => {
  test("Ready is False while waiting for the Namespace to be created", () => {
    const answer = sync(project("test"), namespaces(), related(), at);
    assert.deepEqual(answer.status, {
      namespaces: 0,
      members: 0,
      namespace: "proj-test",
      profile: "default",
      observedGeneration: 1,
      conditions: [
        {
          type: "Ready",
          status: "False",
          observedGeneration: 1,
          lastTransitionTime: "2026-11-30T12:00:00Z",
          reason: "WaitingForNamespace",
          message: "Waiting for Metacontroller to create Namespace proj-test.",
        },
      ],
    });
  });

  test("Ready is True once the Namespace is Active", () => {
    const answer = sync(project("test"), namespaces({ "proj-test": "Active" }), related(), at);
    assert.equal(answer.status.namespaces, 1);
    assert.deepEqual(
      { status: ready(answer).status, reason: ready(answer).reason },
      { status: "True", reason: "NamespaceActive" },
    );
  });

  test("Ready is False while the Namespace is terminating", () => {
    const answer = sync(project("test"), namespaces({ "proj-test": "Terminating" }), related(), at);
    assert.deepEqual(
      { status: ready(answer).status, reason: ready(answer).reason },
      { status: "False", reason: "NamespaceTerminating" },
    );
    assert.equal(answer.children.length, 1, "still wanted, so it comes back once it is gone");
  });

  test("a Namespace without a phase is not Ready, and the message says it has none", () => {
    const answer = sync(project("test"), namespaces({ "proj-test": null }), related(), at);
    assert.equal(ready(answer).status, "False");
    assert.equal(ready(answer).reason, "NamespaceNotActive");
    assert.equal(ready(answer).message, "Namespace proj-test has no phase yet.");
  });

  test("a Namespace in another phase is not Ready, and the message names the phase", () => {
    const answer = sync(project("test"), namespaces({ "proj-test": "Pending" }), related(), at);
    assert.equal(ready(answer).reason, "NamespaceNotActive");
    assert.equal(ready(answer).message, "Namespace proj-test is in phase Pending, not Active.");
  });

  test("only the Project's own Namespace counts for Ready", () => {
    const answer = sync(project("test"), namespaces({ "proj-other": "Active" }), related(), at);
    assert.equal(ready(answer).reason, "WaitingForNamespace");
  });

  test("observedGeneration follows metadata.generation", () => {
    const answer = sync(project("test", { generation: 7 }), namespaces(), related(), at);
    assert.equal(answer.status.observedGeneration, 7);
    assert.equal(ready(answer).observedGeneration, 7);
  });

  test("without metadata.generation there is no observedGeneration", () => {
    const answer = sync(project("test", { generation: null }), namespaces(), related(), at);
    assert.equal("observedGeneration" in answer.status, false);
    assert.equal("observedGeneration" in ready(answer), false);
  });

  test("lastTransitionTime is whole seconds, as Kubernetes writes it", () => {
    assert.equal(ready(sync(project("test"), namespaces(), related(), at)).lastTransitionTime, "2026-11-30T12:00:00Z");
  });
});

describe("sync: a fixed point, so Metacontroller does not loop", () => {
  // Metacontroller writes the returned status onto the Project, which triggers another sync.
  function resync(parent: Project, children: ObservedChildren, answer: ReturnType<typeof sync>, others = related()) {
    return sync({ ...parent, status: structuredClone(answer.status) }, children, others, later);
  }

  for (const [situation, observed, others] of [
    ["waiting for the Namespace", namespaces(), related()],
    ["the Namespace is Active", namespaces({ "proj-test": "Active" }), related({ "proj-test": { phase: "Active" } })],
    ["the Namespace is terminating", namespaces({ "proj-test": "Terminating" }), related()],
    ["a stale Namespace is observed", namespaces({ "proj-test": "Active", "proj-old": "Active" }), related()],
    ["the name is taken", namespaces(), related({ "proj-test": { phase: "Active" } })],
  ] as const) {
    test(`syncing the returned status again returns the same status: ${situation}`, () => {
      const parent = project("test", { spec: { description: "d" } });
      const first = sync(parent, observed, others, at);
      assert.deepEqual(resync(parent, observed, first, others), first);
    });
  }

  test("a real steady-state request from Metacontroller gets back exactly the status it carries", () => {
    const { parent, children, related } = fixture("steady-sync");
    assert.deepEqual(sync(parent, children, related, later).status, parent.status);
  });

  test("syncing again is a fixed point for a name that cannot become a Namespace", () => {
    const parent = project("my.project");
    const first = sync(parent, namespaces(), related(), at);
    assert.deepEqual(resync(parent, namespaces(), first), first);
  });

  test("lastTransitionTime moves when Ready changes status", () => {
    const parent = project("test");
    const waiting = sync(parent, namespaces(), related(), at);
    const active = resync(parent, namespaces({ "proj-test": "Active" }), waiting);
    assert.equal(ready(active).status, "True");
    assert.equal(ready(active).lastTransitionTime, "2026-12-01T08:30:00Z");
  });

  test("the previous Ready condition is found among other conditions", () => {
    const readySince = "2026-11-01T00:00:00Z";
    const status = {
      conditions: [
        { type: "Progressing", status: "False", lastTransitionTime: "2026-11-02T00:00:00Z" },
        { type: "Ready", status: "True", lastTransitionTime: readySince },
      ],
    };
    const answer = sync(project("test", { status }), namespaces({ "proj-test": "Active" }), related(), later);
    assert.equal(ready(answer).lastTransitionTime, readySince);
  });

  test("lastTransitionTime stays when only the reason changes", () => {
    const parent = project("test");
    const waiting = sync(parent, namespaces(), related(), at);
    const terminating = resync(parent, namespaces({ "proj-test": "Terminating" }), waiting);
    assert.equal(ready(terminating).reason, "NamespaceTerminating");
    assert.equal(ready(terminating).lastTransitionTime, ready(waiting).lastTransitionTime);
  });
});

describe("sync: input", () => {
  test("the input is never modified", () => {
    const { parent, children, related } = deepFreeze(fixture("steady-sync"));
    const before = JSON.stringify({ parent, children, related });
    sync(parent, children, related, at);
    assert.equal(JSON.stringify({ parent, children, related }), before);
  });

  test("a real first sync from Metacontroller, unknown fields and all, is accepted", () => {
    const request = v.parse(SyncRequest, fixture("first-sync"));
    assert.equal(sync(request.parent, request.children, request.related, at).children[0]?.metadata.name, "proj-test");
  });

  test("unknown fields are kept by the schema, not stripped or refused", () => {
    const request = v.parse(SyncRequest, fixture("steady-sync"));
    assert.equal(request.parent.metadata["uid"], fixture("steady-sync").parent.metadata["uid"]);
    assert.match(String(request.parent.metadata["uid"]), /^[0-9a-f-]{36}$/);
    assert.equal(request.related["Namespace.v1"]?.["proj-test"]?.["kind"], "Namespace");
  });

  test("controller and finalizing are not read, so any value of theirs passes", () => {
    const request = { ...fixture("steady-sync"), controller: null, finalizing: "yes" };
    assert.equal(v.safeParse(SyncRequest, request).success, true);
  });

  test("a previous status that cannot be read is ignored, not refused", () => {
    const request = fixture("steady-sync");
    request.parent.status = { conditions: "garbage" } as unknown as Project["status"];
    const parsed = v.safeParse(SyncRequest, request);
    assert.ok(parsed.success);
    assert.equal(ready(sync(parsed.output.parent, parsed.output.children, parsed.output.related, at)).lastTransitionTime, "2026-11-30T12:00:00Z");
  });

  const refusals: [string, (request: Record<string, any>) => void, (string | number)[]][] = [
    ["a Project without a name", (r) => delete r["parent"].metadata.name, ["parent", "metadata", "name"]],
    ["a Project with an empty name", (r) => (r["parent"].metadata.name = ""), ["parent", "metadata", "name"]],
    ["a description that is not a string", (r) => (r["parent"].spec.description = 42), ["parent", "spec", "description"]],
    ["a generation that is not a number", (r) => (r["parent"].metadata.generation = "1"), ["parent", "metadata", "generation"]],
    ["children without Namespace.v1", (r) => delete r["children"]["Namespace.v1"], ["children", "Namespace.v1"]],
    [
      "children without RoleBindings, as when the CompositeController does not declare them",
      (r) => delete r["children"]["RoleBinding.rbac.authorization.k8s.io/v1"],
      ["children", "RoleBinding.rbac.authorization.k8s.io/v1"],
    ],
    ["a child that is not an object", (r) => (r["children"]["Namespace.v1"]["proj-test"] = 1), ["children", "Namespace.v1", "proj-test"]],
    ["members that are not a list", (r) => (r["parent"].spec.members = "alice"), ["parent", "spec", "members"]],
    ["a request without related", (r) => delete r["related"], ["related"]],
    ["related without Namespace.v1, as when no customize hook is declared", (r) => delete r["related"]["Namespace.v1"], ["related"]],
    ["related without ProjectProfile.agrrh.com/v1, as from an older customize hook", (r) => delete r["related"]["ProjectProfile.agrrh.com/v1"], ["related"]],
    [
      "a related Namespace whose owner has no name",
      (r) => (r["related"]["Namespace.v1"]["proj-test"].metadata.ownerReferences = [{ kind: "Project" }]),
      ["related", "Namespace.v1", "proj-test", "metadata", "ownerReferences", 0, "name"],
    ],
  ];
  for (const [what, breakIt, path] of refusals) {
    test(`the schema refuses ${what}, naming where`, () => {
      const request = fixture("steady-sync");
      breakIt(request);
      const result = v.safeParse(SyncRequest, request);
      assert.equal(result.success, false);
      assert.deepEqual(
        result.issues?.map((issue) => issue.path?.map((segment) => segment.key)),
        [path],
      );
    });
  }
});

describe("sync: nothing outside its own places is the Project's", () => {
  const dana = [{ kind: "User", name: "dana", role: "admin" }];
  const shop = () => project("shop", { spec: { members: dana } });
  const team = related({}, { default: { networkPolicy: {}, podSecurity: "baseline" } });
  const settled = () => {
    let children = namespaces({ "proj-shop": "Active" });
    for (let round = 0; round < 3; round += 1) {
      const answer = sync(shop(), children, team, at);
      children = withObserved(namespaces({ "proj-shop": "Active" }), answer.children.filter((child) => child.kind !== "Namespace") as any);
    }
    return children;
  };
  const isolation = (namespace: string) => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: "project-isolation", namespace, labels: { [PROFILE_LABEL]: "default" } },
    spec: { podSelector: {}, policyTypes: ["Ingress"], ingress: [{ from: [{ podSelector: {} }] }] },
  });
  const planted = (children: ObservedChildren, objects: any[]) => withObserved(children, objects);

  test("settled, a Project with one admin is Ready, and asks for no object outside its Namespace but its reader role and bindings", () => {
    const answer = sync(shop(), settled(), team, at);
    assert.equal(ready(answer).reason, "NamespaceActive", ready(answer).message);
  });

  test("an object labelled as the Project's in another Namespace is named as a stray and left out, so Metacontroller deletes it", () => {
    const children = planted(settled(), [isolation("proj-other")]);
    const answer = sync(shop(), children, team, at);
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "RemovingStrayChildren",
      message:
        "NetworkPolicy proj-other/project-isolation carry this Project's controller-uid label outside Namespace proj-shop and the objects " +
        "that let its members read it, so they are not its children: Metacontroller deletes them.",
    });
    assert.ok(!answer.children.some((child) => "namespace" in child.metadata && child.metadata.namespace === "proj-other"), "not asked for");
    assert.deepEqual(answer.children, sync(shop(), settled(), team, at).children, "the same children as without it");
  });

  test("a ClusterRole or ClusterRoleBinding labelled as the Project's, but not its reader role or one of its bindings, is a stray", () => {
    const role = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "cluster-admin-copy" }, rules: [] };
    const binding = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "projects.agrrh.com:shop:readerx" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [],
    };
    for (const stray of [role, binding]) {
      const answer = sync(shop(), planted(settled(), [stray as any]), team, at);
      assert.equal(ready(answer).reason, "RemovingStrayChildren", stray.kind);
      assert.match(ready(answer).message, new RegExp(`^${stray.kind} ${stray.metadata.name.replaceAll(".", "\\.")} carry`));
    }
  });

  test("a RoleBinding labelled as the Project's in another Namespace is no access given: members still wait for the guardrails", () => {
    const elsewhere = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: { name: "project-admin-users", namespace: "proj-other" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" }, subjects: [] };
    const answer = sync(shop(), planted(namespaces({ "proj-shop": "Active" }), [elsewhere as any]), team, at);
    assert.deepEqual(roleBindingsIn(answer), [], "no access before the guardrails are there");
  });

  test("a Namespace it owns under another name keeps whose it is and its protection, not its profile's Pod Security level", () => {
    const children = namespaces({ "proj-shop": "Active", "proj-old-name": "Active" });
    const protectedShop = project("shop", { spec: { deletionProtection: true } });
    const answer = sync(protectedShop, children, team, at);
    const old = answer.children.find((child) => child.metadata.name === "proj-old-name") as Namespace;
    assert.deepEqual(old.metadata.labels, { [PROJECT_LABEL]: "shop", [PROTECTED_BY_LABEL]: "shop" });
    assert.equal(namespaceIn(answer)?.metadata.labels[POD_SECURITY_LABEL], "baseline", "its own Namespace has it");
  });
});
