/**
 * # Members: access for the people a Project lists, and nobody else
 *
 * A Project's `spec.members` says who may work in its Namespace, and how:
 * each member gets one of Kubernetes' built-in ClusterRoles there, bound by a
 * RoleBinding, and may read the Project itself. Members get access once the
 * features before this one are in place, so that nothing they run escapes
 * them. Whatever else grants access through the Project's
 * bindings, added by hand, is taken back.
 *
 * k8s.yaml holds the rest of the concern: the self-service policy (whoever
 * creates a Project is one of its admin members, and only they change it),
 * the requester role, and the guard on RoleBindings written in the
 * Namespace by anyone else.
 *
 * Owns: scripts/kubectl-my_projects, scripts/my-projects.krew.yaml, scripts/krew.ts, test/my-projects.test.ts (kubectl my-projects shows a person the Projects they are a member of).
 *
 * Read top to bottom: the names, the request's parts, who may be a member,
 * the bindings, and the plan `sync` composes.
 */
import * as v from "valibot";
import type { ObservedNamespace, Readiness } from "../sync.ts";
import type { Feature } from "./index.ts";

// Its words, none left once it is taken away (take-away.ts's VOCABULARY says which).
export const VOCABULARY = ["member", "members", "developer", "developers", "dana", "self-service", "requester role", "reader role", "my-projects", "krew", "verb `use`", "REQUESTER_ROLE", "everyone-requests"] as const;

// ## The names
//
// Spelled out, not taken from sync.ts: a feature imports only types from
// it (members.test.ts proves the spellings agree).
export const PROJECTS = { group: "agrrh.com", plural: "projects", singular: "project" } as const;
export const LAST_APPLIED_ANNOTATION = "metacontroller.k8s.io/last-applied-configuration";
export const ROLE_BINDINGS = "RoleBinding.rbac.authorization.k8s.io/v1";
export const CLUSTER_ROLES = "ClusterRole.rbac.authorization.k8s.io/v1";
export const CLUSTER_ROLE_BINDINGS = "ClusterRoleBinding.rbac.authorization.k8s.io/v1";

// ## The request
//
// Members are taken as a list here and checked against the rules below by
// `sync`: a Project admitted before those rules existed then gets a status
// that says what is wrong, instead of a refused request that stalls it.
const spec = {
  members: v.nullish(v.array(v.unknown())),
  environments: v.nullish(v.array(v.unknown())), // feature: members & environments
};
/** The spec fields a Namespace's members are read from. */
type Fields = { [field in keyof typeof spec]?: unknown[] | null };

// A RoleBinding or ClusterRoleBinding is read for what it grants, to tell
// whether it is as asked, and for the copy of our last answer that
// Metacontroller keeps on it, to tell a subject added by hand from one we
// asked for before.
const ObservedBinding = v.looseObject({
  metadata: v.optional(v.looseObject({ annotations: v.nullish(v.record(v.string(), v.string())) })),
  roleRef: v.looseObject({ name: v.string() }),
  subjects: v.nullish(
    v.array(v.looseObject({ kind: v.string(), name: v.string(), namespace: v.nullish(v.string()) })),
  ),
});

const children = { [ROLE_BINDINGS]: ObservedBinding, [CLUSTER_ROLES]: v.looseObject({}), [CLUSTER_ROLE_BINDINGS]: ObservedBinding };
type ObservedBindings = { [G in keyof typeof children]: Record<string, v.InferOutput<(typeof children)[G]>> };
type ObservedBinding = v.InferOutput<typeof ObservedBinding>;

// ## The answer

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

/** What lets a Project's members read (and its admins change) the Project itself, which no RoleBinding in its Namespace can. */
export type ClusterRole = {
  apiVersion: "rbac.authorization.k8s.io/v1";
  kind: "ClusterRole";
  metadata: { name: string; ownerReferences?: [NamespaceOwner] };
  rules: [{ apiGroups: [typeof PROJECTS.group]; resources: [typeof PROJECTS.plural]; resourceNames: [string]; verbs: (typeof MEMBER_VERBS)[number][] }];
};

