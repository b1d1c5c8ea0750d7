// What the API server does for the budget feature: it records who creates a
// Project, keeps that record as written, refuses the next create of a
// developer whose spent place says they hold all they may, admits
// ProjectBudgets by sync's rules, keeps the places Metacontroller's alone,
// and keeps the budget's objects from a stray delete.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { API_VERSION, GROUP, PARENT, sync, type Project, type SyncResponse } from "../sync.ts";
import {
  BUDGET,
  BUDGETS,
  BUILT_IN_BUDGET,
  MAX_PROJECTS,
  PLACE,
  PLACES,
  REQUESTER_ANNOTATION,
  REQUESTER_GROUPS_ANNOTATION,
  REQUESTER_HASH_LABEL,
  SHARD_LABEL,
  SHARDS,
  SPENT_LABEL,
  requesterHash,
  shardOf,
  type Place,
} from "../features/budget.ts";
import { ADMINISTER, annotatedAsTold, assertBoundToDeny, crd, deleting, find, objects, policyNamed, projectSchema, trusted, KUBERNETES_CONTROLLERS } from "./admission.ts";
import { admit, authorizedBy, evaluateCel, paramsJudging, schemaErrors, selects, type AdmissionRequest } from "./cel.ts";
import { at, childrenOfKind, escaped, namespaceOf, namespaces, project, related, withObserved } from "./helpers.ts";
import { assertCrdSpells } from "../scripts/manifest.ts";

const budgetCrd = find("CustomResourceDefinition", `${BUDGET.plural}.${GROUP}`);
const placeCrd = find("CustomResourceDefinition", `${PLACE.plural}.${GROUP}`);
const budgetSchema = budgetCrd.spec.versions[0].schema.openAPIV3Schema;
const placeSchema = placeCrd.spec.versions[0].schema.openAPIV3Schema;
const requesterPolicy = find("MutatingAdmissionPolicy", `${crd.metadata.name}-requester`);
const recordPolicy = policyNamed("requester-record");
const budgetPolicy = policyNamed("budget");
const budgetBindings = objects.filter((object) => object.kind === "ValidatingAdmissionPolicyBinding" && object.spec.policyName === budgetPolicy.metadata.name);
const requesterRole = find("ClusterRole", `${crd.metadata.name}-requester`);
const DEVELOPER = { username: "dana@example.com", groups: ["developers", "system:authenticated"], authorized: authorizedBy(requesterRole.rules) };
const ADMINISTRATOR = { username: "root", groups: ["system:masters"], authorized: [ADMINISTER] };
const CONTACT = "the platform team";

type Who = { username: string; groups: string[] };

/** A policy's variables for a request by `who`, by its own expressions (those that read no params). */
function variablesOf(policy: any, { username, groups }: Who): Record<string, unknown> {
  const request = { userInfo: { username, groups } } as any;
  const variables: Record<string, any> = {};
  for (const { name, expression } of policy.spec.variables.filter((variable: any) => !variable.expression.includes("params."))) {
    variables[name] = evaluateCel(expression, { request, variables });
  }
  return variables;
}

/**
 * The annotations and labels the mutating policy writes for `who`: its apply
 * configuration must be `Object{metadata: Object.metadata{annotations: {…},
 * labels: {…}}}` and nothing else, and each map is evaluated as CEL.
 */
function writtenFor(who: Who): { annotations: Record<string, string>; labels: Record<string, string> } {
  const expression: string = requesterPolicy.spec.mutations[0].applyConfiguration.expression;
  const shape = /^Object\{metadata: Object\.metadata\{\s*annotations: (\{[^{}]*\}),\s*labels: (\{[^{}]*\})\}\}$/.exec(expression.trim());
  assert.ok(shape, `the mutation writes the annotations and labels alone: ${expression}`);
  const [annotations, labels] = [shape[1]!, shape[2]!].map((map) =>
    Object.fromEntries(evaluateCel(map, { request: { userInfo: who } as any, variables: variablesOf(requesterPolicy, who) as any }) as ReadonlyMap<string, string>),
  );
  return { annotations: annotations!, labels: labels! };
}
const annotationsWrittenFor = (who: Who) => writtenFor(who).annotations;

/** A Project as the API server stores it once the mutating policy recorded `who`. */
function recorded(name: string, who: Who = DEVELOPER): Project {
  const { annotations, labels } = writtenFor(who);
  return { apiVersion: API_VERSION, kind: PARENT.kind, metadata: { name, annotations, labels }, spec: {} } as Project;
}

/** The place that says `requester` holds `held` of `limit`, as sync asks for it. */
function spent({ requester = DEVELOPER.username, groups = DEVELOPER.groups.join("\n"), held = 3, limit = 3, contact = CONTACT, shard = shardOf(requester) } = {}): Place {
  const hash = requesterHash(requester);
  return {
    apiVersion: PLACE.apiVersion,
    kind: PLACE.kind,
    metadata: { name: `${hash}-spent`, labels: { [REQUESTER_HASH_LABEL]: hash, [SPENT_LABEL]: "true", [SHARD_LABEL]: shard } },
    spec: { requester, groups, held, limit, contact },
  };
}

