/**
 * # Budget: how many Projects each developer may hold
 *
 * The guardrails limit each Project, and nothing would limit how many
 * Projects one developer makes: a quota multiplied at will is no quota. So
 * cluster admins set, in ProjectBudget `default` (agrrh.com/v1,
 * cluster-scoped), how many Projects a requester may hold, and in it or in
 * other ProjectBudgets larger budgets for some groups; a Project beyond its
 * requester's budget gets nothing, not even its Namespace, and its status
 * says why and whom to ask.
 *
 * Kubernetes records no creator, so k8s.yaml's mutating policy writes one at
 * create, where nobody can forge it and nobody may change it afterwards: the
 * requester's name and groups as annotations, and the name written as a
 * label, by which the customize hook asks for the requester's other
 * Projects (and only theirs: every Project in every sync would cost O(N)).
 * Holders of the verb `administer` on projects.agrrh.com are not limited,
 * and their Projects carry no requester.
 *
 * The order, and why it does not depend on timing: creation times have
 * one-second resolution, and ten Projects made at once can reach
 * Metacontroller's cache in any order. So each Project takes a ticket, its
 * resourceVersion when first synced, kept in its status (resourceVersions
 * of one resource compare as integers, Kubernetes 1.35+). Metacontroller
 * reads a Project and the related Projects from one informer, which holds
 * every Project stored before the one it syncs; a Project still without a
 * ticket can only take a larger one than an older ticket, unless its
 * resourceVersion is already smaller, and then the Project waits for it. A
 * Project's place is 1 + the number of its requester's Projects with
 * smaller tickets; it gets its Namespace when its place is within the
 * budget, and keeps one it has whatever the budget says later (never lose).
 *
 * Needs: members (its requester role and self-service are what a budget limits).
 *
 * Read top to bottom: the names, the request's parts, the budget's rules,
 * the place in line, and the plan `sync` composes.
 */
import * as v from "valibot";
import type { Feature, LabelSelector, Readiness, RelatedResourceRule } from "../sync.ts";

// ## The names
//
// Spelled out, not taken from sync.ts: a feature imports only types from it
// (budget.test.ts proves the spellings agree, and manifest.test.ts that
// k8s.yaml's policies write and read the same keys).
export const BUDGET = { kind: "ProjectBudget", plural: "projectbudgets", apiVersion: "agrrh.com/v1", name: "default" } as const;
export const BUDGETS = `${BUDGET.kind}.${BUDGET.apiVersion}` as const;
export const PROJECTS = { kind: "Project", plural: "projects", apiVersion: "agrrh.com/v1" } as const;
export const SIBLINGS = `${PROJECTS.kind}.${PROJECTS.apiVersion}` as const;
/** Who created the Project, exactly as the API server authenticated them. */
export const REQUESTER_ANNOTATION = "agrrh.com/requester";
/** Their groups at that moment, one per line. */
export const REQUESTER_GROUPS_ANNOTATION = "agrrh.com/requester-groups";
/** Their name in a label's alphabet: only for selecting, as two long or odd names may share it. */
export const REQUESTER_LABEL = "agrrh.com/requester";
/** The Project's own name, which sync.ts's Namespaces carry under the same key. */
export const PROJECT_LABEL = "agrrh.com/project";
export const DEFAULT_CONTACT = "a cluster admin (a holder of the verb administer on projects.agrrh.com)";

// ## The request
//
// Each Project, the one synced and the related ones, is read for its
// requester, its resourceVersion and the ticket its own status keeps.
const Budgeted = v.looseObject({
  metadata: v.looseObject({
    uid: v.nullish(v.string()),
    resourceVersion: v.nullish(v.string()),
    annotations: v.nullish(v.record(v.string(), v.string())),
  }),
  status: v.fallback(v.nullish(v.looseObject({ budget: v.nullish(v.looseObject({ ticket: v.nullish(v.string()) })) })), undefined),
});
type Budgeted = v.InferOutput<typeof Budgeted>;

const related = { [BUDGETS]: v.looseObject({ spec: v.nullish(v.unknown()) }), [SIBLINGS]: Budgeted };

