/**
 * # Shared objects: what every Project on a profile gets in its Namespace, kept equal to its source
 *
 * Teams on one platform need the same few things in each Namespace: the
 * credentials that pull from the company's registry, a CA bundle, and a
 * ServiceAccount with a Role for a workload the platform runs there. Cluster
 * admins declare them once, in the ProjectProfile's `spec.shared`: Secrets
 * and ConfigMaps by the name of a source in the install's Namespace
 * (`meta-project`), which carries the label `agrrh.com/shared: "true"`, and
 * ServiceAccounts, Roles and RoleBindings written out. Every Project on the
 * profile gets a copy of each in its Namespace; an edited source reaches
 * every copy, and what the profile no longer lists goes from every Project.
 *
 * The customize hook asks for the shareable sources by that label alone, so
 * the controller never reads a Secret an admin did not mark. A copy is the
 * Project's child: k8s.yaml's ownership guard lets no tenant change or
 * delete it. A RoleBinding grants only what the profile says, to
 * ServiceAccounts of the Project's own Namespace, and is there only while the
 * Role it names is the copy: never a Role a tenant made under that name.
 * The features that give access come after this one, so that their
 * RoleBindings wait for every copy the profile declares, one whose source
 * is missing or unusable too: in a Namespace made for its Project, nobody
 * can make an object of a shared name before its copy is there. One older
 * than its Project was someone's already, and may hold such an object:
 * there they wait for no copy, as one that cannot be made would lock its
 * people out of what they had, and protect nothing.
 * What a profile says wrong, or a source that is missing, leaves the copies
 * as they are: none is deleted for it. A Secret's data is never put into a
 * status, a message or a log.
 *
 * Read top to bottom: the names, the request's parts, the rules of
 * `spec.shared`, the copies, and the plan `sync` composes.
 *
 * Needs: guardrails (the ProjectProfile, where shared objects are declared).
 */
import * as v from "valibot";
import type { Child, Readiness } from "../sync.ts";
import type { Feature } from "./index.ts";

// Its words, none left once it is taken away (take-away.ts's VOCABULARY says which).
export const VOCABULARY = ["shared object", "shared objects", "shareable", "agrrh.com/shared"] as const;

// ## The names
//
// Spelled out, not built from sync.ts's names: a feature imports only types
// from sync.ts (shared.test.ts proves the spellings agree, and that
// k8s.yaml's install Namespace is this one).
export const INSTALL_NAMESPACE = "meta-project";
export const PROFILES = "ProjectProfile.agrrh.com/v1";
export const DEFAULT_PROFILE = "default";
export const SECRETS = "Secret.v1";
export const CONFIG_MAPS = "ConfigMap.v1";
export const SERVICE_ACCOUNTS = "ServiceAccount.v1";
export const ROLES = "Role.rbac.authorization.k8s.io/v1";
export const ROLE_BINDINGS = "RoleBinding.rbac.authorization.k8s.io/v1";
/** On a source in INSTALL_NAMESPACE: an admin's word that it may be copied. Nothing else there is ever read. */
export const SHAREABLE_LABEL = "agrrh.com/shared";
/** On every copy: the profile it came from. It is also how sync tells a copy from the other features' objects of its kinds. */
export const SHARED_BY_LABEL = "agrrh.com/shared-by";
/** On a Secret's or ConfigMap's copy: `meta-project/<name>`, its source. */
export const COPY_OF_ANNOTATION = "agrrh.com/copy-of";

