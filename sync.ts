/**
 * # The Project controller's sync hook
 *
 * A `Project` (projects.agrrh.com/v1, cluster-scoped) should always come with
 * a Namespace `proj-<project name>` that carries the Project's description and
 * license as annotations. Metacontroller runs the control loop: whenever a
 * Project or one of its children changes, it POSTs what it observed to this
 * hook and gets back what should exist; it creates, updates and deletes the
 * children until the cluster matches, and writes our status onto the Project.
 *
 * This file is that seed and the frame around it, top to bottom: 1. the
 * names, and the spec fields the Namespace's annotations come from; 2. the
 * features it composes, each a file in features/; 3. the request schema;
 * 4. the types of the answers, and of what a feature gives and gets; 5. the
 * rules of the Namespace; 6. `customize`; 7. `sync`, first
 * the status from what was observed, then the desired children; 8.
 * `finalize`, the same once the Project is deleted. It imports
 * nothing from the web framework or the runtime, so it can be tested, and
 * reused, on its own.
 */
import * as v from "valibot";
import { annotationLimits } from "./features/annotation-limits.ts"; // feature: annotation-limits
import { budget } from "./features/budget.ts"; // feature: budget
import { deletionProtection } from "./features/deletion-protection.ts"; // feature: deletion-protection
import { guardrails } from "./features/guardrails.ts"; // feature: guardrails
import { integrations } from "./features/integrations.ts"; // feature: integrations
import { members } from "./features/members.ts"; // feature: members
import { adoption } from "./features/adoption.ts"; // feature: adoption
import { shared } from "./features/shared.ts"; // feature: shared
// slot: imports

// ## 1. The names
//
// Every name this controller owns, once: a copy for another resource starts
// here. k8s.yaml spells the same names for the cluster, and manifest.test.ts
// proves that the two agree; the tests and scripts take them from here.
export const GROUP = "agrrh.com";
export const VERSION = "v1";
export const API_VERSION = `${GROUP}/${VERSION}` as const;
export const PARENT = { kind: "Project", plural: "projects", singular: "project" } as const;
/** A Project `x` owns the Namespace `proj-x`. */
export const NAMESPACE_PREFIX = "proj-";
// Every Namespace of a Project carries the Project's name under this label:
// k8s.yaml's guards find a Project's Namespaces by it, and so does a person
// (`kubectl get namespaces -l agrrh.com/project=<name>`). Written out, not
// built from GROUP, so that a copy may put it under a domain of its own.
export const PROJECT_LABEL = "agrrh.com/project";

// The spec fields the core itself reads, each with its default: every one
// becomes the Namespace's annotation of the same name, and the only ones
// `sync` ever changes there. k8s.yaml's CRD declares the same fields, with
// the same defaults (admission.test.ts proves it); a copy that wants other
// annotations, or none, changes this list and the CRD alone.
export const NAMESPACE_ANNOTATIONS = { description: "", license: "WTFPL" } as const;

// ## 2. The features
//
// Each one brings a concern of its own to every Project: its spec fields, its
// children, what it asks `customize` for, its part of the status and its
// reasons; what it is for opens its file. Their order is the order of their
// children in the answer, and of their problems in Ready. A feature may hold
// back its children until those of the features before it are in place.
// `npm run new-feature -- <name>` adds one, in every place a feature needs;
// `npm run take-away -- <name>` takes one away, with everything marked as
// its own across the repository (README's "Make it your own").
export const FEATURES: Feature[] = [
  budget, // feature: budget
  annotationLimits, // feature: annotation-limits
  deletionProtection, // feature: deletion-protection
  guardrails, // feature: guardrails
  shared, // feature: shared
  members, // feature: members
  integrations, // feature: integrations
  adoption, // feature: adoption
  // slot: features
];

