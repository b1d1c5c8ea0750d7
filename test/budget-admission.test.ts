// What the API server does for the budget feature: it records who creates a
// Project, keeps that record as written, refuses a developer at their limit,
// admits ProjectBudgets by sync's rules, and keeps them from a stray delete.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { API_VERSION, GROUP, sync, type Project } from "../sync.ts";
import { BUDGET, BUDGETS, PROJECT_LABEL, REQUESTER_ANNOTATION, REQUESTER_GROUPS_ANNOTATION, REQUESTER_LABEL, SIBLINGS } from "../features/budget.ts";
import { annotatedAsTold, assertBoundToDeny, crd, deleting, find, objects, policyNamed, projectSchema } from "./admission.ts";
import { admit, authorizedBy, evaluateCel, schemaErrors, type AdmissionRequest } from "./cel.ts";
import { at, namespaces, project, related } from "./helpers.ts";
import { assertCrdSpells } from "./manifest.ts";

const budgetCrd = find("CustomResourceDefinition", `${BUDGET.plural}.${GROUP}`);
const requesterPolicy = find("MutatingAdmissionPolicy", `${crd.metadata.name}-requester`);
const recordPolicy = policyNamed("requester-record");
const budgetPolicy = policyNamed("budget");
const requesterRole = find("ClusterRole", `${crd.metadata.name}-requester`);
const DEVELOPER = { username: "dana@example.com", groups: ["developers", "system:authenticated"], authorized: authorizedBy(requesterRole.rules) };
const ADMINISTRATOR = { username: "root", groups: ["system:masters"], authorized: [`${GROUP}/projects/administer`] };

/** A Project as the API server stores it once the mutating policy recorded `who`. */
function recorded(name: string, who = DEVELOPER, status?: Record<string, unknown>): Project {
  return {
    apiVersion: API_VERSION,
    kind: "Project",
    metadata: {
      name,
      labels: { [REQUESTER_LABEL]: labelFor(who.username), [PROJECT_LABEL]: name },
      annotations: { [REQUESTER_ANNOTATION]: who.username, [REQUESTER_GROUPS_ANNOTATION]: who.groups.join("\n") },
    },
    spec: {},
    ...(status ? { status } : {}),
  };
}

/** A policy's variables for a request by `username` in `groups`, by its own expressions. */
function variablesOf(policy: any, username: string, groups: string[] = []): Record<string, unknown> {
  const request = { userInfo: { username, groups } } as any;
  const variables: Record<string, any> = {};
  for (const { name, expression } of policy.spec.variables.filter((variable: any) => !variable.expression.includes("params."))) {
    variables[name] = evaluateCel(expression, { request, variables });
  }
  return variables;
}

/** The label the mutating policy writes. */
const labelFor = (username: string) => String(variablesOf(requesterPolicy, username)["label"]);

const creating = (object: unknown, who: Partial<AdmissionRequest> = DEVELOPER): AdmissionRequest => ({ operation: "CREATE", resource: { group: GROUP, resource: "projects" }, name: "", object: object as any, username: "", ...who });
const updating = (oldObject: unknown, object: unknown, who: Partial<AdmissionRequest> = DEVELOPER): AdmissionRequest => ({ ...creating(object, who), operation: "UPDATE", oldObject: oldObject as any });

describe("admission: the budget's names", () => {
  test("the budget's CRD spells the group, version and names of the feature, as does ProjectBudget default", () => {
    assertCrdSpells(budgetCrd, BUDGET);
    const budget = find(BUDGET.kind, BUDGET.name);
    assert.equal(budget.apiVersion, BUDGET.apiVersion);
    assert.equal(`${budget.kind}.${budget.apiVersion}`, BUDGETS);
  });

  test("the policies write and read the keys sync reads, and the budget policy's params are the Projects sync counts", () => {
    const policies = JSON.stringify([requesterPolicy, recordPolicy, budgetPolicy]);
    for (const key of [REQUESTER_ANNOTATION, REQUESTER_GROUPS_ANNOTATION, REQUESTER_LABEL, PROJECT_LABEL]) assert.ok(policies.includes(`'${key}'`), key);
    assert.equal(`${budgetPolicy.spec.paramKind.kind}.${budgetPolicy.spec.paramKind.apiVersion}`, SIBLINGS);
    const binding = find("ValidatingAdmissionPolicyBinding", budgetPolicy.metadata.name);
    assert.deepEqual(binding.spec.paramRef.selector.matchExpressions, [{ key: REQUESTER_LABEL, operator: "Exists" }]);
  });

  test("the Project CRD keeps every field of the budget's status that sync writes", () => {
    const me = recorded("dana-1");
    const answer = sync({ ...me, metadata: { ...me.metadata, resourceVersion: "7" } }, namespaces(), related(), at);
    const fields = projectSchema.properties.status.properties.budget.properties;
    for (const key of Object.keys(answer.status["budget"] as object)) assert.ok(key in fields, key);
  });
});

