/**
 * # How sync.ts composes the features
 *
 * Each file beside this one brings one concern to every Project: its spec
 * fields, its children, what it asks `customize` for, its part of the status
 * and its reasons; what it is for opens its file. This file is the contract
 * between them and the core: 1. the features, in order; 2. what a feature
 * is given and gives back; 3. their schemas, merged; 4. their plans for one
 * Project, merged into what sync.ts reads at each line marked `// features`.
 * sync.ts reads as the seed without it: taking away the last feature takes
 * this file, and those lines, with it.
 *
 * Like sync.ts, it imports nothing from the web framework or the runtime.
 */
import * as v from "valibot";
import type {
  Child,
  ForeignNamespace,
  Namespace,
  ObservedChildren,
  ObservedNamespace,
  Project,
  Readiness,
  Reason,
  RelatedObjects,
  RelatedResourceRule,
} from "../sync.ts";
import { annotationLimits } from "./annotation-limits.ts"; // feature: annotation-limits
import { budget } from "./budget.ts"; // feature: budget
import { deletionProtection } from "./deletion-protection.ts"; // feature: deletion-protection
import { guardrails } from "./guardrails.ts"; // feature: guardrails
import { integrations } from "./integrations.ts"; // feature: integrations
import { members } from "./members.ts"; // feature: members
import { adoption } from "./adoption.ts"; // feature: adoption
import { shared } from "./shared.ts"; // feature: shared
import { environments } from "./environments.ts"; // feature: environments
// slot: imports

// ## 1. The features
//
// Their order is the order of their children in the answer, and of their
// problems in Ready. A feature may hold back its children until those of
// the features before it are in place. `npm run new-feature -- <name>` adds
// one, in every place a feature needs; `npm run take-away -- <name>` takes
// one away, with everything marked as its own across the repository
// (README's "Make it your own").
export const FEATURES: Feature[] = [
  budget, // feature: budget
  annotationLimits, // feature: annotation-limits
  deletionProtection, // feature: deletion-protection
  guardrails, // feature: guardrails
  shared, // feature: shared
  members, // feature: members
  integrations, // feature: integrations
  adoption, // feature: adoption
  environments, // feature: environments
  // slot: features
];

// ## 2. What a feature is given and gives back
//
// A feature imports nothing but these types, and the core's, so that none
// can reach into another, and each file can be read, or taken away, alone.
type Schemas = Record<string, v.GenericSchema>;
type Outputs<S extends Schemas> = { [K in keyof S]: v.InferOutput<S[K]> };

/** What the core observed of one Project, as every feature is given it. */
export type View = {
  project: Project;
  /** The Project's own Namespace, `proj-<name>`, and what was observed of it. */
  namespace: string;
  observed: ObservedNamespace | undefined;
  active: boolean;
  /** Every Namespace the Project owns, by name, as observed. */
  owned: Record<string, ObservedNamespace>;
  children: ObservedChildren;
  related: RelatedObjects;
  /** The Project is being deleted: the finalize hook asks what must happen before it goes. */
  finalizing: boolean;
};

export type FeatureInput<Spec extends Schemas, Groups extends Schemas, Related extends Schemas> = Omit<View, "children" | "related"> & {
  /** The spec fields the feature declared, as checked. */
  spec: Partial<Outputs<Spec>>;
  /** The observed children of the feature's own groups, by `<namespace>/<name>` or name. */
  children: { [G in keyof Groups]: Record<string, v.InferOutput<Groups[G]>> };
  related: { [R in keyof Related]?: Record<string, v.InferOutput<Related[R]>> };
  /** Whether every child that the features before this one guard with is observed. */
  earlierInPlace: boolean;
};

/** What is not yet as the feature asks: each object by kind and name, and how it should be. */
export type Waiting = { reason: Reason; notYet: [kind: string, name: string][]; toBe: string };

