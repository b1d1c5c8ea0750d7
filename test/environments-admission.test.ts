// What the API server admits of the environments feature: the CRD's rules on
// spec.environments, judged alike by sync, and the environments policy: no
// new Project named with '--', an existing Namespace named only by an
// admin, and what each environment declares as the Project could.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { API_VERSION, GROUP, NAMESPACE_PREFIX, PARENT, sync } from "../sync.ts";
import { ENVIRONMENT_RULES, MAX_ENVIRONMENTS } from "../features/environments.ts";
import { DEFAULT_PROFILE } from "../features/guardrails.ts"; // feature: guardrails
import { MEMBER_RULES } from "../features/members.ts"; // feature: members
import { INTEGRATIONS_NAMESPACE } from "../features/integrations.ts"; // feature: integrations
import { ADMINISTER, assertBoundToDeny, crd, find, objects, policyNamed, projectSchema } from "./admission.ts";
import { admit } from "./cel.ts";
import { admissionErrors } from "./crd-schema.ts";
import { namespaces, project, ready, related } from "./helpers.ts";

const policy = policyNamed("environments");
const projectNamed = (name: string, spec: Record<string, unknown>) => ({ apiVersion: API_VERSION, kind: PARENT.kind, metadata: { name }, spec });
const asked = (operation: "CREATE" | "UPDATE", object: any, oldObject: any, username: string, authorized: string[] = []) =>
  admit(policy, { operation, resource: { group: GROUP, resource: PARENT.plural }, name: object.metadata.name, object, oldObject, username, authorized });
/** Whether the CRD admits a Project of this name and spec, and whether sync carries it out. */
const judged = (name: string, environments: unknown[]) => {
  const crd = admissionErrors(projectSchema, projectNamed(name, { environments }));
  const reason = ready(sync(project(name, { spec: { environments } }), namespaces(), related(), () => new Date())).reason;
  return { crd: crd.length === 0, sync: reason !== "InvalidEnvironments", errors: crd };
};

describe("admission: environments as the CRD and sync judge them", () => {
  test("the policy is bound to deny", () => assertBoundToDeny(policy));

  const longest = 63 - NAMESPACE_PREFIX.length - "shop".length - 2;
  for (const [what, name, list, admitted] of [
    ["three environments", "shop", [{ name: "dev" }, { name: "staging" }, { name: "prod" }], true],
    ["an environment as long as a Namespace name of 63 characters allows", "shop", [{ name: "e".repeat(longest) }], true],
    ["one a character longer", "shop", [{ name: "e".repeat(longest + 1) }], false],
    ["a name that is not a DNS label", "shop", [{ name: "Dev" }], false],
    ["a name starting with '-'", "shop", [{ name: "-dev" }], false],
    ["one name twice", "shop", [{ name: "dev" }, { name: "dev" }], false],
    [`${MAX_ENVIRONMENTS + 1} environments`, "shop", Array.from({ length: MAX_ENVIRONMENTS + 1 }, (_, at) => ({ name: `e${at}` })), false],
    ["a namespace of a Project's prefix", "shop", [{ name: "dev", namespace: `${NAMESPACE_PREFIX}other` }], false],
    ["two environments naming one Namespace", "shop", [{ name: "a", namespace: "payments" }, { name: "b", namespace: "payments" }], false],
    ["environments on a Project named with '--'", "a--b", [{ name: "c" }], false],
  ] as const) {
    test(`the CRD and sync agree on ${what}: ${admitted ? "admitted" : "refused"}`, () => {
      const verdict = judged(name, [...list]);
      assert.equal(verdict.crd, admitted, `CRD: ${verdict.errors.join("; ")}`);
      assert.equal(verdict.sync, admitted, "sync");
    });
  }

  test("a Project named with '--' is refused by the CRD with the sentence sync says", () => {
    const { errors } = judged("a--b", [{ name: "c" }]);
    assert.ok(errors.some((error) => error.includes("a Project whose name contains '--' may not declare environments")), errors.join("; "));
    assert.ok(ENVIRONMENT_RULES.legacy.startsWith("a Project whose name contains '--' may not declare environments"));
  });
});

