// What `sync` answers for what Metacontroller observed: the seed's rules a
// user of the controller sees as Namespaces and as the Project's status.
// Each feature's rules are tested in its own file, test/<feature>.test.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as v from "valibot";
import {
  GROUP,
  NAMESPACES,
  PROJECT_LABEL,
  PROJECT_NAME_MAX_LENGTH,
  PROJECT_NAME_RULE,
  REFUSALS,
  SyncRequest,
  CUSTOMIZE_CACHE_MINUTES,
  FLEET_WIDE,
  customize,
  finalize,
  isValidNamespaceName,
  namespaceNameFor,
  PARENT,
  sync,
  type Namespace,
  type ObservedChildren,
  type Project,
} from "../sync.ts";
import { FEATURE_REFUSALS } from "../features/index.ts"; // features
import { PROFILES } from "../features/guardrails.ts"; // feature: guardrails
import { ANNOTATION_FIELDS, DEFAULT_ANNOTATIONS, annotationsSpec, assertKeepsEveryNamespace, at, eachAnnotation, deepFreeze, escaped, fixture, having, later, namespaceIn, namespaceOf, namespaces, project, ready, related, verdict, type NeverLoseCase } from "./helpers.ts";

// The Namespace of the Project most tests here make; the first test pins its name.
const TEST = namespaceOf("test");

describe("sync: the desired Namespace", () => {
  test("a new Project asks for Namespace proj-<name> with an annotation for each of NAMESPACE_ANNOTATIONS' fields, as its spec gives them", () => {
    const answer = sync(project("test", { spec: annotationsSpec("Test") }), namespaces(), related(), at);
    assert.deepEqual(answer.children, [
      {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "proj-test", labels: { [PROJECT_LABEL]: "test" }, annotations: annotationsSpec("Test") }, // pins the name
      },
    ]);
  });

  test("a Project without spec gets each annotation's default", () => {
    const namespace = namespaceIn(sync(project("bare"), namespaces(), related(), at));
    assert.deepEqual(namespace?.metadata.annotations, DEFAULT_ANNOTATIONS);
  });

  test("a Project with null spec fields gets the same defaults", () => {
    for (const spec of [null, eachAnnotation(null)]) {
      const namespace = namespaceIn(sync(project("bare", { spec }), namespaces(), related(), at));
      assert.deepEqual(namespace?.metadata.annotations, DEFAULT_ANNOTATIONS);
    }
  });

  test("an empty value is kept, not replaced by the default", () => {
    const namespace = namespaceIn(sync(project("test", { spec: eachAnnotation("") }), namespaces(), related(), at));
    assert.deepEqual(namespace?.metadata.annotations, eachAnnotation(""));
  });

  test("the Namespace is asked for again, unchanged, once it exists", () => {
    const spec = annotationsSpec("d");
    const first = sync(project("test", { spec }), namespaces(), related(), at);
    const steady = sync(project("test", { spec }), namespaces({ [TEST]: "Active" }), related(), at);
    assert.deepEqual(steady.children, first.children);
  });

  test("a changed spec asks for the new annotations on the existing Namespace", () => {
    const answer = sync(project("test", { spec: annotationsSpec("changed") }), namespaces({ [TEST]: "Active" }), related(), at);
    assert.deepEqual(namespaceIn(answer)?.metadata.annotations, annotationsSpec("changed"));
  });

  test("a Namespace the Project owns under another name, as an older naming rule gave, is kept as observed", () => {
    const children = namespaces({ [TEST]: "Active", [namespaceOf("old-name")]: "Active" });
    children[NAMESPACES][namespaceOf("old-name")]!.metadata = { name: namespaceOf("old-name"), annotations: { ...annotationsSpec("old"), "team.example.com/owner": "ops" } };
    const answer = sync(project("test"), children, related(), at);
    assert.deepEqual(answer.children.slice(1), [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: namespaceOf("old-name"), labels: { [PROJECT_LABEL]: "test" }, annotations: annotationsSpec("old") } },
    ]);
    assert.match(ready(answer).message, new RegExp(` It also owns Namespace ${escaped(namespaceOf("old-name"))}, kept as it is: delete it by hand once nobody needs it\\.$`));
  });

  test("only apiVersion, kind, name, the Project's label and annotations are set: Metacontroller adds its own label and the owner", () => {
    const namespace = namespaceIn(sync(project("test"), namespaces(), related(), at));
    assert.deepEqual(Object.keys(namespace ?? {}), ["apiVersion", "kind", "metadata"]);
    assert.deepEqual(Object.keys(namespace?.metadata ?? {}), ["name", "labels", "annotations"]);
    assert.deepEqual(namespace?.metadata.labels, { [PROJECT_LABEL]: "test" });
  });
});