export type Plan = {
  /** What it asks for; a child of its groups that is observed and not here is deleted. */
  children: Child[];
  /** Of those, what must exist before the Project's Namespace is asked for (a claim that must be granted first): until each is observed, nothing in the Namespace is asked for either. */
  prerequisites?: Child[];
  /** What the features after it wait for, each until observed, before they ask for theirs: all its children, unless it says (one it cannot ask for yet, too). */
  guards?: Child[];
  /** Of those, the ones Metacontroller's merge cannot put right: left out of this answer, deleted, and made afresh on the next. */
  remake?: Child[];
  /** Labels of the Project's own Namespace; and of every Namespace it owns, those of older names too. */
  labels?: Record<string, string>;
  everyNamespaceLabels?: Record<string, string>;
  /** Annotations of the Project's own Namespace, besides the core's. */
  annotations?: Record<string, string>;
  status?: Record<string, unknown>;
  /** The spec breaks the feature's rules: reported before the Namespace's own state. */
  invalid?: Readiness;
  /** What the Project needs cannot be had (a setting that cannot be read, a limit reached): the Namespace is kept as observed, and not created. */
  unavailable?: Readiness;
  /** Why `remake` is not empty, where the person who caused it should hear it. */
  remaking?: Readiness;
  /** What stopped and waits for a person: reported in the feature's turn, before what it waits for. */
  failed?: Readiness;
  /** What it waits for; without it, the feature is never waited for. */
  waiting?: Waiting;
  /** What the feature does not ask for yet, until the features before it are in place. */
  heldBack?: string;
  /** What Ready's message says of it once everything is in place. */
  ready?: string;
  /** While finalizing: false until what it must do before the Project goes is done. */
  finalized?: boolean;
};

/** One of the Project's Namespaces, and the spec fields that the features working per Namespace read there instead of the Project's. */
export type Place = { namespace: string; spec: Record<string, unknown>; annotations?: Record<string, string> };

export type Feature<Spec extends Schemas = any, Groups extends Schemas = any, Related extends Schemas = any> = {
  spec: Spec;
  /**
   * Planned once for each of the Project's Namespaces, with that Namespace's
   * spec (what is inside a Namespace: limits, access, copies); otherwise
   * once for the Project, in its own Namespace (its place, its Jobs).
   */
  perNamespace?: boolean;
  /** Where a Namespace's own spec field does not simply replace the Project's: both, as that Namespace's. */
  inherit?: (project: Record<string, unknown>, own: Record<string, unknown>) => Record<string, unknown>;
  /**
   * The Project's Namespaces, where it has more than `proj-<name>`: `first`,
   * from the spec alone, the one sync.ts names its own; `all`, each with its
   * spec, that one among them. One feature at most says so.
   */
  namespaces?: { first: (project: Project) => string | undefined; all: (view: View) => Place[] };
  /** Its child groups, `<Kind>.<apiVersion>` to one observed child; the CompositeController owns each. */
  children: Groups;
  related: Related;
  /** Which of its children outside the Project's Namespace are the Project's (by group and key), and what they are. */
  elsewhere?: { owns: (project: string, group: string, key: string) => boolean; are: string };
  /** What it watches; once `settled` (the core's and every feature's), none of its `fleetWide` groups. */
  customize?: (project: Project, spec: Partial<Outputs<Spec>>, settled: boolean) => RelatedResourceRule[];
  /** Its related groups that Metacontroller finds by listing every object of the kind: the cost of a sync grows with the fleet. */
  fleetWide?: readonly string[];
  /** Its part of whether a Project is settled, from the status its plan wrote: needing none of its `fleetWide` groups. */
  settled?: (project: Project) => boolean;
  /** Why the API server would refuse the Namespace `sync` is about to ask for, if it would: one of its refusals. */
  refuse?: (namespace: Namespace) => Readiness | undefined;
  /** What else a person may do about a Namespace of the Project's name that is not its own: a sentence for the status. */
  foreign?: (project: Project, name: string, namespace: ForeignNamespace) => string | undefined;
  refusals: readonly Reason[];
  reasons: readonly Reason[];
  plan: (input: FeatureInput<Spec, Groups, Related>) => Plan;
};

