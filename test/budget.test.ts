// What the budget feature (features/budget.ts) does to sync's answer: each
// Project of a limited developer first holds a numbered ProjectPlace, and
// gets its Namespace only once that place is its own; one beyond the budget
// gets nothing; one that has its Namespace keeps it, whatever the budget
// says later.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import * as v from "valibot";
import { readManifest } from "../scripts/manifest.ts";
import {
  API_VERSION,
  GROUP,
  NAMESPACES,
  ObservedChildren,
  PARENT,
  RelatedObjects,
  SyncRequest,
  customize,
  sync,
  type Child,
  type Project,
  type SyncResponse,
} from "../sync.ts";
import {
  BUDGET,
  BUDGETS,
  BUILT_IN_BUDGET,
  DEFAULT_CONTACT,
  MAX_PROJECTS,
  PLACE,
  PLACES,
  REQUESTER_ANNOTATION,
  REQUESTER_GROUPS_ANNOTATION,
  REQUESTER_HASH_LABEL,
  SHARD_LABEL,
  SPENT_LABEL,
  budget as budgetFeature,
  environmentNamespace, // feature: budget & environments
  limitFor,
  placeNameFor,
  requesterHash,
  shardOf,
  spentNameFor,
  type Place,
} from "../features/budget.ts";
import { ENVIRONMENT_ANNOTATION, environmentNamespace as environmentsNamespace } from "../features/environments.ts"; // feature: budget & environments
import { annotationsSpec, assertKeepsEveryNamespace, at, childrenOfKind, escaped, fixture, having, later, namespaceIn, namespaceOf, namespaces, project, ready, related, verdict, withObserved } from "./helpers.ts";

const DANA = "dana@example.com";
const DEVELOPERS = ["developers", "system:authenticated"];
const CONTACT = "the platform team";

/** ProjectBudgets by name, each its spec. */
type Budgets = Record<string, unknown>;
const budgetOf = (projects: number, more: Budgets = {}): Budgets => ({ [BUDGET.name]: { projects, contact: CONTACT }, ...more });
const THREE = budgetOf(3);

/** A requester's hash by its definition (the SHA-256 of the exact name, in base 36, 50 characters), computed here and not by the feature. */
const hashOf = (name: string) => BigInt(`0x${createHash("sha256").update(name, "utf8").digest("hex")}`).toString(36).padStart(50, "0");

/** A Project that `requester` created, as the mutating policy records it, with them as its admin member. */
function theirs(name: string, { requester = DANA, groups = DEVELOPERS } = {}): Project {
  const base = project(name, { spec: { ...annotationsSpec(`${name}'s app`), members: [{ kind: "User", name: requester, role: "admin" }] } });
  return { ...base, metadata: { ...base.metadata, annotations: { [REQUESTER_ANNOTATION]: requester, [REQUESTER_GROUPS_ANNOTATION]: groups.join("\n") } } };
}

/** Place `n` of `requester`, held by Project `holder`, spelled as sync must ask for it: named after the requester, and nothing else of theirs in it. */
function placeOf(n: number, holder: string, requester = DANA): Place {
  const hash = hashOf(requester);
  return { apiVersion: API_VERSION, kind: "ProjectPlace", metadata: { name: `${hash}-${n}`, labels: { [REQUESTER_HASH_LABEL]: hash } }, spec: { requester, project: holder, place: n } };
}

/** The place that says `requester` holds all they may, spelled as sync must ask for it. */
function spentOf(held: number, limit: number, { requester = DANA, groups = DEVELOPERS, contact = CONTACT } = {}): Place {
  const hash = hashOf(requester);
  return {
    apiVersion: API_VERSION,
    kind: "ProjectPlace",
    metadata: { name: `${hash}-spent`, labels: { [REQUESTER_HASH_LABEL]: hash, [SPENT_LABEL]: "true", [SHARD_LABEL]: shardOf(requester) } },
    spec: { requester, groups: groups.join("\n"), held, limit, contact },
  };
}

/** Dana's places with these numbers, each held by her Project `dana-<n>`. */
const held = (...numbers: number[]) => numbers.map((n) => placeOf(n, `dana-${n}`));

/** What customize picks up: these ProjectBudgets, these places (as the requester's label selects them), and what the other features read. */
function world(budgets: Budgets = THREE, places: Child[] = []): RelatedObjects {
  const objects = related();
  objects[BUDGETS] = Object.fromEntries(Object.entries(budgets).map(([name, spec]) => [name, { apiVersion: BUDGET.apiVersion, kind: BUDGET.kind, metadata: { name }, spec }]));
  objects[PLACES] = Object.fromEntries(places.map((place) => [place.metadata.name, place]));
  return objects;
}

/**
 * One sync of `me`: its own places observed as its children and, as the
 * label selects them too, among the requester's; the others' among those
 * only; and, `withNamespace`, its Namespace Active with what was there.
 */
function syncOf(me: Project, { budgets = THREE, own = [] as Place[], others = [] as Place[], withNamespace = false } = {}): SyncResponse {
  const base = withNamespace ? having(namespaceOf(me.metadata.name)) : namespaces();
  return sync(me, withObserved(base, own), world(budgets, [...others, ...own]), at);
}

/** The Project as Metacontroller sends it once it has written the status of `answer`. */
const after = (me: Project, answer: SyncResponse | undefined): Project => ({ ...me, status: answer?.status as Project["status"] });
const placesIn = (answer: SyncResponse) => childrenOfKind<Place>(answer, [PLACE.kind]);
const asksNamespace = (answer: SyncResponse) => namespaceIn(answer) !== undefined;
/** What the answer asks for inside Namespace proj-<name>. */
const insideNamespace = (answer: SyncResponse, name: string) =>
  answer.children.filter((child) => (child.metadata as { namespace?: string }).namespace === namespaceOf(name));
const budgetStatusOf = (answer: SyncResponse) => answer.status["budget"];

/** The children once Metacontroller has made all an answer asks for, and nothing else: its Namespace Active. */
function applied(answer: SyncResponse): ObservedChildren {
  const observed = withObserved(namespaces(), answer.children.filter((child) => child.kind !== "Namespace"));
  const namespace = namespaceIn(answer);
  if (namespace) observed[NAMESPACES][namespace.metadata.name] = { ...structuredClone(namespace), status: { phase: "Active" } };
  return observed;
}

