// What the budget feature (features/budget.ts) does to sync's answer: a
// Project beyond its requester's budget gets nothing, in an order that
// cannot change once taken, and one that has its Namespace keeps it.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { API_VERSION, GROUP, PARENT, PROJECT_LABEL as CORE_PROJECT_LABEL, SyncRequest, customize, sync, type Project, type RelatedObjects } from "../sync.ts";
import {
  BUDGET,
  BUDGETS,
  DEFAULT_CONTACT,
  PROJECTS,
  PROJECT_LABEL,
  REQUESTER_ANNOTATION,
  REQUESTER_GROUPS_ANNOTATION,
  REQUESTER_LABEL,
  SIBLINGS,
  budget as budgetFeature,
  compareTickets,
  limitFor,
} from "../features/budget.ts";
import * as v from "valibot";
import { at, fixture, having, later, namespaces, project, ready, related, verdict } from "./helpers.ts";

const DANA = "dana@example.com";

/** A Project `name` that `requester` created, as the mutating policy records it, at resourceVersion `rv`, with the ticket its status kept. */
function theirs(name: string, rv: string, { requester = DANA, groups = ["developers", "system:authenticated"], ticket = undefined as string | undefined, spec = {} as Project["spec"] } = {}): Project {
  const base = project(name, { spec: { members: [{ kind: "User", name: requester, role: "admin" }], ...spec } });
  return {
    ...base,
    metadata: {
      ...base.metadata,
      uid: `uid-of-${name}`,
      resourceVersion: rv,
      labels: { [REQUESTER_LABEL]: requester.replaceAll("_", "__").replaceAll("@", "_a"), [PROJECT_LABEL]: name },
      annotations: { [REQUESTER_ANNOTATION]: requester, [REQUESTER_GROUPS_ANNOTATION]: groups.join("\n") },
    },
    ...(ticket ? { status: { budget: { ticket } } as Project["status"] } : {}),
  };
}

/** What customize picks up: the budgets, and the requester's Projects (the synced one among them, as the label selects it too). */
function budgeted(projects: Project[], budgets: Record<string, unknown> = { [BUDGET.name]: { projects: 3, contact: "the platform team" } }): RelatedObjects {
  const objects = related();
  objects[BUDGETS] = Object.fromEntries(Object.entries(budgets).map(([name, spec]) => [name, { apiVersion: BUDGET.apiVersion, kind: BUDGET.kind, metadata: { name }, spec }]));
  objects[SIBLINGS] = Object.fromEntries(projects.map((each) => [each.metadata.name, each]));
  return objects;
}

const line = (...tickets: string[]) => tickets.map((ticket, index) => theirs(`dana-${index + 1}`, ticket, { ticket }));
const syncOf = (me: Project, siblings: Project[], budgets?: Record<string, unknown>) => sync(me, namespaces(), budgeted([me, ...siblings.filter((each) => each.metadata.name !== me.metadata.name)], budgets), at);
const namespaceAsked = (answer: ReturnType<typeof sync>) => answer.children.some((child) => child.kind === "Namespace");

describe("budget: the names", () => {
  test("the feature spells the Project's API and label as sync.ts does, and its own kind in the same group", () => {
    assert.deepEqual(PROJECTS, { kind: PARENT.kind, plural: PARENT.plural, apiVersion: API_VERSION });
    assert.equal(PROJECT_LABEL, CORE_PROJECT_LABEL);
    assert.equal(BUDGET.apiVersion, API_VERSION);
    for (const key of [REQUESTER_ANNOTATION, REQUESTER_GROUPS_ANNOTATION, REQUESTER_LABEL]) assert.ok(key.startsWith(`${GROUP}/`), key);
  });
});

describe("budget: a real request", () => {
  test("Metacontroller's request about a developer's Project, with the record the API server wrote, is answered with the status it carries", () => {
    const request = v.parse(SyncRequest, fixture("budget-sync"));
    const answer = sync(request.parent, request.children, request.related, later);
    assert.equal(ready(answer).reason, "NamespaceActive", ready(answer).message);
    assert.deepEqual(answer.status, request.parent.status);
    const annotations = request.parent.metadata["annotations"] as Record<string, string>;
    assert.equal((answer.status["budget"] as { requester: string }).requester, annotations[REQUESTER_ANNOTATION]);
  });
});

