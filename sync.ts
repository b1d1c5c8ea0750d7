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
 * Top to bottom: 1. names; 2. the request; 3. the answer; 4. rules; 5.
 * `customize`; 6. `sync`; 7. `finalize`. Nothing here knows the web
 * framework or the runtime, so it is tested, and can be reused, on its own.
 */
// features
// Each line marked `// features` is where the files in features/ add their
// part, as features/index.ts composes them. With the last feature taken
// away, those lines go too, and what is left is the seed.
// end features
import * as v from "valibot";
import { FEATURE_FLEET_WIDE, FEATURE_REASONS, FEATURE_REFUSALS, FEATURE_SCHEMAS, customizeFeatures, featuresSettled, namespaceOf, planFeatures } from "./features/index.ts"; // features

// ## 1. The names
//
// Every name this controller owns, once: k8s.yaml spells the same (as
// manifest.test.ts proves), and the tests and scripts take them from here.
export const GROUP = "agrrh.com";
export const VERSION = "v1";
export const API_VERSION = `${GROUP}/${VERSION}` as const;
export const PARENT = { kind: "Project", plural: "projects", singular: "project" } as const;
/** A Project `x` owns the Namespace `proj-x`. */
export const NAMESPACE_PREFIX = "proj-";
/** Each Namespace of a Project carries its name under this label: how guards, and people, find them. */
export const PROJECT_LABEL = "agrrh.com/project";
// The spec fields the core reads, each with the value its annotation takes
// where a spec leaves the field out: each becomes the Namespace's annotation
// of that name. The CRD declares the same fields.
export const NAMESPACE_ANNOTATIONS = { description: "", license: "WTFPL" } as const;
/** Where Metacontroller keeps, on each child, a JSON copy of what it applied. */
export const LAST_APPLIED_ANNOTATION = "metacontroller.k8s.io/last-applied-configuration";

// ## 2. The request
//
// Kubernetes omits empty fields and Metacontroller adds new ones over time,
// so every object is loose: only what `sync` reads is checked. The status,
// our own last answer, is read for `lastTransitionTime` and being settled;
// one that cannot be read is ignored, as a refusal would stall the Project.
const ANNOTATION_FIELDS: Record<string, v.GenericSchema> = Object.fromEntries(Object.keys(NAMESPACE_ANNOTATIONS).map((field) => [field, v.nullish(v.string())]));
const ProjectSpec = v.looseObject({
  ...ANNOTATION_FIELDS,
  ...FEATURE_SCHEMAS.spec, // features
});
const Condition = v.looseObject({ type: v.string(), status: v.string(), lastTransitionTime: v.string() });
export const Project = v.looseObject({
  metadata: v.looseObject({ name: v.pipe(v.string(), v.nonEmpty("a Project needs a name")), uid: v.optional(v.string()), generation: v.optional(v.number()) }),
  spec: v.nullish(ProjectSpec),
  status: v.fallback(v.nullish(v.looseObject({ observedGeneration: v.nullish(v.number()), conditions: v.nullish(v.array(Condition)) })), undefined),
});

// A Namespace is read for its annotations, kept when the spec cannot be carried out, and its owner.
const Labels = v.nullish(v.record(v.string(), v.string()));
const NamespaceStatus = v.nullish(v.looseObject({ phase: v.nullish(v.string()) }));
const ObservedNamespace = v.looseObject({ metadata: v.optional(v.looseObject({ labels: Labels, annotations: Labels })), status: NamespaceStatus });
const OwnerReference = v.looseObject({ kind: v.string(), name: v.string(), controller: v.nullish(v.boolean()) });
const RelatedNamespace = v.looseObject({ metadata: v.looseObject({ labels: Labels, ownerReferences: v.nullish(v.array(OwnerReference)) }), status: NamespaceStatus });