export type ClusterRoleBinding = {
  apiVersion: "rbac.authorization.k8s.io/v1";
  kind: "ClusterRoleBinding";
  metadata: { name: string; ownerReferences?: [NamespaceOwner] };
  roleRef: { apiGroup: "rbac.authorization.k8s.io"; kind: "ClusterRole"; name: string };
  subjects: Subject[];
};

type Binding = RoleBinding | ClusterRoleBinding;

/** The Project's Namespace as a second owner, beside the Project Metacontroller names as their controller. */
export type NamespaceOwner = { apiVersion: "v1"; kind: "Namespace"; name: string; uid: string };

// ## Who may be a member
//
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
/** The most members a Namespace of the Project's may list of its own, beside the Project's (k8s.yaml's CRD). */
export const MAX_OWN_MEMBERS = 20;
export const MEMBER_NAME_MAX_LENGTH = 253;

// What the API server demands of a ServiceAccount subject, so that a
// RoleBinding it would refuse is never asked for: its namespace's name is a
// DNS-1123 label, its own a subdomain.
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts:";
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
    "a ServiceAccount of the Project's own Namespace, or all of them as Group system:serviceaccounts:<that Namespace>, " +
    "is at most an edit member: every edit member there can act as them",
  elsewhere: // feature: members & environments
    "a ServiceAccount of one of the Project's Namespaces (proj-<name>, proj-<name>--<environment> or an environment's namespace), " + // feature: members & environments
    "or all of them as Group system:serviceaccounts:<that Namespace>, is a member of that Namespace alone, listed in its environment's members, " + // feature: members & environments
    "and is at most an edit member there: every edit member there can act as them", // feature: members & environments
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
      (namespace !== undefined && DNS1123_LABEL.test(namespace) && namespace.length <= 63 && DNS1123_SUBDOMAIN.test(name)),
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
// (impersonate it, or run a Pod as it), so one of those as an admin member,
// by name or as the Group of them all, would make every edit member an admin
// of the Project, able to rewrite or delete it. ServiceAccounts of other
// namespaces are the Project's admins' to trust, but those of the Project's
// other Namespaces, which `project` and `everyNamespace` tell (below).
function membersIn(namespace: string, project: string, everyNamespace: { namespace: string }[], kept = false) {
  return v.pipe(
    Members,
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      dataset.value.forEach((member, index) => {
        const of = serviceAccountsOf(member);
        const broken =
          of === namespace && member.role === "admin" ? MEMBER_RULES.ownServiceAccount
          : !kept && isElsewhere(namespace, project, everyNamespace, member) ? MEMBER_RULES.elsewhere // feature: members & environments
          : undefined;
        if (broken) addIssue({ message: broken, path: [{ type: "array", origin: "value", input: dataset.value, key: index, value: member }] });
      });
    }),
  );
}

/** The Namespace whose ServiceAccounts a member stands for, one by name or all as their Group. */
const serviceAccountsOf = ({ kind, name, namespace }: Member) =>
  kind === "ServiceAccount" ? namespace : kind === "Group" && SERVICE_ACCOUNTS_OF_A_NAMESPACE.test(name) ? name.slice(SERVICE_ACCOUNTS_GROUP.length) : undefined;

// feature: members & environments
// So across a Project's Namespaces: an edit member of one (dev) can act as
// its ServiceAccounts, so one of them granted in another (prod) would give
// every edit member of dev that role in prod. Any Namespace the Project owns
// or would own counts: those it plans now, and any of its names, kept ones
// and those past the bound included, which no spec lists any more.
const NAMESPACE_PREFIX = "proj-";
const SEPARATOR = "--";
const isTheProjects = (project: string, everyNamespace: { namespace: string }[], namespace: string) =>
  everyNamespace.some((place) => place.namespace === namespace) ||
  namespace === `${NAMESPACE_PREFIX}${project}` ||
  namespace.startsWith(`${NAMESPACE_PREFIX}${project}${SEPARATOR}`);
const isElsewhere = (namespace: string, project: string, everyNamespace: { namespace: string }[], member: Member) => {
  const of = serviceAccountsOf(member);
  return of !== undefined && of !== namespace && isTheProjects(project, everyNamespace, of);
};