// ## The budget's rules
//
// ProjectBudget `default` sets what everyone gets; any ProjectBudget may
// give groups more, so that each team's budget can be an object of its own.
// The CRD checks the same at admission; these are for a budget admitted
// before its rules, or where the CRD was not updated.
const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
const GroupBudget = v.pipe(
  v.object({ group: v.pipe(v.string(), v.nonEmpty()), projects: v.optional(Count), unlimited: v.optional(v.boolean()) }),
  v.check((entry) => (entry.projects === undefined) === (entry.unlimited === true), "a group has either projects or unlimited: true"),
);
type GroupBudget = v.InferOutput<typeof GroupBudget>;
const Groups = v.optional(v.array(GroupBudget));
const DefaultBudget = v.object({ projects: Count, contact: v.optional(v.pipe(v.string(), v.nonEmpty())), groups: Groups });
const MoreBudget = v.object({ groups: Groups });

export type Budget = { projects: number; contact: string; groups: GroupBudget[] };

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

function readBudgets(found: Record<string, { spec?: unknown }>): BudgetReading {
  const whose = "so Projects that developers create get nothing until a cluster admin";
  const { [BUDGET.name]: everyone, ...more } = found;
  if (!everyone) {
    return { problem: { status: "False", reason: "BudgetNotFound", message: `ProjectBudget ${BUDGET.name} does not exist, ${whose} restores it (docs/budget.md).` } };
  }
  const defaults = v.safeParse(DefaultBudget, everyone.spec ?? {});
  const others = Object.entries(more).map(([name, { spec }]) => ({ name, read: v.safeParse(MoreBudget, spec ?? {}) }));
  const broken = [{ name: BUDGET.name, read: defaults }, ...others].flatMap(({ name, read }) => (read.success ? [] : [`ProjectBudget ${name} breaks its rules (${whereIn(read.issues)})`]));
  if (!defaults.success || broken.length) return { problem: { status: "False", reason: "InvalidBudget", message: `${broken.sort().join("; ")}, ${whose} fixes it.` } };
  const groups = [defaults.output, ...others.flatMap(({ read }) => (read.success ? [read.output] : []))].flatMap((budget) => budget.groups ?? []);
  return { budget: { projects: defaults.output.projects, contact: defaults.output.contact ?? DEFAULT_CONTACT, groups } };
}