describe("sync: names that cannot become a Namespace", () => {
  const longest = "a".repeat(PROJECT_NAME_MAX_LENGTH);
  for (const name of ["my.project", "a".repeat(PROJECT_NAME_MAX_LENGTH + 1), "Upper", "under_score", "ends-with-"]) {
    test(`Project "${name.length > 20 ? `${name.length} characters` : name}" asks for no Namespace and says why`, () => {
      const answer = sync(project(name), namespaces(), related(), at);
      assert.deepEqual(answer.children, []);
      assert.equal(answer.status.namespace, undefined);
      assert.equal(ready(answer).status, "False");
      assert.equal(ready(answer).reason, "InvalidName");
      assert.equal(ready(answer).message, `${namespaceOf(name)} cannot be a Namespace name: ${PROJECT_NAME_RULE}. Recreate the Project under such a name.`);
      assert.match(ready(answer).message, new RegExp(`a Project name must be at most ${PROJECT_NAME_MAX_LENGTH} `), "the Project's limit, not the Namespace's 63");
    });
  }

  test(`a ${PROJECT_NAME_MAX_LENGTH}-character name is the longest that still works`, () => {
    assert.equal(sync(project(longest), namespaces(), related(), at).children.length, 1);
    assert.equal(isValidNamespaceName(namespaceOf(longest)), true);
    assert.equal(isValidNamespaceName(`${namespaceOf(longest)}a`), false);
  });

});

describe("sync: a Namespace of that name that is not the Project's", () => {
  const taken = related({ [TEST]: { phase: "Active" } });

  test("customize asks for Namespace proj-<name> by name first, so that it is sent whoever owns it", () => {
    assert.deepEqual(customize(project("test")).relatedResources[0], { apiVersion: "v1", resource: "namespaces", names: [TEST] });
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
    const message = [
      `Namespace ${TEST} already exists and is not this Project's, so it is left as it is. ` +
        "Delete it if nobody needs it, or recreate this Project under another name; once it is gone, " +
        "this Project gets its own.",
    ];
    message.push(`A cluster admin may bring it under this Project instead, with all it holds, once nothing in it is named like this Project's objects (docs/cluster.md, "Bring an existing Namespace under a Project"): kubectl label namespace ${TEST} controller-uid=$(kubectl get ${PARENT.plural}.${GROUP} test -o jsonpath='{.metadata.uid}')`); // feature: adoption
    assert.deepEqual(verdict(answer), { status: "False", reason: "NamespaceConflict", message: message.join(" ") });
    assert.equal(answer.status.namespace, undefined, "kubectl get projects names no Namespace that is someone else's");
  });

  test("the taken Namespace is not asked for, so Metacontroller neither changes it nor keeps failing to create it", () => {
    assert.deepEqual(sync(project("test", { spec: annotationsSpec("test") }), namespaces(), taken, at).children, []);
  });

  test("the conflict names the owner: another Project that holds the name", () => {
    const owned = related({ [TEST]: { phase: "Active", owners: [{ kind: "Project", name: "legacy", controller: true }] } });
    assert.match(ready(sync(project("test"), namespaces(), owned, at)).message, new RegExp(`^Namespace ${escaped(TEST)} already exists and belongs to Project legacy,`));
  });

  test("of several owners, the controller is the one named", () => {
    const owners = [
      { kind: "ConfigMap", name: "keeper" },
      { kind: "Project", name: "legacy", controller: true },
    ];
    const owned = related({ [TEST]: { owners } });
    assert.match(ready(sync(project("test"), namespaces(), owned, at)).message, /belongs to Project legacy,/);
  });

  test("a taken Namespace that is being deleted: the Project gets its own once it is gone", () => {
    const leaving = related({ [TEST]: { phase: "Terminating" } });
    const message = ready(sync(project("test"), namespaces(), leaving, at)).message;
    assert.match(message, /It is being deleted; this Project gets its own once it is gone\.$/);
  });

  test("once the taken Namespace is gone, the Project asks for its own", () => {
    const parent = project("test");
    const conflict = sync(parent, namespaces(), taken, at);
    const freed = sync({ ...parent, status: conflict.status }, namespaces(), related(), later);
    assert.equal(ready(freed).reason, "WaitingForNamespace");
    assert.deepEqual(freed.children.map((namespace) => namespace.metadata.name), [TEST]);
    assert.equal(ready(freed).lastTransitionTime, ready(conflict).lastTransitionTime, "still False, so no transition");
  });

  test("the Project's own Namespace, which is related too, is no conflict", () => {
    const answer = sync(project("test"), namespaces({ [TEST]: "Active" }), taken, at);
    assert.equal(ready(answer).reason, "NamespaceActive");
    assert.equal(answer.children.length, 1);
  });

  test("a name that cannot become a Namespace is reported as such, even if something of that name is related", () => {
    const answer = sync(project("my.project"), namespaces(), related({ [namespaceOf("my.project")]: {} }), at);
    assert.equal(ready(answer).reason, "InvalidName");
  });
});