/**
 * A new Project synced round after round, each round seeing what the one
 * before asked for made (its own places also among the requester's), until
 * the answer asks for nothing that is not there. Returns every answer.
 */
function rounds(me: Project, { budgets = THREE, others = [] as Place[] } = {}) {
  const answers: SyncResponse[] = [];
  let children = namespaces();
  for (let round = 0; round < 8; round++) {
    const own = Object.values(children[PLACES] ?? {}) as unknown as Place[];
    const answer = sync(after(me, answers.at(-1)), children, world(budgets, [...others, ...own]), at);
    answers.push(answer);
    const next = applied(answer);
    if (JSON.stringify(next) === JSON.stringify(children)) return { answers, children };
    children = next;
  }
  throw new Error(`${me.metadata.name} did not settle in 8 rounds`);
}

// The feature spells its names itself (it imports only types from sync.ts):
// they must be sync.ts's group and version, and the groups sync reads.
describe("budget: the names", () => {
  test("the budget's and the places' kinds are in sync.ts's group and version, and every key it writes in its group", () => {
    assert.equal(BUDGET.apiVersion, API_VERSION);
    assert.equal(PLACE.apiVersion, API_VERSION);
    assert.equal(BUDGETS, `${BUDGET.kind}.${API_VERSION}`);
    assert.equal(PLACES, `${PLACE.kind}.${API_VERSION}`);
    for (const key of [REQUESTER_ANNOTATION, REQUESTER_GROUPS_ANNOTATION, REQUESTER_HASH_LABEL, SPENT_LABEL, SHARD_LABEL]) assert.ok(key.startsWith(`${GROUP}/`), key);
  });

  test("sync reads the places as a child group (its own) and as a related group (the requester's), and the budgets as related", () => {
    assert.ok(PLACES in ObservedChildren.entries);
    assert.ok(PLACES in RelatedObjects.entries && BUDGETS in RelatedObjects.entries);
  });

  test("a request without the requester's places is refused as one from a controller with no customize hook, not answered as if they held none", () => {
    const relatedObjects: Record<string, unknown> = world(THREE, held(1, 2, 3));
    delete relatedObjects[PLACES];
    const parsed = v.safeParse(SyncRequest, { parent: theirs("dana-4"), children: namespaces(), related: relatedObjects });
    assert.equal(parsed.success, false);
    assert.match(String(parsed.issues?.[0]?.message), /ProjectPlace/);
  });

  test("the feature's refusals are its own, and it adds no reason", () => {
    assert.deepEqual(budgetFeature.refusals, ["OverBudget", "InvalidBudget"]);
    assert.deepEqual(budgetFeature.reasons, []);
  });

  // The column reads the spec, as printer columns can: a place's hashed
  // label would show a developer's name as fifty characters of base 36.
  test("kubectl get projectplaces shows the REQUESTER of every place, held or spent, as the CRD's column reads it", () => {
    const { find } = readManifest();
    const column = find("CustomResourceDefinition", `${PLACE.kind.toLowerCase()}s.${GROUP}`).spec.versions[0].additionalPrinterColumns.find((each: { name: string }) => each.name === "Requester");
    assert.equal(column?.jsonPath, ".spec.requester");
    const places = placesIn(syncOf(theirs("dana-3"), { own: [placeOf(3, "dana-3")], others: held(1, 2) }));
    assert.deepEqual(places.map((place) => place.metadata.name), [`${hashOf(DANA)}-3`, spentNameFor(hashOf(DANA))]);
    assert.deepEqual(places.map((place) => place.spec.requester), [DANA, DANA]);
  });

  test("a budget gives at most 250 Projects by number", () => {
    assert.equal(MAX_PROJECTS, 250);
  });
});

// A label holds 63 characters of a few kinds, and a name may be anything:
// the places of a requester are found by a hash no other name shares.
describe("budget: whose places are whose", () => {
  test("requesterHash is the SHA-256 of the exact name in base 36, 50 characters, padded where the number is shorter", () => {
    for (const name of [DANA, "system:serviceaccount:ci:deployer", "x".repeat(300), "Łukasz"]) {
      assert.equal(requesterHash(name), hashOf(name), name);
      assert.match(requesterHash(name), /^[0-9a-z]{50}$/, name);
    }
    // Dana's is 49 digits in base 36: the padding is what makes it 50.
    assert.ok(requesterHash(DANA).startsWith("0"));
  });

  test("the same name always gives the same hash, and names the old label confused give different ones", () => {
    assert.equal(requesterHash(DANA), requesterHash(["dana", "example.com"].join("@")));
    assert.notEqual(requesterHash(DANA), requesterHash("dana!example.com"));
    const long = "a".repeat(300);
    assert.notEqual(requesterHash(long), requesterHash(`${long.slice(0, 299)}b`));
    assert.notEqual(requesterHash("dana"), requesterHash("Dana"));
  });

  test("a place is named <hash>-<n>, and the spent place <hash>-spent", () => {
    assert.equal(placeNameFor("h", 3), "h-3");
    assert.equal(spentNameFor("h"), "h-spent");
  });

  test("customize asks for every ProjectBudget, and for the requester's places by their hash, and never for Projects", () => {
    const rules = customize(theirs("dana-1")).relatedResources;
    assert.deepEqual(rules.find((rule) => rule.resource === BUDGET.plural), { apiVersion: API_VERSION, resource: "projectbudgets", labelSelector: { matchLabels: {} } });
    assert.deepEqual(rules.find((rule) => rule.resource === PLACE.plural), {
      apiVersion: API_VERSION,
      resource: "projectplaces",
      labelSelector: { matchLabels: { [REQUESTER_HASH_LABEL]: hashOf(DANA) } },
    });
    assert.equal(rules.some((rule) => rule.resource === "projects"), false);
  });

  test("a Project without a requester (a holder of administer's) asks for places by a selector that matches none, never for every place", () => {
    const rules = customize(project("ops")).relatedResources;
    assert.deepEqual(rules.find((rule) => rule.resource === PLACE.plural), {
      apiVersion: API_VERSION,
      resource: "projectplaces",
      labelSelector: { matchExpressions: [{ key: REQUESTER_HASH_LABEL, operator: "Exists" }, { key: REQUESTER_HASH_LABEL, operator: "DoesNotExist" }] },
    });
    assert.deepEqual(rules.find((rule) => rule.resource === BUDGET.plural), { apiVersion: API_VERSION, resource: "projectbudgets", labelSelector: { matchLabels: {} } });
  });

  test("a Project without a requester is in no budget: no place, no budget status, its Namespace at once", () => {
    const answer = sync(project("ops"), namespaces(), world(budgetOf(0)), at);
    assert.equal(budgetStatusOf(answer), undefined);
    assert.deepEqual(placesIn(answer), []);
    assert.equal(asksNamespace(answer), true);
  });

  test("another requester's places do not count, even arriving under Dana's label: they are named after their own requester", () => {
    const label = { [REQUESTER_HASH_LABEL]: hashOf(DANA) };
    const others = [1, 2, 3].map((n) => ({ ...placeOf(n, `erin-${n}`, "dana!example.com"), metadata: { name: `${hashOf("dana!example.com")}-${n}`, labels: label } }));
    const answer = syncOf(theirs("dana-1"), { others });
    assert.notEqual(ready(answer).reason, "OverBudget");
    assert.deepEqual(placesIn(answer), [placeOf(1, "dana-1")]);
  });

  test("a place says nothing of its requester but its name: a place's spec, were it written by hand, changes nothing", () => {
    const rewritten = held(1, 2, 3).map((place) => ({ ...place, spec: { requester: "dana!example.com", project: "elsewhere", place: 9 } }));
    assert.equal(ready(syncOf(theirs("dana-9"), { others: rewritten })).reason, "OverBudget");
  });

  test("the spent place is no place held: a lingering one does not count against the requester", () => {
    const answer = syncOf(theirs("dana-3"), { others: [...held(1, 2), spentOf(3, 3)] });
    assert.deepEqual(placesIn(answer), [placeOf(3, "dana-3")]);
  });
});