describe("budget: whose Projects count", () => {
  test("a Project without a recorded requester (an administrator's, or older than the budget) is in no budget", () => {
    const answer = sync(project("ops"), namespaces(), related(), at);
    assert.equal(answer.status["budget"], undefined);
    assert.equal(namespaceAsked(answer), true);
  });

  test("customize asks for every ProjectBudget, and for the Projects that carry the same requester label", () => {
    const rules = customize(theirs("dana-1", "10")).relatedResources;
    assert.deepEqual(rules.find((rule) => rule.resource === BUDGET.plural), { apiVersion: API_VERSION, resource: BUDGET.plural, labelSelector: { matchLabels: {} } });
    assert.deepEqual(rules.find((rule) => rule.resource === PROJECTS.plural), {
      apiVersion: API_VERSION,
      resource: PROJECTS.plural,
      // Not itself: it is in every request already, and may be as large as etcd stores an object.
      labelSelector: { matchLabels: { [REQUESTER_LABEL]: "dana_aexample.com" }, matchExpressions: [{ key: PROJECT_LABEL, operator: "NotIn", values: ["dana-1"] }] },
    });
  });

  test("a Project without a requester label asks for no Project, never for every one: a selector none can match", () => {
    const rule = customize(project("ops")).relatedResources.find((each) => each.resource === PROJECTS.plural);
    assert.deepEqual(rule, {
      apiVersion: API_VERSION,
      resource: PROJECTS.plural,
      labelSelector: { matchExpressions: [{ key: REQUESTER_LABEL, operator: "Exists" }, { key: REQUESTER_LABEL, operator: "DoesNotExist" }] },
    });
  });

  test("another requester's Projects do not count, though a long or odd name may share the label", () => {
    const others = [1, 2, 3].map((n) => {
      const other = theirs(`dana-${n}`, `${n}`, { requester: "dana!example.com", ticket: `${n}` });
      return { ...other, metadata: { ...other.metadata, labels: theirs("mine", "9").metadata["labels"] } };
    });
    const answer = syncOf(theirs("mine", "9"), others);
    assert.equal(namespaceAsked(answer), true);
    assert.deepEqual(answer.status["budget"], { requester: DANA, held: 1, place: 1, ticket: "9", limit: 3, contact: "the platform team" });
  });
});

describe("budget: the oldest within it get their Namespace, the rest nothing", () => {
  test("the third of a budget of three gets its Namespace, and the status says how many are held", () => {
    const [first, second, third] = line("11", "12", "13");
    const answer = syncOf(third!, [first!, second!]);
    assert.equal(namespaceAsked(answer), true);
    assert.deepEqual(answer.status["budget"], { requester: DANA, held: 3, place: 3, ticket: "13", limit: 3, contact: "the platform team" });
  });

  test("the fourth is OverBudget: no Namespace, and the message gives the limit, how many are held, its place and whom to ask", () => {
    const projects = line("11", "12", "13", "14");
    const answer = syncOf(projects[3]!, projects);
    assert.equal(namespaceAsked(answer), false);
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "OverBudget",
      message:
        "dana@example.com holds 4 Projects and may hold 3 (ProjectBudget default), so Project dana-4, the 4th of them, gets nothing: " +
        "no Namespace, no access, no integrations. It gets them by itself once no more than 2 of the others are older; " +
        "delete one of them, or ask the platform team for a larger budget.",
    });
  });

  test("a Project over budget gets no access and no integrations either: nothing at all is asked for", () => {
    const projects = line("11", "12", "13");
    const over = theirs("dana-4", "14", { ticket: "14", spec: { members: [{ kind: "User", name: DANA, role: "admin" }], integrations: { repository: { retry: 1 } } } });
    assert.deepEqual(syncOf(over, projects).children, []);
  });

  test("tickets compare as integers: 99 is older than 100", () => {
    assert.ok(compareTickets("99", "100") < 0);
    assert.ok(compareTickets("100", "99") > 0);
    assert.equal(compareTickets("100", "100"), 0);
    const answer = syncOf(theirs("dana-100", "100", { ticket: "100" }), line("99", "98", "97"));
    assert.equal(ready(answer).reason, "OverBudget");
  });

  test("once a Project older than it is deleted, the one beyond the budget gets its Namespace by itself", () => {
    const [, second, third, fourth] = line("11", "12", "13", "14");
    assert.equal(namespaceAsked(syncOf(fourth!, [second!, third!])), true);
  });

  test("the ticket taken at the first sync is kept: a later resourceVersion does not move the Project back", () => {
    const older = line("11", "12");
    const me = theirs("dana-3", "500", { ticket: "13" });
    const later = theirs("dana-4", "14", { ticket: "14" });
    const answer = syncOf(me, [...older, later]);
    assert.equal(namespaceAsked(answer), true);
    assert.equal((answer.status["budget"] as { ticket: string }).ticket, "13");
  });

  test("two Projects given one ticket (by a status written by hand) are ordered by name, so only one takes the last place", () => {
    const older = line("11", "12");
    const [a, b] = ["dana-a", "dana-b"].map((name) => theirs(name, "13", { ticket: "13" }));
    assert.equal(namespaceAsked(syncOf(a!, [...older, b!])), true);
    assert.equal(ready(syncOf(b!, [...older, a!])).reason, "OverBudget");
  });

  test("a Project that has not taken a ticket yet takes its resourceVersion", () => {
    assert.equal((syncOf(theirs("dana-1", "42"), []).status["budget"] as { ticket: string }).ticket, "42");
  });
});