// Metacontroller finds a related object by listing every one of its kind, so
// a fleet at rest would cost it the square of its size: a settled Project
// asks for nothing that is listed across the fleet.
describe("sync: a settled Project", () => {
  /** The steady fixture: Ready at its generation, its Namespace its own child. */
  const steady = () => fixture("steady-sync");
  const withoutFleetWide = (request: ReturnType<typeof steady>) => {
    for (const group of FLEET_WIDE) delete (request.related as Record<string, unknown>)[group];
    return request;
  };
  const asksNamespaceByName = (parent: Project) => customize(parent).relatedResources.some((rule) => rule.resource === "namespaces");

  test("a settled Project's customize asks for no Namespace by name", () => {
    assert.equal(asksNamespaceByName(steady().parent), false);
  });

  test("an unsettled Project's customize asks for its Namespace by name as before: not Ready, Ready at an older generation, or no status", () => {
    const { parent } = steady();
    const notReady = structuredClone(parent);
    notReady.status!.conditions![0]!.status = "False";
    const changed = structuredClone(parent);
    changed.metadata.generation = 2;
    for (const unsettled of [notReady, changed, project("test")]) assert.equal(asksNamespaceByName(unsettled), true, JSON.stringify(unsettled.status));
  });

  test("sync accepts a settled Project's request without the groups listed across the fleet, and answers it as with them", () => {
    const parsed = v.safeParse(SyncRequest, withoutFleetWide(steady()));
    assert.equal(parsed.success, true, JSON.stringify(parsed.issues));
    const whole = steady();
    assert.deepEqual(sync(parsed.output!.parent, parsed.output!.children, parsed.output!.related, at), sync(whole.parent, whole.children, whole.related, at));
  });

  test("sync refuses that request at a generation no sync has answered yet, as a hook wired without customize sends every one", () => {
    const request = withoutFleetWide(steady());
    request.parent.metadata.generation = 2;
    const parsed = v.safeParse(SyncRequest, request);
    assert.equal(parsed.success, false);
    assert.match(parsed.issues![0]!.message, /is hooks\.customize declared/);
  });

  // feature: guardrails
  test("a settled Project's request without a group not listed across the fleet (its profile) is refused still", () => {
    const request = withoutFleetWide(steady());
    delete (request.related as Record<string, unknown>)[PROFILES];
    assert.equal(v.safeParse(SyncRequest, request).success, false);
  });
  // end feature: guardrails

  test("a settled Project whose Namespace was deleted asks for it again, and says within how long a Namespace in the way would show", () => {
    const request = withoutFleetWide(steady());
    delete request.children[NAMESPACES][namespaceOf("test")];
    const parsed = v.parse(SyncRequest, request);
    const answer = sync(parsed.parent, parsed.children, parsed.related, at);
    assert.equal(namespaceIn(answer)?.metadata.name, namespaceOf("test"));
    assert.equal(ready(answer).reason, "WaitingForNamespace");
    assert.match(ready(answer).message, new RegExp(`this says so within ${CUSTOMIZE_CACHE_MINUTES} minutes\\.$`));
  });

  test("an unsettled Project waiting for its Namespace, which watches its name, promises nothing more", () => {
    assert.doesNotMatch(ready(sync(project("test"), namespaces(), related(), at)).message, /within/);
  });
});