// ## 3. The request
//
// Kubernetes omits empty fields (a Project created without `spec`, an object
// without `status`) and Metacontroller adds fields over time, so every object
// here is loose: unknown keys pass through untouched, and only the fields that
// `sync` reads are checked. Each feature checks its own fields the same way.
// Two features may read the same field or group (the same spec field, say).
// What arrives must then pass both schemas, and both are given what the
// first makes of it: a pipe keeps the first one's optional or required.
// The features here agree on every field they share, so sync.test.ts
// combines features of its own, which do not.
export const entriesOf = (part: (feature: Feature) => Record<string, v.GenericSchema>, features: readonly Feature[] = FEATURES) => {
  const entries: Record<string, v.GenericSchema> = {};
  for (const [key, schema] of features.flatMap((feature) => Object.entries(part(feature)))) {
    const first = entries[key];
    entries[key] = first ? v.pipe(first, v.check((value) => v.is(schema, value))) : schema;
  }
  return entries;
};

const ProjectSpec = v.looseObject({
  ...Object.fromEntries(Object.keys(NAMESPACE_ANNOTATIONS).map((field) => [field, v.nullish(v.string())])),
  ...entriesOf((feature) => feature.spec),
});

// The status is our own previous answer, read back only to keep a condition's
// `lastTransitionTime` while its status holds. If it cannot be read we start
// afresh rather than refuse the request: a refusal would stall the Project
// until somebody repaired its status by hand.
const PreviousStatus = v.fallback(
  v.nullish(
    v.looseObject({
      conditions: v.nullish(v.array(v.looseObject({ type: v.string(), status: v.string(), lastTransitionTime: v.string() }))),
    }),
  ),
  undefined,
);

export const Project = v.looseObject({
  metadata: v.looseObject({
    name: v.pipe(v.string(), v.nonEmpty("a Project needs a name")),
    uid: v.optional(v.string()),
    generation: v.optional(v.number()),
  }),
  spec: v.nullish(ProjectSpec),
  status: PreviousStatus,
});

// The Project's own Namespace is read for its labels and annotations too:
// when the spec cannot be carried out, they are kept as they are. Another
// Namespace of that name is read for who owns it, or claims it by label, so
// that the status can name them.
const NamespaceStatus = v.nullish(v.looseObject({ phase: v.nullish(v.string()) }));
const ObservedNamespace = v.looseObject({
  metadata: v.optional(
    v.looseObject({
      labels: v.nullish(v.record(v.string(), v.string())),
      annotations: v.nullish(v.record(v.string(), v.string())),
    }),
  ),
  status: NamespaceStatus,
});
const OwnerReference = v.looseObject({ kind: v.string(), name: v.string(), controller: v.nullish(v.boolean()) });
const RelatedNamespace = v.looseObject({
  metadata: v.looseObject({ labels: v.nullish(v.record(v.string(), v.string())), ownerReferences: v.nullish(v.array(OwnerReference)) }),
  status: NamespaceStatus,
});

// Children arrive grouped by `<Kind>.<apiVersion>`, then by name; namespaced
// children of this cluster-scoped parent by `<namespace>/<name>`.
// Metacontroller sends a key for every child resource the CompositeController
// declares, even when it is empty, so a missing group means the hook is wired
// to the wrong controller: better refused than answered.
export const NAMESPACES = "Namespace.v1";
const ObjectsByName = v.record(v.string(), v.looseObject({}));
const byName = (entries: Record<string, v.GenericSchema>, optional = false) =>
  Object.fromEntries(Object.entries(entries).map(([group, one]) => [group, optional ? v.optional(v.record(v.string(), one)) : v.record(v.string(), one)]));
export const ObservedChildren = v.objectWithRest(
  { [NAMESPACES]: v.record(v.string(), ObservedNamespace), ...byName(entriesOf((feature) => feature.children)) },
  ObjectsByName,
);

// Related objects arrive grouped the same way. Each group is there, empty or
// not, whenever the customize hook asked for it, which it does for every
// Project whose name can be a Namespace's (part 6). Without them a foreign
// Namespace would look like one not created yet, so that is refused.
const RELATED = { [NAMESPACES]: RelatedNamespace, ...entriesOf((feature) => feature.related) };
export const RelatedObjects = v.objectWithRest(
  { [NAMESPACES]: v.optional(v.record(v.string(), RelatedNamespace)), ...byName(entriesOf((feature) => feature.related), true) },
  ObjectsByName,
);
const RELATED_KINDS = Object.keys(RELATED).map((group) => `the ${group.slice(0, group.indexOf("."))}`).join(" and ");