// ## The request
//
// Sources and copies are read whole: a copy is kept as it is while its
// source or profile cannot be read, and compared with its source. Messages
// here never echo a value: a Secret's data must not reach a 422's body.
const Strings = v.nullish(v.record(v.string(), v.string("a value of data is a string"), "data is a map of strings"));
const Metadata = v.optional(
  v.looseObject({ labels: v.nullish(v.record(v.string(), v.string())), annotations: v.nullish(v.record(v.string(), v.string())) }),
);
const ObservedData = v.looseObject({ metadata: Metadata, type: v.nullish(v.string()), data: Strings, binaryData: Strings });
const ObservedRole = v.looseObject({ metadata: Metadata, rules: v.nullish(v.array(v.looseObject({}))) });
const ObservedBinding = v.looseObject({
  metadata: Metadata,
  roleRef: v.nullish(v.looseObject({ kind: v.string(), name: v.string() })),
  subjects: v.nullish(v.array(v.looseObject({}))),
});
const children = {
  [SECRETS]: ObservedData,
  [SERVICE_ACCOUNTS]: v.looseObject({ metadata: Metadata }),
  [CONFIG_MAPS]: ObservedData,
  [ROLES]: ObservedRole,
  [ROLE_BINDINGS]: ObservedBinding,
};
type Observed = { [G in keyof typeof children]: Record<string, v.InferOutput<(typeof children)[G]>> };
const related = { [PROFILES]: v.looseObject({ spec: v.nullish(v.unknown()) }), [SECRETS]: ObservedData, [CONFIG_MAPS]: ObservedData };
type Related = { [PROFILES]?: Record<string, { spec?: unknown }>; [SECRETS]?: Record<string, v.InferOutput<typeof ObservedData>>; [CONFIG_MAPS]?: Record<string, v.InferOutput<typeof ObservedData>> };

const spec = { profile: v.nullish(v.string()) };

// ## The rules
//
// The CRD applies the same rules at admission, in the same words; sync
// checks them again for a profile stored before them.
export const MAX_SHARED = 16;
export const MAX_RULES = 32;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/**
 * What a copy's name may not be: what every Namespace has already
 * (ServiceAccount and ConfigMap `default`, `kube-root-ca.crt`, the
 * kubelet's `kube-api-access-*`), and what the other features make there
 * (`project-*` guardrails and bindings, the integrations' Role).
 */
export const RESERVED_NAMES = ["default", "integrations"] as const;
export const RESERVED_PREFIXES = ["project-", "kube-"] as const;
export const SHARED_RULES = {
  name: "a shared object's name is a DNS label of at most 63 characters",
  reserved: `a shared object's name is not ${RESERVED_NAMES.join(" or ")}, and does not start with ${RESERVED_PREFIXES.join(" or ")}: Kubernetes or this controller makes those`,
  unique: "each name appears once in each list",
  most: `each list holds at most ${MAX_SHARED} objects`,
  rules: `a Role has 1 to ${MAX_RULES} rules, each with verbs, and lists of strings for apiGroups, resources and resourceNames`,
  roleRef: "a RoleBinding names either a role of this profile's roles or a clusterRole, not both",
  subjects: "a RoleBinding binds 1 to 16 ServiceAccounts of the Project's Namespace, by name, each once",
  profileName: "a profile that shares objects has a name of at most 63 characters: each copy carries it as a label",
} as const;

const isName = (name: string) => name.length <= 63 && DNS1123_LABEL.test(name);
const isReserved = (name: string) => (RESERVED_NAMES as readonly string[]).includes(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix));
const Name = v.pipe(
  v.string(SHARED_RULES.name),
  v.check(isName, SHARED_RULES.name),
  v.check((name) => !isReserved(name), SHARED_RULES.reserved),
);
const listOf = <T extends v.GenericSchema>(item: T, nameOf: (each: v.InferOutput<T>) => string) =>
  v.optional(
    v.pipe(
      v.array(item),
      v.maxLength(MAX_SHARED, SHARED_RULES.most),
      v.check((list) => new Set(list.map(nameOf)).size === list.length, SHARED_RULES.unique),
    ),
    [],
  );