// The heart of it: a place is claimed first, and the Namespace comes only
// once Metacontroller shows it as the Project's own, so two Projects can
// never both take the last one.
describe("budget: a new Project first holds a place, then gets its Namespace", () => {
  test("a developer's first Project asks for place 1 and nothing else of its own; its status says it waits for its Namespace", () => {
    const answer = syncOf(theirs("dana-1"));
    assert.deepEqual(placesIn(answer), [placeOf(1, "dana-1")]);
    assert.equal(asksNamespace(answer), false);
    assert.deepEqual(insideNamespace(answer, "dana-1"), []);
    assert.deepEqual(verdict(answer), { status: "False", reason: "WaitingForNamespace", message: `Waiting for Metacontroller to create Namespace ${namespaceOf("dana-1")} and what goes in it.` });
    assert.equal(answer.status.namespace, namespaceOf("dana-1"));
    assert.deepEqual(budgetStatusOf(answer), { requester: DANA, limit: 3, place: 1, contact: CONTACT }, "the place it claims");
  });

  test("once place 1 is observed as its own, it gets its Namespace and keeps the place, and the status still says it waits", () => {
    const first = syncOf(theirs("dana-1"));
    const second = sync(after(theirs("dana-1"), first), withObserved(namespaces(), [placeOf(1, "dana-1")]), world(THREE, [placeOf(1, "dana-1")]), later);
    assert.equal(namespaceIn(second)?.metadata.name, namespaceOf("dana-1"));
    assert.deepEqual(namespaceIn(second)?.metadata.annotations, annotationsSpec("dana-1's app"));
    assert.deepEqual(placesIn(second), [placeOf(1, "dana-1")]);
    assert.deepEqual(second.status, first.status, "the same status, time and all: no status written for the second round");
  });

  test("a place observed only among the requester's, not yet as its own child, is no reason to ask for the Namespace", () => {
    const answer = sync(theirs("dana-1"), namespaces(), world(THREE, [placeOf(1, "dana-1")]), at);
    assert.equal(asksNamespace(answer), false);
  });

  test("round after round, the Project settles Ready with its place and Namespace, and its members' access", () => {
    const { answers } = rounds(theirs("dana-1"));
    const last = answers.at(-1)!;
    assert.equal(ready(last).reason, "NamespaceActive", ready(last).message);
    assert.deepEqual(placesIn(last), [placeOf(1, "dana-1")]);
    assert.ok(last.children.some((child) => child.kind === "RoleBinding"), "its members' RoleBinding");
    assert.equal(asksNamespace(answers[0]!), false, "no Namespace in the first round");
  });

  test("the smallest free number is claimed: the third after 1 and 2", () => {
    assert.deepEqual(placesIn(syncOf(theirs("dana-3"), { others: held(1, 2) })), [placeOf(3, "dana-3")]);
  });

  test("the smallest free number is claimed, also with holes: 2 after 1 and 3, and 1 after 2 and 3", () => {
    const budgets = budgetOf(5);
    assert.deepEqual(placesIn(syncOf(theirs("dana-x"), { budgets, others: held(1, 3) })), [placeOf(2, "dana-x")]);
    assert.deepEqual(placesIn(syncOf(theirs("dana-x"), { budgets, others: held(2, 3) })), [placeOf(1, "dana-x")]);
  });

  test("the third Project on a budget of three takes the last place, and only once it is its own does it say all are taken", () => {
    const claiming = syncOf(theirs("dana-3"), { others: held(1, 2) });
    assert.deepEqual(placesIn(claiming), [placeOf(3, "dana-3")], "no spent place while the claim is pending");
    const holding = syncOf(theirs("dana-3"), { others: held(1, 2), own: [placeOf(3, "dana-3")] });
    assert.equal(asksNamespace(holding), true);
    assert.deepEqual(placesIn(holding), [placeOf(3, "dana-3"), spentOf(3, 3)]);
  });

  test("two Projects asking for the same place: the one whose create lost sees it taken, and takes the next, or is OverBudget at the limit", () => {
    const race = { others: [...held(1), placeOf(2, "dana-a")] };
    const first = placesIn(syncOf(theirs("dana-b"), { others: held(1) }));
    assert.deepEqual(first, [placeOf(2, "dana-b")], "both asked for place 2; dana-a got it");
    assert.deepEqual(placesIn(syncOf(theirs("dana-b"), race)), [placeOf(3, "dana-b")]);
    const atLimit = syncOf(after(theirs("dana-b"), syncOf(theirs("dana-b"), { others: held(1) })), { ...race, budgets: budgetOf(2) });
    assert.equal(ready(atLimit).reason, "OverBudget");
    assert.deepEqual(placesIn(atLimit), []);
    assert.equal(asksNamespace(atLimit), false);
  });
});