describe("sync: no answer costs a Project a Namespace it has", () => {
  // Metacontroller deletes every observed child an answer leaves out, and a
  // Namespace takes all it holds with it. Every answer in which sync does not
  // carry out the spec is tried against an observation that already has the
  // Namespace, with annotations of its own: a refusal added to REFUSALS
  // without a case fails the first test.
  const cases = {
    InvalidName: { parent: project("my.project"), children: having(namespaceOf("my.project")) },
    // The name is taken by someone else's Namespace; the one the Project owns under an older name stays.
    NamespaceConflict: { parent: project("shop"), children: having(namespaceOf("shop-old")), related: related({ [namespaceOf("shop")]: { phase: "Active" } }) },
  } satisfies Record<string, NeverLoseCase>;
  const ofFeatures = new Set<string>([
    ...FEATURE_REFUSALS, // features
  ]);
  test("every refusal of the core has a case here; each feature's are tried in its own tests", () => {
    assert.deepEqual(Object.keys(cases), REFUSALS.filter((reason) => !ofFeatures.has(reason)));
  });
  for (const [reason, refused] of Object.entries(cases)) {
    test(`${reason}: every observed Namespace is in the answer, with the annotations sync owns as they were`, () => {
      assertKeepsEveryNamespace(reason, refused);
    });
  }

  test("without a Namespace yet, a refused Project asks for none and names none", () => {
    const answer = sync(cases.InvalidName.parent, namespaces(), related(), at);
    assert.deepEqual(answer.children, []);
    assert.equal(answer.status.namespace, undefined);
  });
});


