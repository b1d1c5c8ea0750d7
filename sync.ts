/**
 * # The Project controller's sync hook
 *
 * A `Project` (projects.agrrh.com/v1, cluster-scoped) should always come with
 * a Namespace `proj-<project name>` that carries the Project's description and
 * license as annotations, the guardrails of the ProjectProfile it names (a
 * ResourceQuota, default container limits, network isolation and a Pod
 * Security level, all chosen by the cluster's admins), and RoleBindings that
 * give its members the access the spec declares, no more, and let them read
 * the Project itself.
 * Metacontroller runs the control loop: whenever a Project or one of its
 * children changes, it POSTs what it observed to this hook and gets back what
 * should exist. It then creates, updates and deletes the children until the
 * cluster matches, and writes the status we return onto the Project.
 *
 * Before the first sync of a Project, Metacontroller asks the customize hook
 * which other objects that Project needs to see: the Namespace its name would
 * take, whoever owns it, and its profile. That is how `sync` can tell a
 * Namespace still to be created from one that belongs to someone else, and
 * why an edited profile reaches every Project that uses it at once.
 *
 * This file is the whole contract, read top to bottom:
 *   1. the request schema: what Metacontroller sends, checked where we read it;
 *   2. the types, inferred from that schema, and the shape of our answers;
 *   3. the rules: Project `x` owns Namespace `proj-x`, what a profile may
 *      hold and what it becomes, who may be a member, and how members become
 *      bindings;
 *   4. `customize`: the Namespace and the profile to watch;
 *   5. `sync`: first the status from what was observed, then the desired
 *      children.
 * It imports nothing from the web framework or the runtime, so it can be
 * tested, and reused, on its own.
 */
import * as v from "valibot";

// ## The names
//
// Every name this controller owns, once: a copy for another resource starts
// here. k8s.yaml spells the same names for the cluster, and manifest.test.ts
// proves that the two agree; the tests and scripts take them from here.
export const GROUP = "agrrh.com";
export const VERSION = "v1";
export const API_VERSION = `${GROUP}/${VERSION}` as const;
export const PARENT = { kind: "Project", plural: "projects", singular: "project" } as const;
export const PROFILE = { kind: "ProjectProfile", plural: "projectprofiles" } as const;
/** A Project `x` owns the Namespace `proj-x`. */
export const NAMESPACE_PREFIX = "proj-";

// ## 1. The request
//
// Kubernetes omits empty fields (a Project created without `spec`, an object
// without `status`) and Metacontroller adds fields over time, so every object
// here is loose: unknown keys pass through untouched, and only the fields that
// `sync` reads are checked.

// Members are taken as a list here and checked against the rules in part 3
// by `sync`: a Project admitted before those rules existed then gets a status
// that says what is wrong, instead of a refused request that stalls it.
const ProjectSpec = v.looseObject({
  description: v.nullish(v.string()),
  license: v.nullish(v.string()),
  members: v.nullish(v.array(v.unknown())),
  deletionProtection: v.nullish(v.boolean()),
  profile: v.nullish(v.string()),
});

// The status is our own previous answer, read back only to keep a condition's
// `lastTransitionTime` while its status holds. If it cannot be read we start
// afresh rather than refuse the request: a refusal would stall the Project
// until somebody repaired its status by hand.
const PreviousStatus = v.fallback(
  v.nullish(
    v.looseObject({
      conditions: v.nullish(
        v.array(
          v.looseObject({
            type: v.string(),
            status: v.string(),
            lastTransitionTime: v.string(),
          }),
        ),
      ),
    }),
  ),
  undefined,
);

export const Project = v.looseObject({
  metadata: v.looseObject({
    name: v.pipe(v.string(), v.nonEmpty("a Project needs a name")),
    generation: v.optional(v.number()),
  }),
  spec: v.nullish(ProjectSpec),
  status: PreviousStatus,
});

const NamespaceStatus = v.nullish(v.looseObject({ phase: v.nullish(v.string()) }));
const AnnotatedMetadata = v.optional(
  v.looseObject({
    labels: v.nullish(v.record(v.string(), v.string())),
    annotations: v.nullish(v.record(v.string(), v.string())),
  }),
);
// The Project's own Namespace is read for its annotations and Pod Security
// label too: when the spec cannot be carried out, they are kept as they are.
const ObservedNamespace = v.looseObject({ metadata: AnnotatedMetadata, status: NamespaceStatus });

// A Namespace that is not the Project's own is read for who owns it, so that
// the status can name them.
const OwnerReference = v.looseObject({ kind: v.string(), name: v.string(), controller: v.nullish(v.boolean()) });
const RelatedNamespace = v.looseObject({
  metadata: v.looseObject({ ownerReferences: v.nullish(v.array(OwnerReference)) }),
  status: NamespaceStatus,
});

// A RoleBinding or ClusterRoleBinding is read for what it grants, to tell
// whether it is as asked, and for the copy of our last answer that
// Metacontroller keeps on it, to tell a subject added by hand from one we
// asked for before.
const ObservedBinding = v.looseObject({
  metadata: AnnotatedMetadata,
  roleRef: v.looseObject({ name: v.string() }),
  subjects: v.nullish(
    v.array(v.looseObject({ kind: v.string(), name: v.string(), namespace: v.nullish(v.string()) })),
  ),
});

// A ResourceQuota, LimitRange or NetworkPolicy is read whole: to tell
// whether it is as asked, and to keep it as it is while its profile is
// missing.
const ObservedGuardrail = v.looseObject({ metadata: AnnotatedMetadata, spec: v.nullish(v.looseObject({})) });

// A profile is checked against the rules of part 3 by `sync`, not here: a
// profile admitted before those rules existed then gets its Projects a status
// that names what is wrong, instead of a refused request.
const RelatedProfile = v.looseObject({ spec: v.nullish(v.unknown()) });

// Children arrive grouped by `<Kind>.<apiVersion>`, then by name; namespaced
// children of this cluster-scoped parent by `<namespace>/<name>`.
// Metacontroller sends a key for every child resource the CompositeController
// declares, even when it is empty, so a missing group means the hook is wired
// to the wrong controller: better refused than answered.
export const NAMESPACES = "Namespace.v1";
export const RESOURCE_QUOTAS = "ResourceQuota.v1";
export const LIMIT_RANGES = "LimitRange.v1";
export const NETWORK_POLICIES = "NetworkPolicy.networking.k8s.io/v1";
export const ROLE_BINDINGS = "RoleBinding.rbac.authorization.k8s.io/v1";
export const CLUSTER_ROLES = "ClusterRole.rbac.authorization.k8s.io/v1";
export const CLUSTER_ROLE_BINDINGS = "ClusterRoleBinding.rbac.authorization.k8s.io/v1";
export const PROFILES = `${PROFILE.kind}.${API_VERSION}` as const;
const ObjectsByName = v.record(v.string(), v.looseObject({}));
export const ObservedChildren = v.objectWithRest(
  {
    [NAMESPACES]: v.record(v.string(), ObservedNamespace),
    [RESOURCE_QUOTAS]: v.record(v.string(), ObservedGuardrail),
    [LIMIT_RANGES]: v.record(v.string(), ObservedGuardrail),
    [NETWORK_POLICIES]: v.record(v.string(), ObservedGuardrail),
    [ROLE_BINDINGS]: v.record(v.string(), ObservedBinding),
    [CLUSTER_ROLES]: ObjectsByName,
    [CLUSTER_ROLE_BINDINGS]: v.record(v.string(), ObservedBinding),
  },
  ObjectsByName,
);

