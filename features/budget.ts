/**
 * # Budget: how many Projects each developer may hold
 *
 * Each Project may be limited, and nothing would limit how many Projects
 * one developer makes: a limit multiplied at will is no limit. So
 * cluster admins set, in ProjectBudget `default` (agrrh.com/v1,
 * cluster-scoped), how many Projects a requester may hold, and in it or in
 * other ProjectBudgets larger budgets for some groups; a Project beyond its
 * requester's budget gets nothing, not even its Namespace, and its status
 * says why and whom to ask.
 *
 * Kubernetes records no creator, so k8s.yaml's mutating policy writes one at
 * create, where nobody can forge it and nobody may change it afterwards: the
 * requester's name and groups, as annotations. Holders of the verb
 * `administer` on projects.agrrh.com are not limited, and their Projects
 * carry no requester.
 *
 * Each Project a limited requester holds takes a place: a ProjectPlace named
 * after the requester and a number from 1 to their budget, which
 * Metacontroller creates as the Project's child before anything else. Names
 * are unique, so the API server itself settles two Projects asking for the
 * same place at once: one gets it, the other sees it taken. The Namespace is
 * asked for only once the Project's place is there, and a Project with a
 * Namespace keeps it whatever the budget says later (never lose). A
 * requester's places are all the customize hook asks for about their other
 * Projects, by the SHA-256 of their exact name: a few small objects in each
 * sync, never their Projects, and never another requester's. Metacontroller
 * finds them by scanning every place, so a Project that holds its place below
 * its limit, settled, does not ask: it is counted already, and cannot be the
 * one that says all are taken.
 *
 * Needs: members (its requester role and self-service are what a budget limits).
 *
 * Read top to bottom: the names, the request's parts, the budget's rules,
 * the places, and the plan `sync` composes.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import * as v from "valibot";
import type { Child, LabelSelector, Readiness, RelatedResourceRule } from "../sync.ts";
import type { Feature, FeatureInput, Plan } from "./index.ts";

// Its words, none left once it is taken away (take-away.ts's VOCABULARY says which).
export const VOCABULARY = ["budget", "budgets", "ProjectBudget", "ProjectBudgets", "ProjectPlace", "ProjectPlaces"] as const;

// ## The names
//
// Spelled out, not taken from sync.ts: a feature imports only types from it
// (budget.test.ts proves the spellings agree, and budget-admission.test.ts
// that k8s.yaml's policies write and read the same keys).
export const BUDGET = { kind: "ProjectBudget", plural: "projectbudgets", apiVersion: "agrrh.com/v1", name: "default" } as const;
export const BUDGETS = `${BUDGET.kind}.${BUDGET.apiVersion}` as const;
export const PLACE = { kind: "ProjectPlace", plural: "projectplaces", apiVersion: "agrrh.com/v1" } as const;
export const PLACES = `${PLACE.kind}.${PLACE.apiVersion}` as const;
/** Who created the Project, exactly as the API server authenticated them. */
export const REQUESTER_ANNOTATION = "agrrh.com/requester";
/** Their groups at that moment, one per line. */
export const REQUESTER_GROUPS_ANNOTATION = "agrrh.com/requester-groups";
/** On each place: the requester's name hashed (`requesterHash`), which a label can hold whatever the name. */
export const REQUESTER_HASH_LABEL = "agrrh.com/requester-hash";
/** On the one place-like object that says a requester holds all they may, which the budget policy reads at a create. */
export const SPENT_LABEL = "agrrh.com/budget-spent";
/** On a developer's Project, written at create, and on their spent place: which of the budget policy's bindings judges them (`shardOf`). */
export const SHARD_LABEL = "agrrh.com/requester-shard";
export const DEFAULT_CONTACT = "a cluster admin (a holder of the verb administer on projects.agrrh.com)";
/**
 * The most Projects a budget may give by number (more is `unlimited`): each
 * of a requester's places comes with every sync of each of their Projects,
 * and this keeps them well within the webhook's body limit.
 */
export const MAX_PROJECTS = 250;

