// One table of members, good and bad, that both judges of a Project's members
// must agree on: the CRD at admission (admission.test.ts) and `sync`, for
// Projects admitted before the rules (sync.test.ts). Each bad case names the
// rule it breaks, so both can be held to saying why in the same words.
import { MAX_MEMBERS, MEMBER_NAME_MAX_LENGTH, MEMBER_RULES } from "../features/members.ts";

export type MemberCase = { what: string; members: Record<string, unknown>[]; breaks?: keyof typeof MEMBER_RULES };

const user = (name: string, role = "edit") => ({ kind: "User", name, role });
const many = (count: number) => Array.from({ length: count }, (_, index) => user(`user-${index}`));

export const MEMBER_CASES: MemberCase[] = [
  { what: "no members", members: [] },
  { what: "a User", members: [user("alice@example.com", "admin")] },
  { what: "a Group", members: [{ kind: "Group", name: "shop-devs", role: "edit" }] },
  { what: "a ServiceAccount with its namespace", members: [{ kind: "ServiceAccount", namespace: "ci", name: "deployer", role: "edit" }] },
  { what: "a User and a Group of the same name", members: [user("ops"), { kind: "Group", name: "ops", role: "view" }] },
  {
    what: "ServiceAccounts of the same name in two namespaces",
    members: [
      { kind: "ServiceAccount", namespace: "ci", name: "bot", role: "edit" },
      { kind: "ServiceAccount", namespace: "cd", name: "bot", role: "view" },
    ],
  },
  { what: `a name of ${MEMBER_NAME_MAX_LENGTH} characters`, members: [user("a".repeat(MEMBER_NAME_MAX_LENGTH))] },
  // The API server counts code points; an emoji is one, though two UTF-16 units.
  { what: `a name of ${MEMBER_NAME_MAX_LENGTH} emoji`, members: [user("\u{1F600}".repeat(MEMBER_NAME_MAX_LENGTH))] },
  { what: `a name of ${MEMBER_NAME_MAX_LENGTH + 1} emoji`, members: [user("\u{1F600}".repeat(MEMBER_NAME_MAX_LENGTH + 1))], breaks: "name" },
  { what: `${MAX_MEMBERS} members`, members: many(MAX_MEMBERS) },

  { what: "an unknown kind", members: [{ kind: "Robot", name: "r2", role: "view" }], breaks: "kind" },
  { what: "a kind in lower case", members: [{ kind: "user", name: "alice", role: "view" }], breaks: "kind" },
  { what: "an unknown role", members: [user("alice", "owner")], breaks: "role" },
  { what: "no role", members: [{ kind: "User", name: "alice" }], breaks: "role" },
  { what: "an empty name", members: [user("")], breaks: "name" },
  { what: "no name", members: [{ kind: "User", role: "view" }], breaks: "name" },
  { what: `a name of ${MEMBER_NAME_MAX_LENGTH + 1} characters`, members: [user("a".repeat(MEMBER_NAME_MAX_LENGTH + 1))], breaks: "name" },
  { what: "a ServiceAccount without a namespace", members: [{ kind: "ServiceAccount", name: "deployer", role: "edit" }], breaks: "serviceAccount" },
  {
    what: "a ServiceAccount in an empty namespace",
    members: [{ kind: "ServiceAccount", namespace: "", name: "deployer", role: "edit" }],
    breaks: "serviceAccount",
  },
  {
    what: "a ServiceAccount in a namespace that cannot exist",
    members: [{ kind: "ServiceAccount", namespace: "CI", name: "deployer", role: "edit" }],
    breaks: "serviceAccount",
  },
  {
    what: "a ServiceAccount whose name cannot exist",
    members: [{ kind: "ServiceAccount", namespace: "ci", name: "Deployer", role: "edit" }],
    breaks: "serviceAccount",
  },
  { what: "a User with a namespace", members: [{ kind: "User", namespace: "ci", name: "alice", role: "view" }], breaks: "cluster" },
  { what: "a Group with an empty namespace", members: [{ kind: "Group", namespace: "", name: "devs", role: "view" }], breaks: "cluster" },
  { what: "the same User twice, with two roles", members: [user("alice", "admin"), user("alice", "view")], breaks: "once" },
  {
    what: "the same ServiceAccount twice",
    members: [
      { kind: "ServiceAccount", namespace: "ci", name: "bot", role: "edit" },
      { kind: "ServiceAccount", namespace: "ci", name: "bot", role: "edit" },
    ],
    breaks: "once",
  },
  { what: `${MAX_MEMBERS + 1} members`, members: many(MAX_MEMBERS + 1), breaks: "most" },

  // Kubernetes' own Users and Groups stand for everyone, or the cluster itself.
  { what: "every ServiceAccount of one namespace, as a Group", members: [{ kind: "Group", name: "system:serviceaccounts:ci", role: "view" }] },
  { what: "a User whose name only contains system:", members: [user("ops-system:x")] },
  ...[
    ["Group", "system:authenticated"],
    ["Group", "system:unauthenticated"],
    ["User", "system:anonymous"],
    ["Group", "system:masters"],
    ["Group", "system:serviceaccounts"],
    ["Group", "system:serviceaccounts:CI"],
    ["User", "system:serviceaccount:ci:deployer"],
    ["User", "system:serviceaccounts:ci"],
    ["User", "system:kube-controller-manager"],
  ].map(([kind, name]) => ({ what: `${kind} ${name}`, members: [{ kind, name, role: "admin" }], breaks: "everyone" as const })),
];