// Related objects arrive grouped the same way. Each group is there, empty or
// not, whenever the customize hook asked for it, which it does for every
// Project whose name can be a Namespace's (part 4). Without them a foreign
// Namespace would look like one not created yet, and an existing profile
// like a missing one, so that is refused.
export const RelatedObjects = v.objectWithRest(
  {
    [NAMESPACES]: v.optional(v.record(v.string(), RelatedNamespace)),
    [PROFILES]: v.optional(v.record(v.string(), RelatedProfile)),
  },
  ObjectsByName,
);

// Metacontroller also sends `controller` and `finalizing`; this controller
// reads neither, so they pass unchecked like any unknown key.
export const SyncRequest = v.pipe(
  v.looseObject({
    parent: Project,
    children: ObservedChildren,
    related: RelatedObjects,
  }),
  v.forward(
    v.check(
      ({ parent, related }) =>
        (related[NAMESPACES] !== undefined && related[PROFILES] !== undefined) ||
        !isValidNamespaceName(namespaceNameFor(parent.metadata.name)),
      "expected the Namespace and the ProjectProfile the customize hook asks for: is hooks.customize declared on the CompositeController?",
    ),
    ["related"],
  ),
);

// The customize hook is sent the Project alone, with the controller.
export const CustomizeRequest = v.looseObject({ parent: Project });

// ## 2. The types
//
// The request types come from the schemas, so they cannot drift apart. The
// answer is ours to build, so its types are written out.

export type SyncRequest = v.InferOutput<typeof SyncRequest>;
export type Project = v.InferOutput<typeof Project>;
export type ObservedChildren = v.InferOutput<typeof ObservedChildren>;
export type RelatedObjects = v.InferOutput<typeof RelatedObjects>;

/** The annotations `sync` writes onto the Namespace, and so the only ones it ever changes. */
export const NAMESPACE_ANNOTATIONS = ["description", "license"] as const;
type NamespaceAnnotations = Record<(typeof NAMESPACE_ANNOTATIONS)[number], string>;

export type Namespace = {
  apiVersion: "v1";
  kind: "Namespace";
  metadata: {
    name: string;
    /** The Project's name under PROJECT_LABEL, and under PROTECTED_BY_LABEL if it is protected; its profile's Pod Security level. */
    labels: Record<string, string>;
    /** Both, as the spec says; or, when the spec cannot be carried out, those observed. */
    annotations: Partial<NamespaceAnnotations>;
  };
};

// Every answer where `sync` does not do what the spec asks until a person
// acts; the webhook logs each with the Project's name. None of them ever
// costs the Project a Namespace it has (see the invariant in part 5).
export const REFUSALS = ["InvalidName", "SpecTooLarge", "InvalidMembers", "NamespaceConflict", "ProfileNotFound", "InvalidProfile"] as const;
export type Refusal = (typeof REFUSALS)[number];
/** Every reason the Ready condition can give; docs/operating.md explains each. */
export const REASONS = [
  ...REFUSALS,
  "WaitingForNamespace",
  "NamespaceTerminating",
  "NamespaceNotActive",
  "RemovingStrayChildren",
  "WaitingForGuardrails",
  "WaitingForRoleBindings",
  "RevokingUndeclaredAccess",
  "NamespaceActive",
] as const;
export type Reason = (typeof REASONS)[number];

/** The Kubernetes condition shape, as `kubectl wait --for=condition=Ready` reads it. */
export type ReadyCondition = {
  type: "Ready";
  status: "True" | "False";
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: Reason;
  message: string;
};

/** A subject as the API server stores it: Users and Groups carry the RBAC group, ServiceAccounts none. */
export type Subject =
  | { kind: "User" | "Group"; apiGroup: "rbac.authorization.k8s.io"; name: string }
  | { kind: "ServiceAccount"; name: string; namespace: string };

export type RoleBinding = {
  apiVersion: "rbac.authorization.k8s.io/v1";
  kind: "RoleBinding";
  metadata: { name: string; namespace: string };
  roleRef: { apiGroup: "rbac.authorization.k8s.io"; kind: "ClusterRole"; name: Role };
  subjects: Subject[];
};

/** What lets a Project's members read the Project itself, which no RoleBinding in its Namespace can. */
export type ClusterRole = {
  apiVersion: "rbac.authorization.k8s.io/v1";
  kind: "ClusterRole";
  metadata: { name: string };
  rules: [{ apiGroups: [typeof GROUP]; resources: [typeof PARENT.plural]; resourceNames: [string]; verbs: ["get", "watch"] }];
};

export type ClusterRoleBinding = {
  apiVersion: "rbac.authorization.k8s.io/v1";
  kind: "ClusterRoleBinding";
  metadata: { name: string };
  roleRef: { apiGroup: "rbac.authorization.k8s.io"; kind: "ClusterRole"; name: string };
  subjects: Subject[];
};

type Binding = RoleBinding | ClusterRoleBinding;

/** What every guardrail carries: its place in the Project's Namespace, and the profile it came from under PROFILE_LABEL. */
type GuardrailMetadata = { name: string; namespace: string; labels: Record<string, string> };
/** Kubernetes quantities by resource name, as a profile writes them ("500m", "4Gi"). */
export type Quantities = Record<string, string>;

export type ResourceQuota = { apiVersion: "v1"; kind: "ResourceQuota"; metadata: GuardrailMetadata; spec: { hard: Quantities } };

export type LimitRange = {
  apiVersion: "v1";
  kind: "LimitRange";
  metadata: GuardrailMetadata;
  spec: { limits: [{ type: "Container"; default?: Quantities; defaultRequest?: Quantities }] };
};

type NamespaceSelector = { matchExpressions: [{ key: "kubernetes.io/metadata.name"; operator: "In"; values: string[] }] };
export type NetworkPolicy = {
  apiVersion: "networking.k8s.io/v1";
  kind: "NetworkPolicy";
  metadata: GuardrailMetadata;
  spec: {
    podSelector: Record<string, never>;
    policyTypes: ["Ingress"];
    ingress: [{ from: ({ podSelector: Record<string, never> } | { namespaceSelector: NamespaceSelector })[] }];
  };
};

/** A guardrail as observed and kept while its profile cannot be read: whatever spec it has. */
type KeptGuardrail = { apiVersion: string; kind: GuardrailKind; metadata: GuardrailMetadata; spec: Record<string, unknown> };
export type Guardrail = ResourceQuota | LimitRange | NetworkPolicy | KeptGuardrail;

export type ProjectStatus = {
  /** How many Namespaces this Project owns right now, as observed. */
  namespaces: number;
  /** The Namespace this Project's name gives it; absent when it cannot have one, or someone else's has that name. */
  namespace?: string;
  /** The ProjectProfile whose guardrails the Namespace gets; while that cannot be read, the one it kept. */
  profile?: string;
  /** How many members the spec lists. */
  members: number;
  observedGeneration?: number;
  conditions: ReadyCondition[];
};

/** Exactly the two keys Metacontroller reads: with hook v2 it rejects any other. */
export type SyncResponse = {
  status: ProjectStatus;
  /** The Namespaces first, the Project's own leading, then its guardrails, its RoleBindings, and what lets its members read it. */
  children: (Namespace | Guardrail | RoleBinding | ClusterRole | ClusterRoleBinding)[];
};

/** Objects picked by name, the one kind of rule this controller needs. */
export type RelatedResourceRule = { apiVersion: string; resource: string; names: string[] };
export type CustomizeResponse = { relatedResources: RelatedResourceRule[] };

// ## 3. The rules

export const DEFAULT_LICENSE = "WTFPL";