// Ten Projects made at once reach Metacontroller's cache in any order; a
// sync sees the places as its cache does, a little behind the cluster. The
// API server's unique names settle who gets each.
describe("budget: the outcome does not depend on timing", () => {
  /** Numbers from a seed, the same every run. */
  const seeded = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  /**
   * A requester's Projects as Metacontroller runs them: every sync sees the
   * places as its cache last saw them (never newer than the cluster, never
   * older than at the sync before), and its answer is applied to the
   * cluster: a place asked for is created unless its name is taken, one
   * seen and no longer asked for is deleted, a Namespace asked for is made.
   */
  function cluster(projects: Project[], budgets: Budgets, seed: number) {
    const random = seeded(seed);
    const places = new Map<string, { place: Place; holder: string }>();
    const history = [new Map(places)];
    const withNamespace = new Set<string>();
    const statuses = new Map<string, SyncResponse>();
    let seen = 0;
    let mostNamespaces = 0;
    const syncOne = (me: Project, fresh: boolean) => {
      seen = fresh ? history.length - 1 : Math.min(history.length - 1, seen + Math.floor(random() * 3));
      const view = [...history[seen]!.values()];
      const name = me.metadata.name;
      const own = view.filter((each) => each.holder === name).map((each) => each.place);
      const children = withObserved(withNamespace.has(name) ? namespaces({ [namespaceOf(name)]: "Active" }) : namespaces(), own);
      const answer = sync(after(me, statuses.get(name)), children, world(budgets, view.map((each) => each.place)), at);
      statuses.set(name, answer);
      const asked = placesIn(answer);
      for (const place of asked) {
        const there = places.get(place.metadata.name);
        if (!there || there.holder === name) places.set(place.metadata.name, { place, holder: name });
      }
      for (const place of own) if (!asked.some((each) => each.metadata.name === place.metadata.name)) places.delete(place.metadata.name);
      if (asksNamespace(answer)) withNamespace.add(name);
      history.push(new Map(places));
      mostNamespaces = Math.max(mostNamespaces, withNamespace.size);
      return answer;
    };
    const shuffled = () => {
      const order = [...projects];
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      return order;
    };
    for (let round = 0; round < 6; round++) for (const me of shuffled()) syncOne(me, false);
    const answers = new Map<string, SyncResponse>();
    for (let round = 0; round < 4; round++) for (const me of shuffled()) answers.set(me.metadata.name, syncOne(me, true));
    return { places, withNamespace, mostNamespaces, answers };
  }

  const ten = Array.from({ length: 10 }, (_, n) => theirs(`dana-${n}`));
  for (const seed of [1, 2, 3, 42, 2026]) {
    test(`ten Projects made at once, synced in any order with a lagging cache (seed ${seed}): exactly three get a place and a Namespace, never more at any moment`, () => {
      const { places, withNamespace, mostNamespaces, answers } = cluster(ten, THREE, seed);
      assert.ok(mostNamespaces <= 3, `${mostNamespaces} Namespaces at once`);
      assert.equal(withNamespace.size, 3);
      const numbered = [...places.values()].filter((each) => each.place.spec && "place" in each.place.spec);
      assert.deepEqual(numbered.map((each) => (each.place.spec as { place: number }).place).sort(), [1, 2, 3]);
      assert.deepEqual(numbered.map((each) => each.holder).sort(), [...withNamespace].sort());
      const spent = places.get(`${hashOf(DANA)}-spent`);
      assert.deepEqual(spent?.place, spentOf(3, 3));
      assert.equal(spent?.holder, numbered.find((each) => (each.place.spec as { place: number }).place === 3)?.holder, "held by the holder of place 3");
      for (const me of ten.filter((each) => !withNamespace.has(each.metadata.name))) assert.equal(ready(answers.get(me.metadata.name)!).reason, "OverBudget", me.metadata.name);
    });
  }
});

// What a developer sees on a Project beyond their budget: nothing made, and
// a message that says how many they hold, how many they may, and whom to ask.
describe("budget: a Project beyond the budget gets nothing", () => {
  test("a fourth Project on a budget of three gets no place and no Namespace: OverBudget, saying how many are held", () => {
    const answer = syncOf(theirs("dana-4"), { others: held(1, 2, 3) });
    assert.deepEqual(placesIn(answer), []);
    assert.equal(asksNamespace(answer), false);
    assert.deepEqual(insideNamespace(answer, "dana-4"), []);
    assert.equal(answer.children.some((child) => child.kind === "Job"), false, "no integration"); // feature: integrations
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "OverBudget",
      message:
        "dana@example.com holds 3 Projects and may hold 3 (ProjectBudget default), so Project dana-4 gets no Namespace, and so nothing that comes with one: its members may only read it. " +
        "It gets them by itself once one of the others goes; delete one of them, or ask the platform team for a larger budget.",
    });
  });

  test("a Project OverBudget names no Namespace in its status, and keeps its budget's", () => {
    const answer = syncOf(theirs("dana-4"), { others: held(1, 2, 3) });
    assert.equal("namespace" in answer.status, false);
    assert.deepEqual(budgetStatusOf(answer), { requester: DANA, limit: 3, contact: CONTACT });
  });

  test("one Project held is said so, and more held than the budget (lowered) too", () => {
    assert.match(ready(syncOf(theirs("dana-2"), { budgets: budgetOf(1), others: held(1) })).message, /^dana@example\.com holds 1 Project and may hold 1 \(ProjectBudget default\)/);
    assert.match(ready(syncOf(theirs("dana-9"), { others: held(1, 2, 3, 4, 5) })).message, /^dana@example\.com holds 5 Projects and may hold 3 /);
  });

  test("a budget of 0 leaves a developer's Project OverBudget, and says whom to ask for one", () => {
    assert.deepEqual(verdict(syncOf(theirs("dana-1"), { budgets: budgetOf(0) })), {
      status: "False",
      reason: "OverBudget",
      message:
        "dana@example.com holds 0 Projects and may hold 0 (ProjectBudget default), so Project dana-1 gets no Namespace, and so nothing that comes with one: its members may only read it. " +
        "It gets them by itself once the budget gives dana@example.com one; ask the platform team for it.",
    });
  });

  test("the contact defaults to whoever holds administer", () => {
    const answer = syncOf(theirs("dana-2"), { budgets: { [BUDGET.name]: { projects: 1 } }, others: held(1) });
    const projects = `${PARENT.plural}.${GROUP}`;
    assert.match(ready(answer).message, new RegExp(String.raw`ask a cluster admin \(a holder of the verb administer on ${escaped(projects)}\) for a larger budget\.$`));
    assert.equal(DEFAULT_CONTACT, `a cluster admin (a holder of the verb administer on ${projects})`);
    assert.deepEqual(budgetStatusOf(answer), { requester: DANA, limit: 1, contact: DEFAULT_CONTACT });
  });

  test("once one of the others goes, the Project beyond the budget claims the freed place by itself", () => {
    assert.deepEqual(placesIn(syncOf(theirs("dana-4"), { others: held(1, 3) })), [placeOf(2, "dana-4")]);
  });
});