// Children arrive by `<Kind>.<apiVersion>`, then by name (or by
// `<namespace>/<name>`), every group declared, even empty: a missing one is
// a hook wired to the wrong controller. Related objects come the same way;
// without those customize asked for, someone else's Namespace would look
// like one not created yet. Either is refused, but FLEET_WIDE groups once a
// sync answered this generation: customize, asked per generation, may have
// seen it settled. No generation's first sync is so, without customize.
export const NAMESPACES = "Namespace.v1";
const ObjectsByName = v.record(v.string(), v.looseObject({}));
export const ObservedChildren = v.objectWithRest(
  {
    [NAMESPACES]: v.record(v.string(), ObservedNamespace),
    ...FEATURE_SCHEMAS.children, // features
  },
  ObjectsByName,
);
export const RelatedObjects = v.objectWithRest(
  {
    [NAMESPACES]: v.optional(v.record(v.string(), RelatedNamespace)),
    ...FEATURE_SCHEMAS.related, // features
  },
  ObjectsByName,
);
const RELATED = Object.keys(RelatedObjects.entries);
/** Related groups whose every sync lists every object of the kind (a Namespace by name): what a settled Project is not given. */
export const FLEET_WIDE: readonly string[] = [
  NAMESPACES,
  ...FEATURE_FLEET_WIDE, // features
];
const hasNamespaceName = (parent: Project) => isValidNamespaceName(namespaceNameFor(parent.metadata.name));
const answered = (parent: Project) => parent.metadata.generation !== undefined && parent.status?.observedGeneration === parent.metadata.generation;
const NO_RELATED = `expected ${RELATED.map((group) => `the ${group.slice(0, group.indexOf("."))}`).join(" and ")} the customize hook asks for: is hooks.customize declared on the CompositeController?`;
// `controller` and `finalizing` are not read: they pass like any unknown key.
export const SyncRequest = v.pipe(
  v.looseObject({ parent: Project, children: ObservedChildren, related: RelatedObjects }),
  v.forward(v.check(({ parent, related }) => !hasNamespaceName(parent) || RELATED.every((group) => related[group] !== undefined || (FLEET_WIDE.includes(group) && answered(parent))), NO_RELATED), ["related"]),
);
export const CustomizeRequest = v.looseObject({ parent: Project });

// ## 3. The answer (the request's types come from its schemas, so they cannot drift apart)
export type SyncRequest = v.InferOutput<typeof SyncRequest>;
export type Project = v.InferOutput<typeof Project>;
export type ObservedChildren = v.InferOutput<typeof ObservedChildren>;
export type RelatedObjects = v.InferOutput<typeof RelatedObjects>;
export type ObservedNamespace = v.InferOutput<typeof ObservedNamespace>;
/** A Namespace of the Project's name among the related objects: someone else's, or nobody's. */
export type ForeignNamespace = v.InferOutput<typeof RelatedNamespace>;
type NamespaceAnnotations = Record<keyof typeof NAMESPACE_ANNOTATIONS, string>;
/** Annotations: NAMESPACE_ANNOTATIONS as the spec says them, or as observed when it cannot be carried out. */
export type Namespace = { apiVersion: "v1"; kind: "Namespace"; metadata: { name: string; labels: Record<string, string>; annotations: Partial<NamespaceAnnotations> } };
/** Any child: Metacontroller files it by kind and apiVersion, then by `<namespace>/<name>` or name. */
export type Child = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };

/** Where `sync` does not do what the spec asks until a person acts; none ever costs a Namespace. */
export const REFUSALS = [
  "InvalidName",
  "NamespaceConflict",
  ...FEATURE_REFUSALS, // features
];
/** Every reason the Ready condition can give; docs/operating.md explains each. */
export const REASONS = [
  ...REFUSALS,
  "WaitingForNamespace",
  "NamespaceTerminating",
  "NamespaceNotActive",
  "RemovingStrayChildren", // features
  ...FEATURE_REASONS, // features
  "NamespaceActive",
];
export type Reason = string;
/** The Kubernetes condition shape, as `kubectl wait --for=condition=Ready` reads it. */
export type ReadyCondition = { type: "Ready"; status: "True" | "False"; observedGeneration?: number; lastTransitionTime: string; reason: Reason; message: string };
export type Readiness = Pick<ReadyCondition, "status" | "reason" | "message">;
/** `namespace`: the one the Project has, or is about to get. */
// Then the features' fields. // features
export type ProjectStatus = { namespace?: string; [field: string]: unknown; observedGeneration?: number; conditions: ReadyCondition[] };
/** Exactly the keys Metacontroller reads (hook v2 refuses any other); the Project's own Namespace first. */
export type SyncResponse = { status: ProjectStatus; children: (Namespace | Child)[]; finalized?: boolean };
/** A related rule picks objects by name or by labels, in one namespace or in all. */
export type LabelSelector = { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }[] };
export type RelatedResourceRule = { apiVersion: string; resource: string; namespace?: string } & ({ names: string[] } | { labelSelector: LabelSelector });
export type CustomizeResponse = { relatedResources: RelatedResourceRule[] };

// ## 4. The rules
//
// A Namespace name is a DNS-1123 label; a Project's is looser. The CRD
// refuses, with this sentence, a name whose Namespace cannot be; this is
// for those that got in before it.
export const namespaceNameFor = (projectName: string) => NAMESPACE_PREFIX + projectName;
const NAMESPACE_NAME_MAX_LENGTH = 63;
export const PROJECT_NAME_MAX_LENGTH = NAMESPACE_NAME_MAX_LENGTH - NAMESPACE_PREFIX.length;
export const PROJECT_NAME_RULE =
  `a Project name must be at most ${PROJECT_NAME_MAX_LENGTH} lowercase letters, digits or '-', ` +
  `starting and ending with a letter or digit, so that ${NAMESPACE_PREFIX}<name> can be a Namespace name`;
export const isValidNamespaceName = (name: string) => name.length <= NAMESPACE_NAME_MAX_LENGTH && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name);

// ## 5. customize
//
// Someone else's Namespace is no child of the Project: `sync` would see
// nothing, and Metacontroller's create would fail quietly, over and over.
// Asked for by name, it is in `related` whoever owns it, and watched. This
// answer is cached per Project generation, for 20 minutes, so it reads the
// Project alone. An invalid name gets no rule: an empty `names` would be
// every Namespace. Metacontroller finds it by listing every Namespace, so a
// settled Project (Ready at this generation: its Namespace is its own) does
// not ask; one that loses it asks for it again, and sees another in the way
// once customize is asked again, within those 20 minutes.
export const CUSTOMIZE_CACHE_MINUTES = 20;
export const isSettled = (parent: Project) =>
  featuresSettled(parent) && // features
  answered(parent) &&
  parent.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true;

export function customize(parent: Project): CustomizeResponse {
  if (!hasNamespaceName(parent)) return { relatedResources: [] };
  const atRest = isSettled(parent);
  return {
    relatedResources: [
      ...(atRest ? [] : [{ apiVersion: "v1", resource: "namespaces", names: [namespaceNameFor(parent.metadata.name)] }]),
      ...customizeFeatures(parent, atRest), // features
    ],
  };
}

// ## 6. sync
//
// The whole desired state for what Metacontroller observed, every time:
// whether to create, update or delete is Metacontroller's to decide. Pure:
// `now` only stamps a condition whose status changed; the input is never
// modified.
export function sync(parent: Project, children: ObservedChildren, related: RelatedObjects, now = () => new Date()): SyncResponse {
  const { status, children: desired } = desiredState(parent, children, related, now, false);
  return { status, children: desired };
}