describe("budget: the outcome does not depend on timing", () => {
  test("an older Project of theirs without a ticket yet holds this one back, WaitingForPlaceInLine, until it takes one", () => {
    const untaken = theirs("dana-1", "11");
    const answer = syncOf(theirs("dana-2", "12"), [untaken]);
    assert.equal(namespaceAsked(answer), false);
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "WaitingForPlaceInLine",
      message: "Project dana-2 is one of dana@example.com's; waiting for dana-1 to take its place in line, so that the oldest get theirs.",
    });
  });

  test("one without a ticket whose resourceVersion is already larger can only take a larger ticket, and does not hold it back", () => {
    const answer = syncOf(theirs("dana-1", "11"), [theirs("dana-2", "12")]);
    assert.equal(namespaceAsked(answer), true);
    assert.equal((answer.status["budget"] as { place: number }).place, 1);
  });

  test("ten Projects seen in any order, each once all have tickets: exactly the three oldest get their Namespace", () => {
    const ten = Array.from({ length: 10 }, (_, n) => theirs(`dana-${n}`, `${200 + n}`, { ticket: `${100 + ((n * 7) % 10)}` }));
    const working = ten.filter((me) => namespaceAsked(syncOf(me, [...ten].reverse()))).map((me) => me.metadata.name);
    const ticketOf = (me: Project) => (me.status as { budget: { ticket: string } }).budget.ticket;
    const oldest = [...ten].sort((a, b) => compareTickets(ticketOf(a), ticketOf(b))).slice(0, 3).map((me) => me.metadata.name);
    assert.deepEqual(working.sort(), oldest.sort());
  });
});

describe("budget: never lose", () => {
  const keeps = (answer: ReturnType<typeof sync>, name: string) => {
    assert.ok(answer.children.some((child) => child.kind === "Namespace" && child.metadata.name === `proj-${name}`), "its Namespace");
    assert.ok(answer.children.some((child) => child.kind === "RoleBinding"), "its members' access");
  };

  test("a Project with its Namespace keeps it, and its members' access, when the budget is lowered below what is held", () => {
    const projects = line("11", "12", "13", "14");
    const answer = sync(projects[3]!, having("proj-dana-4"), budgeted(projects, { [BUDGET.name]: { projects: 1 } }), at);
    assert.notEqual(ready(answer).reason, "OverBudget");
    keeps(answer, "dana-4");
  });

  test("a missing or broken budget costs no Project with a Namespace anything", () => {
    const me = theirs("dana-1", "11", { ticket: "11" });
    keeps(sync(me, having("proj-dana-1"), budgeted([me], {}), at), "dana-1");
    keeps(sync(me, having("proj-dana-1"), budgeted([me], { [BUDGET.name]: { projects: -1 } }), at), "dana-1");
  });
});