describe("admission: who created a Project is recorded", () => {
  test("the label is the name with '_' doubled and @ : / # + = escaped, so that two names never share one", () => {
    assert.equal(labelFor("dana@example.com"), "dana_aexample.com");
    assert.equal(labelFor("system:serviceaccount:ci:deployer"), "system_cserviceaccount_cci_cdeployer");
    assert.equal(labelFor("dana_aexample.com"), "dana__aexample.com");
    const names = ["a@b.c", "a_ab.c", "a.b@c", "a+b@c", "a=b@c", "a#b", "a/b", "a:b", "a__b", "a_b"];
    assert.equal(new Set(names.map(labelFor)).size, names.length);
  });

  test("a name too long or odd for that gives its runs of letters and digits, cut to 63 characters, never ending in a dot", () => {
    assert.equal(labelFor("https://issuer.example.com/?sub=1234"), "https.issuer.example.com.sub.1234");
    assert.equal(labelFor(`${"a".repeat(62)}@b`), "a".repeat(62));
    for (const username of [`${"a".repeat(70)}`, "@".repeat(5), "_dana", "dana."]) {
      const label = labelFor(username);
      assert.ok(label.length <= 63, label);
      assert.match(label, /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/, label);
    }
  });

  test("the requester and their groups are written for a developer, and not for a holder of administer", () => {
    const asValidation = { ...requesterPolicy, spec: { ...requesterPolicy.spec, validations: [{ expression: "false" }] } };
    assert.equal(admit(asValidation, creating(project("dana-1"))).matched, true);
    assert.equal(admit(asValidation, creating(project("ops"), ADMINISTRATOR)).matched, false);
    const mutation = requesterPolicy.spec.mutations[0].applyConfiguration.expression;
    for (const key of [REQUESTER_ANNOTATION, REQUESTER_GROUPS_ANNOTATION]) assert.match(mutation, new RegExp(`'${key}': (request\\.userInfo\\.username|variables\\.groups)`));
  });

  test("the groups the mutating policy writes are the ones the budget policy compares, and sync gives the budget of each", () => {
    const groups = ["developers", "leads", "system:authenticated"];
    const written = variablesOf(requesterPolicy, DEVELOPER.username, groups)["groups"];
    assert.equal(written, variablesOf(budgetPolicy, DEVELOPER.username, groups)["groups"]);
    const me = recorded("dana-1", { ...DEVELOPER, groups });
    me.metadata["annotations"] = { ...(me.metadata["annotations"] as object), [REQUESTER_GROUPS_ANNOTATION]: String(written) };
    const objectsRelated = related();
    objectsRelated[BUDGETS] = {
      [BUDGET.name]: { metadata: { name: BUDGET.name }, spec: { projects: 0 } },
      leads: { metadata: { name: "leads" }, spec: { groups: [{ group: "leads", projects: 1 }] } },
    };
    const answer = sync({ ...me, metadata: { ...me.metadata, resourceVersion: "5" } }, namespaces(), objectsRelated, at);
    assert.equal((answer.status["budget"] as { limit: number }).limit, 1);
  });

  test("a developer's create without the record (the mutating policy missing) is refused, never let through unbudgeted", () => {
    const { allowed, message } = admit(recordPolicy, creating(project("dana-1")));
    assert.equal(allowed, false);
    assert.match(String(message), /MutatingAdmissionPolicy projects\.agrrh\.com-requester is missing/);
    assert.equal(admit(recordPolicy, creating(recorded("dana-1"))).allowed, true);
    assert.equal(admit(recordPolicy, creating(recorded("dana-1", { ...DEVELOPER, username: "erin" }))).allowed, false, "another's name");
  });

  const edits: [string, (object: any) => void][] = [
    ["the requester renamed", (object) => (object.metadata.annotations[REQUESTER_ANNOTATION] = "erin@example.com")],
    ["the requester removed", (object) => delete object.metadata.annotations[REQUESTER_ANNOTATION]],
    ["a group added", (object) => (object.metadata.annotations[REQUESTER_GROUPS_ANNOTATION] += "\nleads")],
    ["the groups removed", (object) => delete object.metadata.annotations[REQUESTER_GROUPS_ANNOTATION]],
    ["the label changed", (object) => (object.metadata.labels[REQUESTER_LABEL] = "erin")],
    ["the label removed", (object) => delete object.metadata.labels[REQUESTER_LABEL]],
    ["the Project's name label changed", (object) => (object.metadata.labels[PROJECT_LABEL] = "other")],
  ];
  for (const [what, edit] of edits) {
    test(`${what}: refused to the Project's own admin, admitted to a holder of administer`, () => {
      const before = recorded("dana-1");
      const after = structuredClone(before);
      edit(after);
      const { allowed, message } = admit(recordPolicy, updating(before, after));
      assert.equal(allowed, false);
      assert.match(String(message), /^Project dana-1 records who created it, and so whose budget it counts in/);
      assert.equal(admit(recordPolicy, updating(before, after, ADMINISTRATOR)).matched, false);
    });
  }

  test("any other change of the Project, its other labels and annotations too, is the other policies' to judge", () => {
    const before = recorded("dana-1");
    const after = structuredClone(before) as any;
    after.metadata.labels.team = "web";
    after.metadata.annotations.note = "x";
    after.spec.description = "changed";
    assert.equal(admit(recordPolicy, updating(before, after)).allowed, true);
  });
});