function desiredState(parent: Project, children: ObservedChildren, related: RelatedObjects, now: () => Date, finalizing: boolean): SyncResponse {
  const name =
    namespaceOf(parent) ?? // features
    namespaceNameFor(parent.metadata.name);
  const observed = children[NAMESPACES];
  const active = observed[name]?.status?.phase === "Active";
  const features = planFeatures({ project: parent, namespace: name, observed: observed[name], active, owned: observed, children, related, finalizing }); // features
  const everyNamespaceLabels = {
    [PROJECT_LABEL]: parent.metadata.name,
    ...features.everyNamespaceLabels, // features
  };
  const labels = {
    ...everyNamespaceLabels,
    ...features.labels, // features
  };
  const annotations = {
    ...annotationsFor(parent),
    ...features.annotations, // features
  };
  const wanted: Namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name, labels, annotations } };
  // features
  // The Project's other Namespaces, where a feature gives it more than one:
  // each asked for as its own is, with what the features plan there.
  // end features
  const elsewhere = Object.fromEntries( // features
    Object.entries(features.elsewhere).map(([other, more]) => [other, namespaceWith(other, { ...everyNamespaceLabels, ...more.labels }, { ...annotationsFor(parent), ...more.annotations })]), // features
  ); // features

  // Phase 1: the status, from what was observed alone: each write of it
  // causes another sync, so an answer that differed each time would loop.
  // A Namespace related but no child is someone else's: never asked for.
  const badName = invalidName(name);
  const refused = features.refuse(wanted); // features
  const foreign = observed[name] ? undefined : related[NAMESPACES]?.[name];
  // Settled, the Project was not given its name's Namespace: one in the way is seen later.
  const unwatched = related[NAMESPACES] === undefined;
  const conflict =
    foreign &&
    conflictWith(
      name,
      foreign,
      features.aboutForeign(foreign), // features
    );
  // Nothing is asked for that could only fail, or that must wait its turn.
  const stopped =
    refused ?? // features
    features.unavailable ?? // features
    badName ??
    conflict;
  const namespaceAsked =
    !features.pendingPrerequisite && // features
    !stopped;
  const settled = features.settle(namespaceAsked); // features
  const others = Object.keys(observed)
    .filter((other) => !elsewhere[other]) // features
    .filter((other) => other !== name);
  // The first problem, in the order a person would fix them, is reported.
  const { status: ready, reason, message } =
    badName ??
    refused ?? // features
    features.invalid ?? // features
    conflict ??
    features.unavailable ?? // features
    namespaceNotReady(name, observed[name], unwatched) ??
    settled.strays ?? // features
    (settled.filling ? waitingForNamespace(name, unwatched) : undefined) ?? // features
    settled.progress ?? // features
    activeWith(
      name,
      others,
      settled.ready, // features
    );
  const generation = parent.metadata.generation === undefined ? {} : { observedGeneration: parent.metadata.generation };
  const status: ProjectStatus = {
    ...(!stopped || observed[name] ? { namespace: name } : {}),
    ...features.status, // features
    ...generation,
    conditions: [{ type: "Ready", status: ready, ...generation, lastTransitionTime: transitionTime(parent, ready, now), reason, message }],
  };

  // Phase 2: the children. Metacontroller deletes each observed child not
  // listed, a Namespace with all it holds. So, the invariant: every Namespace
  // observed is in the answer, one not asked for as observed.
  const kept = (other: string): Namespace =>
    elsewhere[other] ?? // features
    namespaceWith(other, other === name ? labels : everyNamespaceLabels, {
      ...ownAnnotationsOf(observed[other]),
      ...(other === name ? features.annotations : {}), // features
    });
  return {
    status,
    children: [
      ...(namespaceAsked ? [wanted, ...others.map(kept)] : Object.keys(observed).map(kept)),
      ...(namespaceAsked ? Object.values(elsewhere) : []), // features
      ...settled.children, // features
    ],
    finalized: features.finalized, // features
  };
}

