/**
 * # Guardrails: every Project's Namespace gets the limits its profile sets
 *
 * A platform team expects every Namespace to come with limits, or one team
 * can starve the cluster or reach into another's pods. Cluster admins write
 * them once, as a ProjectProfile (agrrh.com/v1, cluster-scoped); a Project
 * names one in `spec.profile`, or gets `default`. Each part of a profile is
 * optional and becomes one object in the Project's Namespace (a
 * ResourceQuota, a LimitRange with default container limits, a
 * NetworkPolicy), or its Pod Security label.
 *
 * The customize hook asks for the profile by name: when an admin edits it,
 * every Project that names it is synced again, so a changed quota reaches
 * them all at once and not only new Projects; when it is missing, `sync`
 * can say so. A profile that cannot be read leaves the Namespace's
 * guardrails as they are, and no Namespace is made without them.
 *
 * Read top to bottom: the names, the request's parts, the rules of a
 * profile, what it becomes, and the plan `sync` composes.
 */
import * as v from "valibot";
import type { Child, Readiness } from "../sync.ts";
import type { Feature } from "./index.ts";

// Its words, none left once it is taken away (take-away.ts's VOCABULARY says which).
export const VOCABULARY = ["guardrail", "guardrails", "profile", "profiles", "ProjectProfile", "ProjectProfiles", "quota", "quotas", "ResourceQuota", "projectQuota", "LimitRange", "podSecurity", "podSecurityWarn", "podSecurityAudit", "securityContextDefaults", "allowedRegistries", "allowedClasses", "SetAlways", "RequireAlways", "pod-defaults", "pod-rules"] as const;

// ## The names
//
// Spelled out, not built from sync.ts's GROUP: a feature imports only types
// from sync.ts (guardrails.test.ts proves the spellings agree).
export const PROFILE = { kind: "ProjectProfile", plural: "projectprofiles", apiVersion: "agrrh.com/v1" } as const;
export const PROFILES = `${PROFILE.kind}.${PROFILE.apiVersion}` as const;
export const RESOURCE_QUOTAS = "ResourceQuota.v1";
export const LIMIT_RANGES = "LimitRange.v1";
export const NETWORK_POLICIES = "NetworkPolicy.networking.k8s.io/v1";

// ## The request
//
// A ResourceQuota, LimitRange or NetworkPolicy is read whole: to tell
// whether it is as asked, and to keep it as it is while its profile is
// missing.
const ObservedGuardrail = v.looseObject({
  metadata: v.optional(v.looseObject({ labels: v.nullish(v.record(v.string(), v.string())) })),
  spec: v.nullish(v.looseObject({})),
  // A ResourceQuota's usage, as the quota controller and quota admission write it.
  status: v.nullish(v.looseObject({ used: v.nullish(v.record(v.string(), v.string())) })),
});
const children = { [RESOURCE_QUOTAS]: ObservedGuardrail, [LIMIT_RANGES]: ObservedGuardrail, [NETWORK_POLICIES]: ObservedGuardrail };
type ObservedGuardrails = { [G in keyof typeof children]: Record<string, v.InferOutput<typeof ObservedGuardrail>> };

// A profile is checked against the rules below by `sync`, not by the
// request's schema: a profile admitted before those rules existed then gets
// its Projects a status that names what is wrong, instead of a refused
// request.
const related = { [PROFILES]: v.looseObject({ spec: v.nullish(v.unknown()) }) };
type RelatedProfiles = { [PROFILES]?: Record<string, { spec?: unknown }> };

const spec = { profile: v.nullish(v.string()) };

// ## The rules
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
    policyTypes: ["Ingress"] | ["Ingress", "Egress"];
    ingress: [{ from: Peer[] }];
    egress?: { to: Peer[]; ports?: { protocol: "UDP" | "TCP"; port: number }[] }[];
  };
};
type Peer =
  | { podSelector: Record<string, never> }
  | { namespaceSelector: NamespaceSelector | { matchLabels: Record<string, string> }; podSelector?: { matchLabels: Record<string, string> } }
  | { ipBlock: { cidr: string } };

/** A guardrail as observed and kept while its profile cannot be read: whatever spec it has. */
type KeptGuardrail = { apiVersion: string; kind: GuardrailKind; metadata: GuardrailMetadata; spec: Record<string, unknown> };
export type Guardrail = ResourceQuota | LimitRange | NetworkPolicy | KeptGuardrail;