// Every Namespace of a Project carries the Project's name under this label:
// k8s.yaml's access guard finds a Project's Namespaces by it, and so does a
// person (`kubectl get namespaces -l agrrh.com/project=<name>`).
export const PROJECT_LABEL = `${GROUP}/${PARENT.singular}` as const;

// A protected Project's Namespaces carry this label, with the Project's name
// as its value; k8s.yaml's admission policy refuses to delete a Namespace
// that has it, unless the garbage collector does so because the Project is
// gone. It follows spec.deletionProtection on every sync.
export const PROTECTED_BY_LABEL = `${GROUP}/protected-by-${PARENT.singular}` as const;

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

// The API server refuses an object whose annotations, keys and values counted
// in UTF-8 bytes, add up to more than 256 KiB. Metacontroller's apply keeps a
// JSON copy of the whole desired object in one more annotation, so the
// description counts twice, and more where Go's JSON escapes it (`<`, `>`,
// `&`, U+2028 and U+2029 become six bytes each). The label Metacontroller
// adds to that copy gets a fixed allowance.
export const ANNOTATIONS_MAX_BYTES = 256 * 1024;
export const LAST_APPLIED_ANNOTATION = "metacontroller.k8s.io/last-applied-configuration";
const ALLOWANCE_FOR_METACONTROLLER_LABELS = 256;
const utf8 = new TextEncoder();

export function annotationBytes(namespace: Namespace): number {
  const bytes = (text: string) => utf8.encode(text).length;
  let total = bytes(LAST_APPLIED_ANNOTATION) + bytes(asGoJson(namespace)) + ALLOWANCE_FOR_METACONTROLLER_LABELS;
  for (const [key, value] of Object.entries(namespace.metadata.annotations)) total += bytes(key) + bytes(value);
  return total;
}

/** JSON as Go writes it, escaping `<`, `>`, `&`, U+2028 and U+2029, as Kubernetes tools store copies of objects. */
export function asGoJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

// Counting means encoding the whole object, on every sync. Skip it when even
// the worst case is under the limit, as it is for all but huge descriptions:
// a UTF-16 unit takes at most 3 bytes as itself plus 6 escaped in the copy,
// and the rest (keys, the copy's JSON around the values, the label allowance,
// a 63-character name) stays under a fixed kilobyte.
export const WORST_BYTES_PER_UNIT = 9;
export const WORST_FIXED_BYTES = 1024;

function mayExceedAnnotationLimit({ description = "", license = "" }: Namespace["metadata"]["annotations"]): boolean {
  return WORST_FIXED_BYTES + WORST_BYTES_PER_UNIT * (description.length + license.length) > ANNOTATIONS_MAX_BYTES;
}

// A Project's guardrails come from the ProjectProfile its spec names, one a
// cluster admin owns; Projects that name none use `default`. Each part of a
// profile is optional and becomes one object in the Project's Namespace, or
// its Pod Security label. Each object carries the profile's name, so that
// the status can tell which profile a Namespace really has.
export const DEFAULT_PROFILE = "default";
export const PROFILE_LABEL = `${GROUP}/profile` as const;
export const POD_SECURITY_LABEL = "pod-security.kubernetes.io/enforce";
export const POD_SECURITY_LEVELS = ["privileged", "baseline", "restricted"] as const;
export const GUARDRAIL_NAMES = { ResourceQuota: "project-quota", LimitRange: "project-limits", NetworkPolicy: "project-isolation" } as const;
type GuardrailKind = keyof typeof GUARDRAIL_NAMES;
// Where Metacontroller files each kind among the children.
const GUARDRAIL_GROUPS = { ResourceQuota: RESOURCE_QUOTAS, LimitRange: LIMIT_RANGES, NetworkPolicy: NETWORK_POLICIES } as const;
const GUARDRAIL_KINDS = Object.keys(GUARDRAIL_NAMES) as GuardrailKind[];

/** The guardrail of that kind observed in the Namespace, keyed `<namespace>/<name>` as Metacontroller files it. */
function observedGuardrail(children: ObservedChildren, namespace: string, kind: GuardrailKind) {
  return children[GUARDRAIL_GROUPS[kind]][`${namespace}/${GUARDRAIL_NAMES[kind]}`];
}

export function profileNameOf(project: Project): string {
  return project.spec?.profile || DEFAULT_PROFILE;
}

// The API server refuses a ResourceQuota or LimitRange it cannot read, and
// Metacontroller would retry that create for ever, so a profile holds only
// what they accept. The CRD applies the same rules at admission, in the same
// words (manifest.test.ts judges one table of profiles by both).
//
// Quantities are a subset of Kubernetes' own: no sign, no exponent, no n or
// u, at most 3 decimals and none on m. Every such value is a whole number of
// milli-units, which the API server stores exactly; a finer one it would
// round up ("0.5m" to "1m", seen on 1.36), and Metacontroller would then
// write it back on every sync. It may write the same value another way
// ("0.5" as "500m", "1000" as "1k"), and `sync` then asks for it written
// that way (see `asObservedIfEqual`), for the same reason.
export const QUANTITY = /^[0-9]{1,15}((\.[0-9]{1,3})?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?|m)$/;
// What a ResourceQuota's `hard` may name: Kubernetes' standard quota
// resources, huge pages, or a name with a `/` (count/deployments.apps,
// gold.storageclass.storage.k8s.io/requests.storage). Objects are counted
// in whole numbers: the API server refuses `pods: "0.5"`.
export const COUNTED_RESOURCES = [
  "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps", "persistentvolumeclaims",
  "services.nodeports", "services.loadbalancers",
] as const;
export const QUOTA_RESOURCES = [
  ...COUNTED_RESOURCES,
  "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage", "requests.ephemeral-storage",
  "limits.cpu", "limits.memory", "limits.ephemeral-storage",
] as const;
export const QUALIFIED_QUOTA_RESOURCE = new RegExp(
  String.raw`^((requests\.)?hugepages-[0-9]+(Ki|Mi|Gi)|[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$`,
);
export const LIMITED_RESOURCES = ["cpu", "memory", "ephemeral-storage"] as const;
export const MAX_QUANTITIES = 32;
export const MAX_ADMITTED_NAMESPACES = 32;

export const PROFILE_RULES = {
  quantity:
    "a quantity is a number with at most 3 decimals and an optional unit (k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi or Ei), " +
    "or a whole number of m, such as 500m, 2 or 4Gi; quote it",
  count: `${COUNTED_RESOURCES.join(", ")} and resources named with a / are counted in whole numbers`,
  quotaResource: `a quota limits ${QUOTA_RESOURCES.join(", ")}, hugepages-<size>, or a resource named with a /, such as count/deployments.apps`,
  limitedResource: `default requests and limits are for ${LIMITED_RESOURCES.join(", ")} only`,
  requestOverLimit: "a default request is at most the default limit of the same resource",
  admittedNamespace: `networkPolicy.allowFromNamespaces lists at most ${MAX_ADMITTED_NAMESPACES} namespace names, each once`,
  podSecurity: `podSecurity is one of ${POD_SECURITY_LEVELS.join(", ")}`,
  most: `a profile lists at most ${MAX_QUANTITIES} quantities in each map`,
} as const;