const Strings1 = v.array(v.pipe(v.string(SHARED_RULES.rules), v.maxLength(253, SHARED_RULES.rules)));
const PolicyRule = v.object(
  {
    apiGroups: v.optional(v.pipe(Strings1, v.maxLength(MAX_RULES, SHARED_RULES.rules))),
    resources: v.optional(v.pipe(Strings1, v.maxLength(MAX_RULES, SHARED_RULES.rules))),
    resourceNames: v.optional(v.pipe(Strings1, v.maxLength(MAX_RULES, SHARED_RULES.rules))),
    verbs: v.pipe(Strings1, v.minLength(1, SHARED_RULES.rules), v.maxLength(MAX_RULES, SHARED_RULES.rules)),
  },
  SHARED_RULES.rules,
);
const SharedRole = v.object({ name: Name, rules: v.pipe(v.array(PolicyRule, SHARED_RULES.rules), v.minLength(1, SHARED_RULES.rules), v.maxLength(MAX_RULES, SHARED_RULES.rules)) });
const SharedRoleBinding = v.pipe(
  v.object({
    name: Name,
    role: v.optional(v.pipe(v.string(SHARED_RULES.roleRef), v.maxLength(63, SHARED_RULES.roleRef))),
    clusterRole: v.optional(v.pipe(v.string(SHARED_RULES.roleRef), v.nonEmpty(SHARED_RULES.roleRef), v.maxLength(253, SHARED_RULES.roleRef))),
    serviceAccounts: v.pipe(
      v.array(v.pipe(v.string(SHARED_RULES.subjects), v.check(isName, SHARED_RULES.subjects))),
      v.minLength(1, SHARED_RULES.subjects),
      v.maxLength(MAX_SHARED, SHARED_RULES.subjects),
      v.check((names) => new Set(names).size === names.length, SHARED_RULES.subjects),
    ),
  }),
  v.check((binding) => (binding.role === undefined) !== (binding.clusterRole === undefined), SHARED_RULES.roleRef),
);
export const SharedSpec = v.pipe(
  v.object({
    secrets: listOf(Name, (name) => name),
    configMaps: listOf(Name, (name) => name),
    serviceAccounts: listOf(Name, (name) => name),
    roles: listOf(SharedRole, (role) => role.name),
    roleBindings: listOf(SharedRoleBinding, (binding) => binding.name),
  }),
  v.check(({ roles, roleBindings }) => roleBindings.every((binding) => binding.role === undefined || roles.some((role) => role.name === binding.role)), SHARED_RULES.roleRef),
);
export type SharedSpec = v.InferOutput<typeof SharedSpec>;

// ## The copies

// A copy's every key and value is written twice where Metacontroller keeps
// it: in the object, and in its copy of what it applied, an annotation. The
// API server takes at most 256 KiB of annotations per object, so a source
// larger than this, as Go writes it into JSON, cannot be copied; the rest of
// the annotation (names, labels) fits the 4 KiB left.
export const SOURCE_MAX_BYTES = 252 * 1024;
/** A type Kubernetes fills in from the ServiceAccount it names: its copy would be refused, and hand a token of the install's to every tenant of the Namespace. */
export const UNCOPIED_TYPES = ["kubernetes.io/service-account-token"] as const;

/** The bytes of this map as Go's encoder writes it into JSON (`<`, `>` and `&` as six bytes), each key and value with its quotes and a separator. */
export function goJsonBytes(map: Record<string, string>): number {
  let bytes = 0;
  for (const text of Object.entries(map).flat()) {
    for (const character of JSON.stringify(text).slice(1, -1)) {
      const code = character.codePointAt(0) ?? 0;
      bytes += "<>&\u2028\u2029".includes(character) ? 6 : code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    }
    bytes += 3;
  }
  return bytes;
}

type SourceKind = "Secret" | "ConfigMap";
type Source = v.InferOutput<typeof ObservedData>;
type Copy = Child & { metadata: { name: string; namespace: string; labels: Record<string, string>; annotations?: Record<string, string> } } & Record<string, unknown>;