// The policy cannot count; sync tells it, in one object per requester at
// their limit: the spent place, asked for by one Project only.
describe("budget: the spent place says a requester holds all they may", () => {
  test("asked by the holder of the highest place only, with the requester, their groups, how many are held, the limit and whom to ask", () => {
    const others = held(1, 2, 3);
    const mine = (n: number) => others.filter((place) => place.metadata.name !== `${hashOf(DANA)}-${n}`);
    assert.deepEqual(placesIn(syncOf(theirs("dana-3"), { own: [placeOf(3, "dana-3")], others: mine(3) })), [placeOf(3, "dana-3"), spentOf(3, 3)]);
    for (const n of [1, 2]) assert.deepEqual(placesIn(syncOf(theirs(`dana-${n}`), { own: [placeOf(n, `dana-${n}`)], others: mine(n) })), [placeOf(n, `dana-${n}`)], `dana-${n}`);
  });

  test("its groups are the holder's, one per line, as the mutating policy joins them", () => {
    const groups = ["leads", "developers", "system:authenticated"];
    const answer = syncOf(theirs("dana-3", { groups }), { own: [placeOf(3, "dana-3")], others: held(1, 2) });
    assert.deepEqual(placesIn(answer)[1], spentOf(3, 3, { groups }));
    assert.equal((placesIn(answer)[1]!.spec as { groups: string }).groups, "leads\ndevelopers\nsystem:authenticated");
  });

  test("with a budget lowered below what is held, it says how many are held and the new limit", () => {
    const answer = syncOf(theirs("dana-5"), { own: [placeOf(5, "dana-5")], others: held(1, 2, 3, 4), withNamespace: true });
    assert.deepEqual(placesIn(answer), [placeOf(5, "dana-5"), spentOf(5, 3)]);
  });

  test("dropped once a place frees: the highest holder below the limit asks for none, and Metacontroller deletes it", () => {
    const answer = sync(theirs("dana-3"), withObserved(namespaces(), [placeOf(3, "dana-3"), spentOf(3, 3)]), world(THREE, [...held(1), placeOf(3, "dana-3"), spentOf(3, 3)]), at);
    assert.deepEqual(placesIn(answer), [placeOf(3, "dana-3")]);
  });

  test("with a budget of 0 there is no place to hold: a Project over budget asks for it, saying 0 of 0", () => {
    const answer = syncOf(theirs("dana-1"), { budgets: budgetOf(0) });
    assert.deepEqual(placesIn(answer), [spentOf(0, 0)]);
    assert.equal(asksNamespace(answer), false);
  });

  test("a Project over budget never asks for it while someone holds a place: the highest holder does", () => {
    assert.deepEqual(placesIn(syncOf(theirs("dana-4"), { others: held(1, 2, 3) })), []);
    assert.deepEqual(placesIn(syncOf(theirs("dana-2"), { budgets: budgetOf(0), others: held(1) })), []);
  });

  test("unlimited, or within the budget, nobody asks for it", () => {
    const budgets = budgetOf(3, { platform: { groups: [{ group: "platform", unlimited: true }] } });
    assert.deepEqual(placesIn(syncOf(theirs("ops-1", { groups: ["platform"] }), { budgets, others: held(1, 2, 3) })), []);
    assert.deepEqual(placesIn(syncOf(theirs("dana-2"), { own: [placeOf(2, "dana-2")], others: held(1) })), [placeOf(2, "dana-2")]);
  });
});

// Holders of administer and groups given unlimited: their Projects cost one
// another nothing, however many there are.
describe("budget: an unlimited requester holds no place", () => {
  const budgets = budgetOf(0, { platform: { groups: [{ group: "platform", unlimited: true }] } });
  const ops = (name: string) => theirs(name, { requester: "olga@example.com", groups: ["platform", "system:authenticated"] });

  test("an unlimited group's new Project asks for no place, gets its Namespace at once, and its status has no limit", () => {
    const answer = syncOf(ops("ops-1"), { budgets });
    assert.deepEqual(placesIn(answer), []);
    assert.equal(asksNamespace(answer), true);
    assert.deepEqual(budgetStatusOf(answer), { requester: "olga@example.com", contact: CONTACT });
  });

  test("a place it held while limited is left out of the answer, so Metacontroller deletes it; its Namespace stays", () => {
    const answer = syncOf(ops("ops-1"), { budgets, own: [placeOf(1, "ops-1", "olga@example.com")], withNamespace: true });
    assert.deepEqual(placesIn(answer), []);
    assert.equal(namespaceIn(answer)?.metadata.name, namespaceOf("ops-1"));
  });
});