/** Sync's answer for Project `name` of `who`, holding place `mine` while places 1 to `others` are its requester's others, on a budget of `limit`. */
function syncHolding(name: string, who: Who, mine: number, others: number[], limit = 3): SyncResponse {
  const me = recorded(name, who);
  const hash = requesterHash(who.username);
  const placeOf = (n: number, holder: string) => ({ apiVersion: PLACE.apiVersion, kind: PLACE.kind, metadata: { name: `${hash}-${n}`, labels: { [REQUESTER_HASH_LABEL]: hash } }, spec: { requester: who.username, project: holder, place: n } });
  const own = [placeOf(mine, name)];
  const objectsRelated = related();
  objectsRelated[BUDGETS] = { [BUDGET.name]: { metadata: { name: BUDGET.name }, spec: { projects: limit, contact: CONTACT } } };
  objectsRelated[PLACES] = Object.fromEntries([...others.map((n) => placeOf(n, `other-${n}`)), ...own].map((place) => [place.metadata.name, place]));
  return sync(me, withObserved(namespaces(), own), objectsRelated, at);
}
const placesIn = (answer: SyncResponse) => childrenOfKind<Place>(answer, [PLACE.kind]);

const creating = (object: unknown, who: Partial<AdmissionRequest> = DEVELOPER): AdmissionRequest => ({ operation: "CREATE", resource: { group: GROUP, resource: PARENT.plural }, name: "", object: object as any, username: "", ...who });
const updating = (oldObject: unknown, object: unknown, who: Partial<AdmissionRequest> = DEVELOPER): AdmissionRequest => ({ ...creating(object, who), operation: "UPDATE", oldObject: oldObject as any });

// k8s.yaml spells the same names for the cluster: a field the CRDs do not
// keep is pruned, a key the policies do not write is never read.
/** The built-in budget, as an admin would write it as ProjectBudget default. */
const builtInBudget = { apiVersion: BUDGET.apiVersion, kind: BUDGET.kind, metadata: { name: BUDGET.name }, spec: { ...BUILT_IN_BUDGET } };

describe("admission: the budget's names", () => {
  test("the two CRDs spell the feature's kinds, cluster-scoped in sync.ts's group and version", () => {
    assertCrdSpells(budgetCrd, { ...BUDGET, singular: "projectbudget" });
    assertCrdSpells(placeCrd, { ...PLACE, singular: "projectplace" });
    assert.equal(budgetCrd.spec.scope, "Cluster");
    assert.equal(placeCrd.spec.scope, "Cluster");
    assert.equal(`${budgetCrd.spec.names.kind}.${budgetCrd.spec.group}/${budgetCrd.spec.versions[0].name}`, BUDGETS);
    assert.equal(`${placeCrd.spec.names.kind}.${placeCrd.spec.group}/${placeCrd.spec.versions[0].name}`, PLACES);
  });

  test("the CompositeController owns the places, and updates them in place (the spent place's count changes)", () => {
    const controller = find("CompositeController");
    assert.deepEqual(
      controller.spec.childResources.filter((child: any) => child.resource === PLACE.plural),
      [{ apiVersion: PLACE.apiVersion, resource: PLACE.plural, updateStrategy: { method: "InPlace" } }],
    );
  });

  test("the ownership guard covers the places: create, update and delete, cluster-wide", () => {
    const rules = policyNamed("ownership").spec.matchConstraints.resourceRules.filter((rule: any) => rule.resources.includes(PLACE.plural));
    assert.deepEqual(rules, [{ apiGroups: [GROUP], apiVersions: ["*"], operations: ["CREATE", "UPDATE", "DELETE"], resources: [PLACE.plural], scope: "Cluster" }]);
  });

  test("the Project CRD keeps every field of status.budget that sync writes, limited or unlimited, and admits their values", () => {
    const fields = projectSchema.properties.status.properties.budget;
    const limited = syncHolding("dana-1", DEVELOPER, 1, []).status["budget"] as Record<string, unknown>;
    const unlimited = sync(recorded("dana-1"), namespaces(), { ...related(), [BUDGETS]: { [BUDGET.name]: { metadata: { name: BUDGET.name }, spec: { projects: 0, groups: [{ group: "developers", unlimited: true }] } } }, [PLACES]: {} }, at).status["budget"] as Record<string, unknown>;
    assert.deepEqual(Object.keys(limited).sort(), ["contact", "limit", "place", "requester"]);
    assert.deepEqual(Object.keys(unlimited).sort(), ["contact", "requester"]);
    for (const status of [limited, unlimited]) {
      for (const key of Object.keys(status)) assert.ok(key in fields.properties, `status.budget.${key} is kept`);
      assert.deepEqual(schemaErrors(fields, status, "status.budget"), []);
    }
  });

  test("the ProjectPlace CRD keeps every spec field sync writes, of a place and of the spent place, and admits their values", () => {
    const answer = syncHolding("dana-3", DEVELOPER, 3, [1, 2]);
    const [place, spentPlace] = placesIn(answer);
    assert.ok(place && spentPlace, "a place and the spent place");
    for (const each of [place, spentPlace]) {
      for (const key of Object.keys(each.spec)) assert.ok(key in placeSchema.properties.spec.properties, `spec.${key} of ${each.metadata.name} is kept`);
      assert.deepEqual(schemaErrors(placeSchema, each), []);
    }
  });

  test("the policies write and read the keys the feature exports, and the budget policy's params are places", () => {
    assert.deepEqual(Object.keys(annotationsWrittenFor(DEVELOPER)).sort(), [REQUESTER_ANNOTATION, REQUESTER_GROUPS_ANNOTATION].sort());
    const record = JSON.stringify(recordPolicy.spec.validations);
    for (const key of [REQUESTER_ANNOTATION, REQUESTER_GROUPS_ANNOTATION]) assert.ok(record.includes(`'${key}'`), key);
    assert.deepEqual(budgetPolicy.spec.paramKind, { apiVersion: PLACE.apiVersion, kind: PLACE.kind });
    assert.deepEqual(budgetBindings.map((binding) => binding.spec.paramRef.selector.matchLabels), budgetBindings.map((_, shard) => ({ [SPENT_LABEL]: "true", [SHARD_LABEL]: String(shard) })));
    assert.deepEqual(Object.keys(writtenFor(DEVELOPER).labels), [SHARD_LABEL]);
  });
});