const metadataOf = (name: string, namespace: string, profile: string, source?: string) => ({
  name,
  namespace,
  labels: { [SHARED_BY_LABEL]: profile },
  ...(source === undefined ? {} : { annotations: { [COPY_OF_ANNOTATION]: `${INSTALL_NAMESPACE}/${source}` } }),
});

function copyOf(kind: SourceKind, name: string, namespace: string, profile: string, source: Source): Copy {
  const metadata = metadataOf(name, namespace, profile, name);
  if (kind === "Secret") return { apiVersion: "v1", kind, metadata, type: source.type ?? "Opaque", data: { ...source.data } };
  return { apiVersion: "v1", kind, metadata, data: { ...source.data }, ...(source.binaryData ? { binaryData: { ...source.binaryData } } : {}) };
}

const RBAC = "rbac.authorization.k8s.io";
function roleOf(role: SharedSpec["roles"][number], namespace: string, profile: string): Copy {
  return { apiVersion: `${RBAC}/v1`, kind: "Role", metadata: metadataOf(role.name, namespace, profile), rules: role.rules };
}
function roleBindingOf(binding: SharedSpec["roleBindings"][number], namespace: string, profile: string): Copy {
  const roleRef = binding.role === undefined ? { apiGroup: RBAC, kind: "ClusterRole", name: binding.clusterRole } : { apiGroup: RBAC, kind: "Role", name: binding.role };
  return {
    apiVersion: `${RBAC}/v1`,
    kind: "RoleBinding",
    metadata: metadataOf(binding.name, namespace, profile),
    roleRef,
    subjects: binding.serviceAccounts.map((name) => ({ kind: "ServiceAccount", name, namespace })),
  };
}

const GROUP_OF = { Secret: SECRETS, ConfigMap: CONFIG_MAPS, ServiceAccount: SERVICE_ACCOUNTS, Role: ROLES, RoleBinding: ROLE_BINDINGS } as const;
type Kind = keyof typeof GROUP_OF;
const KINDS = Object.keys(GROUP_OF) as Kind[];

/** This feature's copies observed in the Namespace: those it labelled, by kind; the other features' objects of these kinds carry no such label. */
function copiesIn(children: Observed, namespace: string) {
  return KINDS.flatMap((kind) =>
    Object.entries(children[GROUP_OF[kind]] as Record<string, { metadata?: v.InferOutput<typeof Metadata> } & Record<string, unknown>>)
      .filter(([key, object]) => key.startsWith(`${namespace}/`) && object.metadata?.labels?.[SHARED_BY_LABEL] !== undefined)
      .map(([key, object]) => ({ kind, name: key.slice(namespace.length + 1), object })),
  );
}

/** A copy as observed, kept so: the fields a copy has, and nothing the API server added. */
function asObserved(kind: Kind, name: string, namespace: string, object: Record<string, any>): Copy {
  const labels = object.metadata?.labels ?? {};
  const source = object.metadata?.annotations?.[COPY_OF_ANNOTATION];
  const metadata = {
    name,
    namespace,
    labels: { [SHARED_BY_LABEL]: labels[SHARED_BY_LABEL] },
    ...(source === undefined ? {} : { annotations: { [COPY_OF_ANNOTATION]: source } }),
  };
  const fields = { Secret: ["type", "data"], ConfigMap: ["data", "binaryData"], ServiceAccount: [], Role: ["rules"], RoleBinding: ["roleRef", "subjects"] }[kind];
  const apiVersion = GROUP_OF[kind].slice(GROUP_OF[kind].indexOf(".") + 1);
  return { apiVersion, kind, metadata, ...Object.fromEntries(fields.filter((field) => object[field] != null).map((field) => [field, structuredClone(object[field])])) };
}

