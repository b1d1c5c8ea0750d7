// What the API server admits of the shared feature: a profile's spec.shared
// by the rules sync applies, in the same words, and the ownership guard over
// the copies it makes.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { GROUP } from "../sync.ts";
import { PROFILE } from "../features/guardrails.ts";
import { MAX_RULES, MAX_SHARED, RESERVED_NAMES, RESERVED_PREFIXES, SHARED_RULES, SharedSpec } from "../features/shared.ts";
import { assertJudgedAlike, find, policyNamed } from "./admission.ts";
import { schemaErrors } from "./cel.ts";

const sharedSchema = find("CustomResourceDefinition", `${PROFILE.plural}.${GROUP}`).spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.shared;
const rule = [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }];

const CASES: { what: string; shared: unknown; breaks?: keyof typeof SHARED_RULES }[] = [
  { what: "nothing shared", shared: {} },
  { what: "one of each", shared: { secrets: ["registry"], configMaps: ["ca-bundle"], serviceAccounts: ["deployer"], roles: [{ name: "reader", rules: rule }], roleBindings: [{ name: "reads", role: "reader", serviceAccounts: ["deployer"] }, { name: "views", clusterRole: "view", serviceAccounts: ["deployer", "ci"] }] } },
  { what: `${MAX_SHARED} Secrets`, shared: { secrets: Array.from({ length: MAX_SHARED }, (_, index) => `s${index}`) } },
  { what: `${MAX_SHARED + 1} Secrets`, shared: { secrets: Array.from({ length: MAX_SHARED + 1 }, (_, index) => `s${index}`) }, breaks: "most" },
  { what: "a name of 63 characters", shared: { configMaps: ["a".repeat(63)] } },
  { what: "a name of 64 characters", shared: { configMaps: ["a".repeat(64)] }, breaks: "name" },
  { what: "a name with a dot", shared: { secrets: ["ca.crt"] }, breaks: "name" },
  { what: "a name in capitals", shared: { serviceAccounts: ["Deployer"] }, breaks: "name" },
  ...RESERVED_NAMES.map((name) => ({ what: `the name ${name}`, shared: { serviceAccounts: [name] }, breaks: "reserved" as const })),
  ...RESERVED_PREFIXES.map((prefix) => ({ what: `a name starting ${prefix}`, shared: { roles: [{ name: `${prefix}x`, rules: rule }] }, breaks: "reserved" as const })),
  { what: "a reserved RoleBinding name", shared: { roleBindings: [{ name: "project-admin-users", clusterRole: "view", serviceAccounts: ["ci"] }] }, breaks: "reserved" },
  { what: "a Secret twice", shared: { secrets: ["a", "a"] }, breaks: "unique" },
  { what: "a Role twice", shared: { roles: [{ name: "r", rules: rule }, { name: "r", rules: rule }] }, breaks: "unique" },
  { what: "a Role without rules", shared: { roles: [{ name: "r", rules: [] }] }, breaks: "rules" },
  { what: `a Role with ${MAX_RULES + 1} rules`, shared: { roles: [{ name: "r", rules: Array.from({ length: MAX_RULES + 1 }, () => rule[0]) }] }, breaks: "rules" },
  { what: "a rule without verbs", shared: { roles: [{ name: "r", rules: [{ resources: ["pods"] }] }] }, breaks: "rules" },
  { what: "a rule with no verb in its list", shared: { roles: [{ name: "r", rules: [{ verbs: [] }] }] }, breaks: "rules" },
  { what: "a RoleBinding with role and clusterRole", shared: { roles: [{ name: "r", rules: rule }], roleBindings: [{ name: "b", role: "r", clusterRole: "view", serviceAccounts: ["ci"] }] }, breaks: "roleRef" },
  { what: "a RoleBinding with neither", shared: { roleBindings: [{ name: "b", serviceAccounts: ["ci"] }] }, breaks: "roleRef" },
  { what: "a RoleBinding to a Role the profile does not share", shared: { roleBindings: [{ name: "b", role: "other", serviceAccounts: ["ci"] }] }, breaks: "roleRef" },
  { what: "a RoleBinding to nobody", shared: { roleBindings: [{ name: "b", clusterRole: "view", serviceAccounts: [] }] }, breaks: "subjects" },
  { what: "a RoleBinding to a ServiceAccount twice", shared: { roleBindings: [{ name: "b", clusterRole: "view", serviceAccounts: ["ci", "ci"] }] }, breaks: "subjects" },
  { what: "a RoleBinding to a ServiceAccount of another namespace", shared: { roleBindings: [{ name: "b", clusterRole: "view", serviceAccounts: ["kube-system:admin"] }] }, breaks: "subjects" },
];