// Kubernetes records no creator: the mutating policy writes one at create,
// and the record policy keeps it as written.
describe("admission: who created a Project is recorded", () => {
  test("a developer's create gets their exact name and their groups, one per line, as annotations", () => {
    assert.deepEqual(annotationsWrittenFor(DEVELOPER), { [REQUESTER_ANNOTATION]: "dana@example.com", [REQUESTER_GROUPS_ANNOTATION]: "developers\nsystem:authenticated" });
    assert.deepEqual(annotationsWrittenFor({ username: "https://issuer.example.com/#dana", groups: [] }), { [REQUESTER_ANNOTATION]: "https://issuer.example.com/#dana", [REQUESTER_GROUPS_ANNOTATION]: "" });
    assert.equal(variablesOf(requesterPolicy, { username: "x", groups: undefined as unknown as string[] })["groups"], "", "a request without groups");
  });

  test("it writes for a developer, and not for a holder of administer, and a failure refuses the create", () => {
    const asValidation = { ...requesterPolicy, spec: { ...requesterPolicy.spec, validations: [{ expression: "false" }] } };
    assert.equal(admit(asValidation, creating(project("dana-1"))).matched, true);
    assert.equal(admit(asValidation, creating(project("ops"), ADMINISTRATOR)).matched, false);
    assert.equal(admit(asValidation, updating(project("dana-1"), project("dana-1"))).matched, false, "at create only");
    assert.equal(requesterPolicy.spec.failurePolicy, "Fail");
    assert.equal(find("MutatingAdmissionPolicyBinding", requesterPolicy.metadata.name).spec.policyName, requesterPolicy.metadata.name);
  });

  test("the groups it writes are the ones the budget policy compares, and the ones sync's spent place says", () => {
    const who = { ...DEVELOPER, groups: ["leads", "developers", "system:authenticated"] };
    const written = annotationsWrittenFor(who)[REQUESTER_GROUPS_ANNOTATION];
    assert.deepEqual(String(written).split("\n"), [...(variablesOf(budgetPolicy, who)["groups"] as Iterable<string>)]);
    const [, spentPlace] = placesIn(syncHolding("dana-3", who, 3, [1, 2]));
    assert.equal((spentPlace?.spec as { groups: string }).groups, written);
  });

  test("a developer's create without the record (the mutating policy missing) is refused, never let through unbudgeted", () => {
    const { allowed, message } = admit(recordPolicy, creating(project("dana-1")));
    assert.equal(allowed, false);
    assert.match(String(message), new RegExp(`MutatingAdmissionPolicy ${escaped(requesterPolicy.metadata.name)} is missing`));
    assert.equal(admit(recordPolicy, creating(recorded("dana-1"))).allowed, true);
    assert.equal(admit(recordPolicy, creating(recorded("dana-1", { ...DEVELOPER, username: "erin" }))).allowed, false, "another's name");
    assert.equal(admit(recordPolicy, creating(project("ops"), ADMINISTRATOR)).matched, false, "a holder of administer needs none");
  });

  // The bytes themselves never reach a JavaScript string: the API server's
  // regexp reads each as U+FFFD, which is what this test can send (e2e step
  // 49 sends the bytes).
  test("a developer whose name holds U+FFFD, as a name that is not UTF-8 is stored, is refused: two such names would share one budget", () => {
    for (const username of ["eve\uFFFD", "\uFFFD", "e\uFFFDve@example.com"]) {
      const eve = { ...DEVELOPER, username };
      const { allowed, message } = admit(recordPolicy, creating(recorded("eve-1", eve), eve));
      assert.equal(allowed, false, JSON.stringify(username));
      assert.match(String(message), /not UTF-8/);
    }
    for (const username of ["ève", "eve\uFFFE", "名前", "eve🙂"]) {
      const other = { ...DEVELOPER, username };
      assert.equal(admit(recordPolicy, creating(recorded("eve-1", other), other)).allowed, true, username);
    }
    const stored = recorded("eve-1", { ...DEVELOPER, username: "eve\uFFFD" });
    assert.equal(admit(recordPolicy, updating(stored, stored, { ...DEVELOPER, username: "eve\uFFFD" })).allowed, true, "at create only");
  });

  const edits: [string, (object: any) => void][] = [
    ["the requester renamed", (object) => (object.metadata.annotations[REQUESTER_ANNOTATION] = "erin@example.com")],
    ["the requester removed", (object) => delete object.metadata.annotations[REQUESTER_ANNOTATION]],
    ["a group added", (object) => (object.metadata.annotations[REQUESTER_GROUPS_ANNOTATION] += "\nleads")],
    ["the groups emptied", (object) => (object.metadata.annotations[REQUESTER_GROUPS_ANNOTATION] = "")],
    ["the groups removed", (object) => delete object.metadata.annotations[REQUESTER_GROUPS_ANNOTATION]],
    ["every annotation removed", (object) => delete object.metadata.annotations],
  ];
  for (const [what, edit] of edits) {
    test(`${what}: refused to the Project's own admin, admitted to a holder of administer`, () => {
      const before = recorded("dana-1");
      const after = structuredClone(before);
      edit(after);
      const { allowed, message } = admit(recordPolicy, updating(before, after));
      assert.equal(allowed, false);
      assert.equal(
        message,
        `Project dana-1 records who created it, and so whose budget it counts in: the ${REQUESTER_ANNOTATION} and ${REQUESTER_GROUPS_ANNOTATION} annotations ` +
          `stay as the API server wrote them. Only a holder of the verb administer on ${PARENT.plural}.${GROUP} may change them.`,
      );
      assert.equal(admit(recordPolicy, updating(before, after, ADMINISTRATOR)).matched, false);
    });
  }

  test("the record cannot be added afterwards either, to a Project that had none", () => {
    const before = project("ops");
    const after = recorded("ops");
    assert.equal(admit(recordPolicy, updating(before, after)).allowed, false);
  });

  test("the shard label the API server gave a developer's Project stays, taken off or changed: the budget's policies select the Project by it", () => {
    const before = recorded("dana-1");
    const given = (before.metadata.labels as Record<string, string> | undefined)?.[SHARD_LABEL];
    assert.ok(given !== undefined);
    for (const shard of [undefined, String((Number(given) + 1) % SHARDS)]) {
      const after = structuredClone(before) as any;
      if (shard === undefined) delete after.metadata.labels[SHARD_LABEL];
      else after.metadata.labels[SHARD_LABEL] = shard;
      const { allowed, message } = admit(recordPolicy, updating(before, after));
      assert.equal(allowed, false, `shard ${shard}`);
      assert.match(String(message), new RegExp(`^Project dana-1 keeps the ${SHARD_LABEL} label the API server gave it`));
      assert.equal(admit(recordPolicy, updating(before, after, ADMINISTRATOR)).matched, false);
    }
  });

  test("any other change of the Project, its other labels and annotations too, is the other policies' to judge", () => {
    const before = recorded("dana-1");
    const after = structuredClone(before) as any;
    after.metadata.labels = { ...after.metadata.labels, team: "web", [REQUESTER_ANNOTATION]: "anything" };
    after.metadata.annotations.note = "x";
    after.spec.description = "changed";
    assert.equal(admit(recordPolicy, updating(before, after)).allowed, true);
  });
});