// ## The request
//
// The Project is read for its requester; each place, its own and its
// requester's others', for its name alone, which says whose and which it is.
const Budgeted = v.looseObject({
  metadata: v.looseObject({ annotations: v.nullish(v.record(v.string(), v.string())) }),
});
type Budgeted = v.InferOutput<typeof Budgeted>;

const children = { [PLACES]: v.looseObject({}) };
const related = { [BUDGETS]: v.looseObject({ spec: v.nullish(v.unknown()) }), [PLACES]: v.looseObject({}) };

// ## The budget's rules
//
// ProjectBudget `default` sets what everyone gets; any ProjectBudget may
// give groups more, so that each team's budget can be an object of its own.
// The CRD checks the same at admission; these are for a budget admitted
// before its rules, or where the CRD was not updated.
const Count = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_PROJECTS));
const GroupBudget = v.pipe(
  v.object({ group: v.pipe(v.string(), v.nonEmpty()), projects: v.optional(Count), unlimited: v.optional(v.boolean()) }),
  v.check((entry) => (entry.projects === undefined) === (entry.unlimited === true), "a group has either projects or unlimited: true"),
);
type GroupBudget = v.InferOutput<typeof GroupBudget>;
const Groups = v.optional(v.array(GroupBudget));
const DefaultBudget = v.object({
  projects: Count,
  contact: v.optional(v.pipe(v.string(), v.nonEmpty())),
  groups: Groups,
  environments: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))), // feature: budget & environments
});
const MoreBudget = v.object({ groups: Groups });

export type Budget = {
  projects: number;
  contact: string;
  groups: GroupBudget[];
  environments?: number | undefined; // feature: budget & environments
};

/**
 * What a requester in these groups may hold: grants add up as RBAC's do, so
 * the most generous entry that names one of their groups wins, and
 * `unlimited` beats any number. `undefined` is unlimited.
 */
export function limitFor(budget: Budget, groups: readonly string[]): number | undefined {
  const entries = budget.groups.filter((entry) => groups.includes(entry.group));
  if (entries.some((entry) => entry.unlimited)) return undefined;
  return Math.max(budget.projects, ...entries.map((entry) => entry.projects ?? 0));
}

type BudgetReading = { budget: Budget; problem?: undefined } | { budget?: undefined; problem: Readiness };

// What everyone gets while no ProjectBudget `default` replaces it. Built
// in, not shipped in k8s.yaml, so that re-applying k8s.yaml never undoes
// what an admin made of `default`.
export const BUILT_IN_BUDGET = { projects: 3, contact: DEFAULT_CONTACT } as const;

function readBudgets(found: Record<string, { spec?: unknown }>): BudgetReading {
  const whose = "so Projects that developers create get nothing until a cluster admin";
  const { [BUDGET.name]: everyone = { spec: BUILT_IN_BUDGET }, ...more } = found;
  const defaults = v.safeParse(DefaultBudget, everyone.spec ?? {});
  const others = Object.entries(more).map(([name, { spec }]) => ({ name, read: v.safeParse(MoreBudget, spec ?? {}) }));
  const broken = [{ name: BUDGET.name, read: defaults }, ...others].flatMap(({ name, read }) => (read.success ? [] : [`ProjectBudget ${name} breaks its rules (${whereIn(read.issues)})`]));
  if (!defaults.success || broken.length) return { problem: { status: "False", reason: "InvalidBudget", message: `${broken.sort().join("; ")}, ${whose} fixes it.` } };
  const groups = [defaults.output, ...others.flatMap(({ read }) => (read.success ? [read.output] : []))].flatMap((budget) => budget.groups ?? []);
  return {
    budget: {
      projects: defaults.output.projects,
      contact: defaults.output.contact ?? DEFAULT_CONTACT,
      groups,
      environments: defaults.output.environments, // feature: budget & environments
    },
  };
}