describe("sync: status", () => {
  test("Ready is False while waiting for the Namespace to be created", () => {
    const answer = sync(project("test"), namespaces(), related(), at);
    assert.deepEqual(answer.status, {
      namespace: TEST,
      profile: "default", // feature: guardrails
      members: 0, // feature: members
      observedGeneration: 1,
      conditions: [
        {
          type: "Ready",
          status: "False",
          observedGeneration: 1,
          lastTransitionTime: "2026-11-30T12:00:00Z",
          reason: "WaitingForNamespace",
          message: `Waiting for Metacontroller to create Namespace ${TEST} and what goes in it.`,
        },
      ],
    });
  });

  test("Ready is True once the Namespace is Active", () => {
    const answer = sync(project("test"), namespaces({ [TEST]: "Active" }), related(), at);
    assert.deepEqual(
      { status: ready(answer).status, reason: ready(answer).reason },
      { status: "True", reason: "NamespaceActive" },
    );
  });

  test("Ready is False while the Namespace is terminating", () => {
    const answer = sync(project("test"), namespaces({ [TEST]: "Terminating" }), related(), at);
    assert.deepEqual(
      { status: ready(answer).status, reason: ready(answer).reason },
      { status: "False", reason: "NamespaceTerminating" },
    );
    assert.equal(answer.children.length, 1, "still wanted, so it comes back once it is gone");
  });

  test("a Namespace without a phase is not Ready, and the message says it has none", () => {
    const answer = sync(project("test"), namespaces({ [TEST]: null }), related(), at);
    assert.equal(ready(answer).status, "False");
    assert.equal(ready(answer).reason, "NamespaceNotActive");
    assert.equal(ready(answer).message, `Namespace ${TEST} has no phase yet.`);
  });

  test("a Namespace in another phase is not Ready, and the message names the phase", () => {
    const answer = sync(project("test"), namespaces({ [TEST]: "Pending" }), related(), at);
    assert.equal(ready(answer).reason, "NamespaceNotActive");
    assert.equal(ready(answer).message, `Namespace ${TEST} is in phase Pending, not Active.`);
  });

  test("only the Project's own Namespace counts for Ready", () => {
    const answer = sync(project("test"), namespaces({ [namespaceOf("other")]: "Active" }), related(), at);
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
    ["the Namespace is Active", namespaces({ [TEST]: "Active" }), related({ [TEST]: { phase: "Active" } })],
    ["the Namespace is terminating", namespaces({ [TEST]: "Terminating" }), related()],
    ["a stale Namespace is observed", namespaces({ [TEST]: "Active", [namespaceOf("old")]: "Active" }), related()],
    ["the name is taken", namespaces(), related({ [TEST]: { phase: "Active" } })],
  ] as const) {
    test(`syncing the returned status again returns the same status: ${situation}`, () => {
      const parent = project("test", { spec: annotationsSpec("d") });
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
    const active = resync(parent, namespaces({ [TEST]: "Active" }), waiting);
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
    const answer = sync(project("test", { status }), namespaces({ [TEST]: "Active" }), related(), later);
    assert.equal(ready(answer).lastTransitionTime, readySince);
  });

  test("lastTransitionTime stays when only the reason changes", () => {
    const parent = project("test");
    const waiting = sync(parent, namespaces(), related(), at);
    const terminating = resync(parent, namespaces({ [TEST]: "Terminating" }), waiting);
    assert.equal(ready(terminating).reason, "NamespaceTerminating");
    assert.equal(ready(terminating).lastTransitionTime, ready(waiting).lastTransitionTime);
  });
});

describe("finalize: a deleted Project", () => {
  test("finalize answers the desired state sync would, so a Project being deleted loses nothing meanwhile", () => {
    const children = having(namespaceOf("shop"));
    const answer = finalize(project("shop", { spec: annotationsSpec("d") }), children, related(), at);
    const synced = sync(project("shop", { spec: annotationsSpec("d") }), children, related(), at);
    assert.deepEqual({ status: answer.status, children: answer.children }, synced);
  });

  test("finalize lets a Project go when nothing it made must be undone first, and sync never says finalized", () => {
    const children = having(namespaceOf("shop"));
    assert.equal(finalize(project("shop"), children, related(), at).finalized, true);
    assert.equal("finalized" in sync(project("shop"), children, related(), at), false);
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
    assert.equal(sync(request.parent, request.children, request.related, at).children[0]?.metadata.name, namespaceNameFor(request.parent.metadata.name));
  });

  test("unknown fields are kept by the schema, not stripped or refused", () => {
    const request = v.parse(SyncRequest, fixture("steady-sync"));
    assert.equal(request.parent.metadata["uid"], fixture("steady-sync").parent.metadata["uid"]);
    assert.match(String(request.parent.metadata["uid"]), /^[0-9a-f-]{36}$/);
    assert.equal(request.related["Namespace.v1"]?.[namespaceNameFor(request.parent.metadata.name)]?.["kind"], "Namespace");
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

  // The steady fixture's Namespace, whatever its parent is called.
  const steadyNamespace = namespaceNameFor(fixture("steady-sync").parent.metadata.name);
  const refusals: [string, (request: Record<string, any>) => void, (string | number)[]][] = [
    ["a Project without a name", (r) => delete r["parent"].metadata.name, ["parent", "metadata", "name"]],
    ["a Project with an empty name", (r) => (r["parent"].metadata.name = ""), ["parent", "metadata", "name"]],
    ...ANNOTATION_FIELDS.map((field): (typeof refusals)[number] => [`a ${field} that is not a string`, (r) => (r["parent"].spec[field] = 42), ["parent", "spec", field]]),
    ["a generation that is not a number", (r) => (r["parent"].metadata.generation = "1"), ["parent", "metadata", "generation"]],
    ["children without Namespace.v1", (r) => delete r["children"]["Namespace.v1"], ["children", "Namespace.v1"]],
    // feature: members
    [
      "children without RoleBindings, as when the CompositeController does not declare them",
      (r) => delete r["children"]["RoleBinding.rbac.authorization.k8s.io/v1"],
      ["children", "RoleBinding.rbac.authorization.k8s.io/v1"],
    ],
    // end feature: members
    ["a child that is not an object", (r) => (r["children"]["Namespace.v1"][steadyNamespace] = 1), ["children", "Namespace.v1", steadyNamespace]],
    ["members that are not a list", (r) => (r["parent"].spec.members = "alice"), ["parent", "spec", "members"]], // feature: members
    ["a profile that is not a string", (r) => (r["parent"].spec.profile = 42), ["parent", "spec", "profile"]], // feature: guardrails
    ["a request without related", (r) => delete r["related"], ["related"]],
    [
      "related without Namespace.v1 at a generation no sync has answered, as when no customize hook is declared",
      (r) => {
        delete r["related"]["Namespace.v1"];
        r["parent"].metadata.generation += 1;
      },
      ["related"],
    ],
    [`related without ${PROFILES}, as from an older customize hook`, (r) => delete r["related"][PROFILES], ["related"]], // feature: guardrails
    [
      "a related Namespace whose owner has no name",
      (r) => (r["related"]["Namespace.v1"][steadyNamespace].metadata.ownerReferences = [{ kind: PARENT.kind }]),
      ["related", "Namespace.v1", steadyNamespace, "metadata", "ownerReferences", 0, "name"],
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