// A policy cannot count, and sync can: the spent place sync asks for is the
// policy's param, one per requester at their limit.
describe("admission: a developer who holds all they may is refused", () => {
  /**
   * Of the spent places that exist, each that a binding selecting the
   * Project selects is a param, each evaluated; with none, the binding
   * admits (parameterNotFoundAction Allow).
   */
  const againstEach = (request: AdmissionRequest, existing: Place[]) => {
    const params = paramsJudging(budgetBindings, request, existing);
    const refusals = params.map((each) => admit(budgetPolicy, request, each as any)).filter((verdict) => !verdict.allowed);
    return { allowed: refusals.length === 0, message: refusals[0]?.message, judgedAgainst: params.length };
  };
  const developers = Array.from({ length: 1600 }, (_, n) => `developer-${n}@example.com`);

  test(`bound to deny ${SHARDS} times, each binding to the Projects and the spent places of one shard, admitting when there is none`, () => {
    assert.equal(budgetBindings.length, SHARDS);
    budgetBindings.forEach((binding, shard) => {
      assert.deepEqual(binding.spec.validationActions, ["Deny"], binding.metadata.name);
      // Shard 0 keeps the name of the binding before the shards, which an apply then narrows.
      assert.equal(binding.metadata.name, shard === 0 ? budgetPolicy.metadata.name : `${budgetPolicy.metadata.name}-${shard}`);
      assert.deepEqual(binding.spec.matchResources, { objectSelector: { matchLabels: { [SHARD_LABEL]: String(shard) } } });
      assert.deepEqual(binding.spec.paramRef, { selector: { matchLabels: { [SPENT_LABEL]: "true", [SHARD_LABEL]: String(shard) } }, parameterNotFoundAction: "Allow" });
    });
    assert.equal(budgetPolicy.spec.failurePolicy, "Fail");
  });

  test("the shard the mutating policy writes onto a Project is the one sync labels its requester's spent place with, whatever the name", () => {
    const names = ["dana@example.com", "DANA@EXAMPLE.COM", `system:serviceaccount:${namespaceOf("web")}:ci`, "https://issuer.example.com/#dana", "Ünïcødé 名前 🦀", "", "x".repeat(1000), ...developers.slice(0, 50)];
    for (const username of names) {
      assert.equal(writtenFor({ username, groups: [] }).labels[SHARD_LABEL], shardOf(username), username);
      assert.equal(spent({ requester: username }).metadata.labels[SHARD_LABEL], shardOf(username));
    }
    const [placed] = placesIn(syncHolding("dana-3", DEVELOPER, 3, [1, 2])).filter((place) => SPENT_LABEL in place.metadata.labels);
    assert.equal(placed?.metadata.labels[SHARD_LABEL], writtenFor(DEVELOPER).labels[SHARD_LABEL]);
  });

  test("names spread over every shard, none taking more than twice its share", () => {
    const counts = new Map<string, number>();
    for (const name of developers) counts.set(shardOf(name), (counts.get(shardOf(name)) ?? 0) + 1);
    assert.deepEqual([...counts.keys()].sort((a, b) => Number(a) - Number(b)), Array.from({ length: SHARDS }, (_, shard) => String(shard)));
    for (const [shard, count] of counts) assert.ok(count <= (2 * developers.length) / SHARDS, `shard ${shard} has ${count} of ${developers.length}`);
  });

  test("a create is judged against its own shard's spent places only: one of each developer's is a sixteenth of them", () => {
    const everyone = developers.map((requester) => spent({ requester }));
    const { allowed, judgedAgainst } = againstEach(creating(recorded("dana-1")), everyone);
    assert.equal(allowed, true);
    assert.equal(judgedAgainst, everyone.filter((place) => place.metadata.labels[SHARD_LABEL] === shardOf(DEVELOPER.username)).length);
    assert.ok(judgedAgainst > 0 && judgedAgainst <= (2 * everyone.length) / SHARDS, `${judgedAgainst} of ${everyone.length}`);
    assert.equal(againstEach(creating(recorded("dana-4")), [...everyone, spent()]).allowed, false, "their own spent place among them refuses");
  });

  test("a shard written by the developer is overwritten with their own, so that their spent place judges them", () => {
    const forged = shardOf(DEVELOPER.username) === "0" ? "1" : "0";
    const asked = { apiVersion: API_VERSION, kind: PARENT.kind, metadata: { name: "dana-4", labels: { [SHARD_LABEL]: forged } }, spec: {} };
    const stored = { ...asked, metadata: { ...asked.metadata, labels: { ...asked.metadata.labels, ...writtenFor(DEVELOPER).labels } } };
    assert.equal(stored.metadata.labels[SHARD_LABEL], shardOf(DEVELOPER.username));
    assert.equal(againstEach(creating(stored), [spent()]).allowed, false);
  });

  test("their spent place, counted with the same groups, refuses their create, saying how many, the limit and whom to ask", () => {
    const { allowed, message } = againstEach(creating(recorded("dana-4")), [spent({ requester: "erin@example.com" }), spent()]);
    assert.equal(allowed, false);
    assert.equal(
      message,
      "dana@example.com holds 3 Projects and may hold 3 (ProjectBudget default), so no more can be created. Delete one of them " +
        "(kubectl my-projects shows those you are in), or ask the platform team for a larger budget.",
    );
  });

  test("the spent place sync asks for is the one that refuses: held by the highest holder, it refuses the requester's next create", () => {
    const [, spentPlace] = placesIn(syncHolding("dana-3", DEVELOPER, 3, [1, 2]));
    assert.ok(spentPlace, "sync asks for it");
    assert.equal(againstEach(creating(recorded("dana-4")), [spentPlace]).allowed, false);
    assert.equal(againstEach(creating(recorded("dana-3")), placesIn(syncHolding("dana-2", DEVELOPER, 2, [1]))).allowed, true, "below the limit, none");
  });

  test("one Project held is said so, and a budget lowered below what is held too", () => {
    assert.match(String(againstEach(creating(recorded("dana-2")), [spent({ held: 1, limit: 1 })]).message), /^dana@example\.com holds 1 Project and may hold 1 /);
    assert.match(String(againstEach(creating(recorded("dana-6")), [spent({ held: 5, limit: 2 })]).message), /^dana@example\.com holds 5 Projects and may hold 2 /);
  });

  test("with a budget of 0 the refusal says they may hold none, and whom to ask for one, not to delete one they cannot have", () => {
    const message = String(againstEach(creating(recorded("dana-1")), [spent({ held: 0, limit: 0 })]).message);
    assert.match(message, /^dana@example\.com may hold no Project \(ProjectBudget default\), so none can be created\. Ask .+ for one\.$/);
    assert.doesNotMatch(message, /Delete one/);
  });

  test("another requester's spent place, or their own counted before they joined another group (a budget that may be larger), is sync's to judge", () => {
    // In the developer's shard, so that it is evaluated against their create.
    const theirShard = shardOf(DEVELOPER.username);
    assert.deepEqual(againstEach(creating(recorded("dana-4")), [spent({ requester: "erin@example.com", shard: theirShard })]), { allowed: true, message: undefined, judgedAgainst: 1 });
    assert.deepEqual(againstEach(creating(recorded("dana-4")), [spent({ requester: "dana!example.com", shard: theirShard })]), { allowed: true, message: undefined, judgedAgainst: 1 });
    assert.equal(againstEach(creating(recorded("dana-4"), { ...DEVELOPER, groups: ["leads", ...DEVELOPER.groups] }), [spent()]).allowed, true);
  });

  test("their spent place refuses them with the same groups in any order, or with fewer, which never give a larger budget", () => {
    assert.equal(againstEach(creating(recorded("dana-4"), { ...DEVELOPER, groups: [...DEVELOPER.groups].reverse() }), [spent()]).allowed, false, "in another order");
    assert.equal(againstEach(creating(recorded("dana-4"), { ...DEVELOPER, groups: ["system:authenticated"] }), [spent()]).allowed, false, "with fewer");
    assert.equal(againstEach(creating(recorded("dana-4"), { ...DEVELOPER, groups: [] }), [spent()]).allowed, false, "with none");
  });

  test("a place that is not a spent one says nothing, were it ever selected", () => {
    const hash = requesterHash(DEVELOPER.username);
    const numbered = { apiVersion: PLACE.apiVersion, kind: PLACE.kind, metadata: { name: `${hash}-1`, labels: { [REQUESTER_HASH_LABEL]: hash } }, spec: { requester: DEVELOPER.username, project: "dana-1", place: 1 } };
    assert.equal(admit(budgetPolicy, creating(project("dana-4")), numbered as any).allowed, true);
  });

  test("a holder of administer is not limited: their Project has no shard, and one they label with a shard is admitted; nothing but a create is refused", () => {
    const administrator = { ...ADMINISTRATOR, username: DEVELOPER.username, groups: DEVELOPER.groups };
    assert.equal(againstEach(creating(project("ops"), administrator), [spent()]).judgedAgainst, 0);
    assert.deepEqual(againstEach(creating(recorded("ops"), administrator), [spent()]), { allowed: true, message: undefined, judgedAgainst: 1 });
    assert.equal(admit(budgetPolicy, updating(recorded("dana-1"), recorded("dana-1")), spent() as any).matched, false);
  });
});

