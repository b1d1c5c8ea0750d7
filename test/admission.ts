// What every admission test reads of k8s.yaml, and how the API server hands
// a policy its request: the core's and each feature's tests share it.
import assert from "node:assert/strict";
import { GROUP, PARENT, VERSION } from "../sync.ts";
import * as v from "valibot";
import { schemaErrors, type AdmissionRequest } from "./cel.ts";
import { readManifest } from "./manifest.ts";

export const { objects, find } = readManifest();
// The API server names a CRD `<plural>.<group>`.
export const crd = find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`);
export const projectVersion = crd.spec.versions.find((version: any) => version.name === VERSION);
export const projectSchema = projectVersion.schema.openAPIV3Schema;
/** One of the install's policies, named `<the parent's CRD>-<what it guards>`. */
export const policyNamed = (guards: string) => find("ValidatingAdmissionPolicy", `${crd.metadata.name}-${guards}`);
export const trusted = find("ConfigMap", "trusted-controllers").data as Record<string, string>;

/** The object a policy's binding hands it as `params`, as the API server looks it up. */
export function paramsOf(policy: any): any {
  const binding = find("ValidatingAdmissionPolicyBinding", policy.metadata.name);
  const { name, namespace } = binding.spec.paramRef;
  const params = find(policy.spec.paramKind.kind, name);
  assert.equal(params.metadata.namespace, namespace);
  return params;
}

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