// Projects that name no profile use `default`. Each guardrail carries the
// profile's name, so that the status can tell which profile a Namespace
// really has.
export const DEFAULT_PROFILE = "default";
export const PROFILE_LABEL = "agrrh.com/profile";
export const POD_SECURITY_LABEL = "pod-security.kubernetes.io/enforce";
export const POD_SECURITY_WARN_LABEL = "pod-security.kubernetes.io/warn";
export const POD_SECURITY_AUDIT_LABEL = "pod-security.kubernetes.io/audit";
const POD_SECURITY_LABELS = [POD_SECURITY_LABEL, POD_SECURITY_WARN_LABEL, POD_SECURITY_AUDIT_LABEL] as const;
// The rules of \`pods\` the API server itself applies to every Pod, and to
// every Pod template, of the Namespace: k8s.yaml's pod-defaults and
// pod-rules admission policies read them off the Namespace
// (\`namespaceObject\`), which no tenant can write, so they cost one policy
// each, whatever the number of Projects, and no webhook on the Pod path.
export const RULE_ANNOTATIONS = {
  profile: "agrrh.com/profile",
  imagePullPolicy: "agrrh.com/image-pull-policy",
  securityContextDefaults: "agrrh.com/security-context-defaults",
  allowedRegistries: "agrrh.com/allowed-registries",
  nodeSelector: "agrrh.com/node-selector",
  allowedStorageClasses: "agrrh.com/allowed-storage-classes",
  allowedIngressClasses: "agrrh.com/allowed-ingress-classes",
  allowedPriorityClasses: "agrrh.com/allowed-priority-classes",
  allowedRuntimeClasses: "agrrh.com/allowed-runtime-classes",
} as const;
export const CLASS_KINDS = ["storage", "ingress", "priority", "runtime"] as const;
const CLASS_ANNOTATIONS = {
  storage: RULE_ANNOTATIONS.allowedStorageClasses,
  ingress: RULE_ANNOTATIONS.allowedIngressClasses,
  priority: RULE_ANNOTATIONS.allowedPriorityClasses,
  runtime: RULE_ANNOTATIONS.allowedRuntimeClasses,
} as const;
export const MAX_CLASSES = 16;
export const MAX_NODE_SELECTOR = 16;
// A label's key and value, as the API server checks them on a Pod's nodeSelector.
const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
// A class's name is a DNS-1123 subdomain; an IPv4 or IPv6 block in CIDR form.
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const CIDR = /^([0-9]{1,3}(\.[0-9]{1,3}){3}\/[0-9]{1,2}|[0-9a-fA-F:]+\/[0-9]{1,3})$/;
export const DNS_NAMESPACE = "kube-system";
export const DNS_POD_LABELS = { "k8s-app": "kube-dns" } as const;
export const IMAGE_PULL_POLICIES = ["SetAlways", "RequireAlways"] as const;
export const SECURITY_CONTEXT_DEFAULTS = ["Restricted"] as const;
export const MAX_REGISTRIES = 16;
// A prefix ends with / so that registry.example.com/ cannot be met by
// registry.example.com.evil.io/…; nothing in it that the annotation's
// separator, a space, or a shell could split.
export const REGISTRY_PREFIX = /^[a-z0-9]([-a-z0-9.:]*[a-z0-9])?(\/[-a-z0-9._]+)*\/$/;
export const POD_SECURITY_LEVELS = ["privileged", "baseline", "restricted"] as const;
export const GUARDRAIL_NAMES = { ResourceQuota: "project-quota", LimitRange: "project-limits", NetworkPolicy: "project-isolation" } as const;
// The Project's share of its profile's projectQuota in each of its
// Namespaces, beside the Namespace's own quota.
export const PROJECT_QUOTA_NAME = "project-total-quota";
type GuardrailKind = keyof typeof GUARDRAIL_NAMES;
// Where Metacontroller files each kind among the children.
const GUARDRAIL_GROUPS = { ResourceQuota: RESOURCE_QUOTAS, LimitRange: LIMIT_RANGES, NetworkPolicy: NETWORK_POLICIES } as const;
const GUARDRAIL_KINDS = Object.keys(GUARDRAIL_NAMES) as GuardrailKind[];