// The same budgets, judged alike by the CRD at admission and by sync for a
// budget admitted before its rules.
describe("admission: ProjectBudgets", () => {
  const named = (name: string, spec: unknown) => ({ metadata: { name }, spec });
  const cases: [string, unknown, boolean][] = [
    ["default with projects and contact", named("default", { projects: 3, contact: "us" }), true],
    ["default with groups", named("default", { projects: 0, groups: [{ group: "leads", projects: 10 }, { group: "ops", unlimited: true }] }), true],
    ["default without projects", named("default", { groups: [] }), false],
    ["another with groups only", named("team-leads", { groups: [{ group: "leads", projects: 10 }] }), true],
    ["another setting the default", named("team-leads", { projects: 10 }), false],
    ["a group with both projects and unlimited", named("default", { projects: 3, groups: [{ group: "leads", projects: 10, unlimited: true }] }), false],
    ["a group with neither", named("default", { projects: 3, groups: [{ group: "leads" }] }), false],
    ["a group listed twice", named("default", { projects: 3, groups: [{ group: "leads", projects: 1 }, { group: "leads", projects: 2 }] }), false],
    ["a negative budget", named("default", { projects: -1 }), false],
    ["the most a budget gives by number, 250", named("default", { projects: 250 }), true],
    ["one more, 251", named("default", { projects: 251 }), false],
    ["a group given 250", named("team-leads", { groups: [{ group: "leads", projects: 250 }] }), true],
    ["a group given 251", named("team-leads", { groups: [{ group: "leads", projects: 251 }] }), false],
    ["an empty contact", named("default", { projects: 3, contact: "" }), false],
    ["a group without a name", named("team-leads", { groups: [{ group: "", projects: 1 }] }), false],
  ];
  for (const [what, object, admitted] of cases) {
    test(`${what}: ${admitted ? "admitted" : "refused"}, and sync reads it alike`, () => {
      assert.equal(schemaErrors(budgetSchema, object).length === 0, admitted, JSON.stringify(schemaErrors(budgetSchema, object)));
      const { metadata, spec } = object as { metadata: { name: string }; spec: unknown };
      const budgets = { [BUDGET.name]: { projects: 3 }, [metadata.name]: spec };
      const objectsRelated = related();
      objectsRelated[BUDGETS] = Object.fromEntries(Object.entries(budgets).map(([name, each]) => [name, { metadata: { name }, spec: each }]));
      objectsRelated[PLACES] = {};
      const reason = sync(recorded("dana-1"), namespaces(), objectsRelated, at).status.conditions[0]?.reason;
      // Sync's own rules on a group and on counts; which object may set the default, and a group listed once, are the CRD's alone.
      if (!/another setting the default|listed twice|default without projects/.test(what)) assert.equal(reason !== "InvalidBudget", admitted, String(reason));
    });
  }

  test("the CRD's maximum is the feature's, for everyone and for a group", () => {
    assert.equal(budgetSchema.properties.spec.properties.projects.maximum, MAX_PROJECTS);
    assert.equal(budgetSchema.properties.spec.properties.groups.items.properties.projects.maximum, MAX_PROJECTS);
  });

  test("the built-in budget follows the rules, written as ProjectBudget default", () => {
    assert.deepEqual(schemaErrors(budgetSchema, builtInBudget), []);
  });

  test("k8s.yaml ships no ProjectBudget, so that re-applying it never undoes an admin's", () => {
    assert.deepEqual(objects.filter((object) => object.kind === BUDGET.kind), []);
  });
});