// Whether what is observed holds every field the copy sets, as set: an
// empty list the API server leaves out counts as the same.
function holds(observed: unknown, wanted: unknown): boolean {
  if (Array.isArray(wanted)) {
    if (observed === undefined || observed === null) return wanted.length === 0;
    return Array.isArray(observed) && observed.length === wanted.length && wanted.every((item, index) => holds(observed[index], item));
  }
  if (wanted !== null && typeof wanted === "object") {
    const entries = Object.entries(wanted);
    if (observed === undefined || observed === null) return entries.length === 0;
    if (typeof observed !== "object") return false;
    const has = observed as Record<string, unknown>;
    return entries.every(([key, value]) => holds(has[key], value));
  }
  return observed === wanted;
}

// A map of data is equal only with the same keys: Metacontroller's merge
// removes a key it applied before, so one left over means not yet.
const sameMap = (a: Record<string, string> | null | undefined, b: Record<string, string> | null | undefined) => {
  const [x, y] = [a ?? {}, b ?? {}];
  return Object.keys(x).length === Object.keys(y).length && Object.entries(x).every(([key, value]) => y[key] === value);
};
function isAsAsked(copy: Copy, observed: Record<string, any> | undefined): boolean {
  if (!observed) return false;
  if (copy.kind === "Secret" || copy.kind === "ConfigMap") {
    const wanted = copy as Record<string, any>;
    return (copy.kind !== "Secret" || (observed.type ?? "Opaque") === wanted.type) && sameMap(observed.data, wanted.data) && sameMap(observed.binaryData, wanted.binaryData);
  }
  const { apiVersion: _apiVersion, kind: _kind, metadata: _metadata, ...fields } = copy;
  return holds(observed, fields) && holds(observed.metadata?.labels, copy.metadata.labels);
}

// The API server refuses to change a Secret's type or a RoleBinding's
// roleRef; Metacontroller would retry that update for ever. Left out of one
// answer, the copy is deleted, and made afresh on the next.
function mustRemake(copy: Copy, observed: Record<string, any> | undefined): boolean {
  if (!observed) return false;
  if (copy.kind === "Secret") return (observed.type ?? "Opaque") !== copy["type"];
  if (copy.kind === "RoleBinding") {
    const [was, is] = [observed.roleRef ?? {}, copy["roleRef"] as { kind: string; name: string }];
    return was.kind !== is.kind || was.name !== is.name;
  }
  return false;
}

// ## The plan

/**
 * The Namespace was made before its Project (brought under it, with what it
 * holds): its people could make any object in it already. Unknown times
 * (never so from the API server) count as made for it, the stricter.
 */
function olderThanItsProject(namespace: { metadata?: Record<string, unknown> } | undefined, project: { metadata: Record<string, unknown> }): boolean {
  const [made, asked] = [namespace?.metadata?.["creationTimestamp"], project.metadata["creationTimestamp"]].map((time) => (typeof time === "string" ? Date.parse(time) : Number.NaN));
  return made! < asked!;
}

const profileNameOf = (spec: { profile?: string | null }) => spec.profile || DEFAULT_PROFILE;