// Metacontroller also sends `controller` and `finalizing`; this controller
// reads neither, so they pass unchecked like any unknown key.
export const SyncRequest = v.pipe(
  v.looseObject({ parent: Project, children: ObservedChildren, related: RelatedObjects }),
  v.forward(
    v.check(
      ({ parent, related }) =>
        Object.keys(RELATED).every((group) => related[group] !== undefined) ||
        !isValidNamespaceName(namespaceNameFor(parent.metadata.name)),
      `expected ${RELATED_KINDS} the customize hook asks for: is hooks.customize declared on the CompositeController?`,
    ),
    ["related"],
  ),
);

// The customize hook is sent the Project alone, with the controller.
export const CustomizeRequest = v.looseObject({ parent: Project });

// ## 4. The types
//
// The request types come from the schemas, so they cannot drift apart. The
// answer is ours to build, so its types are written out.
export type SyncRequest = v.InferOutput<typeof SyncRequest>;
export type Project = v.InferOutput<typeof Project>;
export type ObservedChildren = v.InferOutput<typeof ObservedChildren>;
export type RelatedObjects = v.InferOutput<typeof RelatedObjects>;
export type ObservedNamespace = v.InferOutput<typeof ObservedNamespace>;
/** A Namespace of the Project's name among the related objects: someone else's, or nobody's. */
export type ForeignNamespace = v.InferOutput<typeof RelatedNamespace>;

type NamespaceAnnotations = Record<keyof typeof NAMESPACE_ANNOTATIONS, string>;

export type Namespace = {
  apiVersion: "v1";
  kind: "Namespace";
  metadata: {
    name: string;
    /** The Project's name under PROJECT_LABEL, then what the features add. */
    labels: Record<string, string>;
    /** Each of NAMESPACE_ANNOTATIONS, as the spec says; or, when the spec cannot be carried out, those observed. */
    annotations: Partial<NamespaceAnnotations>;
  };
};

/** Any other child: Metacontroller files it by kind and apiVersion, then by `<namespace>/<name>` or name. */
export type Child = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };

// Every answer where `sync` does not do what the spec asks until a person
// acts; the webhook logs each with the Project's name. None of them ever
// costs the Project a Namespace it has (see the invariant in part 7).
export const REFUSALS = ["InvalidName", "NamespaceConflict", ...FEATURES.flatMap((feature) => feature.refusals)];
/** Every reason the Ready condition can give; docs/operating.md explains each. */
export const REASONS = [
  ...REFUSALS,
  "WaitingForNamespace",
  "NamespaceTerminating",
  "NamespaceNotActive",
  "RemovingStrayChildren",
  ...FEATURES.flatMap((feature) => feature.reasons),
  "NamespaceActive",
];
export type Reason = string;

/** The Kubernetes condition shape, as `kubectl wait --for=condition=Ready` reads it. */
export type ReadyCondition = {
  type: "Ready";
  status: "True" | "False";
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: Reason;
  message: string;
};
export type Readiness = Pick<ReadyCondition, "status" | "reason" | "message">;

export type ProjectStatus = {
  /** The Namespace this Project has, or is about to get; absent when it has none and none is coming (its name cannot be one, it is someone else's, or what the Project needs cannot be had). */
  namespace?: string;
  /** Then each feature's fields, in the features' order. */
  [featureField: string]: unknown;
  observedGeneration?: number;
  conditions: ReadyCondition[];
};

/** Exactly the keys Metacontroller reads: with hook v2 it rejects any other. */
export type SyncResponse = {
  status: ProjectStatus;
  /** The Namespaces first, the Project's own leading, then each feature's children. */
  children: (Namespace | Child)[];
  /** The finalize hook's alone: true lets the Project go. */
  finalized?: boolean;
};

/** Objects picked by name, or by their labels as a Kubernetes label selector picks them. */
export type LabelSelector = {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }[];
};
/** `namespace` keeps a rule to one namespace's objects; without it, a label selector picks them in every namespace. */
export type RelatedResourceRule = { apiVersion: string; resource: string; namespace?: string } & ({ names: string[] } | { labelSelector: LabelSelector });
export type CustomizeResponse = { relatedResources: RelatedResourceRule[] };