// Places are Metacontroller's: a developer can neither make one that takes
// someone's budget nor delete one to get past their own.
describe("admission: only Metacontroller writes places", () => {
  const ownership = policyNamed("ownership");
  const hash = requesterHash(DEVELOPER.username);
  const place = { apiVersion: PLACE.apiVersion, kind: PLACE.kind, metadata: { name: `${hash}-1`, labels: { [REQUESTER_HASH_LABEL]: hash, "controller-uid": "uid-of-dana-1" } }, spec: { requester: DEVELOPER.username, project: "dana-1", place: 1 } };
  const write = (operation: AdmissionRequest["operation"], { object, oldObject }: { object?: any; oldObject?: any }, username: string, authorized: string[] = []) =>
    admit(ownership, { operation, resource: { group: GROUP, resource: PLACE.plural }, kind: PLACE.kind, name: place.metadata.name, object, oldObject, username, authorized });

  test("a developer may not create, change or delete a place of a Project's; Metacontroller and the garbage collector may", () => {
    assert.equal(write("CREATE", { object: place }, DEVELOPER.username).allowed, false);
    assert.equal(write("UPDATE", { object: { ...place, spec: { ...place.spec, requester: "erin" } }, oldObject: place }, DEVELOPER.username).allowed, false);
    assert.equal(write("DELETE", { oldObject: place }, DEVELOPER.username).allowed, false);
    for (const { username, authorized } of [trusted["metacontroller"]!, { username: KUBERNETES_CONTROLLERS.garbageCollector, authorized: [] }]) {
      assert.equal(write("CREATE", { object: place }, username, authorized).allowed, true, username);
      assert.equal(write("DELETE", { oldObject: place }, username, authorized).allowed, true, username);
    }
  });

  test("the requester role gives developers nothing on places, so they cannot make one without the label either", () => {
    assert.deepEqual(DEVELOPER.authorized.filter((entry) => entry.includes(PLACE.plural)), []);
  });
});