// ## 7. finalize
//
// Once a Project is deleted, this hook is called instead, and the Project
// stays until it answers `finalized: true`. Until then the answer is the
// same desired state, so nothing is lost meanwhile.
export function finalize(parent: Project, children: ObservedChildren, related: RelatedObjects, now = () => new Date()): SyncResponse & { finalized: boolean } {
  const state = desiredState(parent, children, related, now, true);
  return { ...state, finalized: state.finalized ?? true };
}

const namespaceWith = (name: string, labels: Record<string, string>, annotations: Partial<NamespaceAnnotations>): Namespace => ({ apiVersion: "v1", kind: "Namespace", metadata: { name, labels, annotations } });
const annotationsFor = ({ spec }: Project) =>
  Object.fromEntries(Object.entries(NAMESPACE_ANNOTATIONS).map(([field, fallback]) => [field, (spec as Record<string, unknown> | null | undefined)?.[field] ?? fallback])) as NamespaceAnnotations;
const ownAnnotationsOf = (namespace: ObservedNamespace | undefined): Partial<NamespaceAnnotations> =>
  Object.fromEntries(Object.keys(NAMESPACE_ANNOTATIONS).flatMap((key) => (namespace?.metadata?.annotations?.[key] === undefined ? [] : [[key, namespace.metadata.annotations[key]]])));

const notReady = (reason: Reason, message: string): Readiness => ({ status: "False", reason, message });
const invalidName = (name: string) =>
  isValidNamespaceName(name) ? undefined : notReady("InvalidName", `${name} cannot be a Namespace name: ${PROJECT_NAME_RULE}. Recreate the Project under such a name.`);
const waitingForNamespace = (name: string, unwatched: boolean) =>
  notReady("WaitingForNamespace", `Waiting for Metacontroller to create Namespace ${name} and what goes in it.${unwatched ? ` Should one of that name that is not this Project's be in the way, this says so within ${CUSTOMIZE_CACHE_MINUTES} minutes.` : ""}`);

function conflictWith(name: string, namespace: ForeignNamespace, more = ""): Readiness {
  const owners = namespace.metadata.ownerReferences ?? [];
  const owner = owners.find((reference) => reference.controller) ?? owners[0];
  const whose = owner ? `belongs to ${owner.kind} ${owner.name}` : "is not this Project's";
  const resolution =
    namespace.status?.phase === "Terminating"
      ? "It is being deleted; this Project gets its own once it is gone."
      : "Delete it if nobody needs it, or recreate this Project under another name; once it is gone, this Project gets its own.";
  return notReady("NamespaceConflict", `Namespace ${name} already exists and ${whose}, so it is left as it is. ${resolution}${more}`);
}

function namespaceNotReady(name: string, namespace: ObservedNamespace | undefined, unwatched: boolean): Readiness | undefined {
  const phase = namespace?.status?.phase;
  if (!namespace) return waitingForNamespace(name, unwatched);
  if (phase === "Active") return undefined;
  if (phase === "Terminating") return notReady("NamespaceTerminating", `Namespace ${name} is being deleted; it will be created again once it is gone.`);
  return notReady("NamespaceNotActive", phase ? `Namespace ${name} is in phase ${phase}, not Active.` : `Namespace ${name} has no phase yet.`);
}

function activeWith(name: string, others: string[], more = ""): Readiness {
  const kept = others.length === 0 ? "" : ` It also owns Namespace ${others.join(", ")}, kept as it is: delete it by hand once nobody needs it.`;
  return { status: "True", reason: "NamespaceActive", message: `Namespace ${name} is Active${more}.${kept}` };
}

// A condition records when its status last changed: a fresh time at every
// sync would change the status, and so cause another sync, every time.
function transitionTime(parent: Project, status: ReadyCondition["status"], now: () => Date): string {
  const previous = parent.status?.conditions?.find((condition) => condition.type === "Ready");
  return previous?.status === status ? previous.lastTransitionTime : now().toISOString().replace(/\.\d+Z$/, "Z");
}