describe("admission: the environments policy", () => {
  const tenant = "robin";
  test("a new Project's name may not contain '--'; one named so before may still be updated", () => {
    const refused = asked("CREATE", projectNamed("a--b", {}), null, tenant);
    assert.equal(refused.allowed, false);
    assert.match(String(refused.message), /a new Project's name may not contain '--'/);
    assert.equal(asked("UPDATE", projectNamed("a--b", { license: "MIT" }), projectNamed("a--b", {}), tenant).allowed, true);
    assert.equal(asked("CREATE", projectNamed("a-b", {}), null, tenant).allowed, true);
  });

  test("naming an existing Namespace as an environment takes administer: a tenant is refused, saying why; an admin may", () => {
    const adopting = projectNamed("shop", { environments: [{ name: "payments", namespace: "payments" }] });
    const refused = asked("UPDATE", adopting, projectNamed("shop", {}), tenant);
    assert.equal(refused.allowed, false);
    assert.equal(
      refused.message,
      `Environment payments names Namespace payments: bringing an existing Namespace under a Project takes the verb administer on ${PARENT.plural}.${GROUP}, ` +
        `and ${tenant} does not hold it. Leave namespace out for a Namespace of its own, or ask a cluster admin.`,
    );
    assert.equal(asked("UPDATE", adopting, projectNamed("shop", {}), "pat", [ADMINISTER]).allowed, true);
    // What an admin wrote stays, whoever edits the rest.
    const edited = projectNamed("shop", { license: "MIT", environments: [{ name: "payments", namespace: "payments" }] });
    assert.equal(asked("UPDATE", edited, adopting, tenant).allowed, true);
    // Pointing it elsewhere is adopting again.
    const moved = projectNamed("shop", { environments: [{ name: "payments", namespace: "kube-system" }] });
    assert.equal(asked("UPDATE", moved, adopting, tenant).allowed, false);
  });

  test("no environment names Kubernetes' own Namespaces, this controller's or Metacontroller's, which a deleted Project would take with it: refused, saying why, to an admin too", () => {
    // Read from where each is defined: the Namespace the webhook's Deployment runs in, and the one Metacontroller's ServiceAccount lives in.
    const controllers = objects.filter((object: any) => object?.kind === "Deployment").map((object: any) => object.metadata.namespace);
    const metacontrollers = find("ClusterRoleBinding", `${crd.metadata.name}-controller`).subjects.filter((subject: any) => subject.kind === "ServiceAccount").map((subject: any) => subject.namespace);
    assert.ok(controllers.length > 0 && metacontrollers.length > 0);
    for (const namespace of ["kube-system", "kube-public", "kube-node-lease", "default", ...controllers, ...metacontrollers]) {
      const holding = projectNamed("shop", { environments: [{ name: "dev" }, { name: "sys", namespace }] });
      for (const [operation, before] of [["CREATE", null], ["UPDATE", projectNamed("shop", { environments: [{ name: "dev" }] })]] as const) {
        const refused = asked(operation, holding, before, "pat", [ADMINISTER]);
        assert.equal(refused.allowed, false, `${namespace} on ${operation}`);
        assert.match(String(refused.message), new RegExp(`^Environment sys names Namespace ${namespace}, which no Project may hold: a Project's Namespaces are deleted with it`));
      }
    }
    assert.equal(asked("CREATE", projectNamed("shop", { environments: [{ name: "pay", namespace: "payments" }] }), null, "pat", [ADMINISTER]).allowed, true);
    assert.equal(asked("CREATE", projectNamed("shop", { environments: [{ name: "sys", namespace: "cube-system" }] }), null, "pat", [ADMINISTER]).allowed, true);
  });
  test("no environment names a kube-* Namespace, the prefix Kubernetes keeps for itself (kube-flannel, kube-systems)", () => {
    for (const namespace of ["kube-flannel", "kube-systems"]) {
      const refused = asked("CREATE", projectNamed("shop", { environments: [{ name: "sys", namespace }] }), null, "pat", [ADMINISTER]);
      assert.equal(refused.allowed, false, namespace);
      assert.match(String(refused.message), new RegExp(`^Environment sys names Namespace ${namespace}, which no Project may hold`));
    }
  });
  test("a Project being deleted may not name a reserved Namespace it did not name before: its finalizers would take it", () => {
    const deleting = (environments: unknown[]) => ({ ...projectNamed("shop", { environments }), metadata: { ...projectNamed("shop", {}).metadata, deletionTimestamp: "2026-12-06T00:00:00Z" } });
    const refused = asked("UPDATE", deleting([{ name: "sys", namespace: "kube-system" }]), deleting([]), "pat", [ADMINISTER]);
    assert.equal(refused.allowed, false);
    assert.match(String(refused.message), /^Environment sys names Namespace kube-system, which no Project may hold/);
  });
  // feature: integrations
  test("no environment names the integrations' Namespace, which holds every Project's credentials, to an admin too", () => {
    const refused = asked("CREATE", projectNamed("shop", { environments: [{ name: "ops", namespace: INTEGRATIONS_NAMESPACE }] }), null, "pat", [ADMINISTER]);
    assert.equal(refused.allowed, false);
    assert.match(String(refused.message), new RegExp(`^Namespace ${INTEGRATIONS_NAMESPACE} holds every Project's integration credentials: no Project may hold it`));
    const alsoWhileDeleting = { ...projectNamed("shop", { environments: [{ name: "ops", namespace: INTEGRATIONS_NAMESPACE }] }), metadata: { ...projectNamed("shop", {}).metadata, deletionTimestamp: "2026-12-06T00:00:00Z" } };
    assert.equal(asked("UPDATE", alsoWhileDeleting, projectNamed("shop", {}), "pat", [ADMINISTER]).allowed, false);
  });
  // end feature: integrations

  // feature: guardrails
  // What everyone may use, as the manifest grants it.
  const everyDeveloper = [`${GROUP}/projectprofiles/use/${DEFAULT_PROFILE}`];
  test("choosing a profile for an environment takes the verb use on it, and so does leaving one a cluster admin assigned, taking the environment out too", () => {
    const on = (profile?: string) => projectNamed("shop", { environments: [{ name: "dev" }, { name: "prod", ...(profile ? { profile } : {}) }] });
    const refused = asked("UPDATE", on("strict"), on(), tenant);
    assert.equal(refused.allowed, false);
    assert.match(String(refused.message), /^Choosing ProjectProfile strict for an environment takes the verb use on it, which robin does not have on each/);
    assert.equal(asked("UPDATE", on("strict"), on(), tenant, [...everyDeveloper, `${GROUP}/projectprofiles/use/strict`]).allowed, true);
    const leaving = asked("UPDATE", on(), on("strict"), tenant);
    assert.equal(leaving.allowed, false);
    assert.match(String(leaving.message), /^Environment prod is on ProjectProfile strict, which a cluster admin assigned/);
    const takenOut = asked("UPDATE", projectNamed("shop", { environments: [{ name: "dev" }] }), on("strict"), tenant);
    assert.equal(takenOut.allowed, false);
    assert.equal(asked("UPDATE", projectNamed("shop", { license: "MIT", environments: [{ name: "dev" }, { name: "prod", profile: "strict" }] }), on("strict"), tenant).allowed, true);
  });
  test("an environment's profile cannot leave the one a cluster admin assigned the Project, new or changed, on CREATE or UPDATE, even for default", () => {
    const onStrict = (...environments: unknown[]) => projectNamed("rob", { profile: "strict", environments });
    const added = asked("UPDATE", onStrict({ name: "dev", profile: DEFAULT_PROFILE }), onStrict(), tenant, everyDeveloper);
    assert.equal(added.allowed, false);
    assert.match(
      String(added.message),
      /^Environment dev on ProjectProfile default leaves ProjectProfile strict, the Project's, which a cluster admin assigned: leaving it takes the verb use on it, which robin does not have/,
    );
    assert.equal(asked("UPDATE", onStrict({ name: "dev", profile: DEFAULT_PROFILE }), onStrict({ name: "dev" }), tenant, everyDeveloper).allowed, false);
    assert.equal(asked("CREATE", onStrict({ name: "dev", profile: DEFAULT_PROFILE }), null, tenant, everyDeveloper).allowed, false);
    const holder = [...everyDeveloper, `${GROUP}/projectprofiles/use/strict`];
    assert.equal(asked("UPDATE", onStrict({ name: "dev", profile: DEFAULT_PROFILE }), onStrict(), tenant, holder).allowed, true);
    // Left as it was, or on the Project's: nothing is left.
    assert.equal(asked("UPDATE", onStrict({ name: "dev" }), onStrict(), tenant).allowed, true);
    assert.equal(asked("UPDATE", { ...onStrict({ name: "dev", profile: DEFAULT_PROFILE }), metadata: { name: "rob", labels: { a: "b" } } }, onStrict({ name: "dev", profile: DEFAULT_PROFILE }), tenant).allowed, true);
    assert.equal(asked("UPDATE", projectNamed("rob", { environments: [{ name: "dev", profile: DEFAULT_PROFILE }] }), projectNamed("rob", {}), tenant, everyDeveloper).allowed, true);
  });
  // end feature: guardrails

  // feature: members
  test("the CRD lets an environment list at most 20 members of its own, so the largest Project fits a request", () => {
    const listing = (count: number) => [{ name: "dev", members: Array.from({ length: count }, (_, at) => ({ kind: "User", name: `u${at}`, role: "view" })) }];
    assert.equal(admissionErrors(projectSchema, projectNamed("shop", { environments: listing(20) })).length, 0);
    assert.notEqual(admissionErrors(projectSchema, projectNamed("shop", { environments: listing(21) })).length, 0);
  });

  // end feature: members

  // feature: members
  test("a ServiceAccount of one of the Project's Namespaces is a member of that Namespace alone, at most edit, refused in the words sync says", () => {
    const robot = (namespace: string, role = "admin") => ({ kind: "ServiceAccount", namespace, name: "deployer", role });
    const prod = `${NAMESPACE_PREFIX}shop--prod`;
    const dana = { kind: "User", name: "dana", role: "admin" };
    for (const [what, spec] of [
      ["prod's admin in prod", { environments: [{ name: "prod", members: [robot(prod)] }] }],
      ["prod's admin as the Project's", { members: [dana, robot(prod)], environments: [{ name: "prod" }] }],
      ["all of prod's, admin in prod", { environments: [{ name: "prod", members: [{ kind: "Group", name: `system:serviceaccounts:${prod}`, role: "admin" }] }] }],
      // eve, edit in dev, acts as dev's deployer, granted in prod.
      ["dev's in prod", { members: [dana], environments: [{ name: "dev" }, { name: "prod", members: [robot(`${NAMESPACE_PREFIX}shop--dev`, "edit")] }] }],
      ["all of dev's in prod", { members: [dana], environments: [{ name: "dev" }, { name: "prod", members: [{ kind: "Group", name: `system:serviceaccounts:${NAMESPACE_PREFIX}shop--dev`, role: "view" }] }] }],
      ["an adopted one's in prod", { members: [dana], environments: [{ name: "pay", namespace: "payments" }, { name: "prod", members: [robot("payments", "edit")] }] }],
      ["prod's as the Project's, so in dev too", { members: [dana, robot(prod, "edit")], environments: [{ name: "dev" }, { name: "prod" }] }],
      ["a kept one's as the Project's admin, no environment declared", { members: [dana, robot(`${NAMESPACE_PREFIX}shop--old`)] }],
      ["a kept one's as the Project's edit, no environment declared", { members: [dana, robot(`${NAMESPACE_PREFIX}shop--old`, "edit")] }],
      ["the Project's own Namespace's of before, in prod", { members: [dana], environments: [{ name: "prod", members: [robot(`${NAMESPACE_PREFIX}shop`, "edit")] }] }],
    ] as const) {
      // A cluster admin too: the rule is the Namespaces', not a permission.
      const refused = asked("CREATE", projectNamed("shop", spec), null, tenant, [ADMINISTER]);
      assert.equal(refused.allowed, false, what);
      assert.equal(refused.message, MEMBER_RULES.elsewhere, what);
    }
    for (const [what, spec] of [
      ["the deploy robot, edit in prod only", { members: [dana], environments: [{ name: "dev" }, { name: "prod", members: [robot(prod, "edit")] }] }],
      ["another Namespace's, the admins' to trust", { members: [dana], environments: [{ name: "dev" }, { name: "prod", members: [robot("ci")] }] }],
      ["the Project's own Namespace's, edit, without environments", { members: [dana, robot(`${NAMESPACE_PREFIX}shop`, "edit")] }],
      ["another Project's of a longer name", { members: [dana, robot(`${NAMESPACE_PREFIX}shopping`, "admin")] }],
      // Refused by the self-service policy, in its own words.
      ["the Project's own Namespace's, admin, without environments", { members: [dana, robot(`${NAMESPACE_PREFIX}shop`, "admin")] }],
    ] as const) {
      assert.equal(asked("CREATE", projectNamed("shop", spec), null, tenant).allowed, true, what);
    }
  });
  // end feature: members
});