// Without the budgets, or the places' CRD, the budget fails closed or lets
// Projects in beyond it: only a deliberate, annotated delete takes them.
describe("admission: the budget is kept from a stray delete", () => {
  const protection = policyNamed("budget-protection");
  const budgetDelete = (group: string, resource: string, object: any, options?: Parameters<typeof deleting>[3]) => admit(protection, deleting(group, resource, object, options));
  const kept = [
    { what: "the budget CRD", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", object: budgetCrd, says: new RegExp(`^Deleting CustomResourceDefinition ${escaped(budgetCrd.metadata.name)} deletes every ProjectBudget an admin wrote, ProjectBudget default included\\.`), command: `kubectl annotate crd ${budgetCrd.metadata.name} ` },
    { what: "the places' CRD", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", object: placeCrd, says: new RegExp(`^Deleting CustomResourceDefinition ${escaped(placeCrd.metadata.name)} deletes every place in every budget: Projects that have a Namespace keep it and take their places again, and new ones may get in beyond the budget until they have`), command: `kubectl annotate crd ${placeCrd.metadata.name} ` },
    { what: "ProjectBudget default", group: GROUP, resource: BUDGET.plural, object: builtInBudget, says: /^Deleting ProjectBudget default gives everyone the built-in budget again \(docs\/budget\.md\): new Projects beyond it get no Namespace; those that have one keep it/, command: "kubectl annotate projectbudget default " },
    { what: "another ProjectBudget", group: GROUP, resource: BUDGET.plural, object: { metadata: { name: "team-leads" } }, says: /^Deleting ProjectBudget team-leads takes its groups back to the budget the others give them/, command: "kubectl annotate projectbudget team-leads " },
  ];
  for (const { what, group, resource, object, says, command } of kept) {
    test(`a stray delete of ${what} is refused, also as a collection, saying what it would do; annotated as told, it goes`, () => {
      assertBoundToDeny(protection);
      for (const collection of [false, true]) {
        const { allowed, message } = budgetDelete(group, resource, object, { collection });
        assert.equal(allowed, false);
        assert.match(String(message), says);
        assert.ok(String(message).endsWith(`If that is what you want, first run: ${command}${GROUP}/allow-deletion=true`), String(message));
        assert.equal(budgetDelete(group, resource, annotatedAsTold(object, message)).allowed, true);
      }
    });
  }

  test("every other CRD may go, as far as this guard is concerned", () => {
    assert.equal(budgetDelete("apiextensions.k8s.io", "customresourcedefinitions", crd).matched, false);
    assert.equal(budgetDelete("apiextensions.k8s.io", "customresourcedefinitions", { metadata: { name: "projectplaces.example.com" } }).matched, false);
  });

  test("every budget policy and binding is held by the uninstall's finalizer", () => {
    const ours = objects.filter((object) => /AdmissionPolicy/.test(object.kind) && /-(requester|requester-record|budget|budget-\d+|budget-protection)$/.test(object.metadata.name));
    assert.equal(ours.length, 7 + SHARDS);
    for (const object of ours) assert.deepEqual(object.metadata.finalizers, [`${GROUP}/uninstall-deliberately`], object.metadata.name);
  });
});

// feature: budget & environments
describe("admission: how many Namespaces each developer's Project may own", () => {
  const environmentsPolicy = policyNamed("budget-environments");
  const binding = find("ValidatingAdmissionPolicyBinding", environmentsPolicy.metadata.name);
  const budgetGiving = (environments?: number) => ({ apiVersion: BUDGET.apiVersion, kind: BUDGET.kind, metadata: { name: BUDGET.name }, spec: { projects: 3, contact: CONTACT, ...(environments === undefined ? {} : { environments }) } });
  const declaring = (count: number, who: Who | null = DEVELOPER) => {
    const base = who ? recorded("dana-1", who) : ({ apiVersion: API_VERSION, kind: PARENT.kind, metadata: { name: "dana-1" }, spec: {} } as Project);
    return { ...base, spec: { environments: Array.from({ length: count }, (_, n) => ({ name: `env-${n}` })) } };
  };

  test("bound to deny for developers' Projects alone, its param ProjectBudget default by name, admitting while there is none (the built-in budget sets no limit)", () => {
    assert.equal(environmentsPolicy.spec.failurePolicy, "Fail");
    assert.deepEqual(environmentsPolicy.spec.paramKind, { apiVersion: BUDGET.apiVersion, kind: BUDGET.kind });
    assert.deepEqual(binding.spec.validationActions, ["Deny"]);
    assert.deepEqual(binding.spec.paramRef, { name: BUDGET.name, parameterNotFoundAction: "Allow" });
    // Developers' Projects alone: an admin's write never waits for the param's kind to sync.
    assert.equal(selects(binding.spec.matchResources.objectSelector, recorded("dana-1").metadata.labels as Record<string, string>), true);
    assert.equal(selects(binding.spec.matchResources.objectSelector, {}), false);
    assert.equal("environments" in BUILT_IN_BUDGET, false);
  });

  test("a developer's create declaring more environments than the budget gives is refused, saying how many, the limit and whom to ask; at the limit it is admitted", () => {
    const refused = admit(environmentsPolicy, creating(declaring(3)), budgetGiving(2) as any);
    assert.equal(refused.allowed, false);
    assert.equal(refused.message, `Project dana-1 declares 3 environments, and each Project of ${DEVELOPER.username} may have 2 Namespaces (ProjectBudget default). Declare fewer, or ask ${CONTACT} for a larger budget.`);
    assert.equal(admit(environmentsPolicy, creating(declaring(2)), budgetGiving(2) as any).allowed, true);
    assert.equal(admit(environmentsPolicy, creating(declaring(0)), budgetGiving(1) as any).allowed, true, "none declared is the one Namespace proj-<name>");
  });

  test("an update that declares more than before and past the limit is refused; one that declares no more than before is admitted, so that a Project past a lowered budget can still be edited", () => {
    assert.equal(admit(environmentsPolicy, updating(declaring(2), declaring(3)), budgetGiving(2) as any).allowed, false);
    assert.equal(admit(environmentsPolicy, updating(declaring(3), declaring(3)), budgetGiving(2) as any).allowed, true);
    assert.equal(admit(environmentsPolicy, updating(declaring(3), declaring(2)), budgetGiving(1) as any).allowed, true);
  });

  test("a budget that sets no limit admits any number; a Project without a requester (a holder of administer's) is not judged", () => {
    assert.equal(admit(environmentsPolicy, creating(declaring(6)), budgetGiving() as any).allowed, true);
    assert.equal(admit(environmentsPolicy, creating(declaring(6, null), ADMINISTRATOR), budgetGiving(1) as any).matched, false);
  });

  test("only ProjectBudget default sets it, at least 1, and sync reads it alike", () => {
    const named = (name: string, spec: unknown) => ({ metadata: { name }, spec });
    assert.deepEqual(schemaErrors(budgetSchema, named("default", { projects: 3, environments: 2 })), []);
    assert.notDeepEqual(schemaErrors(budgetSchema, named("default", { projects: 3, environments: 0 })), []);
    assert.notDeepEqual(schemaErrors(budgetSchema, named("team-leads", { groups: [], environments: 9 })), []);
    const objectsRelated = related();
    objectsRelated[BUDGETS] = { [BUDGET.name]: { metadata: { name: BUDGET.name }, spec: { projects: 3, environments: 0 } } };
    objectsRelated[PLACES] = {};
    assert.equal(sync(recorded("dana-1"), namespaces(), objectsRelated, at).status.conditions[0]?.reason, "InvalidBudget");
  });
});
// end feature: budget & environments