// ## 3. Their schemas
//
// Each feature checks its own fields, loosely, as the core does. Two
// features may read the same field or group (a setting both depend on, say).
// What arrives must then pass both schemas, and both are given what the
// first makes of it: a pipe keeps the first one's optional or required.
// The features here agree on every field they share, so sync.test.ts
// combines features of its own, which do not.
export const entriesOf = (part: (feature: Feature) => Schemas, features: readonly Feature[] = FEATURES) => {
  const entries: Schemas = {};
  for (const [key, schema] of features.flatMap((feature) => Object.entries(part(feature)))) {
    const first = entries[key];
    entries[key] = first ? v.pipe(first, v.check((value) => v.is(schema, value))) : schema;
  }
  return entries;
};

const byName = (entries: Schemas, optional = false) =>
  Object.fromEntries(Object.entries(entries).map(([group, one]) => [group, optional ? v.optional(v.record(v.string(), one)) : v.record(v.string(), one)]));

// The order in which the child groups are read, and k8s.yaml lists them as
// child resources, is not the features': two features may declare one group
// (ServiceAccounts, say) with a third between them, which would move the
// group whenever the first is taken away. Custom resources come first (a
// group with a dot, outside k8s.io: the install's own claims), then
// Kubernetes' kinds, each by kind, so that no feature kept or taken away,
// and no rename, moves another's.
const kubernetes = (apiVersion: string) => !apiVersion.includes("/") || !apiVersion.split("/")[0]!.includes(".") || apiVersion.split("/")[0]!.endsWith(".k8s.io");
export const readOrder = (a: string, b: string) => {
  const key = (group: string) => `${kubernetes(group.slice(group.indexOf(".") + 1)) ? 1 : 0} ${group.slice(0, group.indexOf(".")).toLowerCase()}`;
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
};
const inReadOrder = (entries: Schemas): Schemas => Object.fromEntries(Object.entries(entries).sort(([a], [b]) => readOrder(a, b)));

/** The spec fields, child groups and related groups of every feature, as the core's schemas spread them. */
export const FEATURE_SCHEMAS = {
  spec: entriesOf((feature) => feature.spec),
  children: byName(inReadOrder(entriesOf((feature) => feature.children))),
  related: byName(entriesOf((feature) => feature.related), true),
};
export const FEATURE_REFUSALS = FEATURES.flatMap((feature) => feature.refusals);
export const FEATURE_FLEET_WIDE = FEATURES.flatMap((feature) => feature.fleetWide ?? []);
/** Whether every feature finds the Project settled; one without a say does. */
export const featuresSettled = (project: Project) => FEATURES.every((feature) => feature.settled?.(project) ?? true);
export const FEATURE_REASONS = FEATURES.flatMap((feature) => feature.reasons);

/** What the features watch for one Project; features that read the same object ask for it once. */
export function customizeFeatures(project: Project, settled: boolean): RelatedResourceRule[] {
  // Each Namespace's spec as declared: those the Project keeps undeclared have its own.
  const places = FEATURES.flatMap((feature) => feature.namespaces?.all(unobserved(project)) ?? []);
  const rules = FEATURES.flatMap((feature) => [undefined, ...places].flatMap((place) => feature.customize?.(project, specIn(feature, project, place), settled) ?? []));
  return [...new Map(rules.map((rule) => [JSON.stringify(rule), rule])).values()];
}

/** The spec a feature plans one Namespace by: the Project's, and for a feature that works per Namespace, that Namespace's own fields over it. */
function specIn(feature: Feature, project: Project, place: Place | undefined): Record<string, unknown> {
  const spec = { ...(project.spec ?? {}) };
  if (!feature.perNamespace || !place) return spec;
  return { ...spec, ...place.spec, ...feature.inherit?.(spec, place.spec) };
}

/** The Project's own Namespace, where it has more than one: the first that a feature names, or none. */
export const namespaceOf = (project: Project) => FEATURES.map((feature) => feature.namespaces?.first(project)).find(Boolean);

// customize sees the Project alone: nothing observed yet.
const unobserved = (project: Project): View => ({
  project,
  namespace: namespaceOf(project) ?? "",
  observed: undefined,
  active: false,
  owned: {},
  children: {} as ObservedChildren,
  related: {},
  finalizing: false,
});