describe("admission: a developer at their limit is refused", () => {
  const spent = { budget: { requester: DEVELOPER.username, held: 3, limit: 3, place: 3, ticket: "9", contact: "the platform team" } };
  // The binding selects every Project with a requester; each is evaluated, and any refusal refuses.
  const againstEach = (request: AdmissionRequest, params: unknown[]) => {
    const refusals = params.map((each) => admit(budgetPolicy, request, each as any)).filter((verdict) => !verdict.allowed);
    return { allowed: refusals.length === 0, message: refusals[0]?.message };
  };

  test("bound to deny; with no Project to read yet, nothing is refused", () => {
    assertBoundToDeny(budgetPolicy);
    const binding = find("ValidatingAdmissionPolicyBinding", budgetPolicy.metadata.name);
    assert.equal(binding.spec.paramRef.parameterNotFoundAction, "Allow");
  });

  test("one of theirs, recorded with the same groups, says they hold all they may: refused, with how many, the limit and whom to ask", () => {
    const { allowed, message } = againstEach(creating(project("dana-4")), [recorded("other", { ...DEVELOPER, username: "erin" }), recorded("dana-3", DEVELOPER, spent)]);
    assert.equal(allowed, false);
    assert.equal(
      message,
      "dana@example.com holds 3 Projects and may hold 3 (ProjectBudget default), so no more can be created. Delete one of them " +
        "(kubectl auth can-i --list shows those you are in), or ask the platform team for a larger budget.",
    );
  });

  test("one Project held is said so", () => {
    const one = { budget: { ...spent.budget, held: 1, limit: 1 } };
    assert.match(String(againstEach(creating(project("dana-2")), [recorded("dana-1", DEVELOPER, one)]).message), /^dana@example\.com holds 1 Project and may hold 1 /);
  });

  test("below the limit, or unlimited, it is admitted", () => {
    const below = { budget: { ...spent.budget, held: 2 } };
    const { limit, ...unlimited } = spent.budget;
    assert.equal(againstEach(creating(project("dana-3")), [recorded("dana-2", DEVELOPER, below)]).allowed, true);
    assert.equal(againstEach(creating(project("dana-4")), [recorded("dana-3", DEVELOPER, { budget: unlimited })]).allowed, true);
  });

  test("another requester's spent budget, or their own under other groups (a budget that may differ), is sync's to judge", () => {
    assert.equal(againstEach(creating(project("dana-4")), [recorded("erin-3", { ...DEVELOPER, username: "erin" }, spent)]).allowed, true);
    assert.equal(againstEach(creating(project("dana-4"), { ...DEVELOPER, groups: ["leads"] }), [recorded("dana-3", DEVELOPER, spent)]).allowed, true);
  });

  test("a holder of administer is not limited", () => {
    assert.equal(admit(budgetPolicy, creating(project("ops"), { ...ADMINISTRATOR, username: DEVELOPER.username }), recorded("dana-3", DEVELOPER, spent) as any).matched, false);
  });

  test("a Project sync has not counted yet refuses nothing", () => {
    assert.equal(againstEach(creating(project("dana-2")), [recorded("dana-1")]).allowed, true);
  });
});