describe("budget: what admins set", () => {
  const spending = (projects: number, groups: { group: string; projects?: number; unlimited?: boolean }[] = []) => ({ projects, contact: DEFAULT_CONTACT, groups });

  test("someone in none of the named groups gets the default", () => {
    assert.equal(limitFor(spending(3, [{ group: "leads", projects: 10 }]), ["developers"]), 3);
  });

  test("someone in several named groups gets the most generous, and unlimited beats any number", () => {
    assert.equal(limitFor(spending(3, [{ group: "leads", projects: 10 }, { group: "interns", projects: 1 }]), ["leads", "interns"]), 10);
    assert.equal(limitFor(spending(3, [{ group: "leads", projects: 10 }, { group: "platform", unlimited: true }]), ["leads", "platform"]), undefined);
  });

  test("a group cannot lower the default: grants add up, as RBAC's do", () => {
    assert.equal(limitFor(spending(3, [{ group: "interns", projects: 1 }]), ["interns"]), 3);
  });

  test("a group named in another ProjectBudget gets its budget: here the eleventh Project of a lead gets its Namespace", () => {
    const leads = { requester: DANA, groups: ["developers", "leads", "system:authenticated"] };
    const ten = Array.from({ length: 10 }, (_, n) => theirs(`lead-${n}`, `${10 + n}`, { ...leads, ticket: `${10 + n}` }));
    const budgets = { [BUDGET.name]: { projects: 3 }, "team-leads": { groups: [{ group: "leads", projects: 11 }] } };
    assert.equal(namespaceAsked(syncOf(theirs("lead-10", "99", leads), ten, budgets)), true);
    assert.equal(ready(syncOf(theirs("lead-10", "99", leads), ten, { [BUDGET.name]: { projects: 3 } })).reason, "OverBudget");
  });

  test("an unlimited group's Project has no limit in its status, and gets its Namespace", () => {
    const budgets = { [BUDGET.name]: { projects: 0, groups: [{ group: "platform", unlimited: true }] } };
    const answer = syncOf(theirs("ops-1", "5", { groups: ["platform"] }), [], budgets);
    assert.equal(namespaceAsked(answer), true);
    assert.equal((answer.status["budget"] as Record<string, unknown>)["limit"], undefined);
  });

  test("a budget of 0 leaves a developer's every Project OverBudget, and says whom to ask for one", () => {
    assert.deepEqual(verdict(syncOf(theirs("dana-1", "5"), [], { [BUDGET.name]: { projects: 0, contact: "the platform team" } })), {
      status: "False",
      reason: "OverBudget",
      message:
        "dana@example.com holds 1 Project and may hold 0 (ProjectBudget default), so Project dana-1, the 1st of them, gets nothing: " +
        "no Namespace, no access, no integrations. It gets them by itself once the budget gives dana@example.com one; ask the platform team for it.",
    });
  });

  test("without ProjectBudget default a developer's new Project gets nothing, BudgetNotFound", () => {
    const answer = syncOf(theirs("dana-1", "5"), [], {});
    assert.equal(namespaceAsked(answer), false);
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "BudgetNotFound",
      message: "ProjectBudget default does not exist, so Projects that developers create get nothing until a cluster admin restores it (docs/budget.md).",
    });
  });

  test("a budget that breaks its rules is InvalidBudget, named, and nothing is created", () => {
    const answer = syncOf(theirs("dana-1", "5"), [], { [BUDGET.name]: { projects: 3 }, broken: { groups: [{ group: "leads", projects: 2, unlimited: true }] } });
    assert.equal(namespaceAsked(answer), false);
    assert.equal(ready(answer).reason, "InvalidBudget");
    assert.match(ready(answer).message, /^ProjectBudget broken breaks its rules \(spec.groups\[0\]: a group has either projects or unlimited: true\)/);
  });

  test("the contact defaults to whoever holds administer", () => {
    const projects = line("1", "2");
    assert.match(ready(syncOf(projects[1]!, projects, { [BUDGET.name]: { projects: 1 } })).message, /ask a cluster admin \(a holder of the verb administer on projects\.agrrh\.com\) for a larger budget/);
  });

  test("the feature's refusals and reasons are its own", () => {
    assert.deepEqual(budgetFeature.refusals, ["OverBudget", "BudgetNotFound", "InvalidBudget"]);
    assert.deepEqual(budgetFeature.reasons, ["WaitingForPlaceInLine"]);
  });
});