/** The guardrail of that kind observed in the Namespace, keyed `<namespace>/<name>` as Metacontroller files it. */
function observedGuardrail(children: ObservedGuardrails, namespace: string, kind: GuardrailKind) {
  return children[GUARDRAIL_GROUPS[kind]][`${namespace}/${GUARDRAIL_NAMES[kind]}`];
}

export function profileNameOf(spec: { profile?: string | null }): string {
  return spec.profile || DEFAULT_PROFILE;
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
// What the Project's total limits: what the team's workloads consume,
// wherever they run. Object counts other than pods stay each Namespace's own
// (its resourceQuota).
export const PROJECT_QUOTA_RESOURCES = ["requests.cpu", "requests.memory", "requests.storage", "limits.cpu", "limits.memory", "pods"] as const;
export const MAX_QUANTITIES = 32;
export const MAX_ADMITTED_NAMESPACES = 32;
// A namespace's name is a DNS-1123 label.
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const PROFILE_RULES = {
  quantity:
    "a quantity is a number with at most 3 decimals and an optional unit (k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi or Ei), " +
    "or a whole number of m, such as 500m, 2 or 4Gi; quote it",
  count: `${COUNTED_RESOURCES.join(", ")} and resources named with a / are counted in whole numbers`,
  quotaResource: `a quota limits ${QUOTA_RESOURCES.join(", ")}, hugepages-<size>, or a resource named with a /, such as count/deployments.apps`,
  limitedResource: `default requests and limits are for ${LIMITED_RESOURCES.join(", ")} only`,
  projectQuotaResource: `projectQuota limits ${PROJECT_QUOTA_RESOURCES.join(", ")} only`,
  requestOverLimit: "a default request is at most the default limit of the same resource",
  admittedNamespace: `networkPolicy.allowFromNamespaces lists at most ${MAX_ADMITTED_NAMESPACES} namespace names, each once`,
  podSecurity: `podSecurity, podSecurityWarn and podSecurityAudit are each one of ${POD_SECURITY_LEVELS.join(", ")}`,
  imagePullPolicy: `pods.imagePullPolicy is ${IMAGE_PULL_POLICIES.join(" or ")}`,
  securityContextDefaults: `pods.securityContextDefaults is ${SECURITY_CONTEXT_DEFAULTS.join(" or ")}`,
  registry: `pods.allowedRegistries lists at most ${MAX_REGISTRIES} image name prefixes, each once, each a registry host and optional path ending in /, such as registry.example.com/team/`,
  classes: `each list of allowedClasses (${CLASS_KINDS.join(", ")}) names at most ${MAX_CLASSES} classes, each once`,
  nodeSelector: `pods.nodeSelector holds at most ${MAX_NODE_SELECTOR} node labels, each a label key and value`,
  egress: `networkPolicy.egress.toNamespaces lists at most ${MAX_ADMITTED_NAMESPACES} namespace names and toCIDRs at most ${MAX_ADMITTED_NAMESPACES} address blocks, such as 10.0.0.0/8, each once`,
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
/** A list of at most `most` strings, each once. */
const names = (item: v.GenericSchema<string, string>, most: number, message: string) =>
  v.pipe(v.array(item), v.maxLength(most, message), v.check((list) => new Set(list).size === list.length, message));
const isLimitedResource = (key: string) => (LIMITED_RESOURCES as readonly string[]).includes(key);
const isProjectQuotaResource = (key: string) => (PROJECT_QUOTA_RESOURCES as readonly string[]).includes(key);

export const ProfileSpec = v.looseObject({
  resourceQuota: v.optional(
    v.looseObject({
      hard: v.pipe(
        quantities(isQuotaResource, PROFILE_RULES.quotaResource),
        v.check((hard) => Object.entries(hard).every(([key, quantity]) => !isCounted(key) || isWholeQuantity(quantity)), PROFILE_RULES.count),
      ),
    }),
  ),
  projectQuota: v.optional(
    v.looseObject({
      hard: v.pipe(
        quantities(isProjectQuotaResource, PROFILE_RULES.projectQuotaResource),
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
          v.array(v.pipe(v.string(PROFILE_RULES.admittedNamespace), v.regex(DNS1123_LABEL, PROFILE_RULES.admittedNamespace), v.maxLength(63, PROFILE_RULES.admittedNamespace))),
          v.maxLength(MAX_ADMITTED_NAMESPACES, PROFILE_RULES.admittedNamespace),
          v.check((names) => new Set(names).size === names.length, PROFILE_RULES.admittedNamespace),
        ),
      ),
      egress: v.optional(
        v.looseObject({
          toNamespaces: v.optional(names(v.pipe(v.string(PROFILE_RULES.egress), v.regex(DNS1123_LABEL, PROFILE_RULES.egress), v.maxLength(63, PROFILE_RULES.egress)), MAX_ADMITTED_NAMESPACES, PROFILE_RULES.egress)),
          toCIDRs: v.optional(names(v.pipe(v.string(PROFILE_RULES.egress), v.regex(CIDR, PROFILE_RULES.egress)), MAX_ADMITTED_NAMESPACES, PROFILE_RULES.egress)),
        }),
      ),
    }),
  ),
  allowedClasses: v.optional(
    v.looseObject(
      Object.fromEntries(
        CLASS_KINDS.map((kind) => [kind, v.optional(names(v.pipe(v.string(PROFILE_RULES.classes), v.regex(DNS1123_SUBDOMAIN, PROFILE_RULES.classes)), MAX_CLASSES, PROFILE_RULES.classes))]),
      ) as Record<(typeof CLASS_KINDS)[number], v.OptionalSchema<ReturnType<typeof names>, undefined>>,
    ),
  ),
  podSecurity: v.optional(v.picklist(POD_SECURITY_LEVELS, PROFILE_RULES.podSecurity)),
  podSecurityWarn: v.optional(v.picklist(POD_SECURITY_LEVELS, PROFILE_RULES.podSecurity)),
  podSecurityAudit: v.optional(v.picklist(POD_SECURITY_LEVELS, PROFILE_RULES.podSecurity)),
  pods: v.optional(
    v.looseObject({
      imagePullPolicy: v.optional(v.picklist(IMAGE_PULL_POLICIES, PROFILE_RULES.imagePullPolicy)),
      securityContextDefaults: v.optional(v.picklist(SECURITY_CONTEXT_DEFAULTS, PROFILE_RULES.securityContextDefaults)),
      allowedRegistries: v.optional(
        v.pipe(
          v.array(v.pipe(v.string(PROFILE_RULES.registry), v.maxLength(253, PROFILE_RULES.registry), v.regex(REGISTRY_PREFIX, PROFILE_RULES.registry))),
          v.maxLength(MAX_REGISTRIES, PROFILE_RULES.registry),
          v.check((prefixes) => new Set(prefixes).size === prefixes.length, PROFILE_RULES.registry),
        ),
      ),
      nodeSelector: v.optional(
        v.pipe(
          v.record(v.pipe(v.string(), v.regex(LABEL_KEY, PROFILE_RULES.nodeSelector)), v.pipe(v.string(PROFILE_RULES.nodeSelector), v.regex(LABEL_VALUE, PROFILE_RULES.nodeSelector))),
          v.check((selector) => Object.keys(selector).length <= MAX_NODE_SELECTOR, PROFILE_RULES.nodeSelector),
        ),
      ),
    }),
  ),
});
export type ProfileSpec = v.InferOutput<typeof ProfileSpec>;

// What a valid profile asks for in the Project's Namespace. A quantity the
// API server stored another way but with the same value is asked for as
// stored; one of another value is put back as the profile says.
function guardrailsFor(namespace: string, profileName: string, profile: ProfileSpec, children: ObservedGuardrails, withProjectQuota: boolean): Guardrail[] {
  const metadata = (kind: GuardrailKind): GuardrailMetadata => ({
    name: GUARDRAIL_NAMES[kind],
    namespace,
    labels: { [PROFILE_LABEL]: profileName },
  });
  const observedSpec = (kind: GuardrailKind): any => observedGuardrail(children, namespace, kind)?.spec;
  const guardrails: Guardrail[] = [];
  const { resourceQuota, limitRange, networkPolicy } = profile;
  if (resourceQuota) {
    // A quota that counts ResourceQuotas counts the Project's own across
    // Namespaces too, which Metacontroller could otherwise never create.
    const counted = resourceQuota.hard["resourcequotas"];
    const own: Quantities = withProjectQuota && counted !== undefined ? { resourcequotas: quantityOf(nanosOf(counted)! + NANO, false) } : {};
    const hard = asObservedIfEqual({ ...resourceQuota.hard, ...own }, observedSpec("ResourceQuota")?.hard);
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
        ingress: [{ from: [{ podSelector: {} }, ...fromNamespaces.map((namespaceSelector) => ({ namespaceSelector }))] }],
        ...egressOf(networkPolicy.egress),
      },
    });
  }
  return guardrails;
}