// Never lose: nothing a Project has is taken back because of the budget,
// whether it is lowered, missing or broken.
describe("budget: never lose", () => {
  /** Fails unless every child observed, but the spent place, is still asked for. */
  const assertStillAsksEverything = (answer: SyncResponse, children: ObservedChildren) => {
    const keyOf = (child: Child) => `${child.kind}.${child.apiVersion} ${child.metadata.namespace ? `${child.metadata.namespace}/` : ""}${child.metadata.name}`;
    const asked = new Set(answer.children.map(keyOf));
    for (const [group, objects] of Object.entries(children)) {
      for (const key of Object.keys(objects)) if (key !== `${hashOf(DANA)}-spent`) assert.ok(asked.has(`${group} ${key}`), `${group} ${key} is still asked for`);
    }
  };

  test("a lowered budget keeps a Project with its Namespace and its place, and everything in it", () => {
    const { children, answers } = rounds(theirs("dana-3"), { others: held(1, 2) });
    assert.ok(Object.keys(children["RoleBinding.rbac.authorization.k8s.io/v1"] ?? {}).length > 0, "settled with its members' access");
    const lowered = sync(after(theirs("dana-3"), answers.at(-1)), children, world(budgetOf(1), [...held(1, 2), placeOf(3, "dana-3"), spentOf(3, 3)]), later);
    assert.equal(ready(lowered).reason, "NamespaceActive", ready(lowered).message);
    assertStillAsksEverything(lowered, children);
    assert.deepEqual(placesIn(lowered), [placeOf(3, "dana-3"), spentOf(3, 1)]);
  });

  test("a Project that holds its place but has no Namespace yet gets it, though the budget was lowered meanwhile", () => {
    const answer = syncOf(theirs("dana-3"), { budgets: budgetOf(1), own: [placeOf(3, "dana-3")], others: held(1, 2) });
    assert.equal(asksNamespace(answer), true);
    assert.notEqual(ready(answer).reason, "OverBudget");
  });

  test("a Project with a Namespace and no place (made while unlimited) keeps everything, and claims the first free place, beyond the budget if need be", () => {
    const unlimited = budgetOf(3, { everyone: { groups: [{ group: "developers", unlimited: true }] } });
    const { children, answers } = rounds(theirs("dana-0"), { budgets: unlimited });
    assert.deepEqual(Object.keys(children[PLACES] ?? {}), [], "settled without a place");
    const limited = sync(after(theirs("dana-0"), answers.at(-1)), children, world(THREE, held(1, 2, 3)), later);
    assert.notEqual(ready(limited).reason, "OverBudget");
    assertStillAsksEverything(limited, children);
    assert.deepEqual(placesIn(limited), [placeOf(4, "dana-0")]);
  });

  test("its claim is no prerequisite: the Namespace it has is asked for as the spec says, not merely kept as it was", () => {
    const answer = syncOf(theirs("dana-0"), { others: held(1, 2, 3), withNamespace: true });
    assert.deepEqual(placesIn(answer), [placeOf(4, "dana-0")]);
    assert.deepEqual(namespaceIn(answer)?.metadata.annotations, annotationsSpec("dana-0's app"));
  });

  test("one with a Namespace and no place takes a hole if there is one", () => {
    assert.deepEqual(placesIn(syncOf(theirs("dana-0"), { others: held(1, 3), withNamespace: true })), [placeOf(2, "dana-0")]);
  });
});

// Without ProjectBudget default, everyone gets the built-in budget: k8s.yaml
// ships none, so that re-applying it never undoes an admin's.
describe("budget: the built-in default", () => {
  test("without ProjectBudget default a developer may hold the built-in 3, and is sent to a cluster admin", () => {
    const answer = syncOf(theirs("dana-4"), { budgets: {}, others: held(1, 2, 3) });
    assert.deepEqual(placesIn(answer), []);
    assert.equal(asksNamespace(answer), false);
    assert.equal(ready(answer).reason, "OverBudget");
    assert.match(ready(answer).message, new RegExp(`may hold ${BUILT_IN_BUDGET.projects} \\(ProjectBudget default\\).* ask ${BUILT_IN_BUDGET.contact.replace(/[()]/g, "\\$&")} for a larger budget\\.$`));
    assert.deepEqual(placesIn(syncOf(theirs("dana-3"), { budgets: {}, others: held(1, 2) })), [placeOf(3, "dana-3")]);
  });

  test("a group's ProjectBudget adds to the built-in default as to ProjectBudget default", () => {
    const leads = { leads: { groups: [{ group: "developers", projects: 5 }] } };
    assert.deepEqual(placesIn(syncOf(theirs("dana-5"), { budgets: leads, others: held(1, 2, 3, 4) })), [placeOf(5, "dana-5")]);
  });
});