/** `.roleBindings[0].role` or `.secrets[2]`: where in spec.shared an issue is. */
const pathOf = (issue: v.BaseIssue<unknown>) => (issue.path ?? []).map(({ key }) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("");

function invalid(profile: string, namespace: string, issues: readonly v.BaseIssue<unknown>[]): Readiness {
  const problems = [...new Set(issues.map((issue) => `spec.shared${pathOf(issue)}: ${issue.message}`))];
  return {
    status: "False",
    reason: "InvalidSharedObjects",
    message: `ProjectProfile ${profile} breaks its rules (${problems.join("; ")}), so the shared objects in Namespace ${namespace} are left as they are. A cluster admin must fix it.`,
  };
}

type Unusable = { kind: SourceKind; name: string; why: "missing" | "type" | "size"; kept: boolean };
function unusable(profile: string, namespace: string, sources: Unusable[]): Readiness {
  const missing = sources.every((source) => source.why === "missing");
  const each = sources.map(({ kind, name, why, kept }) => {
    const what = `${kind} ${INSTALL_NAMESPACE}/${name}`;
    const problem =
      why === "missing"
        ? `${what} does not exist, or is not labelled ${SHAREABLE_LABEL}=true`
        : why === "type"
          ? `${what} is of a type that cannot be copied (${UNCOPIED_TYPES.join(", ")})`
          : `${what} is larger than the ${SOURCE_MAX_BYTES / 1024} KiB a copy may hold`;
    return `${problem}, so its copy ${kept ? "is kept as it is" : "is not made"}`;
  });
  return {
    status: "False",
    reason: missing ? "SharedSourceMissing" : "SharedSourceUnusable",
    message: `ProjectProfile ${profile} shares into Namespace ${namespace} what cannot be copied: ${each.join("; ")}. A cluster admin must create, label or fix the source, or take it out of the profile.`,
  };
}

// sync cannot tell a copy not yet made from one whose name an object that
// is no copy holds: it sees the Namespace's children alone. So each absent
// one is named with both, and the ways out keep that object's data.
function takenBy(absent: Copy[], profile: string, namespace: string): string {
  const names = absent.map((copy) => `${copy.kind} ${copy.metadata.name}`).join(", ");
  return (
    ` (of these, ${names} ${absent.length === 1 ? "is" : "are"} not in Namespace ${namespace} yet: where an object of that name is there already and is no copy, it is left as it is and its copy is not made, ` +
    `until its team moves what it holds to another name, or a cluster admin takes the name out of ProjectProfile ${profile} or gives the Project a profile that does not share it)`
  );
}

export const shared: Feature<typeof spec, typeof children, typeof related> = {
  spec,
  perNamespace: true,
  children,
  related,
  // The profile (which guardrails asks for too: the two rules are merged),
  // and every source an admin marked shareable: edited, each syncs every
  // Project again. By label, as the answer may depend on the Project alone,
  // not on what its profile lists.
  customize: (_project, spec) => [
    { apiVersion: "agrrh.com/v1", resource: "projectprofiles", names: [profileNameOf(spec)] },
    { apiVersion: "v1", resource: "secrets", namespace: INSTALL_NAMESPACE, labelSelector: { matchLabels: { [SHAREABLE_LABEL]: "true" } } },
    { apiVersion: "v1", resource: "configmaps", namespace: INSTALL_NAMESPACE, labelSelector: { matchLabels: { [SHAREABLE_LABEL]: "true" } } },
  ],
  refusals: ["InvalidSharedObjects"],
  reasons: ["SharedSourceMissing", "SharedSourceUnusable", "RemakingSharedObjects", "WaitingForSharedObjects"],
  plan: ({ project, spec, namespace, observed, children, related }) => {
    const profileName = profileNameOf(spec);
    const sources = related as Related;
    const copies = copiesIn(children, namespace);
    const observedOf = (kind: Kind, name: string) => (children[GROUP_OF[kind]] as Record<string, Record<string, any>>)[`${namespace}/${name}`];
    const mine = (kind: Kind, name: string) => copies.find((copy) => copy.kind === kind && copy.name === name);
    const keptAsObserved = () => copies.map(({ kind, name, object }) => asObserved(kind, name, namespace, object));
    // The built-in default profile, while no ProjectProfile replaces it, shares nothing.
    const profile = sources[PROFILES]?.[profileName] ?? (profileName === DEFAULT_PROFILE ? { spec: {} } : undefined);
    // A missing profile is the guardrails' to report; a copy is never lost for it.
    if (!profile) return { children: keptAsObserved() };
    const sharing = (profile.spec as { shared?: unknown } | null | undefined)?.shared;
    // A label value holds at most 63 characters, and the API server would refuse every copy.
    const named = v.safeParse(v.pipe(v.unknown(), v.check(() => sharing == null || profileName.length <= 63, SHARED_RULES.profileName)), sharing);
    const declared = named.success ? v.safeParse(SharedSpec, sharing ?? {}) : named;
    if (!declared.success) return { children: keptAsObserved(), invalid: invalid(profileName, namespace, declared.issues) };
    const { secrets, configMaps, serviceAccounts, roles, roleBindings } = declared.output;

    const wanted: Copy[] = [];
    const problems: Unusable[] = [];
    for (const [kind, names, group] of [["Secret", secrets, SECRETS], ["ConfigMap", configMaps, CONFIG_MAPS]] as const) {
      for (const name of names) {
        const source = sources[group]?.[`${INSTALL_NAMESPACE}/${name}`];
        const why = !source || source.metadata?.labels?.[SHAREABLE_LABEL] !== "true"
          ? "missing"
          : (UNCOPIED_TYPES as readonly string[]).includes(source.type ?? "")
            ? "type"
            : goJsonBytes({ ...source.data, ...source.binaryData }) > SOURCE_MAX_BYTES
              ? "size"
              : undefined;
        const kept = mine(kind, name);
        if (why) problems.push({ kind, name, why, kept: kept !== undefined });
        if (!why) wanted.push(copyOf(kind, name, namespace, profileName, source!));
        else if (kept) wanted.push(asObserved(kind, name, namespace, kept.object));
      }
    }
    wanted.push(...serviceAccounts.map((name): Copy => ({ apiVersion: "v1", kind: "ServiceAccount", metadata: metadataOf(name, namespace, profileName) })));
    wanted.push(...roles.map((role) => roleOf(role, namespace, profileName)));
    // A binding to a Role is there only while that Role's copy is: under
    // that name, a Role a tenant made before the copy, or after it went (an
    // admin's delete), would otherwise be what it grants.
    const heldBack: Copy[] = [];
    for (const binding of roleBindings.map((each) => roleBindingOf(each, namespace, profileName))) {
      const roleRef = binding["roleRef"] as { kind: string; name: string };
      const roleCopied = roleRef.kind !== "Role" || mine("Role", roleRef.name) !== undefined;
      if (roleCopied) wanted.push(binding);
      else heldBack.push(binding);
    }
    const remake = wanted.filter((copy) => mustRemake(copy, mine(copy.kind as Kind, copy.metadata.name)?.object));
    const notYet = [...wanted.filter((copy) => !isAsAsked(copy, mine(copy.kind as Kind, copy.metadata.name)?.object)), ...heldBack];
    // Under a name a copy should have, an object that is no copy (made by a
    // tenant before the profile shared that name) is never taken over:
    // Metacontroller's create fails, and the copy waits for it to go.
    const absent = notYet.filter((copy) => observedOf(copy.kind as Kind, copy.metadata.name) === undefined);
    // What the later features wait for: each copy the profile declares, one
    // not made for its source too, or none where the Namespace is older.
    const unmade = problems.filter(({ kept }) => !kept).map(({ kind, name }): Child => ({ apiVersion: "v1", kind, metadata: { name, namespace } }));
    return {
      children: wanted,
      guards: olderThanItsProject(observed, project) ? [] : [...wanted, ...unmade],
      remake,
      failed: problems.length ? unusable(profileName, namespace, problems) : undefined,
      remaking: remake.length
        ? {
            status: "False",
            reason: "RemakingSharedObjects",
            message: `${remake.map((copy) => `${copy.kind} ${copy.metadata.name}`).join(", ")} in Namespace ${namespace} changes what the API server lets no update change (a Secret's type, a RoleBinding's role): Metacontroller deletes it, and it is made afresh.`,
          }
        : undefined,
      waiting: {
        reason: "WaitingForSharedObjects",
        notYet: notYet.map((copy): [string, string] => [copy.kind, copy.metadata.name]),
        toBe: `as ProjectProfile ${profileName} shares them` + (absent.length ? takenBy(absent, profileName, namespace) : ""),
      },
      ready: wanted.length ? `, with ${wanted.length} shared object${wanted.length === 1 ? "" : "s"} from ProjectProfile ${profileName}` : undefined,
    };
  },
};