// Egress, where the profile limits it: to the cluster's DNS, to the
// Project's own Namespace, and to what the profile lists; nothing else.
function egressOf(egress: NonNullable<ProfileSpec["networkPolicy"]>["egress"]): Pick<NetworkPolicy["spec"], "policyTypes" | "egress"> {
  if (!egress) return { policyTypes: ["Ingress"] };
  const { toNamespaces = [], toCIDRs = [] } = egress;
  const dns: Peer = { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": DNS_NAMESPACE } }, podSelector: { matchLabels: { ...DNS_POD_LABELS } } };
  const listed: Peer[] = [
    ...(toNamespaces.length ? [{ namespaceSelector: { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: toNamespaces }] } } as Peer] : []),
    ...toCIDRs.map((cidr): Peer => ({ ipBlock: { cidr } })),
  ];
  return {
    policyTypes: ["Ingress", "Egress"],
    egress: [
      { to: [dns], ports: [{ protocol: "UDP", port: 53 }, { protocol: "TCP", port: 53 }] },
      { to: [{ podSelector: {} }, ...listed] },
    ],
  };
}

/** The Namespace's Pod Security labels: warn and audit at the level of enforce unless the profile says otherwise. */
function podSecurityLabels(profile: ProfileSpec): Record<string, string> | undefined {
  const { podSecurity, podSecurityWarn = podSecurity, podSecurityAudit = podSecurity } = profile;
  const levels = [podSecurity, podSecurityWarn, podSecurityAudit];
  const labels = Object.fromEntries(POD_SECURITY_LABELS.flatMap((label, at) => (levels[at] ? [[label, levels[at]]] : [])));
  return Object.keys(labels).length ? labels : undefined;
}