// What a feature is given and gives back. A feature imports nothing but
// these types from this file, so that none can reach into another, and each
// file can be read, or taken away, alone.
type Schemas = Record<string, v.GenericSchema>;
type Outputs<S extends Schemas> = { [K in keyof S]: v.InferOutput<S[K]> };

export type FeatureInput<Spec extends Schemas, Groups extends Schemas, Related extends Schemas> = {
  project: Project;
  /** The spec fields the feature declared, as checked. */
  spec: Partial<Outputs<Spec>>;
  /** The Project's own Namespace, `proj-<name>`, and what was observed of it. */
  namespace: string;
  observed: ObservedNamespace | undefined;
  active: boolean;
  /** The observed children of the feature's own groups, by `<namespace>/<name>` or name. */
  children: { [G in keyof Groups]: Record<string, v.InferOutput<Groups[G]>> };
  related: { [R in keyof Related]?: Record<string, v.InferOutput<Related[R]>> };
  /** Whether every child that the features before this one guard with is observed. */
  earlierInPlace: boolean;
  /** The Project is being deleted: the finalize hook asks what must happen before it goes. */
  finalizing: boolean;
};

/** What is not yet as the feature asks: each object by kind and name, and how it should be. */
export type Waiting = { reason: Reason; notYet: [kind: string, name: string][]; toBe: string };