// A quantity's exact value as digits × 10^e × 2^b, so that two can be
// compared without floating-point error.
const DECIMAL_SUFFIXES: Record<string, number> = { "": 0, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

function quantityValue(quantity: string): { digits: bigint; exp10: number; exp2: number } {
  const [, whole = "", fraction = "", suffix = ""] = /^([0-9]+)(?:\.([0-9]+))?([A-Za-z]*)$/.exec(quantity) ?? [];
  return {
    digits: BigInt(whole + fraction),
    exp10: (DECIMAL_SUFFIXES[suffix] ?? 0) - fraction.length,
    exp2: BINARY_SUFFIXES[suffix] ?? 0,
  };
}

/**
 * Whether a quantity matching QUANTITY is a whole number a 64-bit integer
 * holds, as Kubernetes' CEL `quantity(...).isInteger()` judges it: the API
 * server refuses any other count of objects.
 */
export function isWholeQuantity(quantity: string): boolean {
  const { digits, exp10, exp2 } = quantityValue(quantity);
  const whole = exp10 >= 0 || (digits * 2n ** BigInt(exp2)) % 10n ** BigInt(-exp10) === 0n;
  return whole && compareQuantities(quantity, String(2n ** 63n - 1n)) <= 0;
}

/** Negative, zero or positive as `a` is less than, equal to or more than `b`; both must match QUANTITY. */
export function compareQuantities(a: string, b: string): number {
  const [x, y] = [quantityValue(a), quantityValue(b)];
  const exp10 = Math.min(x.exp10, y.exp10);
  const scaled = ({ digits, exp10: own, exp2 }: typeof x) => digits * 2n ** BigInt(exp2) * 10n ** BigInt(own - exp10);
  const [left, right] = [scaled(x), scaled(y)];
  return left < right ? -1 : left > right ? 1 : 0;
}

const quantities = (keyRule: (key: string) => boolean, keyMessage: string) =>
  v.pipe(
    v.record(v.string(), v.pipe(v.string(PROFILE_RULES.quantity), v.regex(QUANTITY, PROFILE_RULES.quantity))),
    v.check((map) => Object.keys(map).length <= MAX_QUANTITIES, PROFILE_RULES.most),
    v.check((map) => Object.keys(map).every(keyRule), keyMessage),
  );
const isQuotaResource = (key: string) => (QUOTA_RESOURCES as readonly string[]).includes(key) || QUALIFIED_QUOTA_RESOURCE.test(key);
const isCounted = (key: string) => (COUNTED_RESOURCES as readonly string[]).includes(key) || key.includes("/");
const isLimitedResource = (key: string) => (LIMITED_RESOURCES as readonly string[]).includes(key);

export const ProfileSpec = v.looseObject({
  resourceQuota: v.optional(
    v.looseObject({
      hard: v.pipe(
        quantities(isQuotaResource, PROFILE_RULES.quotaResource),
        v.check((hard) => Object.entries(hard).every(([key, quantity]) => !isCounted(key) || isWholeQuantity(quantity)), PROFILE_RULES.count),
      ),
    }),
  ),
  limitRange: v.optional(
    v.pipe(
      v.looseObject({
        default: v.optional(quantities(isLimitedResource, PROFILE_RULES.limitedResource)),
        defaultRequest: v.optional(quantities(isLimitedResource, PROFILE_RULES.limitedResource)),
      }),
      v.check(
        ({ default: limits = {}, defaultRequest = {} }) =>
          Object.entries(defaultRequest).every(([key, request]) => limits[key] === undefined || compareQuantities(request, limits[key]) <= 0),
        PROFILE_RULES.requestOverLimit,
      ),
    ),
  ),
  networkPolicy: v.optional(
    v.looseObject({
      allowFromNamespaces: v.optional(
        v.pipe(
          v.array(v.pipe(v.string(PROFILE_RULES.admittedNamespace), v.check(isValidNamespaceName, PROFILE_RULES.admittedNamespace))),
          v.maxLength(MAX_ADMITTED_NAMESPACES, PROFILE_RULES.admittedNamespace),
          v.check((names) => new Set(names).size === names.length, PROFILE_RULES.admittedNamespace),
        ),
      ),
    }),
  ),
  podSecurity: v.optional(v.picklist(POD_SECURITY_LEVELS, PROFILE_RULES.podSecurity)),
});
export type ProfileSpec = v.InferOutput<typeof ProfileSpec>;

// What a valid profile asks for in the Project's Namespace. A quantity the
// API server stored another way but with the same value is asked for as
// stored; one of another value is put back as the profile says.
function guardrailsFor(namespace: string, profileName: string, profile: ProfileSpec, children: ObservedChildren): Guardrail[] {
  const metadata = (kind: GuardrailKind): GuardrailMetadata => ({
    name: GUARDRAIL_NAMES[kind],
    namespace,
    labels: { [PROFILE_LABEL]: profileName },
  });
  const observedSpec = (kind: GuardrailKind): any => observedGuardrail(children, namespace, kind)?.spec;
  const guardrails: Guardrail[] = [];
  const { resourceQuota, limitRange, networkPolicy } = profile;
  if (resourceQuota) {
    const hard = asObservedIfEqual(resourceQuota.hard, observedSpec("ResourceQuota")?.hard);
    guardrails.push({ apiVersion: "v1", kind: "ResourceQuota", metadata: metadata("ResourceQuota"), spec: { hard } });
  }
  if (limitRange) {
    // The API server fills in a default request from the default limit;
    // asking for that too keeps the answer equal to what is stored.
    const observed = observedSpec("LimitRange")?.limits?.[0];
    const limits = limitRange.default && asObservedIfEqual(limitRange.default, observed?.default);
    const requests = { ...limitRange.default, ...limitRange.defaultRequest };
    const defaultRequest = Object.keys(requests).length ? asObservedIfEqual(requests, observed?.defaultRequest) : undefined;
    guardrails.push({
      apiVersion: "v1",
      kind: "LimitRange",
      metadata: metadata("LimitRange"),
      spec: { limits: [{ type: "Container", ...(limits ? { default: limits } : {}), ...(defaultRequest ? { defaultRequest } : {}) }] },
    });
  }
  if (networkPolicy) {
    // Pods of the Project's own Namespace, and of every namespace the profile names.
    const admitted = networkPolicy.allowFromNamespaces ?? [];
    const fromNamespaces: NamespaceSelector[] = admitted.length
      ? [{ matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: admitted }] }]
      : [];
    guardrails.push({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: metadata("NetworkPolicy"),
      spec: {
        podSelector: {},
        policyTypes: ["Ingress"],
        ingress: [{ from: [{ podSelector: {} }, ...fromNamespaces.map((namespaceSelector) => ({ namespaceSelector }))] }],
      },
    });
  }
  return guardrails;
}

function asObservedIfEqual(wanted: Quantities, observed: unknown): Quantities {
  const stored = (observed ?? {}) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(wanted).map(([key, quantity]) => {
      const current = stored[key];
      const same = typeof current === "string" && QUANTITY.test(current) && compareQuantities(current, quantity) === 0;
      return [key, same ? current : quantity];
    }),
  );
}

/** The guardrails observed in the Project's Namespace, kept exactly as they are. */
function guardrailsAsObserved(namespace: string, children: ObservedChildren): Guardrail[] {
  return GUARDRAIL_KINDS.flatMap((kind): Guardrail[] => {
    const observed = observedGuardrail(children, namespace, kind);
    if (!observed) return [];
    const profile = observed.metadata?.labels?.[PROFILE_LABEL];
    const group = GUARDRAIL_GROUPS[kind];
    return [{
      apiVersion: group.slice(group.indexOf(".") + 1),
      kind,
      metadata: { name: GUARDRAIL_NAMES[kind], namespace, labels: profile ? { [PROFILE_LABEL]: profile } : ({} as Record<string, string>) },
      spec: { ...observed.spec },
    }];
  });
}