/** The Namespace's annotations that the pod admission policies read: the profile's `pods` rules, and its name for their refusals. */
function ruleAnnotations(profileName: string, profile: ProfileSpec): Record<string, string> {
  const { imagePullPolicy, securityContextDefaults, allowedRegistries, nodeSelector } = profile.pods ?? {};
  // Lists are joined with spaces, which no name, prefix or label holds.
  const rules: Record<string, string | undefined> = {
    [RULE_ANNOTATIONS.imagePullPolicy]: imagePullPolicy,
    [RULE_ANNOTATIONS.securityContextDefaults]: securityContextDefaults,
    [RULE_ANNOTATIONS.allowedRegistries]: allowedRegistries?.join(" "),
    [RULE_ANNOTATIONS.nodeSelector]: nodeSelector && Object.entries(nodeSelector).map(([key, value]) => `${key}=${value}`).join(" "),
    ...Object.fromEntries(CLASS_KINDS.map((kind) => [CLASS_ANNOTATIONS[kind], profile.allowedClasses?.[kind]?.join(" ")])),
  };
  const set = Object.entries(rules).filter((rule): rule is [string, string] => rule[1] !== undefined);
  return set.length ? { [RULE_ANNOTATIONS.profile]: profileName, ...Object.fromEntries(set) } : {};
}

/** Those labels and annotations as observed, kept while the profile cannot be read. */
function observedOf(keys: readonly string[], found: Record<string, string> | null | undefined): Record<string, string> | undefined {
  const kept = Object.fromEntries(keys.flatMap((key) => (found?.[key] === undefined ? [] : [[key, found[key]]])));
  return Object.keys(kept).length ? kept : undefined;
}

function asObservedIfEqual(wanted: Quantities, observed: unknown): Quantities {
  const stored = (observed ?? {}) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(wanted).map(([key, quantity]) => {
      const current = stored[key];
      const same = typeof current === "string" && nanosOf(current) !== undefined && nanosOf(current) === nanosOf(quantity);
      return [key, same ? current : quantity];
    }),
  );
}