describe("admission: a profile's spec.shared is admitted by the rules sync applies", () => {
  for (const { what, shared, breaks } of CASES) {
    test(`admission and sync agree that ${what} ${breaks ? `breaks the rule: ${SHARED_RULES[breaks]}` : "may be shared"}`, () => {
      const { admission, issues } = assertJudgedAlike(sharedSchema, "spec.shared", SharedSpec, shared, Boolean(breaks));
      if (!breaks) return;
      assert.ok(issues.some((issue) => issue.message === SHARED_RULES[breaks]), `sync says which rule: ${issues.map((issue) => issue.message).join("; ")}`);
      // The CRD's CEL says the rule in sync's words; the rest are Kubernetes' own type, pattern and size messages.
      const ownWords = /: (must be an? \w+|must have at most \d+ \w+|should have at least \d+ \w+|\w+ is required|should match '.*'|longer than \d+|Too (long|many): .*|Invalid value: .*)$/;
      for (const error of admission.filter((error) => !ownWords.test(error))) assert.ok(error.endsWith(SHARED_RULES[breaks]) || error.endsWith("each name appears once in each list"), error);
    });
  }

  test("the CRD's limits are sync's", () => {
    for (const list of ["secrets", "configMaps", "serviceAccounts", "roles", "roleBindings"]) assert.equal(sharedSchema.properties[list].maxItems, MAX_SHARED, list);
    assert.equal(sharedSchema.properties.roles.items.properties.rules.maxItems, MAX_RULES);
    const reserved = JSON.stringify(sharedSchema.properties.secrets.items["x-kubernetes-validations"]);
    for (const word of [...RESERVED_NAMES, ...RESERVED_PREFIXES]) assert.ok(reserved.includes(`'${word}'`), word);
  });
});

describe("admission: a profile that shares objects has a name a label can hold", () => {
  const root = find("CustomResourceDefinition", `${PROFILE.plural}.${GROUP}`).spec.versions[0].schema.openAPIV3Schema;
  const profile = (name: string, spec: Record<string, unknown>) => ({ apiVersion: `${GROUP}/v1`, kind: PROFILE.kind, metadata: { name }, spec });

  test("63 characters are admitted, 64 refused in sync's words, and a profile that shares nothing may be longer", () => {
    assert.deepEqual(schemaErrors(root, profile("p".repeat(63), { shared: {} })), []);
    const refused = schemaErrors(root, profile("p".repeat(64), { shared: {} }));
    assert.equal(refused.length, 1);
    assert.ok(refused[0]?.endsWith(`: ${SHARED_RULES.profileName}`), refused[0]);
    assert.deepEqual(schemaErrors(root, profile("p".repeat(64), {})), []);
  });
});

describe("admission: the copies are the Project's", () => {
  test("the ownership guard covers Secrets, as it covers every kind the CompositeController owns", () => {
    const guard = policyNamed("ownership");
    const guarded = guard.spec.matchConstraints.resourceRules.flatMap((rule: { resources: string[] }) => rule.resources);
    for (const resource of ["secrets", "configmaps", "serviceaccounts", "roles", "rolebindings"]) assert.ok(guarded.includes(resource), resource);
  });
});