describe("admission: ProjectBudgets", () => {
  const schema = budgetCrd.spec.versions[0].schema.openAPIV3Schema;
  const named = (name: string, spec: unknown) => ({ metadata: { name }, spec });
  const cases: [string, unknown, boolean][] = [
    ["default with projects and contact", named("default", { projects: 3, contact: "us" }), true],
    ["default with groups", named("default", { projects: 0, groups: [{ group: "leads", projects: 10 }, { group: "ops", unlimited: true }] }), true],
    ["default without projects", named("default", { groups: [] }), false],
    ["another with groups only", named("team-leads", { groups: [{ group: "leads", projects: 10 }] }), true],
    ["another setting the default", named("team-leads", { projects: 10 }), false],
    ["a group with both projects and unlimited", named("default", { projects: 3, groups: [{ group: "leads", projects: 10, unlimited: true }] }), false],
    ["a group with neither", named("default", { projects: 3, groups: [{ group: "leads" }] }), false],
    ["a group listed twice", named("default", { projects: 3, groups: [{ group: "leads", projects: 1 }, { group: "leads", projects: 2 }] }), false],
    ["a negative budget", named("default", { projects: -1 }), false],
  ];
  for (const [what, object, admitted] of cases) {
    test(`${what}: ${admitted ? "admitted" : "refused"}, and sync reads it alike`, () => {
      assert.equal(schemaErrors(schema, object).length === 0, admitted, JSON.stringify(schemaErrors(schema, object)));
      const { metadata, spec } = object as { metadata: { name: string }; spec: unknown };
      const budgets = { [BUDGET.name]: { projects: 3 }, [metadata.name]: spec };
      const me = recorded("dana-1");
      const objectsRelated = related();
      objectsRelated[BUDGETS] = Object.fromEntries(Object.entries(budgets).map(([name, each]) => [name, { metadata: { name }, spec: each }]));
      objectsRelated[SIBLINGS] = { "dana-1": me };
      const reason = sync({ ...me, metadata: { ...me.metadata, resourceVersion: "5" } }, namespaces(), objectsRelated, at).status.conditions[0]?.reason;
      // Sync's own rule on a group and on counts; which object may set the default is the CRD's alone.
      if (!/another setting the default|listed twice|default without projects/.test(what)) assert.equal(reason !== "InvalidBudget", admitted, String(reason));
    });
  }

  test("k8s.yaml's ProjectBudget default follows the rules", () => {
    assert.deepEqual(schemaErrors(schema, find(BUDGET.kind, BUDGET.name)), []);
  });
});

describe("admission: the budgets are kept from a stray delete", () => {
  const protection = policyNamed("budget-protection");
  const budgetDelete = (group: string, resource: string, object: any, options?: Parameters<typeof deleting>[3]) => admit(protection, deleting(group, resource, object, options));
  const kept = [
    { what: "the budget CRD", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", object: budgetCrd, says: /^Deleting CustomResourceDefinition projectbudgets\.agrrh\.com leaves every Project a developer creates from then on without a Namespace/, command: `kubectl annotate crd ${budgetCrd.metadata.name} ` },
    { what: "ProjectBudget default", group: GROUP, resource: BUDGET.plural, object: find(BUDGET.kind, BUDGET.name), says: /^Deleting ProjectBudget default leaves every Project a developer creates from then on without a Namespace \(BudgetNotFound\); those that have one keep it/, command: "kubectl annotate projectbudget default " },
    { what: "another ProjectBudget", group: GROUP, resource: BUDGET.plural, object: { metadata: { name: "team-leads" } }, says: /^Deleting ProjectBudget team-leads takes its groups back to the budget the others give them/, command: "kubectl annotate projectbudget team-leads " },
  ];
  for (const { what, group, resource, object, says, command } of kept) {
    test(`a stray delete of ${what} is refused, also as a collection, saying what it would do; annotated as told, it goes`, () => {
      assertBoundToDeny(protection);
      for (const collection of [false, true]) {
        const { allowed, message } = budgetDelete(group, resource, object, { collection });
        assert.equal(allowed, false);
        assert.match(String(message), says);
        assert.ok(String(message).endsWith(`If that is what you want, first run: ${command}agrrh.com/allow-deletion=true`), String(message));
        assert.equal(budgetDelete(group, resource, annotatedAsTold(object, message)).allowed, true);
      }
    });
  }

  test("every other CRD may go", () => {
    assert.equal(budgetDelete("apiextensions.k8s.io", "customresourcedefinitions", crd).matched, false);
  });

  test("every budget policy and binding is held by the uninstall's finalizer", () => {
    const ours = objects.filter((object) => /AdmissionPolicy/.test(object.kind) && /-(requester|requester-record|budget|budget-protection)$/.test(object.metadata.name));
    assert.equal(ours.length, 8);
    for (const object of ours) assert.deepEqual(object.metadata.finalizers, ["agrrh.com/uninstall-deliberately"], object.metadata.name);
  });
});