// Members get access through Kubernetes' built-in ClusterRoles, bound in the
// Project's Namespace: `admin` manages everything there, including access;
// `edit` changes workloads; `view` reads. The CRD refuses what breaks these
// rules at admission, in the same words (manifest.test.ts checks that both
// judge one table of members alike); `sync` checks them again for Projects
// admitted before the rules existed.
export const ROLES = ["admin", "edit", "view"] as const;
export type Role = (typeof ROLES)[number];
export const MEMBER_KINDS = ["User", "Group", "ServiceAccount"] as const;

// 100 members of 253 characters, each character escaped to six bytes in
// Metacontroller's JSON copy, still fit one RoleBinding's annotations.
export const MAX_MEMBERS = 100;
export const MEMBER_NAME_MAX_LENGTH = 253;

// What the API server demands of a ServiceAccount subject, so that a
// RoleBinding it would refuse is never asked for.
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SERVICE_ACCOUNTS_OF_A_NAMESPACE = /^system:serviceaccounts:[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const MEMBER_RULES = {
  kind: `a member's kind is one of ${MEMBER_KINDS.join(", ")}`,
  role: `a member's role is one of ${ROLES.join(", ")}`,
  name: `a member's name is 1 to ${MEMBER_NAME_MAX_LENGTH} characters`,
  serviceAccount:
    "a ServiceAccount member needs the namespace it lives in, and both names must be " +
    "lowercase letters, digits, '-' or '.'",
  cluster: "only a ServiceAccount member has a namespace: Users and Groups are cluster-wide",
  once: "each User, Group or ServiceAccount is listed once, with one role",
  everyone:
    "a User or Group named system:... stands for everyone or for the cluster itself; name a ServiceAccount " +
    "as kind ServiceAccount, or all of one namespace's as Group system:serviceaccounts:<namespace>",
  most: `a Project has at most ${MAX_MEMBERS} members`,
  ownServiceAccount:
    "a ServiceAccount of the Project's own Namespace is at most an edit member: every edit member there can act as it",
} as const;

const Member = v.pipe(
  v.looseObject(
    {
      kind: v.picklist(MEMBER_KINDS, MEMBER_RULES.kind),
      name: v.pipe(
        v.string(MEMBER_RULES.name),
        v.nonEmpty(MEMBER_RULES.name),
        // In characters (code points), as the API server counts a CRD's
        // maxLength; valibot's maxLength counts UTF-16 units, two an emoji.
        v.check((name) => [...name].length <= MEMBER_NAME_MAX_LENGTH, MEMBER_RULES.name),
      ),
      namespace: v.optional(v.string(MEMBER_RULES.serviceAccount)),
      role: v.picklist(ROLES, MEMBER_RULES.role),
    },
    // A missing field breaks the rule of that field; anything else is no member at all.
    (issue) => {
      const field = issue.path?.[0]?.key;
      return field === "kind" || field === "name" || field === "role"
        ? MEMBER_RULES[field]
        : "a member is an object with kind, name and role";
    },
  ),
  v.check(
    ({ kind, name, namespace }) =>
      kind !== "ServiceAccount" ||
      (namespace !== undefined && isValidNamespaceName(namespace) && DNS1123_SUBDOMAIN.test(name)),
    MEMBER_RULES.serviceAccount,
  ),
  v.check(({ kind, namespace }) => kind === "ServiceAccount" || namespace === undefined, MEMBER_RULES.cluster),
  // Kubernetes' own Users and Groups (system:authenticated, system:masters,
  // system:anonymous, each component's identity) are never granted: through
  // a Project, anyone who may write one could hand them to everybody.
  v.check(
    ({ kind, name }) =>
      kind === "ServiceAccount" ||
      !name.startsWith("system:") ||
      (kind === "Group" && SERVICE_ACCOUNTS_OF_A_NAMESPACE.test(name)),
    MEMBER_RULES.everyone,
  ),
);
export type Member = v.InferOutput<typeof Member>;

const subjectKey = ({ kind, namespace, name }: { kind: string; namespace?: string | null; name: string }) =>
  `${kind}/${namespace ?? ""}/${name}`;
const describeSubject = ({ kind, namespace, name }: { kind: string; namespace?: string | null; name: string }) =>
  `${kind} ${namespace ? `${namespace}/` : ""}${name}`;
// By code unit, as the default sort orders strings, never by locale: the order
// must not depend on where the webhook runs.
const bySubjectKey = (a: Subject, b: Subject) => {
  const [first, second] = [subjectKey(a), subjectKey(b)];
  return first < second ? -1 : first > second ? 1 : 0;
};

export const Members = v.pipe(
  v.array(Member),
  v.maxLength(MAX_MEMBERS, (issue) => `${(issue.input as unknown[]).length} members listed; ${MEMBER_RULES.most}`),
  // Each repeat is named at its own index, with the one it repeats.
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const firstAt = new Map<string, number>();
    dataset.value.forEach((member, index) => {
      const first = firstAt.get(subjectKey(member));
      if (first === undefined) return void firstAt.set(subjectKey(member), index);
      addIssue({
        message: `${describeSubject(member)} again, as at [${first}]; ${MEMBER_RULES.once}`,
        path: [{ type: "array", origin: "value", input: dataset.value, key: index, value: member }],
      });
    });
  }),
);

// Kubernetes lets an edit member act as any ServiceAccount of the Namespace
// (impersonate it, or run a Pod as it), so one of those as an admin member
// would make every edit member an admin of the Project, able to rewrite or
// delete it. ServiceAccounts of other namespaces are the Project's admins'
// to trust.
function membersIn(namespace: string) {
  return v.pipe(
    Members,
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      dataset.value.forEach((member, index) => {
        if (member.kind !== "ServiceAccount" || member.namespace !== namespace || member.role !== "admin") return;
        addIssue({ message: MEMBER_RULES.ownServiceAccount, path: [{ type: "array", origin: "value", input: dataset.value, key: index, value: member }] });
      });
    }),
  );
}

// One RoleBinding per role and kind of subject, and per namespace for
// ServiceAccounts. Metacontroller merges a list whose items all have a
// `name` as a map keyed by that name, so two subjects of one name in one
// list (ServiceAccounts ci/deployer and prod/deployer, or User and Group
// ops) would collapse into one. Within each of these RoleBindings every
// subject has the same kind and namespace, and no member is listed twice,
// so every name in a list is unique. Named after the role, a RoleBinding
// never has to change its roleRef, which Kubernetes does not allow.
export function roleBindingNameFor(role: Role, member: Pick<Member, "kind" | "namespace">): string {
  return `${PARENT.singular}-${role}-${subjectGroupOf(member)}`;
}

function subjectGroupOf({ kind, namespace }: Pick<Member, "kind" | "namespace">): string {
  return kind === "ServiceAccount" ? `serviceaccounts-${namespace}` : kind === "User" ? "users" : "groups";
}

// Every member may read the Project itself (`kubectl get project <name>`):
// a ClusterRole for that one Project, bound cluster-wide, grouped as the
// RoleBindings are. Named after the API group, as cluster-wide names are
// shared with everything else in the cluster.
export function readerRoleNameFor(project: string): string {
  return `${PARENT.plural}.${GROUP}:${project}:reader`;
}

export function readerBindingNameFor(project: string, member: Pick<Member, "kind" | "namespace">): string {
  return `${readerRoleNameFor(project)}:${subjectGroupOf(member)}`;
}

// ## 4. customize
//
// A Namespace that someone else created is not among the Project's children,
// so `sync` would see nothing there and Metacontroller's create would fail
// quietly, over and over. Asking for the Namespace by name puts it in every
// sync request's `related`, whoever owns it, and makes Metacontroller watch it:
// when it goes away, the Project is synced again and gets its own. The
// profile is asked for the same way: when an admin edits it, every Project
// that names it is synced again, so a changed quota reaches them all at once
// and not only new Projects; when it is missing, `sync` can say so.
// Metacontroller caches this answer per Project generation, so it may depend
// on the Project alone. A name that cannot be a Namespace's is not asked for:
// `sync` refuses such a Project anyway. No rule at all, not an empty `names`,
// which Metacontroller would read as "every Namespace".