// Admission sees the environments declared, and refuses such a member of
// theirs; a Namespace kept undeclared it cannot see, so the Project's
// members, admitted, reach it too. There the member is withheld alone, and
// said so, and every other member keeps their access.
const Declared = v.array(v.looseObject({ name: v.string(), namespace: v.nullish(v.string()) }));
function isKept(project: string, environments: unknown[] | null | undefined, namespace: string): boolean {
  const declared = v.safeParse(Declared, environments ?? []);
  // Environments that cannot be read keep every Namespace as it is (features/environments.ts).
  if (!declared.success) return true;
  const names = declared.output.length ? declared.output.map((environment) => environment.namespace ?? `${NAMESPACE_PREFIX}${project}${SEPARATOR}${environment.name}`) : [`${NAMESPACE_PREFIX}${project}`];
  return !names.includes(namespace);
}

/** In the status, the members kept Namespaces do not grant, each with where, and why: none, no field. */
function withheld(project: string, everyNamespace: { namespace: string; spec: Fields }[]): { membersWithheld?: string } {
  const which = everyNamespace.flatMap(({ namespace, spec }) => {
    if (!isKept(project, spec.environments, namespace)) return [];
    const listed = v.safeParse(membersIn(namespace, project, everyNamespace, true), spec.members ?? []);
    return (listed.success ? listed.output : []).filter((member) => isElsewhere(namespace, project, everyNamespace, member)).map((member) => `${describeSubject(member)} in Namespace ${namespace}`);
  });
  if (which.length === 0) return {};
  return { membersWithheld: `${which.join(", ")}: not granted there, as ${MEMBER_RULES.elsewhere}; every other member keeps their access.` };
}
// end feature: members & environments

// One RoleBinding per role and kind of subject, and per namespace for
// ServiceAccounts. Metacontroller merges a list whose items all have a
// `name` as a map keyed by that name, so two subjects of one name in one
// list (ServiceAccounts ci/deployer and release/deployer, or User and Group
// ops) would collapse into one. Within each of these RoleBindings every
// subject has the same kind and namespace, and no member is listed twice,
// so every name in a list is unique. Named after the role, a RoleBinding
// never has to change its roleRef, which Kubernetes does not allow.
export function roleBindingNameFor(role: Role, member: Pick<Member, "kind" | "namespace">): string {
  return `${PROJECTS.singular}-${role}-${subjectGroupOf(member)}`;
}

function subjectGroupOf({ kind, namespace }: Pick<Member, "kind" | "namespace">): string {
  return kind === "ServiceAccount" ? `serviceaccounts-${namespace}` : kind === "User" ? "users" : "groups";
}

// Every member may read, list (by name) and watch the Project itself, and
// so find the Projects they are in; its admin members also change and
// delete it, and the self-service policy refuses those verbs to the others.
// A ClusterRole for that one Project, bound cluster-wide, whatever becomes
// of its Namespace: members see why their Project waits. One binding holds
// every member whose name no other member has; the second of a name goes
// to a binding of its own (`-2`), for the merge above. Named after the API
// group, as cluster-wide names are shared with everything else in the
// cluster.
export const MEMBER_VERBS = ["get", "list", "watch", "update", "patch", "delete"] as const;

export function memberRoleNameFor(project: string): string {
  return `${PROJECTS.plural}.${PROJECTS.group}:${project}:member`;
}

export function memberBindingNameFor(project: string, repeat = 1): string {
  return `${memberRoleNameFor(project)}${repeat > 1 ? `-${repeat}` : ""}`;
}

/** Metacontroller keys namespaced children of this cluster-scoped parent `<namespace>/<name>`, cluster-scoped ones by name. */
function observedBinding(children: ObservedBindings, binding: Binding) {
  return binding.kind === "RoleBinding"
    ? children[ROLE_BINDINGS][`${binding.metadata.namespace}/${binding.metadata.name}`]
    : children[CLUSTER_ROLE_BINDINGS][binding.metadata.name];
}