// ## 4. Their plans for one Project
//
// Each feature plans in turn, seeing whether what the ones before it guard
// is there yet. What sync.ts needs before it knows whether it asks for the
// Namespace is read off the plans at once; the rest, `settle`, once it does.
export function planFeatures(view: View) {
  const { project, namespace: name, children } = view;
  const places = FEATURES.flatMap((feature) => feature.namespaces?.all(view) ?? []);
  const own = places.find((place) => place.namespace === name);
  const others = places.filter((place) => place.namespace !== name);
  const viewOf = (place: Place): View => {
    const observed = view.owned[place.namespace];
    return { ...view, namespace: place.namespace, observed, active: observed?.status?.phase === "Active" };
  };
  const plans: Plan[] = [];
  // Per other Namespace, the plans of the features that work per Namespace, by feature.
  const elsewhere = new Map<string, Plan[]>(others.map((place) => [place.namespace, []]));
  for (const feature of FEATURES) {
    const guarding = plans.flatMap((plan) => plan.guards ?? plan.children);
    const earlierInPlace = guarding.every((child) => observedChild(children, child));
    const first = feature.plan({ ...view, spec: specIn(feature, project, own), earlierInPlace });
    const more = feature.perNamespace ? others.map((place) => feature.plan({ ...viewOf(place), spec: specIn(feature, project, place), earlierInPlace })) : [];
    more.forEach((plan, at) => elsewhere.get(others[at]!.namespace)!.push(plan));
    plans.push(more.length ? merged(first, more) : first);
  }
  const pendingPrerequisite = plans.flatMap((plan) => plan.prerequisites ?? []).find((child) => !observedChild(children, child));

  return {
    /** The Project's other Namespaces, each with the labels and annotations of the features planned there. */
    elsewhere: Object.fromEntries(
      others.map((place) => {
        const there = elsewhere.get(place.namespace)!;
        const labels = Object.assign({}, ...there.map((plan) => plan.labels)) as Record<string, string>;
        const annotations = Object.assign({}, ...there.map((plan) => plan.annotations), place.annotations) as Record<string, string>;
        return [place.namespace, { labels, annotations }];
      }),
    ),
    everyNamespaceLabels: Object.assign({}, ...plans.map((plan) => plan.everyNamespaceLabels)) as Record<string, string>,
    labels: Object.assign({}, ...plans.map((plan) => plan.labels)) as Record<string, string>,
    annotations: Object.assign({}, ...plans.map((plan) => plan.annotations)) as Record<string, string>,
    refuse: (namespace: Namespace) => FEATURES.map((feature) => feature.refuse?.(namespace)).find(Boolean),
    invalid: plans.find((plan) => plan.invalid)?.invalid,
    unavailable: plans.find((plan) => plan.unavailable)?.unavailable,
    /** A prerequisite not yet observed holds the Namespace back: the features' only say in whether it is asked for. */
    pendingPrerequisite,
    aboutForeign: (namespace: ForeignNamespace) =>
      FEATURES.flatMap((feature) => feature.foreign?.(project, name, namespace) ?? []).map((sentence) => ` ${sentence}`).join(""),
    status: Object.assign({}, ...plans.map((plan) => plan.status)) as Record<string, unknown>,
    finalized: plans.every((plan) => plan.finalized !== false),
    settle: (namespaceAsked: boolean) => settle(view, plans, namespaceAsked, pendingPrerequisite !== undefined, others.map(viewOf)),
  };
}