export function customize(parent: Project): CustomizeResponse {
  const name = namespaceNameFor(parent.metadata.name);
  if (!isValidNamespaceName(name)) return { relatedResources: [] };
  return {
    relatedResources: [
      { apiVersion: "v1", resource: "namespaces", names: [name] },
      { apiVersion: API_VERSION, resource: PROFILE.plural, names: [profileNameOf(parent)] },
    ],
  };
}

// ## 5. sync

type Readiness = Pick<ReadyCondition, "status" | "reason" | "message">;

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
  const name = namespaceNameFor(parent.metadata.name);
  const observed = children[NAMESPACES];
  // A profile that cannot be read (missing, or admitted before its rules)
  // leaves the Namespace's guardrails and Pod Security label as observed:
  // a quota is never dropped because its profile was briefly gone.
  const profileName = profileNameOf(parent);
  const profile = readProfile(profileName, related, observed[name] ? name : undefined);
  const podSecurity = profile.spec ? profile.spec.podSecurity : observed[name]?.metadata?.labels?.[POD_SECURITY_LABEL];
  const labels = {
    [PROJECT_LABEL]: parent.metadata.name,
    ...(parent.spec?.deletionProtection ? { [PROTECTED_BY_LABEL]: parent.metadata.name } : {}),
    ...(podSecurity ? { [POD_SECURITY_LABEL]: podSecurity } : {}),
  };
  const wanted: Namespace = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      labels,
      annotations: {
        description: parent.spec?.description ?? "",
        license: parent.spec?.license ?? DEFAULT_LICENSE,
      },
    },
  };
  const refusal = whyTheApiServerWouldRefuse(wanted);
  // The same name among the related objects but not among the children is a
  // Namespace someone else made: Metacontroller would never adopt it, and we
  // never ask it to change or delete it.
  const foreign = observed[name] ? undefined : related[NAMESPACES]?.[name];
  const members = v.safeParse(membersIn(name), parent.spec?.members ?? []);
  // Guardrails and RoleBindings go only into the Project's own Namespace,
  // once it is there and Active: never into someone else's, nor into one
  // being deleted. Members get access once the guardrails are there, so that
  // nothing they run escapes them; access once given is not taken back while
  // a guardrail is being put right.
  const namespaceActive = observed[name]?.status?.phase === "Active";
  const guardrails = profile.spec
    ? namespaceActive ? guardrailsFor(name, profileName, profile.spec, children) : []
    : guardrailsAsObserved(name, children);
  const guardrailsThere = guardrails.every((guardrail) => observedGuardrail(children, name, guardrail.kind));
  const accessGiven = Object.keys(children[ROLE_BINDINGS]).some((key) => key.startsWith(`${name}/`));
  const granted = members.success && namespaceActive && members.output.length > 0 && (guardrailsThere || accessGiven);
  const roleBindings = granted ? roleBindingsFor(name, members.output) : [];
  const readers = granted ? readersFor(parent.metadata.name, members.output) : undefined;
  const bindings: Binding[] = [...roleBindings, ...(readers?.bindings ?? [])];
  // A binding of this Project's that grants a subject the spec does not
  // declare (added by hand) cannot be put right by Metacontroller's merge,
  // which only removes list entries it wrote itself. Left out of one answer,
  // it is deleted; the next sync creates it afresh, as declared.
  const undeclared = bindings.flatMap((binding) => {
    const extra = undeclaredSubjects(observedBinding(children, binding), binding);
    return extra.length ? [{ binding, extra }] : [];
  });

  // Metacontroller claims as this Project's child whatever carries its
  // label, wherever it is. What lies outside the places its children belong
  // is never asked for, and so deleted: nothing outside its own Namespace
  // becomes the Project's (k8s.yaml's ownership guard keeps anyone but
  // Metacontroller from labelling one; this holds if one got in before it).
  const strays = strayChildren(children, name, parent.metadata.name);
  const otherNamespaces = Object.keys(observed).filter((observedName) => observedName !== name);

  // Phase 1: the status, from what was observed. It must depend on nothing
  // else: writing it triggers another sync, and an answer that differed each
  // time would make Metacontroller loop forever. The first problem found, in
  // the order a user would fix them, is the one reported.
  const generation = parent.metadata.generation;
  const readiness =
    refusal ??
    (members.success ? undefined : invalidMembers(members.issues)) ??
    (foreign ? conflictWith(name, foreign) : undefined) ??
    profile.problem ??
    namespaceNotReady(name, observed[name]) ??
    removingStrays(name, strays) ??
    guardrailsNotReady(name, guardrails, children, members.success && members.output.length > 0 && !granted) ??
    (undeclared.length ? revoking(undeclared) : undefined) ??
    accessOf(name, bindings, readers?.role, children, otherNamespaces);
  const appliedProfile = profile.spec ? profileName : guardrails.map((guardrail) => guardrail.metadata.labels[PROFILE_LABEL]).find(Boolean);
  const status: ProjectStatus = {
    namespaces: Object.keys(observed).length,
    // Named only where it is, or can become, this Project's: never one that is someone else's.
    ...((refusal || foreign) && !observed[name] ? {} : { namespace: name }),
    ...(appliedProfile ? { profile: appliedProfile } : {}),
    members: parent.spec?.members?.length ?? 0,
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
  // refusal changes nothing. Only its protection follows the spec, always.
  // A Namespace the API server would refuse, one whose name is taken, or one
  // whose guardrails cannot be known is not asked for: the create could only
  // fail, or make a Namespace without them. A binding nobody needs any more
  // is left out, and so removed; members that break the rules get no
  // binding at all: access is withdrawn rather than guessed.
  const keptAsObserved = (observedName: string): Namespace => {
    return {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name: observedName,
        labels: observedName === name ? labels : ownershipOnly(labels),
        annotations: ownAnnotationsOf(observed[observedName]),
      },
    };
  };
  const carriedOut = !refusal && !foreign && !profile.problem;
  const namespaces = [
    ...(carriedOut ? [wanted] : []),
    ...Object.keys(observed)
      .filter((observedName) => !(carriedOut && observedName === name))
      .map(keptAsObserved),
  ];
  const revoked = new Set<Binding>(undeclared.map(({ binding }) => binding));
  const kept = (binding: Binding) => !revoked.has(binding);
  return {
    status,
    children: [
      ...namespaces,
      ...guardrails.filter((guardrail) => profile.problem || !narrowedByHand(children, guardrail)),
      ...roleBindings.filter(kept),
      ...(readers ? [readers.role, ...readers.bindings.filter(kept)] : []),
    ],
  };
}

// A Namespace left from an older naming rule keeps only whose it is and its
// protection: the guardrails are the Project's own Namespace's.
function ownershipOnly(labels: Record<string, string>): Record<string, string> {
  const { [POD_SECURITY_LABEL]: _podSecurity, ...ownership } = labels;
  return ownership;
}

type ProfileReading = { spec: ProfileSpec; problem?: undefined } | { spec?: undefined; problem: Readiness };