// A budget that cannot be read fails closed for what is new, and takes
// nothing from what exists: a place given up while the budget was briefly
// gone would go to another.
describe("budget: a budget that cannot be read", () => {
  const broken = { [BUDGET.name]: { projects: 3 }, broken: { groups: [{ group: "leads", projects: 2, unlimited: true }] } };

  test("InvalidBudget names the ProjectBudget and the rule it breaks, keeps own places, and asks for nothing new", () => {
    const answer = syncOf(theirs("dana-3"), { budgets: broken, own: [placeOf(3, "dana-3")], others: held(1, 2) });
    assert.deepEqual(placesIn(answer).map((place) => place.metadata.name), [`${hashOf(DANA)}-3`]);
    assert.equal(asksNamespace(answer), false);
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "InvalidBudget",
      message: "ProjectBudget broken breaks its rules (spec.groups[0]: a group has either projects or unlimited: true), so Projects that developers create get nothing until a cluster admin fixes it.",
    });
    assert.deepEqual(placesIn(syncOf(theirs("dana-1"), { budgets: broken })), []);
  });

  test("a Project with a Namespace keeps everything while the budget is broken, its place too", () => {
    for (const budgets of [broken]) {
      const answer = syncOf(theirs("dana-3"), { budgets, own: [placeOf(3, "dana-3")], others: held(1, 2), withNamespace: true });
      assert.equal(namespaceIn(answer)?.metadata.name, namespaceOf("dana-3"));
      assert.ok(answer.children.some((child) => child.kind === "RoleBinding"), "its members' access");
      assert.deepEqual(placesIn(answer).map((place) => place.metadata.name), [`${hashOf(DANA)}-3`]);
      assert.notEqual(ready(answer).reason, "InvalidBudget");
    }
  });

  test("a budget beyond 250 by number is InvalidBudget, by default or for a group", () => {
    assert.match(ready(syncOf(theirs("dana-1"), { budgets: budgetOf(MAX_PROJECTS + 1) })).message, /^ProjectBudget default breaks its rules \(spec\.projects: /);
    assert.match(
      ready(syncOf(theirs("dana-1"), { budgets: budgetOf(3, { leads: { groups: [{ group: "leads", projects: MAX_PROJECTS + 1 }] } }) })).message,
      /^ProjectBudget leads breaks its rules \(spec\.groups\[0\]\.projects: /,
    );
    assert.deepEqual(placesIn(syncOf(theirs("dana-1"), { budgets: budgetOf(MAX_PROJECTS) })), [placeOf(1, "dana-1")]);
  });

  test("while the budget cannot be read, status.budget gives no limit, and Ready says why: the CRD says a limit is absent when unlimited or unknown", () => {
    const answer = syncOf(theirs("dana-1"), { budgets: broken });
    assert.equal("limit" in (answer.status["budget"] as object), false);
    assert.match(readManifest().find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`).spec.versions[0].schema.openAPIV3Schema.properties.status.properties.budget.properties.limit.description, /absent when unlimited, or while the budget cannot be read/);
  });
});

// Admins give groups more, in ProjectBudget default or in ProjectBudgets of
// their own; grants add up as RBAC's do.
describe("budget: what admins set", () => {
  const spending = (projects: number, groups: { group: string; projects?: number; unlimited?: boolean }[] = []) => ({ projects, contact: DEFAULT_CONTACT, groups });

  test("someone in none of the named groups gets the default", () => {
    assert.equal(limitFor(spending(3, [{ group: "leads", projects: 10 }]), ["developers"]), 3);
  });

  test("someone in several named groups gets the most generous, and unlimited beats any number", () => {
    assert.equal(limitFor(spending(3, [{ group: "leads", projects: 10 }, { group: "interns", projects: 1 }]), ["leads", "interns"]), 10);
    assert.equal(limitFor(spending(3, [{ group: "leads", projects: 10 }, { group: "platform", unlimited: true }]), ["leads", "platform"]), undefined);
  });

  test("a group cannot lower the default: grants add up, as RBAC's do", () => {
    assert.equal(limitFor(spending(3, [{ group: "interns", projects: 1 }]), ["interns"]), 3);
  });

  test("a group named in another ProjectBudget gets its budget: a lead's eleventh Project claims place 11, and is OverBudget without it", () => {
    const lead = ["developers", "leads", "system:authenticated"];
    const ten = Array.from({ length: 10 }, (_, n) => placeOf(n + 1, `lead-${n + 1}`));
    const withTeam = syncOf(theirs("lead-11", { groups: lead }), { budgets: budgetOf(3, { "team-leads": { groups: [{ group: "leads", projects: 11 }] } }), others: ten });
    assert.deepEqual(placesIn(withTeam), [placeOf(11, "lead-11")]);
    assert.deepEqual(budgetStatusOf(withTeam), { requester: DANA, limit: 11, place: 11, contact: CONTACT });
    assert.equal(ready(syncOf(theirs("lead-11", { groups: lead }), { others: ten })).reason, "OverBudget");
  });

  test("the budget is the one of the groups the Project was created with, not of someone else's", () => {
    const budgets = budgetOf(1, { "team-leads": { groups: [{ group: "leads", projects: 5 }] } });
    assert.equal(ready(syncOf(theirs("dana-2"), { budgets, others: held(1) })).reason, "OverBudget");
    assert.deepEqual(placesIn(syncOf(theirs("dana-2", { groups: ["leads"] }), { budgets, others: held(1) })), [placeOf(2, "dana-2")]);
  });

  test("a group's grant in ProjectBudget default counts as in any other", () => {
    const budgets = { [BUDGET.name]: { projects: 1, contact: CONTACT, groups: [{ group: "leads", projects: 2 }] } };
    assert.deepEqual(placesIn(syncOf(theirs("dana-2", { groups: ["leads"] }), { budgets, others: held(1) })), [placeOf(2, "dana-2")]);
  });
});

// Metacontroller finds places by scanning every one: a Project that holds its
// place below its limit is counted already, and cannot be the one that says
// all are taken, so once Ready it stops asking for its requester's places.
describe("budget: a settled Project", () => {
  /** `me` after the rounds that make it Ready with place `n`, at a limit of `limit`. */
  function settledWith(name: string, others: Place[], budgets: Budgets = THREE) {
    const { answers, children } = rounds(theirs(name), { budgets, others });
    const me = after(theirs(name), answers.at(-1));
    assert.equal(me.status?.conditions?.[0]?.status, "True", JSON.stringify(me.status));
    return { me, children };
  }
  const asksPlaces = (me: Project) => customize(me).relatedResources.some((rule) => rule.resource === PLACE.plural);

  test("its status names the place it holds", () => {
    const { me } = settledWith("dana-2", held(1));
    assert.deepEqual(budgetStatusOf({ status: me.status as SyncResponse["status"], children: [] }), { requester: DANA, limit: 3, place: 2, contact: CONTACT });
  });

  test("Ready with its place below its limit, it does not ask for its requester's places; before, or at its limit, it does", () => {
    assert.equal(asksPlaces(settledWith("dana-1", []).me), false);
    assert.equal(asksPlaces(theirs("dana-1")), true, "a new one");
    assert.equal(asksPlaces(settledWith("dana-3", held(1, 2)).me), true, "the holder of place 3 of 3 says all are taken, and must see when one goes");
  });

  test("without its requester's places it keeps its place, and asks for nothing else of the budget's", () => {
    const { me, children } = settledWith("dana-2", held(1));
    const relatedObjects: Record<string, unknown> = world(THREE, held(1, 2));
    delete relatedObjects[PLACES];
    const parsed = v.parse(SyncRequest, { parent: me, children, related: relatedObjects });
    const answer = sync(parsed.parent, parsed.children, parsed.related, at);
    assert.deepEqual(placesIn(answer), [placeOf(2, "dana-2")]);
    assert.equal(ready(answer).reason, "NamespaceActive");
    assert.deepEqual(answer.status, me.status);
  });
});

// Metacontroller's own request about a developer's settled Project
// (test/fixtures/budget-sync.json, captured on a cluster): the place it holds
// arrives as its child and among its requester's.
describe("budget: a real request", () => {
  test("a developer's settled Project is answered with the status it carries, its place as applied, and exactly what is there", () => {
    const request = v.parse(SyncRequest, fixture("budget-sync"));
    const answer = sync(request.parent, request.children, request.related, later);
    assert.equal(ready(answer).reason, "NamespaceActive", ready(answer).message);
    assert.deepEqual(answer.status, request.parent.status);
    const requester = (request.parent.metadata["annotations"] as Record<string, string>)[REQUESTER_ANNOTATION];
    assert.equal(requester, DANA);
    assert.deepEqual(budgetStatusOf(answer), { requester: DANA, limit: BUILT_IN_BUDGET.projects, place: 1, contact: BUILT_IN_BUDGET.contact }, "the built-in budget, as the cluster had no ProjectBudget default");
    assert.deepEqual(placesIn(answer), [placeOf(1, request.parent.metadata.name)]);
    assert.deepEqual(Object.keys(request.related[PLACES] ?? {}), Object.keys(request.children[PLACES] ?? {}), "its own place is among its requester's");
    const kindsObserved = Object.entries(request.children).flatMap(([group, objects]) => Object.keys(objects).map(() => group.slice(0, group.indexOf("."))));
    assert.deepEqual(answer.children.map((child) => child.kind).sort(), kindsObserved.sort());
  });
});

// feature: budget & environments
// ProjectBudget default may say how many Namespaces each developer's
// Project owns: the environments it declares, and those it keeps though
// none names them any more. Past it, no Namespace is made; none is lost.
describe("budget & environments: how many Namespaces each Project may own", () => {
  const declaring = (name: string, ...environments: string[]): Project => {
    const me = theirs(name);
    return { ...me, spec: { ...me.spec, environments: environments.map((environment) => ({ name: environment })) } };
  };
  const limited = (environments: number) => ({ [BUDGET.name]: { projects: 3, contact: CONTACT, environments } });
  /** One sync of `me` holding place 1, its Namespaces `owned` Active, each annotated with the environment it was made for. */
  const syncOwning = (me: Project, owned: string[], budgets: Budgets) => {
    const children = withObserved(having(...owned.map((environment) => environmentNamespace(me.metadata.name, environment))), [placeOf(1, me.metadata.name)]);
    for (const environment of owned) children[NAMESPACES][environmentNamespace(me.metadata.name, environment)]!.metadata!.annotations![ENVIRONMENT_ANNOTATION] = environment;
    return { answer: sync(me, children, world(budgets, [placeOf(1, me.metadata.name)]), at), children };
  };
  const namespacesIn = (answer: SyncResponse) => childrenOfKind(answer, ["Namespace"]).map((namespace) => namespace.metadata.name).sort();

  test("the feature names an environment's Namespace as the environments feature does", () => {
    for (const [project, environment] of [["shop", "dev"], ["a", "b-c"], ["x".repeat(20), "prod"]] as const) {
      assert.equal(environmentNamespace(project, environment), environmentsNamespace(project, environment));
    }
  });

  test("within the budget, a developer's Project gets every environment's Namespace", () => {
    const { answer } = syncOwning(declaring("dana-1", "dev", "staging", "prod"), [], limited(3));
    assert.notEqual(ready(answer).reason, "OverBudget", ready(answer).message);
    assert.deepEqual(namespacesIn(answer), ["dev", "prod", "staging"].map((environment) => environmentNamespace("dana-1", environment)));
  });

  test("declaring more than the budget gives, it gets no Namespace, and Ready says how many it may have, which are not made and whom to ask", () => {
    const { answer } = syncOwning(declaring("dana-1", "dev", "staging", "prod"), [], limited(2));
    assert.deepEqual(namespacesIn(answer), []);
    assert.equal(ready(answer).reason, "OverBudget");
    assert.match(ready(answer).message, new RegExp(escaped(`${DANA} may have 2 Namespaces in each Project (ProjectBudget default), and Project dana-1 owns 0, so Namespace ${["dev", "staging", "prod"].map((environment) => environmentNamespace("dana-1", environment)).join(", ")} are not made.`)));
    assert.match(ready(answer).message, new RegExp(escaped(`ask ${CONTACT} for a larger budget`)));
  });

  test("a renamed environment counts the one it keeps: past the budget the new one is not made, and every Namespace it owns is kept, with all it holds", () => {
    const { answer, children } = syncOwning(declaring("dana-1", "dev", "stage"), ["dev", "prod"], limited(2));
    assert.equal(ready(answer).reason, "OverBudget");
    assert.match(ready(answer).message, new RegExp(escaped(`owns 2, so Namespace ${environmentNamespace("dana-1", "stage")} is not made`)));
    assert.deepEqual(namespacesIn(answer), ["dev", "prod"].map((environment) => environmentNamespace("dana-1", environment)));
    // The annotations the environments feature writes follow its spec; all else stays as it was.
    assertKeepsEveryNamespace("OverBudget", { parent: declaring("dana-1", "dev", "stage"), children, related: world(limited(2), [placeOf(1, "dana-1")]) }, true);
  });

  test("a Project already past a lowered budget keeps its Namespaces and is not held back while it asks for none new", () => {
    const { answer } = syncOwning(declaring("dana-1", "dev", "staging", "prod"), ["dev", "staging", "prod"], limited(1));
    assert.notEqual(ready(answer).reason, "OverBudget", ready(answer).message);
    assert.equal(namespacesIn(answer).length, 3);
  });

  test("one that declares none owns one Namespace, which a budget of 1 allows", () => {
    const answer = syncOf(theirs("dana-1"), { budgets: limited(1), own: [placeOf(1, "dana-1")] });
    assert.equal(asksNamespace(answer), true);
  });

  test("without a limit in the budget, or for a Project without a requester (a holder of administer's), nothing is counted", () => {
    assert.notEqual(ready(syncOwning(declaring("dana-1", "dev", "staging", "prod"), [], THREE).answer).reason, "OverBudget");
    const admins = project("ops", { spec: { environments: [{ name: "dev" }, { name: "staging" }, { name: "prod" }] } });
    assert.equal(childrenOfKind(sync(admins, namespaces(), world(limited(1)), at), ["Namespace"]).length, 3);
  });
});
// end feature: budget & environments