export type Plan = {
  /** What it asks for; a child of its groups that is observed and not here is deleted. */
  children: Child[];
  /** Of those, what must exist before the Project's Namespace is asked for (a place the API server hands out once): until each is observed, nothing in the Namespace is asked for either. */
  prerequisites?: Child[];
  /** Of those, what the features after it wait for before they ask for theirs; all of them, unless it says. */
  guards?: Child[];
  /** Of those, the ones Metacontroller's merge cannot put right: left out of this answer, deleted, and made afresh on the next. */
  remake?: Child[];
  /** Labels of the Project's own Namespace; and of every Namespace it owns, those of older names too. */
  labels?: Record<string, string>;
  everyNamespaceLabels?: Record<string, string>;
  status?: Record<string, unknown>;
  /** The spec breaks the feature's rules: reported before the Namespace's own state. */
  invalid?: Readiness;
  /** What the Project needs cannot be had (an object that cannot be read, a limit reached): the Namespace is kept as observed, and not created. */
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

export type Feature<Spec extends Schemas = any, Groups extends Schemas = any, Related extends Schemas = any> = {
  spec: Spec;
  /** Its child groups, `<Kind>.<apiVersion>` to one observed child; the CompositeController owns each. */
  children: Groups;
  related: Related;
  /** Which of its children outside the Project's Namespace are the Project's (by group and key), and what they are. */
  elsewhere?: { owns: (project: string, group: string, key: string) => boolean; are: string };
  customize?: (project: Project, spec: Partial<Outputs<Spec>>) => RelatedResourceRule[];
  /** Why the API server would refuse the Namespace `sync` is about to ask for, if it would: one of its refusals. */
  refuse?: (namespace: Namespace) => Readiness | undefined;
  /** What else a person may do about a Namespace of the Project's name that is not its own: a sentence for the status. */
  foreign?: (project: Project, name: string, namespace: ForeignNamespace) => string | undefined;
  refusals: readonly Reason[];
  reasons: readonly Reason[];
  plan: (input: FeatureInput<Spec, Groups, Related>) => Plan;
};

// ## 5. The rules

export function namespaceNameFor(projectName: string): string {
  return NAMESPACE_PREFIX + projectName;
}

// A Namespace name is a DNS-1123 label. Project names are looser (dots are
// allowed, and up to 253 characters), so not every Project can have its
// Namespace. The CRD refuses such names at admission, with this same
// sentence; this check is for the Projects that got in before it, or where
// the CRD was not updated.
const NAMESPACE_NAME_MAX_LENGTH = 63;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const PROJECT_NAME_MAX_LENGTH = NAMESPACE_NAME_MAX_LENGTH - NAMESPACE_PREFIX.length;
export const PROJECT_NAME_RULE =
  `a Project name must be at most ${PROJECT_NAME_MAX_LENGTH} lowercase letters, digits or '-', ` +
  `starting and ending with a letter or digit, so that ${NAMESPACE_PREFIX}<name> can be a Namespace name`;

export function isValidNamespaceName(name: string): boolean {
  return name.length <= NAMESPACE_NAME_MAX_LENGTH && DNS1123_LABEL.test(name);
}

// What Metacontroller keeps on each child it applies: a JSON copy of what it
// applied, under this annotation.
export const LAST_APPLIED_ANNOTATION = "metacontroller.k8s.io/last-applied-configuration";

// ## 6. customize
//
// A Namespace that someone else created is not among the Project's children,
// so `sync` would see nothing there and Metacontroller's create would fail
// quietly, over and over. Asking for the Namespace by name puts it in every
// sync request's `related`, whoever owns it, and makes Metacontroller watch it:
// when it goes away, the Project is synced again and gets its own. Features
// add what they watch. Metacontroller caches this answer per Project
// generation, so it may depend on the Project alone. A name that cannot be a
// Namespace's is not asked for: `sync` refuses such a Project anyway. No rule
// at all, not an empty `names`, which Metacontroller would read as "every
// Namespace".

export function customize(parent: Project): CustomizeResponse {
  const name = namespaceNameFor(parent.metadata.name);
  if (!isValidNamespaceName(name)) return { relatedResources: [] };
  const rules = [
    { apiVersion: "v1", resource: "namespaces", names: [name] },
    ...FEATURES.flatMap((feature) => feature.customize?.(parent, parent.spec ?? {}) ?? []),
  ];
  // Features that read the same object ask for it once.
  const unique = new Map(rules.map((rule) => [JSON.stringify(rule), rule]));
  return { relatedResources: [...unique.values()] };
}

// ## 7. sync

/**
 * The desired state for one Project, given what Metacontroller observed.
 *
 * Pure: the same observation always gives the same answer (`now` only stamps a
 * condition whose status changed), and the input is never modified. It returns
 * the whole desired state every time; deciding whether to create, update or
 * delete is Metacontroller's job.
 */
export function sync(
  parent: Project,
  children: ObservedChildren,
  related: RelatedObjects,
  now: () => Date = () => new Date(),
): SyncResponse {
  const { status, children: desired } = desiredState(parent, children, related, now, false);
  return { status, children: desired };
}

function desiredState(parent: Project, children: ObservedChildren, related: RelatedObjects, now: () => Date, finalizing: boolean) {
  const name = namespaceNameFor(parent.metadata.name);
  const observed = children[NAMESPACES];
  const active = observed[name]?.status?.phase === "Active";

  // Each feature plans in turn, seeing whether what the ones before it
  // guard is there yet.
  const plans: Plan[] = [];
  for (const feature of FEATURES) {
    const guarding = plans.flatMap((plan) => plan.guards ?? plan.children);
    const input = { project: parent, spec: parent.spec ?? {}, namespace: name, observed: observed[name], active, children, related, finalizing };
    plans.push(feature.plan({ ...input, earlierInPlace: guarding.every((child) => observedChild(children, child)) }));
  }
  const everyNamespaceLabels = { [PROJECT_LABEL]: parent.metadata.name, ...Object.assign({}, ...plans.map((plan) => plan.everyNamespaceLabels)) };
  const wanted: Namespace = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      labels: { ...everyNamespaceLabels, ...Object.assign({}, ...plans.map((plan) => plan.labels)) },
      annotations: annotationsFor(parent),
    },
  };
  const refusal = whyTheApiServerWouldRefuse(wanted);
  // The same name among the related objects but not among the children is a
  // Namespace someone else made: Metacontroller would never adopt it, and we
  // never ask it to change or delete it.
  const foreign = observed[name] ? undefined : related[NAMESPACES]?.[name];
  // Metacontroller claims as this Project's child whatever carries its
  // label, wherever it is. What lies outside the places its children belong
  // is never asked for, and so deleted: nothing outside its own Namespace
  // becomes the Project's (k8s.yaml's ownership guard keeps anyone but
  // Metacontroller from labelling one; this holds if one got in before it).
  const strays = [...new Set(FEATURES.flatMap((feature) => Object.keys(feature.children)))].flatMap((group) =>
    Object.keys(children[group] ?? {})
      .filter((key) => !key.startsWith(`${name}/`))
      .filter((key) => !FEATURES.some((feature) => group in feature.children && feature.elsewhere?.owns(parent.metadata.name, group, key)))
      .map((key): [string, string] => [kindOf(group), key]),
  );

  // The Namespace is asked for when the spec can be carried out and what
  // must come first (a place the API server hands out once) is there. What goes into it can
  // only be made once it exists; Metacontroller creates an answer's children
  // group by group in the order of (API group, version, kind), so what
  // sorts after Namespace comes in the answer that asks for it, and what
  // sorts before it (a core-group kind) in the next. Nothing is asked for that
  // could only fail, and a child that exists is never dropped for it.
  const carriedOut = !refusal && !foreign && !plans.some((plan) => plan.unavailable);
  const prerequisitesPending = plans.flatMap((plan) => plan.prerequisites ?? []).some((child) => !observedChild(children, child));
  const namespaceAsked = carriedOut && !prerequisitesPending;
  const askable = (child: Child) =>
    child.metadata.namespace !== name || active || observedChild(children, child) !== undefined || (namespaceAsked && !observed[name] && appliedAfterNamespace(child));
  const remade = new Set(plans.flatMap((plan) => plan.remake ?? []));
  const featureChildren = plans.flatMap((plan) => plan.children).filter((child) => !remade.has(child) && askable(child));

  // Phase 1: the status, from what was observed. It must depend on nothing
  // else: Metacontroller writes it whenever it differs, and an answer that
  // differed each time would be written at every sync (without the
  // CompositeController's ignoreStatusChanges, each write would also cause
  // the next sync, forever). The first problem found, in
  // the order a user would fix them, is the one reported. While a Project's
  // Namespace is first filled, the status says so once, not at each of the
  // rounds that takes (each status written costs Metacontroller a GET and a
  // PUT): from its first sync until all it asks for exists.
  const generation = parent.metadata.generation;
  // Two features may share a group (RoleBindings, say): what either asks for is no feature's left over.
  const asked = new Set(plans.flatMap((plan) => plan.children).map((child) => `${child.kind}.${child.apiVersion} ${keyOf(child)}`));
  const otherNamespaces = Object.keys(observed).filter((observedName) => observedName !== name);
  const previously = parent.status?.conditions?.find((condition) => condition.type === "Ready")?.reason;
  const missing = prerequisitesPending || featureChildren.some((child) => !observedChild(children, child)) || plans.some((plan) => plan.heldBack);
  const filling = missing && (previously === undefined || previously === FILLING);
  const readiness =
    refusal ??
    plans.find((plan) => plan.invalid)?.invalid ??
    (foreign ? conflictWith(parent, name, foreign) : undefined) ??
    plans.find((plan) => plan.unavailable)?.unavailable ??
    namespaceNotReady(name, observed[name]) ??
    removingStrays(name, strays) ??
    (filling ? waitingForNamespace(name) : undefined) ??
    FEATURES.reduce<Readiness | undefined>((found, feature, index) => found ?? progressOf(name, feature, plans, index, children, asked), undefined) ??
    activeWith(name, plans, otherNamespaces);
  const status: ProjectStatus = {
    ...(carriedOut || observed[name] ? { namespace: name } : {}),
    ...Object.assign({}, ...plans.map((plan) => plan.status)),
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    conditions: [
      {
        type: "Ready",
        status: readiness.status,
        ...(generation === undefined ? {} : { observedGeneration: generation }),
        lastTransitionTime: transitionTime(parent, readiness.status, now),
        reason: readiness.reason,
        message: readiness.message,
      },
    ],
  };

  // Phase 2: the desired children. Metacontroller deletes every observed
  // child that is not listed here, and a Namespace takes all it holds with
  // it. So, the invariant: every Namespace observed as this Project's child is
  // in the answer, whatever else is wrong. When the spec cannot be carried
  // out, it is kept as observed: its annotations as they are, so that a
  // refusal changes nothing. Only the labels every Namespace carries follow
  // the spec, always. A Namespace the API server would refuse, one whose
  // name is taken, or one a feature cannot yet know how to make is not asked
  // for: the create could only fail, or make it without what it needs.
  const keptAsObserved = (observedName: string): Namespace => ({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: observedName,
      labels: observedName === name ? wanted.metadata.labels : everyNamespaceLabels,
      annotations: ownAnnotationsOf(observed[observedName]),
    },
  });
  const namespaces = [
    ...(namespaceAsked ? [wanted] : []),
    ...Object.keys(observed)
      .filter((observedName) => !(namespaceAsked && observedName === name))
      .map(keptAsObserved),
  ];
  return { status, children: [...namespaces, ...featureChildren], finalized: plans.every((plan) => plan.finalized !== false) };
}