/** The profile's spec, or why it cannot be read, saying what becomes of the Namespace (`undefined` where there is none yet). */
function readProfile(profileName: string, related: RelatedObjects, namespace: string | undefined): ProfileReading {
  const found = related[PROFILES]?.[profileName];
  const keeping = namespace
    ? `Namespace ${namespace} keeps the guardrails it has, and is otherwise left as it is`
    : "no Namespace is created without guardrails";
  if (!found) {
    return {
      problem: {
        status: "False",
        reason: "ProfileNotFound",
        message:
          `ProjectProfile ${profileName} does not exist, so ${keeping}. ` +
          "Set spec.profile to one that does (kubectl get projectprofiles), or ask a cluster admin to create it.",
      },
    };
  }
  const spec = v.safeParse(ProfileSpec, found.spec ?? {});
  if (spec.success) return { spec: spec.output };
  const problems = [...new Set(spec.issues.map((issue) => `spec${pathOf(issue)}: ${issue.message}`))];
  return {
    problem: {
      status: "False",
      reason: "InvalidProfile",
      message: `ProjectProfile ${profileName} breaks its rules (${problems.join("; ")}), so ${keeping}. A cluster admin must fix it.`,
    },
  };
}

/** `.resourceQuota.hard` or `[2]`: where in the object an issue is. */
function pathOf(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? []).map(({ key }) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("");
}

// Metacontroller's merge cannot take back a selector added by hand to the
// NetworkPolicy's `podSelector: {}`, which would leave the other pods open.
// Left out of one answer, the policy is deleted, and made afresh on the next.
function narrowedByHand(children: ObservedChildren, guardrail: Guardrail): boolean {
  const selector = guardrail.kind === "NetworkPolicy" ? observedGuardrail(children, guardrail.metadata.namespace, "NetworkPolicy")?.spec?.["podSelector"] : undefined;
  return typeof selector === "object" && selector !== null && Object.keys(selector).length > 0;
}

// A guardrail is in place when every field the answer sets is stored with
// that value (quantities compared by value), and none is left that the
// profile no longer asks for.
function guardrailsNotReady(name: string, guardrails: Guardrail[], children: ObservedChildren, accessWaits: boolean): Readiness | undefined {
  const notYet = guardrails.filter((guardrail) => !holds(observedGuardrail(children, name, guardrail.kind), guardrail));
  const wanted = new Set(guardrails.map((guardrail) => `${guardrail.kind} ${guardrail.metadata.name}`));
  const leftOver = GUARDRAIL_KINDS.flatMap((kind) =>
    Object.keys(children[GUARDRAIL_GROUPS[kind]])
      .map((key): [string, string] => [kind, key.slice(key.indexOf("/") + 1)])
      .filter(([, guardrail]) => !wanted.has(`${kind} ${guardrail}`)),
  );
  if (notYet.length === 0 && leftOver.length === 0) return undefined;
  const waits = [
    ...(notYet.length ? [`${byKind(notYet.map((guardrail) => [guardrail.kind, guardrail.metadata.name]))} to be as its profile says`] : []),
    ...(leftOver.length ? [`${byKind(leftOver)} to be removed`] : []),
  ];
  return {
    status: "False",
    reason: "WaitingForGuardrails",
    message: `Namespace ${name} is Active; waiting for ${waits.join(", and ")}${accessWaits ? "; members get access once they are in place" : ""}.`,
  };
}

function holds(observed: unknown, wanted: unknown): boolean {
  if (typeof wanted === "string" && QUANTITY.test(wanted)) {
    return typeof observed === "string" && QUANTITY.test(observed) && compareQuantities(observed, wanted) === 0;
  }
  if (Array.isArray(wanted)) {
    return Array.isArray(observed) && observed.length === wanted.length && wanted.every((item, index) => holds(observed[index], item));
  }
  if (wanted !== null && typeof wanted === "object") {
    if (observed === null || typeof observed !== "object") return false;
    const entries = Object.entries(wanted);
    // `{}` selects everything: a selector narrowed by hand is not as asked.
    if (entries.length === 0) return Object.keys(observed).length === 0;
    return entries.every(([key, value]) => holds((observed as Record<string, unknown>)[key], value));
  }
  return observed === wanted;
}

/** Metacontroller keys namespaced children of this cluster-scoped parent `<namespace>/<name>`, cluster-scoped ones by name. */
function observedBinding(children: ObservedChildren, binding: Binding) {
  return binding.kind === "RoleBinding"
    ? children[ROLE_BINDINGS][`${binding.metadata.namespace}/${binding.metadata.name}`]
    : children[CLUSTER_ROLE_BINDINGS][binding.metadata.name];
}

// Metacontroller's merge removes a subject it applied before and no longer
// asked for, and keeps one it never applied: only those are undeclared. Its
// copy is read only when a subject is not asked for, so a binding as asked,
// the usual case, costs no JSON parse.
function undeclaredSubjects(observed: ObservedChildren[typeof ROLE_BINDINGS][string] | undefined, wanted: Binding): string[] {
  const asked = new Set(wanted.subjects.map(subjectKey));
  const unasked = (observed?.subjects ?? []).filter((subject) => !asked.has(subjectKey(subject)));
  if (unasked.length === 0) return [];
  const appliedBefore = new Set(lastAppliedSubjects(observed).map(subjectKey));
  return unasked.filter((subject) => !appliedBefore.has(subjectKey(subject))).map(describeSubject);
}

// An unreadable copy reads as none: then every subject not asked for now
// counts as undeclared, and the binding is made afresh.
const LastAppliedBinding = v.pipe(
  v.string(),
  v.parseJson(),
  v.looseObject({ subjects: v.array(v.looseObject({ kind: v.string(), name: v.string(), namespace: v.optional(v.string()) })) }),
);

function lastAppliedSubjects(observed: ObservedChildren[typeof ROLE_BINDINGS][string] | undefined) {
  const copy = v.safeParse(LastAppliedBinding, observed?.metadata?.annotations?.[LAST_APPLIED_ANNOTATION]);
  return copy.success ? copy.output.subjects : [];
}

function revoking(undeclared: { binding: Binding; extra: string[] }[]): Readiness {
  const grants = undeclared.map(({ binding, extra }) => `${binding.kind} ${binding.metadata.name} grants ${extra.join(", ")}`);
  return {
    status: "False",
    reason: "RevokingUndeclaredAccess",
    message:
      `${grants.join("; ")}, which spec.members does not declare. ` +
      "Metacontroller deletes it, and it is created again as declared; add members to spec.members instead.",
  };
}

function ownAnnotationsOf(namespace: ObservedChildren[typeof NAMESPACES][string] | undefined): Partial<NamespaceAnnotations> {
  const observed = namespace?.metadata?.annotations ?? {};
  return Object.fromEntries(NAMESPACE_ANNOTATIONS.flatMap((key) => (observed[key] === undefined ? [] : [[key, observed[key]]])));
}

/** The RoleBindings the members need, each for one role and group of subjects. */
function roleBindingsFor(namespace: string, members: Member[]): RoleBinding[] {
  return grouped(members, (member) => roleBindingNameFor(member.role, member), (name, { role }) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name, namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: [],
  }));
}

/** The ClusterRole that reads this one Project, and its bindings to every member, whatever their role. */
function readersFor(project: string, members: Member[]): { role: ClusterRole; bindings: ClusterRoleBinding[] } {
  const role: ClusterRole = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: readerRoleNameFor(project) },
    rules: [{ apiGroups: [GROUP], resources: [PARENT.plural], resourceNames: [project], verbs: ["get", "watch"] }],
  };
  const bindings = grouped(members, (member) => readerBindingNameFor(project, member), (name) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name },
    subjects: [],
  }));
  return { role, bindings };
}

