// What every admission test reads of k8s.yaml, and how the API server hands
// a policy its request: the core's and each feature's tests share it.
import assert from "node:assert/strict";
import { GROUP, PARENT, VERSION } from "../sync.ts";
import * as v from "valibot";
import { authorizedBy, schemaErrors, type AdmissionRequest } from "./cel.ts";
import { readManifest } from "../scripts/manifest.ts";

export const { objects, find } = readManifest();
// The API server names a CRD `<plural>.<group>`.
export const crd = find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`);
export const projectVersion = crd.spec.versions.find((version: any) => version.name === VERSION);
export const projectSchema = projectVersion.schema.openAPIV3Schema;
/** A holder of the verb administer on the parents, in the form of AdmissionRequest's `authorized`: the one the guards let past. */
export const ADMINISTER = `${GROUP}/${PARENT.plural}/administer`;
/** One of the install's policies, named `<the parent's CRD>-<what it guards>`. */
export const policyNamed = (guards: string) => find("ValidatingAdmissionPolicy", `${crd.metadata.name}-${guards}`);

/**
 * Whom the guards trust, as the install's ClusterRoleBinding names them
 * (`<the parent's CRD>-controller`): Metacontroller, keyed by its
 * ServiceAccount's name, as a request carries it: its username, and what
 * that ClusterRole lets it do.
 */
export const trusted: Record<string, { username: string; authorized: string[] }> = (() => {
  const binding = find("ClusterRoleBinding", `${crd.metadata.name}-controller`);
  const authorized = authorizedBy(find("ClusterRole", binding.roleRef.name).rules);
  return Object.fromEntries(
    binding.subjects.map((subject: { kind: string; name: string; namespace?: string }) => [
      subject.name,
      { username: subject.kind === "ServiceAccount" ? `system:serviceaccount:${subject.namespace}:${subject.name}` : subject.name, authorized },
    ]),
  );
})();

/** Kubernetes' own controllers, as kubeadm's controller manager runs them, and as itself where it runs them under one identity. */
export const KUBERNETES_CONTROLLERS = {
  garbageCollector: "system:serviceaccount:kube-system:generic-garbage-collector",
  namespaceController: "system:serviceaccount:kube-system:namespace-controller",
  controllerManager: "system:kube-controller-manager",
} as const;

/** A DELETE as the API server admits it: by name, or item by item for a collection delete, whose request names none. */
export const deleting = (
  group: string,
  resource: string,
  oldObject: any,
  { collection = false, username = "alice", namespace = undefined as AdmissionRequest["namespace"] } = {},
): AdmissionRequest => ({
  operation: "DELETE",
  resource: { group, resource },
  name: collection ? "" : oldObject.metadata.name,
  oldObject,
  username,
  ...(namespace ? { namespace } : {}),
});

/** Each policy is bound once, to deny, and refuses when it cannot be evaluated. */
export function assertBoundToDeny(policy: any) {
  const bindings = objects.filter((object) => object.kind === "ValidatingAdmissionPolicyBinding" && object.spec.policyName === policy.metadata.name);
  assert.equal(bindings.length, 1, policy.metadata.name);
  assert.deepEqual(bindings[0].spec.validationActions, ["Deny"]);
  assert.equal(policy.spec.failurePolicy, "Fail");
}

/** The command a refusal ends with, applied to the object as `kubectl annotate` would. */
export function annotatedAsTold(object: any, message: unknown) {
  const annotate = / (\S+)=(true)$/.exec(String(message));
  assert.ok(annotate, String(message));
  return { ...object, metadata: { ...object.metadata, annotations: { other: "x", [annotate[1] ?? ""]: annotate[2] } } };
}

/** The CRD's schema and sync's on one value: each admits it exactly when it breaks no rule. Returns what each said, for the rule's wording. */
export function assertJudgedAlike(crdSchema: any, path: string, schema: v.GenericSchema, value: unknown, breaks: boolean) {
  const admission = schemaErrors(crdSchema, value, path);
  const checked = v.safeParse(schema, value);
  assert.equal(admission.length === 0, !breaks, `CRD: ${admission.join("; ")}`);
  assert.equal(checked.success, !breaks, `sync: ${checked.issues?.map((issue) => issue.message).join("; ")}`);
  return { admission, issues: checked.issues ?? [] };
}