// Metacontroller's merge removes a subject it applied before and no longer
// asked for, and keeps one it never applied: only those are undeclared. Its
// copy is read only when a subject is not asked for, so a binding as asked,
// the usual case, costs no JSON parse.
function undeclaredSubjects(observed: ObservedBinding | undefined, wanted: Binding): string[] {
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

function lastAppliedSubjects(observed: ObservedBinding | undefined) {
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

// `kubectl delete project X` returns only once it has seen X go: it gets X,
// then lists and watches it by name, as the member who deleted it. Were the
// members' role gone by then, the list would be refused, and kubectl retries
// a refused list for ever. Owned by the Project alone, the role went with
// it, in the garbage collector's same pass as the Namespace, and a member's
// delete hung whenever the Project went between kubectl's get and its watch.
// So the Namespace owns them too, once it is observed: the garbage collector
// deletes an object only once every owner is gone, and the Namespace goes
// only after the Project (it is its child), once the namespace controller
// has emptied it. Until then the members may still get, list and watch the
// name, and find nothing there, which ends kubectl's wait.
function ownedByNamespace(namespace: string, observed: ObservedNamespace | undefined): Pick<ClusterRole["metadata"], "ownerReferences"> {
  const uid = observed?.metadata?.["uid"];
  return typeof uid === "string" ? { ownerReferences: [{ apiVersion: "v1", kind: "Namespace", name: namespace, uid }] } : {};
}

/** The ClusterRole of this one Project, and its bindings to every member, whatever their role. */
function membersRoleFor(project: string, members: Member[], owners: Pick<ClusterRole["metadata"], "ownerReferences">): { role: ClusterRole; bindings: ClusterRoleBinding[] } {
  const role: ClusterRole = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: memberRoleNameFor(project), ...owners },
    rules: [{ apiGroups: [PROJECTS.group], resources: [PROJECTS.plural], resourceNames: [project], verbs: [...MEMBER_VERBS] }],
  };
  const bindings = grouped(members, (_member, repeat) => memberBindingNameFor(project, repeat), (name) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name, ...owners },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name },
    subjects: [],
  }));
  return { role, bindings };
}

// The members' role on the Project is one object, asked for alike in each of
// its Namespaces, so it binds whoever is a member of any of them, once, at
// the highest role they hold there.
function membersOfAny(project: string, everyNamespace: { namespace: string; spec: Fields }[]): Member[] {
  const highest = new Map<string, Member>();
  for (const { namespace, spec } of everyNamespace) {
    for (const member of grantedIn(namespace, project, everyNamespace, spec).granted ?? []) {
      const before = highest.get(subjectKey(member));
      if (!before || ROLES.indexOf(member.role) < ROLES.indexOf(before.role)) highest.set(subjectKey(member), member);
    }
  }
  return [...highest.values()];
}

/** The members a Namespace grants, or, where they break a rule, the problems and none. */
function grantedIn(namespace: string, project: string, everyNamespace: { namespace: string }[], spec: Fields): { granted: Member[]; problems?: undefined } | { granted?: undefined; problems: [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]] } {
  let kept = false;
  kept = isKept(project, spec.environments, namespace); // feature: members & environments
  const listed = v.safeParse(membersIn(namespace, project, everyNamespace, kept), spec.members ?? []);
  if (!listed.success) return { problems: listed.issues };
  let granted = listed.output;
  granted = granted.filter((member) => !kept || !isElsewhere(namespace, project, everyNamespace, member)); // feature: members & environments
  return { granted };
}

/**
 * Members' subjects gathered into the bindings `nameOf` assigns them, in a
 * fixed order so that the same spec gives the same answer; `repeat` counts
 * the subjects of the same name before this one among those `nameOf` puts
 * together, from 1.
 */