/** Members' subjects gathered into the bindings `nameOf` assigns them, in a fixed order so that the same spec gives the same answer. */
function grouped<B extends Binding>(members: Member[], nameOf: (member: Member) => string, make: (name: string, member: Member) => B): B[] {
  const byName = new Map<string, B>();
  const byRoleThenSubject = (a: Member, b: Member) => ROLES.indexOf(a.role) - ROLES.indexOf(b.role) || bySubjectKey(subjectOf(a), subjectOf(b));
  for (const member of [...members].sort(byRoleThenSubject)) {
    const name = nameOf(member);
    const binding = byName.get(name) ?? make(name, member);
    binding.subjects.push(subjectOf(member));
    byName.set(name, binding);
  }
  return [...byName.values()];
}

function subjectOf({ kind, name, namespace }: Member): Subject {
  if (kind === "ServiceAccount") return { kind, name, namespace: namespace ?? "" };
  return { kind, apiGroup: "rbac.authorization.k8s.io", name };
}

function whyTheApiServerWouldRefuse(namespace: Namespace): Readiness | undefined {
  const { name } = namespace.metadata;
  if (!isValidNamespaceName(name)) {
    return {
      status: "False",
      reason: "InvalidName",
      message: `${name} cannot be a Namespace name: ${PROJECT_NAME_RULE}. Recreate the Project under such a name.`,
    };
  }
  if (!mayExceedAnnotationLimit(namespace.metadata.annotations)) return undefined;
  const bytes = annotationBytes(namespace);
  if (bytes <= ANNOTATIONS_MAX_BYTES) return undefined;
  return {
    status: "False",
    reason: "SpecTooLarge",
    message:
      `description and license would make ${bytes} bytes of annotations on Namespace ${name}, ` +
      `counting the copy Metacontroller keeps; Kubernetes allows ${ANNOTATIONS_MAX_BYTES}. Shorten the description.`,
  };
}

function conflictWith(name: string, namespace: NonNullable<RelatedObjects[typeof NAMESPACES]>[string]): Readiness {
  const owners = namespace.metadata.ownerReferences ?? [];
  const owner = owners.find((reference) => reference.controller) ?? owners[0];
  const whose = owner ? `belongs to ${owner.kind} ${owner.name}` : "is not this Project's";
  const resolution =
    namespace.status?.phase === "Terminating"
      ? "It is being deleted; this Project gets its own once it is gone."
      : "Delete it if nobody needs it, or recreate this Project under another name; once it is gone, " +
        "this Project gets its own.";
  return {
    status: "False",
    reason: "NamespaceConflict",
    message: `Namespace ${name} already exists and ${whose}, so it is left as it is. ${resolution}`,
  };
}

function invalidMembers(issues: readonly v.BaseIssue<unknown>[]): Readiness {
  const where = (issue: v.BaseIssue<unknown>) =>
    (issue.path ?? [])
      .filter((segment) => typeof segment.key === "number")
      .map((segment) => `[${String(segment.key)}]`)
      .join("");
  const problems = [...new Set(issues.map((issue) => `spec.members${where(issue)}: ${issue.message}`))];
  return {
    status: "False",
    reason: "InvalidMembers",
    message: `${problems.join("; ")}. Until that is fixed, no member has access.`,
  };
}

function namespaceNotReady(name: string, namespace: ObservedChildren[typeof NAMESPACES][string] | undefined): Readiness | undefined {
  const phase = namespace?.status?.phase;
  if (!namespace) {
    return { status: "False", reason: "WaitingForNamespace", message: `Waiting for Metacontroller to create Namespace ${name}.` };
  }
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

// Access is in place when every binding asked for grants exactly what was
// asked, the reader role is there, and nothing else this Project owns is left
// to grant what was taken away.
function accessOf(
  name: string,
  wanted: Binding[],
  readerRole: ClusterRole | undefined,
  children: ObservedChildren,
  otherNamespaces: string[],
): Readiness {
  const granted = (binding: ObservedChildren[typeof ROLE_BINDINGS][string] | undefined) =>
    binding ? `${binding.roleRef.name}:${(binding.subjects ?? []).map(subjectKey).sort().join(",")}` : undefined;
  const keyOf = (object: Binding | ClusterRole) =>
    object.kind === "RoleBinding" ? `${ROLE_BINDINGS} ${object.metadata.namespace}/${object.metadata.name}` : `${object.kind} ${object.metadata.name}`;
  const notYet = [
    ...wanted.filter((binding) => granted(observedBinding(children, binding)) !== granted(binding)),
    ...(readerRole && !children[CLUSTER_ROLES][readerRole.metadata.name] ? [readerRole] : []),
  ];
  const wantedKeys = new Set([...wanted, ...(readerRole ? [readerRole] : [])].map(keyOf));
  const leftOver = [
    ...Object.keys(children[ROLE_BINDINGS]).map((key) => ({ key: `${ROLE_BINDINGS} ${key}`, kind: "RoleBinding", name: key.slice(key.indexOf("/") + 1) })),
    ...Object.keys(children[CLUSTER_ROLES]).map((key) => ({ key: `ClusterRole ${key}`, kind: "ClusterRole", name: key })),
    ...Object.keys(children[CLUSTER_ROLE_BINDINGS]).map((key) => ({ key: `ClusterRoleBinding ${key}`, kind: "ClusterRoleBinding", name: key })),
  ].filter(({ key }) => !wantedKeys.has(key));
  if (notYet.length === 0 && leftOver.length === 0) {
    const roleBindings = wanted.filter((binding) => binding.kind === "RoleBinding").map((binding) => binding.metadata.name);
    const access = roleBindings.length === 0 ? "" : `, with ${roleBindings.join(", ")} as asked`;
    const kept = otherNamespaces.length === 0 ? "" : ` It also owns Namespace ${otherNamespaces.join(", ")}, kept as it is: delete it by hand once nobody needs it.`;
    return { status: "True", reason: "NamespaceActive", message: `Namespace ${name} is Active${access}.${kept}` };
  }
  const waits = [
    ...(notYet.length ? [`${byKind(notYet.map((object) => [object.kind, object.metadata.name]))} to be as asked`] : []),
    ...(leftOver.length ? [`${byKind(leftOver.map(({ kind, name }) => [kind, name]))} to be removed`] : []),
  ];
  return {
    status: "False",
    reason: "WaitingForRoleBindings",
    message: `Namespace ${name} is Active; waiting for ${waits.join(", and ")}.`,
  };
}

/** The children observed outside the places this Project's belong: its Namespace, its reader role and that role's bindings. */
function strayChildren(children: ObservedChildren, namespace: string, project: string): [kind: string, name: string][] {
  const reader = readerRoleNameFor(project);
  const inNamespace = (key: string) => key.startsWith(`${namespace}/`);
  const places: [group: string, kind: string, belongs: (key: string) => boolean][] = [
    ...GUARDRAIL_KINDS.map((kind): [string, string, (key: string) => boolean] => [GUARDRAIL_GROUPS[kind], kind, inNamespace]),
    [ROLE_BINDINGS, "RoleBinding", inNamespace],
    [CLUSTER_ROLES, "ClusterRole", (key) => key === reader],
    [CLUSTER_ROLE_BINDINGS, "ClusterRoleBinding", (key) => key.startsWith(`${reader}:`)],
  ];
  return places.flatMap(([group, kind, belongs]) => Object.keys(children[group] ?? {}).filter((key) => !belongs(key)).map((key): [string, string] => [kind, key]));
}

function removingStrays(namespace: string, strays: [kind: string, name: string][]): Readiness | undefined {
  if (strays.length === 0) return undefined;
  return {
    status: "False",
    reason: "RemovingStrayChildren",
    message:
      `${byKind(strays)} carry this Project's controller-uid label outside Namespace ${namespace} and the objects ` +
      "that let its members read it, so they are not its children: Metacontroller deletes them.",
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
