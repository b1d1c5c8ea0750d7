// What the API server admits of the deletion-protection feature: a protected
// Project, and its Namespaces, are refused to a delete.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { PROJECT_LABEL, sync } from "../sync.ts";
import { PROTECTED_BY_LABEL } from "../features/deletion-protection.ts";
import { assertBoundToDeny, crd, deleting, objects, policyNamed, projectSchema, projectVersion, trusted, KUBERNETES_CONTROLLERS } from "./admission.ts";
import { admit, evaluateCel } from "./cel.ts";
import { clock, escaped, namespaceIn, namespaceOf, namespaces, project, related } from "./helpers.ts";

const projectPolicy = policyNamed("deletion-protection");
const namespacePolicy = policyNamed("namespace-deletion-protection");

describe("admission: deletion protection", () => {
  const protectedProject = (deletionProtection?: boolean) =>
    project("shop", { spec: deletionProtection === undefined ? {} : { deletionProtection } });
  // The API server hands a DELETE's policy the object as stored, as oldObject.
  const onDelete = (policy: any, oldObject: unknown) => {
    const [validation] = policy.spec.validations;
    return {
      allowed: evaluateCel(validation.expression, { oldObject: oldObject as any }),
      message: validation.messageExpression ? evaluateCel(validation.messageExpression, { oldObject: oldObject as any }) : validation.message,
    };
  };

  test("a Project with spec.deletionProtection cannot be deleted", () => {
    assert.equal(onDelete(projectPolicy, protectedProject(true)).allowed, false);
  });

  test("a Project without it, or from before the field existed, can be", () => {
    assert.equal(onDelete(projectPolicy, protectedProject(false)).allowed, true);
    assert.equal(onDelete(projectPolicy, protectedProject()).allowed, true);
  });

  test("the refusal names the Project and the patch that lifts the protection, and that patch does", () => {
    const { message } = onDelete(projectPolicy, protectedProject(true));
    assert.match(String(message), /^Project shop has spec.deletionProtection set/);
    const patch = /kubectl patch project shop --type=merge -p '(.+)'$/.exec(String(message))?.[1];
    assert.ok(patch, String(message));
    const lifted = protectedProject(true);
    Object.assign(lifted.spec ?? {}, JSON.parse(patch).spec);
    assert.equal(onDelete(projectPolicy, lifted).allowed, true);
  });

  test("the CRD declares the field off by default, and kubectl get projects shows it", () => {
    const field = projectSchema.properties.spec.properties.deletionProtection;
    assert.deepEqual([field.type, field.default], ["boolean", false]);
    const column = projectVersion.additionalPrinterColumns.find((candidate: any) => candidate.name === "Protected");
    assert.equal(column?.jsonPath, ".spec.deletionProtection");
  });

  test("the Project guard holds for a collection delete of Projects", () => {
    const request = deleting(crd.spec.group, crd.spec.names.plural, protectedProject(true), { collection: true });
    assert.equal(admit(projectPolicy, request).allowed, false);
    assert.equal(admit(projectPolicy, { ...request, oldObject: protectedProject(false) as any }).allowed, true);
  });

  test("the Project guard matches DELETE of Projects, whatever their version", () => {
    assert.deepEqual(projectPolicy.spec.matchConstraints.resourceRules, [
      { apiGroups: [crd.spec.group], apiVersions: ["*"], operations: ["DELETE"], resources: [crd.spec.names.plural], scope: crd.spec.scope },
    ]);
  });

  test("each policy is bound once, to deny, refuses when it cannot be evaluated, and comes after the CRD", () => {
    for (const policy of [projectPolicy, namespacePolicy]) {
      assertBoundToDeny(policy);
      assert.ok(objects.indexOf(crd) < objects.indexOf(policy));
    }
  });
});

describe("admission: a protected Project's Namespace", () => {
  // The Namespace as sync asks for it, as the API server stores it.
  const answer = sync(project("shop", { spec: { deletionProtection: true } }), namespaces(), related(), clock("2026-11-30T00:00:00Z"));
  const labelled = { ...namespaceIn(answer), metadata: { ...namespaceIn(answer)?.metadata, uid: "u", ownerReferences: [{ kind: "Project", name: "shop" }] } };
  const namespaceDelete = (oldObject: any, options?: { collection?: boolean; username?: string }, authorized: string[] = []) =>
    admit(namespacePolicy, { ...deleting("", "namespaces", oldObject, options), authorized });

  test("is refused to a person, also by a collection delete, naming the Project and the patch that lifts its protection", () => {
    for (const collection of [false, true]) {
      const { allowed, message } = namespaceDelete(labelled, { collection });
      assert.equal(allowed, false);
      assert.match(String(message), new RegExp(String.raw`^Namespace ${escaped(namespaceOf("shop"))} belongs to Project shop, which has spec\.deletionProtection set`));
      assert.match(String(message), /kubectl patch project shop --type=merge -p '\{"spec":\{"deletionProtection":false\}\}'$/);
    }
  });

  test("goes when the garbage collector deletes it, its Project gone, as its own ServiceAccount or as the controller manager", () => {
    for (const { username, authorized } of [KUBERNETES_CONTROLLERS.garbageCollector, KUBERNETES_CONTROLLERS.controllerManager].map((username) => ({ username, authorized: [] }))) {
      assert.equal(namespaceDelete(labelled, { username }, authorized).allowed, true, username);
    }
    const metacontroller = trusted["metacontroller"]!;
    assert.equal(namespaceDelete(labelled, { username: metacontroller.username }, metacontroller.authorized).allowed, false, "Metacontroller never deletes it");
    assert.equal(namespaceDelete(labelled, { username: "pat" }, ["*/*/*"]).allowed, false, "nor a cluster admin");
  });

  test("already terminating, a delete goes through: it changes nothing, and the guard never holds it in Terminating", () => {
    const terminating = { ...labelled, metadata: { ...labelled.metadata, deletionTimestamp: "2026-11-30T00:00:00Z" } };
    for (const username of ["alice", "system:serviceaccount:kube-system:namespace-controller"]) {
      assert.equal(namespaceDelete(terminating, { username }).allowed, true, username);
    }
  });

  test("an unprotected Project's Namespace, and any other, can be deleted", () => {
    const unprotected = namespaceIn(sync(project("shop"), namespaces(), related(), clock("2026-11-30T00:00:00Z")));
    assert.equal(namespaceDelete(unprotected).allowed, true);
    assert.equal(namespaceDelete({ metadata: { name: "kube-public", labels: { other: "x" } } }).allowed, true);
  });

  test("the policy selects by the label sync writes", () => {
    const [expression] = namespacePolicy.spec.matchConstraints.objectSelector.matchExpressions;
    assert.deepEqual(expression, { key: PROTECTED_BY_LABEL, operator: "Exists" });
    assert.ok(JSON.stringify(namespacePolicy.spec.validations).includes(`labels['${PROTECTED_BY_LABEL}']`));
  });
});