function grouped<B extends Binding>(members: Member[], nameOf: (member: Member, repeat: number) => string, make: (name: string, member: Member) => B): B[] {
  const byName = new Map<string, B>();
  const seen = new Map<string, number>();
  const byRoleThenSubject = (a: Member, b: Member) => ROLES.indexOf(a.role) - ROLES.indexOf(b.role) || bySubjectKey(subjectOf(a), subjectOf(b));
  for (const member of [...members].sort(byRoleThenSubject)) {
    const repeat = (seen.get(`${nameOf(member, 1)} ${member.name}`) ?? 0) + 1;
    seen.set(`${nameOf(member, 1)} ${member.name}`, repeat);
    const name = nameOf(member, repeat);
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

// ## The plan
//
// Members get access once the Namespace is Active and what the features
// before this one ask for is there; access once given is not taken back
// while what another feature asks for is being put right. Members that break the rules get no
// binding at all: access is withdrawn rather than guessed.
export const members: Feature<typeof spec, typeof children> = {
  spec,
  perNamespace: true,
  // A Namespace's own members replace the Project's entry for the same
  // subject, and add the others: edit on the Project, view in one.
  inherit: (project, own) => {
    const listed = (spec: Record<string, unknown>) => (Array.isArray(spec["members"]) ? (spec["members"] as Record<string, unknown>[]) : []);
    if (!Array.isArray(own["members"])) return {};
    const key = (member: Record<string, unknown>) => subjectKey({ kind: String(member["kind"]), name: String(member["name"]), namespace: member["namespace"] as string | undefined });
    const replaced = new Set(listed(own).map(key));
    return { members: [...listed(project).filter((member) => !replaced.has(key(member))), ...listed(own)] };
  },
  children,
  related: {},
  elsewhere: {
    owns: (project, group, key) => {
      const role = memberRoleNameFor(project);
      if (group === CLUSTER_ROLES) return key === role;
      return group === CLUSTER_ROLE_BINDINGS && key.startsWith(role) && /^(-[0-9]+)?$/.test(key.slice(role.length));
    },
    are: "the objects that let its members read it",
  },
  refusals: ["InvalidMembers"],
  reasons: ["RevokingUndeclaredAccess", "WaitingForRoleBindings"],
  plan: ({ project, spec, namespace, observed, children, earlierInPlace, everyNamespace }) => {
    const listed = grantedIn(namespace, project.metadata.name, everyNamespace, spec);
    // Its own bindings alone, all named project-<role>-...: other features
    // bind in the Namespace too, and theirs give members nothing.
    const accessGiven = Object.keys(children[ROLE_BINDINGS]).some((key) => key.startsWith(`${namespace}/${PROJECTS.singular}-`));
    const declared = listed.granted !== undefined && listed.granted.length > 0;
    const granted = declared && (earlierInPlace || accessGiven);
    const roleBindings = granted ? roleBindingsFor(namespace, listed.granted) : [];
    const readersOfAny = membersOfAny(project.metadata.name, everyNamespace);
    const readers = readersOfAny.length ? membersRoleFor(project.metadata.name, readersOfAny, ownedByNamespace(namespace, observed)) : undefined;
    const bindings: Binding[] = [...roleBindings, ...(readers?.bindings ?? [])];
    // A binding of this Project's that grants a subject the spec does not
    // declare (added by hand) cannot be put right by Metacontroller's merge,
    // which only removes list entries it wrote itself. Left out of one
    // answer, it is deleted; the next sync creates it afresh, as declared.
    const undeclared = bindings.flatMap((binding) => {
      const extra = undeclaredSubjects(observedBinding(children, binding), binding);
      return extra.length ? [{ binding, extra }] : [];
    });
    // Access is in place when every binding asked for grants exactly what
    // was asked, and the members' role is there.
    const granting = (binding: ObservedBinding | Binding | undefined) =>
      binding ? `${binding.roleRef.name}:${(binding.subjects ?? []).map(subjectKey).sort().join(",")}` : undefined;
    const notYet = [
      ...bindings.filter((binding) => granting(observedBinding(children, binding)) !== granting(binding)),
      ...(readers && !children[CLUSTER_ROLES][readers.role.metadata.name] ? [readers.role] : []),
    ];
    return {
      children: [...(readers ? [readers.role, ...readers.bindings] : []), ...roleBindings],
      remake: undeclared.map(({ binding }) => binding),
      status: {
        members: spec.members?.length ?? 0,
        ...withheld(project.metadata.name, everyNamespace), // feature: members & environments
      },
      invalid: listed.problems && invalidMembers(listed.problems),
      remaking: undeclared.length ? revoking(undeclared) : undefined,
      waiting: { reason: "WaitingForRoleBindings", notYet: notYet.map((object) => [object.kind, object.metadata.name]), toBe: "as asked" },
      heldBack: declared && !granted ? "members get access once they are in place" : undefined,
      ready: roleBindings.length ? `, with ${roleBindings.map((binding) => binding.metadata.name).join(", ")} as asked` : undefined,
    };
  },
};