/** The guardrails observed in the Project's Namespace, kept exactly as they are. */
function guardrailsAsObserved(namespace: string, children: ObservedGuardrails): Guardrail[] {
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

// The profile every Project gets unless it names another, while no
// ProjectProfile `default` replaces it: what the Kubernetes multi-tenancy
// benchmarks (kubectl-mtb, profile level 2) ask of a tenant's Namespace.
// Modest limits for a team's development work, on cpu, memory and the
// node's disk, and on the count of each kind of object; Pod Security
// `restricted`, warned of and audited at the same level; every image pulled
// afresh, so that a Pod cannot run another tenant's private image from a
// node's cache; and isolation from other namespaces. Built in, not shipped
// in k8s.yaml, so that re-applying k8s.yaml never undoes what an admin made
// of `default` (docs/operating.md's upgrade notes give the earlier one, to
// keep).
export const BUILT_IN_PROFILE: ProfileSpec = {
  resourceQuota: {
    hard: {
      "requests.cpu": "2",
      "requests.memory": "4Gi",
      "requests.ephemeral-storage": "4Gi",
      "limits.cpu": "4",
      "limits.memory": "8Gi",
      "limits.ephemeral-storage": "8Gi",
      pods: "20",
      services: "10",
      replicationcontrollers: "5",
      // The Namespace's own, project-quota: more are the admins' to give.
      resourcequotas: "1",
      secrets: "50",
      configmaps: "50",
      persistentvolumeclaims: "5",
      "requests.storage": "20Gi",
      // Services that open the cluster to the outside are the admins' to give.
      "services.loadbalancers": "0",
      "services.nodeports": "0",
    },
  },
  // With the quota's limits, a container without limits would be refused;
  // these defaults let it in, counted.
  limitRange: {
    defaultRequest: { cpu: "100m", memory: "128Mi", "ephemeral-storage": "256Mi" },
    default: { cpu: "500m", memory: "512Mi", "ephemeral-storage": "1Gi" },
  },
  networkPolicy: { allowFromNamespaces: [] },
  podSecurity: "restricted",
  // `restricted` needs fields most Pods leave unset; filled in where unset,
  // a Pod that sets none of them is admitted, and one that asks for more
  // (root, a capability, privilege escalation) is still refused.
  pods: { imagePullPolicy: "SetAlways", securityContextDefaults: "Restricted" },
};

type ProfileReading = { spec: ProfileSpec; problem?: undefined } | { spec?: undefined; problem: Readiness };

/** The profile's spec, or why it cannot be read, saying what becomes of the Namespace (`undefined` where there is none yet). */
function readProfile(profileName: string, related: RelatedProfiles, namespace: string | undefined): ProfileReading {
  const found = related[PROFILES]?.[profileName] ?? (profileName === DEFAULT_PROFILE ? { spec: BUILT_IN_PROFILE } : undefined);
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
          "Set spec.profile to the name of a ProjectProfile that does (kubectl get projectprofiles), or ask a cluster admin to create it.",
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
function narrowedByHand(children: ObservedGuardrails, guardrail: Guardrail): boolean {
  const selector = guardrail.kind === "NetworkPolicy" ? observedGuardrail(children, guardrail.metadata.namespace, "NetworkPolicy")?.spec?.["podSelector"] : undefined;
  return typeof selector === "object" && selector !== null && Object.keys(selector).length > 0;
}

// A guardrail is in place when every field the answer sets is stored with
// that value (quantities compared by value); `sync` waits, too, for any of
// these kinds the profile no longer asks for to be removed.
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

// ## One quota for a whole Project
//
// A ResourceQuota holds one Namespace; the profile's projectQuota holds all
// of a Project's. Each of them gets a ResourceQuota PROJECT_QUOTA_NAME whose
// hard is what that Namespace uses plus what is left of the total:
// max(0, total - the usage of every such quota of the Project). Usage is
// what the quota admission plugin and controller write into each quota's
// status; Metacontroller observes every quota of the Project, whatever its
// Namespace, and syncs the Project again when one's status changes, so that
// usage moving from one Namespace to another moves the headroom with it,
// and no list of Namespaces is needed. The answer is a function of the
// usage alone: synced again over the same usage, it is the same.
//
// Between two syncs each Namespace may fill its own hard, so k Namespaces
// filling at once may use the total plus (k - 1) times the headroom the last
// sync saw, never more (docs/operating.md); the next sync leaves them no
// headroom until usage is back under the total.

// Usage comes in any form the API server writes (1500m, 2Gi, 1e3, 5n), so
// every quantity is read as a whole number of nano-units, Kubernetes'
// finest, and added exactly.
const ANY_QUANTITY = /^([0-9]*)(?:\.([0-9]*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei)|(n|u|m|k|M|G|T|P|E)|[eE]([-+]?[0-9]{1,3}))?$/;
const SCALES: Record<string, number> = { n: -9, u: -6, ...DECIMAL_SUFFIXES };
const NANO = 10n ** 9n;

/** A quantity in nano-units, finer ones rounded up as the API server does; undefined where it is none. */
export function nanosOf(quantity: string): bigint | undefined {
  const [, whole = "", fraction = "", binary, decimal, exponent] = ANY_QUANTITY.exec(quantity) ?? [];
  if (!whole && !fraction) return undefined;
  const exp10 = 9 - fraction.length + (decimal !== undefined ? SCALES[decimal]! : Number(exponent ?? 0));
  const value = BigInt(whole + fraction) * 2n ** BigInt(binary ? BINARY_SUFFIXES[binary]! : 0);
  if (exp10 >= 0) return value * 10n ** BigInt(exp10);
  const unit = 10n ** BigInt(-exp10);
  return (value + unit - 1n) / unit;
}

const BINARY_UNITS = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
const DECIMAL_UNITS: Record<number, string> = { [-9]: "n", [-6]: "u", [-3]: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E" };

/**
 * Nano-units written as the API server writes them back, so that what is
 * asked for is what is stored: in binary units where the total is written
 * so and they are whole, otherwise in the largest decimal unit that keeps
 * the digits whole.
 */
export function quantityOf(nanos: bigint, binary: boolean): string {
  if (nanos === 0n) return "0";
  if (binary && nanos % NANO === 0n) {
    let [digits, unit] = [nanos / NANO, 0];
    while (digits % 1024n === 0n && unit < BINARY_UNITS.length - 1) [digits, unit] = [digits / 1024n, unit + 1];
    if (unit > 0) return `${digits}${BINARY_UNITS[unit]}`;
  }
  let [digits, exp10] = [nanos, -9];
  while (digits % 10n === 0n && exp10 < 18) [digits, exp10] = [digits / 10n, exp10 + 1];
  while ((exp10 + 9) % 3 !== 0) [digits, exp10] = [digits * 10n, exp10 - 1];
  return `${digits}${DECIMAL_UNITS[exp10]}`;
}

/** Each resource's hard in the Namespace: its own usage plus the headroom left of the total across every quota of the Project. */
function projectQuotaHard(total: Quantities, namespace: string, children: ObservedGuardrails): Quantities {
  const quotas = Object.entries(children[RESOURCE_QUOTAS]).filter(([key]) => key.endsWith(`/${PROJECT_QUOTA_NAME}`));
  const own = children[RESOURCE_QUOTAS][`${namespace}/${PROJECT_QUOTA_NAME}`];
  return Object.fromEntries(
    Object.entries(total).map(([resource, quantity]) => {
      // Not counted yet is nothing used (quota admission refuses every
      // create until it is counted); a usage that cannot be read leaves no headroom.
      const usedIn = (quota: (typeof quotas)[number][1] | undefined) => {
        const used = quota?.status?.used?.[resource];
        return used === undefined ? 0n : nanosOf(used);
      };
      const usage = quotas.map(([, quota]) => usedIn(quota));
      const left = nanosOf(quantity)! - usage.reduce<bigint>((sum, used) => sum + (used ?? 0n), 0n);
      const headroom = usage.includes(undefined) || left < 0n ? 0n : left;
      return [resource, quantityOf((usedIn(own) ?? 0n) + headroom, /i$/.test(quantity))];
    }),
  );
}

function projectQuotaIn(namespace: string, profileName: string, total: Quantities, children: ObservedGuardrails): ResourceQuota {
  const observed = children[RESOURCE_QUOTAS][`${namespace}/${PROJECT_QUOTA_NAME}`];
  return {
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: { name: PROJECT_QUOTA_NAME, namespace, labels: { [PROFILE_LABEL]: profileName } },
    spec: { hard: asObservedIfEqual(projectQuotaHard(total, namespace, children), observed?.spec?.["hard"]) },
  };
}

/** The quota across Namespaces as observed, kept while the Project's profile cannot be read. */
function projectQuotaAsObserved(namespace: string, children: ObservedGuardrails): KeptGuardrail | undefined {
  const observed = children[RESOURCE_QUOTAS][`${namespace}/${PROJECT_QUOTA_NAME}`];
  if (!observed) return undefined;
  const profile = observed.metadata?.labels?.[PROFILE_LABEL];
  return {
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: { name: PROJECT_QUOTA_NAME, namespace, labels: profile ? { [PROFILE_LABEL]: profile } : {} },
    spec: { ...observed.spec },
  };
}

// ## The plan
//
// A profile that cannot be read (missing, or admitted before its rules)
// leaves the Namespace's guardrails and Pod Security label as observed: a
// quota is never dropped because its profile was briefly gone. sync asks for
// them in the answer that makes the Namespace where they can come at once,
// never into one being deleted. The features after this one wait for the
// quota and the isolation, which hold what a tenant can do; the
// LimitRange's defaults only spare a container from stating its own, and
// where the quota needs limits, one without them is refused meanwhile.
const GUARDING: readonly GuardrailKind[] = ["ResourceQuota", "NetworkPolicy"];
export const guardrails: Feature<typeof spec, typeof children, typeof related> = {
  spec,
  perNamespace: true,
  children,
  related,
  customize: (_project, spec) => [{ apiVersion: PROFILE.apiVersion, resource: PROFILE.plural, names: [profileNameOf(spec)] }],
  refusals: ["ProfileNotFound", "InvalidProfile"],
  reasons: ["WaitingForGuardrails"],
  plan: ({ project, spec, namespace, observed, children, related }) => {
    const profileName = profileNameOf(spec);
    const profile = readProfile(profileName, related, observed ? namespace : undefined);
    // The total is the Project's own profile's, whichever profile this
    // Namespace has, so that Namespaces on different profiles share one.
    // Where it cannot be read, the quota is kept as it is, and, as for the
    // Namespace's own profile, no Namespace is made that would lack it.
    const totalProfile = profileNameOf(project.spec ?? {});
    const total = totalProfile === profileName ? profile : readProfile(totalProfile, related, observed ? namespace : undefined);
    const totalHard = total.spec?.projectQuota?.hard;
    const projectQuota = total.spec
      ? totalHard && projectQuotaIn(namespace, totalProfile, totalHard, children)
      : projectQuotaAsObserved(namespace, children);
    const labels = profile.spec ? podSecurityLabels(profile.spec) : observedOf(POD_SECURITY_LABELS, observed?.metadata?.labels);
    const annotations = profile.spec ? ruleAnnotations(profileName, profile.spec) : observedOf(Object.values(RULE_ANNOTATIONS), observed?.metadata?.annotations);
    const wanted = profile.spec ? guardrailsFor(namespace, profileName, profile.spec, children, projectQuota !== undefined) : guardrailsAsObserved(namespace, children);
    const across = projectQuota ? [projectQuota] : [];
    const applied = profile.spec ? profileName : wanted.map((guardrail) => guardrail.metadata.labels[PROFILE_LABEL]).find(Boolean);
    return {
      children: [...wanted, ...across],
      guards: [...wanted.filter((guardrail) => GUARDING.includes(guardrail.kind)), ...across],
      remake: profile.problem ? [] : wanted.filter((guardrail) => narrowedByHand(children, guardrail)),
      labels,
      annotations,
      status: applied ? { profile: applied } : undefined,
      unavailable: profile.problem ?? total.problem,
      waiting: {
        reason: "WaitingForGuardrails",
        notYet: [
          ...wanted.filter((guardrail) => !holds(observedGuardrail(children, namespace, guardrail.kind), guardrail)),
          // Its hard moves with usage: that it exists is all Ready waits for.
          ...across.filter((quota) => !children[RESOURCE_QUOTAS][`${namespace}/${quota.metadata.name}`]),
        ].map((guardrail): [string, string] => [guardrail.kind, guardrail.metadata.name]),
        toBe: "as its profile says",
      },
    };
  },
};