/** `spec.groups[0]: …`, each place once: where a budget breaks its rules. */
function whereIn(issues: v.BaseIssue<unknown>[]): string {
  const path = (issue: v.BaseIssue<unknown>) => (issue.path ?? []).map(({ key }) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("");
  return [...new Set(issues.map((issue) => `spec${path(issue)}: ${issue.message}`))].join("; ");
}

// ## The place in line
//
// A resourceVersion is a decimal integer without leading zeros: the longer
// is the larger, and of equal length the later in text order.
const isTicket = (value: string | null | undefined): value is string => typeof value === "string" && /^[1-9][0-9]*$/.test(value);
export const compareTickets = (a: string, b: string) => (a.length === b.length ? (a < b ? -1 : a > b ? 1 : 0) : a.length - b.length);

const requesterOf = (project: Budgeted) => project.metadata.annotations?.[REQUESTER_ANNOTATION];
const groupsOf = (project: Budgeted) => (project.metadata.annotations?.[REQUESTER_GROUPS_ANNOTATION] ?? "").split("\n").filter(Boolean);
const ticketOf = (project: Budgeted) => (isTicket(project.status?.budget?.ticket) ? project.status.budget.ticket : undefined);

type Line = { ticket: string; held: number; place?: number; notYetPlaced: string[] };

/** Where this Project stands among its requester's, or which of theirs it waits for to take a ticket. */
export function lineOf(me: Budgeted, name: string, projects: Record<string, Budgeted>): Line | undefined {
  const ticket = ticketOf(me) ?? (isTicket(me.metadata.resourceVersion) ? me.metadata.resourceVersion : undefined);
  if (ticket === undefined) return undefined;
  const theirs = Object.entries(projects).filter(([other, project]) => other !== name && requesterOf(project) === requesterOf(me));
  const notYetPlaced = theirs
    .filter(([, project]) => ticketOf(project) === undefined && !(isTicket(project.metadata.resourceVersion) && compareTickets(project.metadata.resourceVersion, ticket) > 0))
    .map(([other]) => other);
  // Two Projects never take one resourceVersion; a status written by hand
  // could give them one ticket, and then the name decides.
  const ahead = theirs.filter(([other, project]) => {
    const theirTicket = ticketOf(project);
    if (theirTicket === undefined) return false;
    const order = compareTickets(theirTicket, ticket);
    return order < 0 || (order === 0 && other < name);
  });
  return { ticket, held: theirs.length + 1, notYetPlaced, ...(notYetPlaced.length ? {} : { place: ahead.length + 1 }) };
}

const projects = (n: number) => `${n} Project${n === 1 ? "" : "s"}`;
const ordinal = (n: number) => `${n}${n % 100 >= 11 && n % 100 <= 13 ? "th" : ["th", "st", "nd", "rd"][n % 10] ?? "th"}`;

// ## The plan
//
// Nothing here is a child: a Project over budget is held back by saying
// its Namespace cannot be had (`unavailable`), and every other feature asks
// for nothing until the Namespace is Active. One that has a Namespace keeps
// everything, whatever the budget says now.
export const budget: Feature<{}, {}, typeof related> = {
  spec: {},
  children: {},
  related,
  // Every Project asks for both, so that sync can tell a missing budget from
  // a missing customize hook: every ProjectBudget (an empty selector selects
  // all), and its requester's other Projects. One without a requester asks
  // for Projects by a selector none can match: the group arrives, empty.
  customize: (project): RelatedResourceRule[] => {
    const label = labelOf(project);
    const others: LabelSelector = label === undefined
      ? { matchExpressions: [{ key: REQUESTER_LABEL, operator: "Exists" }, { key: REQUESTER_LABEL, operator: "DoesNotExist" }] }
      : { matchLabels: { [REQUESTER_LABEL]: label }, matchExpressions: [{ key: PROJECT_LABEL, operator: "NotIn", values: [project.metadata.name] }] };
    return [
      { apiVersion: BUDGET.apiVersion, resource: BUDGET.plural, labelSelector: { matchLabels: {} } },
      { apiVersion: PROJECTS.apiVersion, resource: PROJECTS.plural, labelSelector: others },
    ];
  },
  refusals: ["OverBudget", "BudgetNotFound", "InvalidBudget"],
  reasons: ["WaitingForPlaceInLine"],
  plan: ({ project, observed, related }) => {
    const me = v.parse(Budgeted, project);
    const requester = requesterOf(me);
    if (requester === undefined) return { children: [] };
    const name = project.metadata.name;
    const line = lineOf(me, name, related[SIBLINGS] ?? {});
    const reading = readBudgets(related[BUDGETS] ?? {});
    const limit = reading.budget ? limitFor(reading.budget, groupsOf(me)) : undefined;
    const contact = reading.budget?.contact ?? DEFAULT_CONTACT;
    const status = {
      budget: {
        requester,
        ...(line ? { held: line.held, ...(line.place === undefined ? {} : { place: line.place }), ticket: line.ticket } : {}),
        ...(limit === undefined ? {} : { limit }),
        contact,
      },
    };
    if (observed) return { children: [], status };
    if (reading.problem) return { children: [], status, unavailable: reading.problem };
    if (!line || line.place === undefined) {
      const waitingFor = line ? `${line.notYetPlaced.join(", ")} to take ${line.notYetPlaced.length === 1 ? "its place" : "their places"} in line` : "Metacontroller to send its resourceVersion";
      return { children: [], status, unavailable: { status: "False", reason: "WaitingForPlaceInLine", message: `Project ${name} is one of ${requester}'s; waiting for ${waitingFor}, so that the oldest get theirs.` } };
    }
    if (limit !== undefined && line.place > limit) {
      return {
        children: [],
        status,
        unavailable: {
          status: "False",
          reason: "OverBudget",
          message:
            `${requester} holds ${projects(line.held)} and may hold ${limit} (ProjectBudget ${BUDGET.name}), so Project ${name}, the ${ordinal(line.place)} of them, gets nothing: ` +
            "no Namespace, no access, no integrations. " +
            (limit === 0
              ? `It gets them by itself once the budget gives ${requester} one; ask ${contact} for it.`
              : `It gets them by itself once no more than ${limit - 1} of the others are older; delete one of them, or ask ${contact} for a larger budget.`),
        },
      };
    }
    return { children: [], status };
  },
};

// The label the mutating policy wrote, read from the Project rather than
// worked out again here, so that the two can never disagree.
function labelOf(project: { metadata: Record<string, unknown> }): string | undefined {
  const label = (project.metadata["labels"] as Record<string, unknown> | undefined)?.[REQUESTER_LABEL];
  return typeof label === "string" ? label : undefined;
}