/** `spec.groups[0]: …`, each place once: where a budget breaks its rules. */
function whereIn(issues: v.BaseIssue<unknown>[]): string {
  const path = (issue: v.BaseIssue<unknown>) => (issue.path ?? []).map(({ key }) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("");
  return [...new Set(issues.map((issue) => `spec${path(issue)}: ${issue.message}`))].join("; ");
}

// ## The places
//
// A label holds at most 63 of a few characters, and a name may be anything:
// the SHA-256 of the name, whole, in base 36 (50 characters), is one no other
// name shares. A place is named after it and says only which Project holds
// it: each of the requester's places comes with every sync of each of their
// Projects, and a name can be long.
export function requesterHash(requester: string): string {
  return BigInt(`0x${bytesToHex(sha256(utf8ToBytes(requester)))}`).toString(36).padStart(50, "0");
}

export type Place = {
  apiVersion: typeof PLACE.apiVersion;
  kind: typeof PLACE.kind;
  metadata: { name: string; labels: Record<string, string> };
  spec: { requester: string; project: string; place: number } | { requester: string; groups: string; held: number; limit: number; contact: string };
};

// The API server evaluates the budget policy once for each spent place its
// binding selects, on every developer's create (about 0.08 ms each,
// measured on 1.36: docs/budget.md). So the spent places are split
// into SHARDS by their requester's name, the mutating policy labels each
// developer's Project with its shard, and each of the policy's SHARDS
// bindings selects the Projects and the spent places of one: a create is
// judged against its own shard's alone. CEL has no hash function, so the
// shard is what both it and this can compute: the sum of the places of the
// name's letters and digits in SHARD_ALPHABET, modulo SHARDS
// (budget-admission.test.ts runs k8s.yaml's expression against this one).
export const SHARDS = 16;
export const SHARD_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
export function shardOf(requester: string): string {
  const sum = [...requester].reduce((total, character) => total + SHARD_ALPHABET.indexOf(character) + 1, 0);
  return String(sum % SHARDS);
}

export const placeNameFor = (hash: string, place: number) => `${hash}-${place}`;
export const spentNameFor = (hash: string) => `${hash}-spent`;

/** The number of a place named `<hash>-<n>`, or undefined for any other name. */
function numberOf(name: string, hash: string): number | undefined {
  const suffix = name.startsWith(`${hash}-`) ? name.slice(hash.length + 1) : "";
  return /^[1-9][0-9]*$/.test(suffix) ? Number(suffix) : undefined;
}

// The requester is written out for `kubectl get projectplaces` alone: sync
// reads whose a place is from its name, never from its spec.
const place = (hash: string, requester: string, project: string, number: number): Place => ({
  apiVersion: PLACE.apiVersion,
  kind: PLACE.kind,
  metadata: { name: placeNameFor(hash, number), labels: { [REQUESTER_HASH_LABEL]: hash } },
  spec: { requester, project, place: number },
});

const requesterOf = (project: Budgeted) => project.metadata.annotations?.[REQUESTER_ANNOTATION];
const groupsOf = (project: Budgeted) => (project.metadata.annotations?.[REQUESTER_GROUPS_ANNOTATION] ?? "").split("\n").filter(Boolean);
// Both words written out, so that a rename gives the plural as English has it (Policies, people).
const projects = (n: number) => `${n} ${n === 1 ? "Project" : "Projects"}`;

// ## The plan
//
// A Project beyond the budget is held back by saying its Namespace cannot
// be had (`unavailable`), and no other feature asks for anything in a
// Namespace that is not there. The place is the only child, besides the one
// object that says the requester holds all they may.
export const budget: Feature<{}, typeof children, typeof related> = {
  spec: {},
  children,
  related,
  elsewhere: { owns: (_project, group) => group === PLACES, are: "its place in its requester's budget" },
  // Every Project asks for every ProjectBudget (an empty selector selects
  // all), so that sync can tell a missing budget from a missing customize
  // hook, and until settled for its requester's places. One without a
  // requester asks for places by a selector none can match: the group
  // arrives, empty.
  fleetWide: [PLACES],
  // A developer's holds a place below the limit its status last said; the
  // one that says all are taken holds one at least at the limit.
  settled: (project) => {
    if (annotationOf(project, REQUESTER_ANNOTATION) === undefined) return true;
    const { place, limit } = ((project.status as Record<string, unknown> | null | undefined)?.["budget"] ?? {}) as Record<string, unknown>;
    return typeof place === "number" && typeof limit === "number" && place < limit;
  },
  customize: (project, _spec, settled): RelatedResourceRule[] => {
    const requester = annotationOf(project, REQUESTER_ANNOTATION);
    const places: LabelSelector = requester === undefined
      ? { matchExpressions: [{ key: REQUESTER_HASH_LABEL, operator: "Exists" }, { key: REQUESTER_HASH_LABEL, operator: "DoesNotExist" }] }
      : { matchLabels: { [REQUESTER_HASH_LABEL]: requesterHash(requester) } };
    return [
      { apiVersion: BUDGET.apiVersion, resource: BUDGET.plural, labelSelector: { matchLabels: {} } },
      ...(settled ? [] : [{ apiVersion: PLACE.apiVersion, resource: PLACE.plural, labelSelector: places }]),
    ];
  },
  refusals: ["OverBudget", "InvalidBudget"],
  reasons: [],
  plan: (input) => {
    const planned = placed(input);
    const beyond = planned.unavailable ? undefined : namespacesBeyond(input); // feature: budget & environments
    if (beyond) return { ...planned, unavailable: beyond }; // feature: budget & environments
    return planned;
  },
};

type Input = FeatureInput<{}, typeof children, typeof related>;

function placed({ project, observed, children, related }: Input): Plan {
  const me = v.parse(Budgeted, project);
  const requester = requesterOf(me);
  if (requester === undefined) return { children: [] };
  const name = project.metadata.name;
  const hash = requesterHash(requester);
  const reading = readBudgets(related[BUDGETS] ?? {});
  const limit = reading.budget ? limitFor(reading.budget, groupsOf(me)) : undefined;
  const contact = reading.budget?.contact ?? DEFAULT_CONTACT;
  const own = Object.keys(children[PLACES]);
  const mine = own.map((placeName) => numberOf(placeName, hash)).find((number) => number !== undefined);
  // The place it holds, or claims: said from the claim on, as a status that
  // changed once the place is there would cost another write.
  const statusWith = (number: number | undefined) => ({ budget: { requester, ...(limit === undefined ? {} : { limit }), ...(number === undefined ? {} : { place: number }), contact } });
  const status = statusWith(mine);
  const holding = mine === undefined ? [] : [place(hash, requester, name, mine)];
  // A budget that cannot be read keeps the Project's place, written whole
  // (Metacontroller's merge would strip what an answer leaves out): one
  // given up while the budget was briefly gone would go to another.
  if (reading.problem) return observed ? { children: holding, guards: [], status } : { children: holding, guards: [], status, unavailable: reading.problem };
  // An unlimited requester holds no places, so that their Projects cost
  // one another nothing, however many there are.
  if (limit === undefined) return { children: [], status };

  // Absent for a settled Project, which holds its place below the limit:
  // counting the others could only tell it that it says all are taken,
  // which it does not. (Where an admin lowers the limit to it meanwhile,
  // the budget still holds, as every new Project counts all places; only
  // the refusal at create waits until customize is asked again.)
  const places = Object.keys(related[PLACES] ?? {});
  const numbers = places.flatMap((placeName) => {
    const number = numberOf(placeName, hash);
    return number === undefined ? [] : [number];
  });
  const held = numbers.length;
  let free = 1;
  while (numbers.includes(free)) free++;
  // Once all are taken, one Project says so, for the budget policy to
  // refuse the next create: the holder of the highest place, and where a
  // budget of 0 gives none, one over budget while none says it (the API
  // server lets one of them have the name). The next takes over when it goes.
  const saysSpent =
    held >= limit &&
    (mine === undefined
      ? held === 0 && !observed && (own.includes(spentNameFor(hash)) || !places.includes(spentNameFor(hash)))
      : mine === Math.max(mine, ...numbers));
  const spent: Place[] = saysSpent
    ? [{
        apiVersion: PLACE.apiVersion,
        kind: PLACE.kind,
        metadata: { name: spentNameFor(hash), labels: { [REQUESTER_HASH_LABEL]: hash, [SPENT_LABEL]: "true", [SHARD_LABEL]: shardOf(requester) } },
        spec: { requester, groups: groupsOf(me).join("\n"), held, limit, contact },
      }]
    : [];
  // Nothing of the budget's is what later features wait for: the
  // Namespace itself waits for the place.
  if (holding.length) return { children: [...holding, ...spent], guards: [], status };
  // One that has a Namespace without a place (made while its requester was
  // unlimited, or before the budget) keeps everything, and takes the first
  // free place, so that it counts.
  if (observed) return { children: [place(hash, requester, name, free)], guards: [], status: statusWith(free) };
  if (held < limit) {
    const claim = place(hash, requester, name, free);
    return { children: [claim], prerequisites: [claim], guards: [], status: statusWith(free) };
  }
  return {
    children: spent,
    guards: [],
    status,
    unavailable: {
      status: "False",
      reason: "OverBudget",
      message:
        `${requester} holds ${projects(held)} and may hold ${limit} (ProjectBudget ${BUDGET.name}), so Project ${name} gets no Namespace, ` +
        "and so nothing that comes with one: its members may only read it. " +
        (limit === 0
          ? `It gets them by itself once the budget gives ${requester} one; ask ${contact} for it.`
          : `It gets them by itself once one of the others goes; delete one of them, or ask ${contact} for a larger budget.`),
    },
  };
}

// feature: budget & environments
// ## The environments
//
// How many Namespaces each developer's Project may own: counted per
// Project, so that the API server can refuse a spec that declares more at
// its write (k8s.yaml's projects.agrrh.com-budget-environments), with no
// count across Projects to race, and a developer holds at most their
// Projects' budget times this. Sync holds to it where that policy cannot
// see: the Namespaces a Project keeps though no environment names them.
// Past it, no Namespace is made, and every one it owns is kept.
const Declared = v.looseObject({ environments: v.nullish(v.array(v.looseObject({ name: v.string(), namespace: v.nullish(v.string()) }))) });
/** Spelled out, as the environments feature names them (budget.test.ts proves they agree). */
export const environmentNamespace = (project: string, environment: string) => `proj-${project}--${environment}`;

function namespacesBeyond({ project, namespace, owned, related }: Input): Readiness | undefined {
  const requester = requesterOf(v.parse(Budgeted, project));
  const budget = readBudgets(related[BUDGETS] ?? {}).budget;
  const declared = v.safeParse(Declared, project.spec ?? {});
  if (requester === undefined || budget?.environments === undefined || !declared.success) return undefined;
  const name = project.metadata.name;
  const wanted = declared.output.environments?.length
    ? declared.output.environments.map((environment) => environment.namespace ?? environmentNamespace(name, environment.name))
    : [namespace];
  const fresh = [...new Set(wanted)].filter((each) => !owned[each]);
  const count = Object.keys(owned).length;
  if (fresh.length === 0 || count + fresh.length <= budget.environments) return undefined;
  return {
    status: "False",
    reason: "OverBudget",
    message:
      `${requester} may have ${budget.environments} ${budget.environments === 1 ? "Namespace" : "Namespaces"} in each Project (ProjectBudget ${BUDGET.name}), and Project ${name} owns ${count}, ` +
      `so Namespace ${fresh.join(", ")} ${fresh.length === 1 ? "is" : "are"} not made. Every Namespace it owns is kept, with all it holds: ` +
      `declare fewer environments, have a cluster admin delete a Namespace no environment names any more, or ask ${budget.contact} for a larger budget.`,
  };
}
// end feature: budget & environments

// The annotation the mutating policy wrote, read from the Project as
// customize gets it, before any feature's schema has checked it.
function annotationOf(project: { metadata: Record<string, unknown> }, key: string): string | undefined {
  const value = (project.metadata["annotations"] as Record<string, unknown> | undefined)?.[key];
  return typeof value === "string" ? value : undefined;
}