// A feature planned in several Namespaces is one plan: all it asks for,
// waits for and reports, the first problem first; its status, and what it
// asks for under one name in each (a role on the Project), the own
// Namespace's.
function merged(first: Plan, more: Plan[]): Plan {
  const all = [first, ...more];
  const unique = <T>(items: T[], key: (item: T) => string) => {
    const seen = new Set<string>();
    return items.filter((item) => !seen.has(key(item)) && !!seen.add(key(item)));
  };
  const byKey = (child: Child) => `${child.kind}.${child.apiVersion} ${keyOf(child)}`;
  const each = (part: (plan: Plan) => Child[] | undefined) => (all.some((plan) => part(plan)) ? unique(all.flatMap((plan) => part(plan) ?? []), byKey) : undefined);
  const firstOf = <K extends keyof Plan>(key: K) => all.find((plan) => plan[key])?.[key];
  return {
    ...first,
    children: unique(all.flatMap((plan) => plan.children), byKey),
    prerequisites: each((plan) => plan.prerequisites),
    guards: all.some((plan) => plan.guards) ? unique(all.flatMap((plan) => plan.guards ?? plan.children), byKey) : undefined,
    remake: each((plan) => plan.remake),
    invalid: firstOf("invalid"),
    unavailable: firstOf("unavailable"),
    remaking: firstOf("remaking"),
    failed: firstOf("failed"),
    waiting: first.waiting && { ...first.waiting, notYet: unique(all.flatMap((plan) => plan.waiting?.notYet ?? []), (pair) => pair.join(" ")) },
    heldBack: firstOf("heldBack"),
    finalized: all.some((plan) => plan.finalized === false) ? false : first.finalized,
  };
}

// What goes into the Namespace can only be made once it exists;
// Metacontroller creates an answer's children group by group in the order
// of (API group, version, kind), so what sorts after Namespace comes in the
// answer that asks for it, and what sorts before it (a ConfigMap, say) in the
// next. Nothing is asked for that could only fail, and a child that exists
// is never dropped for it.
function settle({ project, namespace: name, observed, active, children }: View, plans: Plan[], namespaceAsked: boolean, prerequisitesPending: boolean, elsewhere: View[]) {
  const places = new Map<string | undefined, Pick<View, "observed" | "active">>([[name, { observed, active }], ...elsewhere.map((other): [string, View] => [other.namespace, other])]);
  const askable = (child: Child) => {
    const place = places.get(child.metadata.namespace);
    return !place || place.active || observedChild(children, child) !== undefined || (namespaceAsked && !place.observed && appliedAfterNamespace(child));
  };
  const remade = new Set(plans.flatMap((plan) => plan.remake ?? []));
  const asked = plans.flatMap((plan) => plan.children).filter((child) => !remade.has(child) && askable(child));

  // While a Project's Namespace is first filled, the status says so once,
  // not at each of the rounds that takes (each status written costs
  // Metacontroller a GET and a PUT): from its first sync until all it asks
  // for exists.
  const previously = project.status?.conditions?.find((condition) => condition.type === "Ready")?.reason;
  const missing = prerequisitesPending || asked.some((child) => !observedChild(children, child)) || plans.some((plan) => plan.heldBack);
  // Two features may share a group (RoleBindings, say): what either asks for is no feature's left over.
  const anyAsked = new Set(plans.flatMap((plan) => plan.children).map((child) => `${child.kind}.${child.apiVersion} ${keyOf(child)}`));
  const progress = FEATURES.reduce<Readiness | undefined>((found, _, index) => found ?? progressOf(name, plans, index, children, anyAsked), undefined);
  return {
    children: asked,
    strays: removingStrays(name, strays(project, [name, ...elsewhere.map((other) => other.namespace)], children)),
    /** The core's WaitingForNamespace holds until all the features ask for exists. */
    // A feature that waits for a person is said at once: filling would never end.
    filling: missing && !plans.some((plan) => plan.failed) && (previously === undefined || previously === "WaitingForNamespace"),
    progress,
    ready: plans.map((plan) => plan.ready ?? "").join(""),
  };
}

// Metacontroller claims as this Project's child whatever carries its label,
// wherever it is. What lies outside the places its children belong (its
// Namespaces, and where the features say) is never
// asked for, and so deleted: nothing outside its own Namespace becomes the
// Project's (k8s.yaml's ownership guard keeps anyone but Metacontroller
// from labelling one; this holds if one got in before it).
function strays(project: Project, names: string[], children: ObservedChildren): [kind: string, name: string][] {
  return [...DECLARING.keys()].flatMap((group) =>
    Object.keys(children[group] ?? {})
      .filter((key) => !names.some((name) => key.startsWith(`${name}/`)))
      .filter((key) => !FEATURES.some((feature) => group in feature.children && feature.elsewhere?.owns(project.metadata.name, group, key)))
      .map((key): [string, string] => [kindOf(group), key]),
  );
}