// ## 8. finalize
//
// Once a Project is deleted, Metacontroller calls this hook instead of sync,
// and the Project stays until it answers `finalized: true`; then the garbage
// collector deletes the Project and every child. Until then the answer is
// the same whole desired state, so that nothing is lost while features do
// what must happen first (integrations tear down what they made outside the
// cluster). Without a feature that needs it, the first call lets it go.
export function finalize(
  parent: Project,
  children: ObservedChildren,
  related: RelatedObjects,
  now: () => Date = () => new Date(),
): SyncResponse & { finalized: boolean } {
  return desiredState(parent, children, related, now, true);
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

// A feature is in place when it has nothing to remake, everything it asks
// for is as it asks, and nothing is left of its kinds that it no longer asks
// for. What later features hold back until then is said with it.
/** Each group of children, and the features that declare it, by their place in FEATURES. */
const DECLARING = new Map<string, number[]>();
FEATURES.forEach((feature, at) => Object.keys(feature.children).forEach((group) => DECLARING.set(group, [...(DECLARING.get(group) ?? []), at])));

function progressOf(name: string, feature: Feature, plans: Plan[], index: number, children: ObservedChildren, asked: Set<string>): Readiness | undefined {
  const plan = plans[index]!;
  if (plan.remaking || plan.failed || !plan.waiting) return plan.remaking ?? plan.failed;
  const { reason, notYet, toBe } = plan.waiting;
  // A group two features share is left over once: in the turn of the first
  // of them that asks for anything of it, or of the first, if none does.
  const asksOf = (at: number, group: string) => plans[at]!.children.some((child) => `${child.kind}.${child.apiVersion}` === group);
  const reportsFor = (group: string) => DECLARING.get(group)!.find((at) => asksOf(at, group)) ?? DECLARING.get(group)![0];
  const leftOver = Object.keys(feature.children).filter((group) => reportsFor(group) === index).flatMap((group) =>
    Object.keys(children[group] ?? {})
      .filter((key) => !asked.has(`${group} ${key}`))
      .map((key): [string, string] => [kindOf(group), key.slice(key.indexOf("/") + 1)]),
  );
  if (notYet.length === 0 && leftOver.length === 0) return undefined;
  const waits = [
    ...(notYet.length ? [`${byKind(notYet)} to be ${toBe}`] : []),
    ...(leftOver.length ? [`${byKind(leftOver)} to be removed`] : []),
  ];
  const heldBack = plans.slice(index + 1).flatMap((later) => (later.heldBack ? [`; ${later.heldBack}`] : []));
  return {
    status: "False",
    reason,
    message: `Namespace ${name} is Active; waiting for ${waits.join(", and ")}${heldBack.join("")}.`,
  };
}


function activeWith(name: string, plans: Plan[], otherNamespaces: string[]): Readiness {
  const kept = otherNamespaces.length === 0 ? "" : ` It also owns Namespace ${otherNamespaces.join(", ")}, kept as it is: delete it by hand once nobody needs it.`;
  return { status: "True", reason: "NamespaceActive", message: `Namespace ${name} is Active${plans.map((plan) => plan.ready ?? "").join("")}.${kept}` };
}

function annotationsFor(parent: Project): NamespaceAnnotations {
  const spec: Record<string, unknown> = parent.spec ?? {};
  return Object.fromEntries(Object.entries(NAMESPACE_ANNOTATIONS).map(([field, fallback]) => [field, spec[field] ?? fallback])) as NamespaceAnnotations;
}

function ownAnnotationsOf(namespace: ObservedNamespace | undefined): Partial<NamespaceAnnotations> {
  const observed = namespace?.metadata?.annotations ?? {};
  return Object.fromEntries(Object.keys(NAMESPACE_ANNOTATIONS).flatMap((key) => (observed[key] === undefined ? [] : [[key, observed[key]]])));
}

function whyTheApiServerWouldRefuse(namespace: Namespace): Readiness | undefined {
  const { name } = namespace.metadata;
  if (isValidNamespaceName(name)) return FEATURES.map((feature) => feature.refuse?.(namespace)).find(Boolean);
  return {
    status: "False",
    reason: "InvalidName",
    message: `${name} cannot be a Namespace name: ${PROJECT_NAME_RULE}. Recreate the Project under such a name.`,
  };
}

function conflictWith(parent: Project, name: string, namespace: ForeignNamespace): Readiness {
  const owners = namespace.metadata.ownerReferences ?? [];
  const owner = owners.find((reference) => reference.controller) ?? owners[0];
  const whose = owner ? `belongs to ${owner.kind} ${owner.name}` : "is not this Project's";
  const resolution =
    namespace.status?.phase === "Terminating"
      ? "It is being deleted; this Project gets its own once it is gone."
      : "Delete it if nobody needs it, or recreate this Project under another name; once it is gone, " +
        "this Project gets its own.";
  const more = FEATURES.flatMap((feature) => feature.foreign?.(parent, name, namespace) ?? []).map((sentence) => ` ${sentence}`);
  return {
    status: "False",
    reason: "NamespaceConflict",
    message: `Namespace ${name} already exists and ${whose}, so it is left as it is. ${resolution}${more.join("")}`,
  };
}

/** The one reason a Project gives from its first sync until all it asks for exists. */
const FILLING = "WaitingForNamespace";

function waitingForNamespace(name: string): Readiness {
  return { status: "False", reason: FILLING, message: `Waiting for Metacontroller to create Namespace ${name} and what goes in it.` };
}

function namespaceNotReady(name: string, namespace: ObservedNamespace | undefined): Readiness | undefined {
  const phase = namespace?.status?.phase;
  if (!namespace) return waitingForNamespace(name);
  if (phase === "Active") return undefined;
  if (phase === "Terminating") {
    return {
      status: "False",
      reason: "NamespaceTerminating",
      message: `Namespace ${name} is being deleted; it will be created again once it is gone.`,
    };
  }
  return {
    status: "False",
    reason: "NamespaceNotActive",
    message: phase ? `Namespace ${name} is in phase ${phase}, not Active.` : `Namespace ${name} has no phase yet.`,
  };
}

function removingStrays(namespace: string, strays: [kind: string, name: string][]): Readiness | undefined {
  if (strays.length === 0) return undefined;
  const places = [`Namespace ${namespace}`, ...FEATURES.flatMap((feature) => (feature.elsewhere ? [feature.elsewhere.are] : []))];
  const where = places.length > 2 ? `${places.slice(0, -1).join(", ")}, and ${places.at(-1)}` : places.join(" and ");
  return {
    status: "False",
    reason: "RemovingStrayChildren",
    message:
      `${byKind(strays)} carry this Project's controller-uid label outside ${where}, ` +
      "so they are not its children: Metacontroller deletes them.",
  };
}

/** "RoleBinding a, b; ClusterRole c": each kind named once, in the order first met. */
function byKind(objects: [kind: string, name: string][]): string {
  const names = new Map<string, string[]>();
  for (const [kind, name] of objects) names.set(kind, [...(names.get(kind) ?? []), name]);
  return [...names].map(([kind, list]) => `${kind} ${list.join(", ")}`).join("; ");
}

// Kubernetes conditions record when their status last changed, not when they
// were last computed: a fresh time on every sync would change the status on
// every sync, and each change triggers another one.
function transitionTime(parent: Project, status: ReadyCondition["status"], now: () => Date): string {
  const previous = parent.status?.conditions?.find((condition) => condition.type === "Ready");
  if (previous?.status === status) return previous.lastTransitionTime;
  return now().toISOString().replace(/\.\d+Z$/, "Z");
}