function removingStrays(namespace: string, found: [kind: string, name: string][]): Readiness | undefined {
  if (found.length === 0) return undefined;
  const places = [`Namespace ${namespace}`, ...FEATURES.flatMap((feature) => (feature.elsewhere ? [feature.elsewhere.are] : []))];
  const where = places.length > 2 ? `${places.slice(0, -1).join(", ")}, and ${places.at(-1)}` : places.join(" and ");
  return {
    status: "False",
    reason: "RemovingStrayChildren",
    message: `${byKind(found)} carry this Project's controller-uid label outside ${where}, so they are not its children: Metacontroller deletes them.`,
  };
}

/** Each group of children, and the features that declare it, by their place in FEATURES. */
const DECLARING = new Map<string, number[]>();
FEATURES.forEach((feature, at) => Object.keys(feature.children).forEach((group) => DECLARING.set(group, [...(DECLARING.get(group) ?? []), at])));

// A feature is in place when it has nothing to remake, everything it asks
// for is as it asks, and nothing is left of its kinds that it no longer asks
// for. What later features hold back until then is said with it.
function progressOf(name: string, plans: Plan[], index: number, children: ObservedChildren, asked: Set<string>): Readiness | undefined {
  const plan = plans[index]!;
  const heldBack = plans.slice(index + 1).flatMap((later) => (later.heldBack ? [`; ${later.heldBack}`] : []));
  // What waits for a person says what it holds back, as a wait does.
  if (plan.failed && !plan.remaking) return heldBack.length ? { ...plan.failed, message: `${plan.failed.message.replace(/\.$/, "")}${heldBack.join("")}.` } : plan.failed;
  if (plan.remaking || !plan.waiting) return plan.remaking;
  const { reason, notYet, toBe } = plan.waiting;
  // A group two features share is left over once: in the turn of the first
  // of them that asks for anything of it, or of the first, if none does.
  const asksOf = (at: number, group: string) => plans[at]!.children.some((child) => `${child.kind}.${child.apiVersion}` === group);
  const reportsFor = (group: string) => DECLARING.get(group)!.find((at) => asksOf(at, group)) ?? DECLARING.get(group)![0];
  const leftOver = Object.keys(FEATURES[index]!.children)
    .filter((group) => reportsFor(group) === index)
    .flatMap((group) =>
      Object.keys(children[group] ?? {})
        .filter((key) => !asked.has(`${group} ${key}`))
        .map((key): [string, string] => [kindOf(group), key.slice(key.indexOf("/") + 1)]),
    );
  if (notYet.length === 0 && leftOver.length === 0) return undefined;
  const waits = [...(notYet.length ? [`${byKind(notYet)} to be ${toBe}`] : []), ...(leftOver.length ? [`${byKind(leftOver)} to be removed`] : [])];
  return { status: "False", reason, message: `Namespace ${name} is Active; waiting for ${waits.join(", and ")}${heldBack.join("")}.` };
}

// Metacontroller 4.17.2 applies an answer's children sorted by API group,
// then version, then kind (the core group "" first).
function appliedAfterNamespace({ apiVersion, kind }: Child): boolean {
  return apiVersion !== "v1" || kind > "Namespace";
}

/** `RoleBinding` from `RoleBinding.rbac.authorization.k8s.io/v1`. */
const kindOf = (group: string) => group.slice(0, group.indexOf("."));

/** Metacontroller keys namespaced children of this cluster-scoped parent `<namespace>/<name>`, cluster-scoped ones by name. */
const keyOf = ({ metadata }: Child) => (metadata.namespace ? `${metadata.namespace}/${metadata.name}` : metadata.name);

function observedChild(children: ObservedChildren, child: Child) {
  return children[`${child.kind}.${child.apiVersion}`]?.[keyOf(child)];
}

/** "RoleBinding a, b; ClusterRole c": each kind named once, in the order first met. */
function byKind(objects: [kind: string, name: string][]): string {
  const names = new Map<string, string[]>();
  for (const [kind, name] of objects) names.set(kind, [...(names.get(kind) ?? []), name]);
  return [...names].map(([kind, list]) => `${kind} ${list.join(", ")}`).join("; ");
}
