// What the API server admits, checked the way it would: the CRDs' schemas
// and CEL rules, and the admission policies, judged by the same rules and in
// the same words as sync.ts. These are the Project's own; manifest.test.ts
// checks the rest of the install.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as v from "valibot";
import { ANNOTATIONS_MAX_BYTES, API_VERSION, GROUP, PARENT, VERSION, DEFAULT_LICENSE, PROJECT_NAME_RULE, PROJECT_LABEL, asGoJson, isValidNamespaceName, namespaceNameFor, sync } from "../sync.ts";
import { PROFILE, DEFAULT_PROFILE, MAX_ADMITTED_NAMESPACES, MAX_QUANTITIES, POD_SECURITY_LEVELS, PROFILE_RULES, ProfileSpec, QUALIFIED_QUOTA_RESOURCE, QUANTITY, QUOTA_RESOURCES, COUNTED_RESOURCES, compareQuantities, profileNameOf } from "../features/guardrails.ts"; // feature: guardrails
import { MAX_MEMBERS, MEMBER_KINDS, MEMBER_NAME_MAX_LENGTH, MEMBER_RULES, Members, ROLES } from "../features/members.ts"; // feature: members
import { PROTECTED_BY_LABEL } from "../features/deletion-protection.ts"; // feature: deletion-protection
import { admit, authorizedBy, evaluateCel, schemaErrors, type AdmissionRequest } from "./cel.ts";
import { MEMBER_CASES } from "./members-cases.ts";
import { PROFILE_CASES } from "./guardrails-cases.ts";
import { clock, namespaceIn, namespaces, project, related } from "./helpers.ts";
import { ANNOTATIONS_LIMIT_BYTES, CLIENT_SIDE_APPLY_ANNOTATION, assertCrdSpells, clientSideApplyCopyBytes, readManifest } from "./manifest.ts";

const { objects, find } = readManifest();
// The API server names a CRD `<plural>.<group>`.
const crd = find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`);
const profileCrd = find("CustomResourceDefinition", `${PROFILE.plural}.${GROUP}`);
const defaultProfile = find(PROFILE.kind, DEFAULT_PROFILE);
const projectPolicy = find("ValidatingAdmissionPolicy", `${crd.metadata.name}-deletion-protection`);
const installPolicy = find("ValidatingAdmissionPolicy", `${crd.metadata.name}-install-protection`);
const namespacePolicy = find("ValidatingAdmissionPolicy", `${crd.metadata.name}-namespace-deletion-protection`);
const ownershipPolicy = find("ValidatingAdmissionPolicy", `${crd.metadata.name}-ownership`);
const accessPolicy = find("ValidatingAdmissionPolicy", `${crd.metadata.name}-namespace-access`);
const projectVersion = crd.spec.versions.find((version: any) => version.name === VERSION);

/** The object a policy's binding hands it as `params`, as the API server looks it up. */
function paramsOf(policy: any): any {
  const binding = find("ValidatingAdmissionPolicyBinding", policy.metadata.name);
  const { name, namespace } = binding.spec.paramRef;
  const params = find(policy.spec.paramKind.kind, name);
  assert.equal(params.metadata.namespace, namespace);
  return params;
}
const trusted = find("ConfigMap", "trusted-controllers").data as Record<string, string>;
const projectSchema = projectVersion.schema.openAPIV3Schema;

/** A DELETE as the API server admits it: by name, or item by item for a collection delete, whose request names none. */
const deleting = (
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

describe("admission: the names sync.ts owns", () => {
  test("the profile's CRD spells the group, version and names of sync.ts, as does the default profile", () => {
    assertCrdSpells(profileCrd, PROFILE);
    assert.equal(defaultProfile.apiVersion, API_VERSION);
  });

  test("sync counts a copy of an object as kubectl and the API server do, under the same limit", () => {
    assert.equal(ANNOTATIONS_MAX_BYTES, ANNOTATIONS_LIMIT_BYTES);
    const object = { metadata: { annotations: { description: "<a> & <b> \u2028\u2029 ünïcode" } } };
    assert.equal(Buffer.byteLength(CLIENT_SIDE_APPLY_ANNOTATION) + Buffer.byteLength(asGoJson(object)), clientSideApplyCopyBytes(object));
  });

  test("the CRD's default license is sync's", () => {
    assert.equal(projectSchema.properties.spec.properties.license.default, DEFAULT_LICENSE);
  });
});

describe("admission: the CRD keeps out what sync cannot use", () => {
  const rule = projectSchema["x-kubernetes-validations"].find((validation: any) => validation.rule.includes("metadata.name"));
  const admits = (name: string) => evaluateCel(rule.rule, { self: { metadata: { name } } });

  // Every name here is a valid object name (a DNS-1123 subdomain), so the API
  // server would store it if the CRD let it through.
  const names: [string, boolean][] = [
    ["test", true],
    ["a", true],
    ["0", true],
    ["my-project-2", true],
    ["a".repeat(58), true],
    ["a".repeat(59), false],
    ["my.project", false],
    ["a".repeat(63), false],
    ["x".repeat(30) + "." + "y".repeat(20), false],
  ];
  for (const [name, valid] of names) {
    const shown = name.length > 20 ? `${name.length} characters` : name;
    test(`admission and sync agree that "${shown}" ${valid ? "can" : "cannot"} become a Namespace`, () => {
      assert.equal(admits(name), valid, "CRD rule");
      assert.equal(isValidNamespaceName(namespaceNameFor(name)), valid, "sync");
    });
  }

  test("the refusal explains itself, in the words sync's InvalidName uses", () => {
    assert.equal(rule.message, PROJECT_NAME_RULE);
  });

  test("the longest description and license the CRD admits, in the costliest characters, still get their Namespace", () => {
    const spec = projectSchema.properties.spec.properties;
    for (const costly of ["\u2028", "<", "😀"]) {
      const description = costly.repeat(spec.description.maxLength);
      const license = costly.repeat(spec.license.maxLength);
      const answer = sync(project("big", { spec: { description, license } }), namespaces(), related(), clock("2026-11-30T00:00:00Z"));
      assert.equal(answer.children.length, 1, JSON.stringify(answer.status.conditions[0]?.reason));
    }
  });
});

describe("admission: the CRD and sync judge members alike", () => {
  const membersSchema = projectSchema.properties.spec.properties.members;

  for (const { what, members, breaks } of MEMBER_CASES) {
    test(`admission and sync agree that ${what} ${breaks ? `break the rule: ${MEMBER_RULES[breaks]}` : "can be bound"}`, () => {
      const admission = schemaErrors(membersSchema, members, "spec.members");
      const checked = v.safeParse(Members, members);
      assert.equal(admission.length === 0, !breaks, `CRD: ${admission.join("; ")}`);
      assert.equal(checked.success, !breaks, `sync: ${checked.issues?.map((issue) => issue.message).join("; ")}`);
      if (!breaks) return;
      assert.ok(checked.issues?.some((issue) => issue.message.endsWith(MEMBER_RULES[breaks])), "sync says which rule");
      // Rules the CRD states in CEL say it in sync's words; the others are
      // Kubernetes' own enum, length and maxItems messages.
      const stated = JSON.stringify(membersSchema).includes(JSON.stringify(MEMBER_RULES[breaks]));
      if (stated) assert.ok(admission.some((error) => error.endsWith(MEMBER_RULES[breaks])), admission.join("; "));
    });
  }

  test("the self-service policy and sync agree that a ServiceAccount of the Project's own Namespace is at most an edit member, as every edit member can act as it", () => {
    const withMember = (namespace: string, role: string) =>
      project("shop", { spec: { members: [{ kind: "User", name: "dana", role: "admin" }, { kind: "ServiceAccount", namespace, name: "deployer", role }] } });
    const selfService = find("ValidatingAdmissionPolicy", `${crd.metadata.name}-self-service`);
    const judged = (namespace: string, role: string) => {
      const object = withMember(namespace, role) as any;
      const decision = admit(
        selfService,
        { operation: "CREATE", resource: { group: GROUP, resource: PARENT.plural }, name: "shop", object, username: "pat", authorized: ["agrrh.com/projects/administer", "agrrh.com/projectprofiles/use"] },
        paramsOf(selfService),
      );
      const admission = decision.allowed ? [] : [String(decision.message)];
      const answer = sync(withMember(namespace, role), namespaces({ "proj-shop": "Active" }), related(), clock("2026-11-30T00:00:00Z"));
      const reason = answer.status.conditions[0]?.reason;
      assert.equal(admission.length === 0, reason !== "InvalidMembers", `policy: ${admission.join("; ")}; sync: ${reason}`);
      return { admission, message: answer.status.conditions[0]?.message ?? "" };
    };
    const refused = judged("proj-shop", "admin");
    assert.deepEqual(refused.admission, [MEMBER_RULES.ownServiceAccount], "refused even to a holder of administer");
    assert.equal(refused.message, `spec.members[1]: ${MEMBER_RULES.ownServiceAccount}. Until that is fixed, no member has access.`);
    for (const [namespace, role] of [["proj-shop", "edit"], ["proj-shop", "view"], ["ci", "admin"], ["proj-other", "admin"]] as const) {
      assert.deepEqual(judged(namespace, role).admission, [], `${role} in ${namespace}`);
    }
  });

  test("the CRD's kinds, roles and limits are sync's", () => {
    assert.deepEqual(membersSchema.items.properties.kind.enum, [...MEMBER_KINDS]);
    assert.deepEqual(membersSchema.items.properties.role.enum, [...ROLES]);
    assert.equal(membersSchema.items.properties.name.maxLength, MEMBER_NAME_MAX_LENGTH);
    assert.equal(membersSchema.maxItems, MAX_MEMBERS);
  });

  test("the largest RoleBinding the CRD admits, in the costliest characters, keeps Metacontroller's copy under 256 KiB", () => {
    const name = (index: number) => `${index}`.padEnd(MEMBER_NAME_MAX_LENGTH, "<");
    const members = Array.from({ length: MAX_MEMBERS }, (_, index) => ({ kind: "User", name: name(index), role: "admin" }));
    assert.deepEqual(schemaErrors(membersSchema, members), []);
    const answer = sync(project("a".repeat(58), { spec: { members } }), namespaces({ [`proj-${"a".repeat(58)}`]: "Active" }), related(), clock("2026-11-30T00:00:00Z"));
    const [, binding] = answer.children;
    assert.ok(binding);
    const copyBytes = new TextEncoder().encode(asGoJson(binding)).length;
    assert.ok(copyBytes < ANNOTATIONS_MAX_BYTES * 0.75, `${copyBytes} bytes`);
  });
});

describe("admission: profiles are admitted by the rules sync applies", () => {
  const profileVersion = profileCrd.spec.versions.find((version: any) => version.name === "v1");
  const profileSpecSchema = profileVersion.schema.openAPIV3Schema.properties.spec;
  const projectProfileSchema = projectSchema.properties.spec.properties.profile;

  for (const { what, spec, breaks } of PROFILE_CASES) {
    test(`admission and sync agree that ${what} ${breaks ? `breaks the rule: ${PROFILE_RULES[breaks]}` : "is a profile"}`, () => {
      const admission = schemaErrors(profileSpecSchema, spec, "spec");
      const checked = v.safeParse(ProfileSpec, spec);
      assert.equal(admission.length === 0, !breaks, `CRD: ${admission.join("; ")}`);
      assert.equal(checked.success, !breaks, `sync: ${checked.issues?.map((issue) => issue.message).join("; ")}`);
      if (!breaks) return;
      assert.ok(checked.issues?.some((issue) => issue.message === PROFILE_RULES[breaks]), "sync says which rule");
      // What the CRD says in CEL is the rule broken, in sync's words; the
      // rest are Kubernetes' own type, enum, pattern and size messages.
      const ownWords = /: (must be an? \w+|must have at most \d+ \w+|unsupported value .*|should match '.*'|longer than \d+)$/;
      for (const error of admission.filter((error) => !ownWords.test(error))) assert.ok(error.endsWith(PROFILE_RULES[breaks]), error);
    });
  }

  test("the CRD's quantity and resource rules are sync's regular expressions, lists and limits", () => {
    const inCel = (pattern: RegExp) => pattern.source.replaceAll("\\", "\\\\");
    const hard = profileSpecSchema.properties.resourceQuota.properties.hard;
    const rules = JSON.stringify(profileSpecSchema);
    assert.ok(rules.includes(JSON.stringify(inCel(QUANTITY)).slice(1, -1)), "QUANTITY");
    assert.ok(rules.includes(JSON.stringify(inCel(QUALIFIED_QUOTA_RESOURCE)).slice(1, -1)), "QUALIFIED_QUOTA_RESOURCE");
    const listed = hard["x-kubernetes-validations"][1].rule.match(/\[([^\]]*)\]/)[1].split(",").map((name: string) => name.trim().slice(1, -1));
    assert.deepEqual(listed, [...QUOTA_RESOURCES]);
    const counted = hard["x-kubernetes-validations"][2].rule.match(/\[([^\]]*)\]/)[1].split(",").map((name: string) => name.trim().slice(1, -1));
    assert.deepEqual(counted, [...COUNTED_RESOURCES]);
    assert.equal(hard.maxProperties, MAX_QUANTITIES);
    assert.deepEqual(profileSpecSchema.properties.podSecurity.enum, [...POD_SECURITY_LEVELS]);
    assert.equal(profileSpecSchema.properties.networkPolicy.properties.allowFromNamespaces.maxItems, MAX_ADMITTED_NAMESPACES);
  });

  test("k8s.yaml's default profile follows the rules, and a Project names it unless it says otherwise", () => {
    assert.deepEqual(schemaErrors(profileSpecSchema, defaultProfile.spec, "spec"), []);
    assert.equal(v.safeParse(ProfileSpec, defaultProfile.spec).success, true);
    assert.equal(projectProfileSchema.default, DEFAULT_PROFILE);
    assert.equal(profileNameOf({}), DEFAULT_PROFILE);
  });

  test("a Project names a profile by a name a ProjectProfile can have", () => {
    for (const [name, admitted] of [["large", true], ["team-a.large", true], ["", false], ["Large", false], ["a".repeat(254), false]] as const) {
      assert.equal(schemaErrors(projectProfileSchema, name).length === 0, admitted, JSON.stringify(name));
    }
  });

  test("the default profile's quota counts what its default limits let in: with limits in the quota, a container stating none still fits", () => {
    const { resourceQuota, limitRange } = defaultProfile.spec;
    for (const resource of ["cpu", "memory"]) {
      if (!(`limits.${resource}` in resourceQuota.hard)) continue;
      assert.ok(limitRange.default[resource], `a default ${resource} limit`);
      assert.ok(compareQuantities(limitRange.default[resource], resourceQuota.hard[`limits.${resource}`]) <= 0, resource);
      assert.ok(compareQuantities(limitRange.defaultRequest[resource], resourceQuota.hard[`requests.${resource}`]) <= 0, resource);
    }
  });
});

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

  const installDelete = (group: string, resource: string, object: any, options?: Parameters<typeof deleting>[3]) =>
    admit(installPolicy, deleting(group, resource, object, options));
  // The command each refusal ends with, applied to the object as `kubectl annotate` would.
  const annotatedAsTold = (object: any, message: unknown) => {
    const annotate = / (\S+)=(true)$/.exec(String(message));
    assert.ok(annotate, String(message));
    return { ...object, metadata: { ...object.metadata, annotations: { other: "x", [annotate[1] ?? ""]: annotate[2] } } };
  };
  const controllerNamespace = find("Namespace");
  const trustedConfigMap = find("ConfigMap", "trusted-controllers");
  const inControllerNamespace = { namespace: { name: controllerNamespace.metadata.name } };
  const kept = [
    { what: "the Project CRD", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", object: crd, says: /^Deleting CustomResourceDefinition projects\.agrrh\.com deletes every Project and every proj- Namespace/, command: `kubectl annotate crd ${crd.metadata.name} ` },
    { what: "the profile CRD", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", object: profileCrd, says: /deletes every ProjectProfile: every Project then says ProfileNotFound/, command: `kubectl annotate crd ${profileCrd.metadata.name} ` },
    { what: "a ProjectProfile", group: GROUP, resource: PROFILE.plural, object: { ...defaultProfile, metadata: { name: "large" } }, says: /^Deleting ProjectProfile large leaves every Project that names it ProfileNotFound: their Namespaces keep the guardrails they have/, command: "kubectl annotate projectprofile large " },
    { what: "the install's Namespace", group: "", resource: "namespaces", object: controllerNamespace, says: /^Namespace meta-project holds the webhook and whom the guards trust/, command: "kubectl annotate namespace meta-project " },
    { what: "the ConfigMap of whom the guards trust", group: "", resource: "configmaps", object: trustedConfigMap, says: /^ConfigMap meta-project\/trusted-controllers names whom the guards trust/, command: "kubectl annotate -n meta-project configmap trusted-controllers ", options: inControllerNamespace },
  ];
  for (const { what, group, resource, object, says, command, options } of kept) {
    test(`a stray delete of ${what} is refused, also as a collection, saying what it would do and how to go ahead; annotated as told, it goes`, () => {
      for (const collection of [false, true]) {
        const { allowed, message } = installDelete(group, resource, object, { ...options, collection });
        assert.equal(allowed, false, collection ? "a collection delete" : "a delete by name");
        assert.match(String(message), says);
        assert.ok(String(message).endsWith(`If that is what you want, first run: ${command}agrrh.com/allow-deletion=true`), String(message));
        assert.equal(installDelete(group, resource, annotatedAsTold(object, message), options).allowed, true);
      }
      const otherValue = { ...object, metadata: { ...object.metadata, annotations: { "agrrh.com/allow-deletion": "yes" } } };
      assert.equal(installDelete(group, resource, otherValue, options).allowed, false, "another value");
    });
  }

  test("the ConfigMap of whom the guards trust goes with its Namespace, once that is deliberately deleted", () => {
    const terminating = { namespace: { name: controllerNamespace.metadata.name, deletionTimestamp: "2026-11-30T00:00:00Z" } };
    assert.equal(installDelete("", "configmaps", trustedConfigMap, terminating).allowed, true);
  });

  test("every other CRD, Namespace and ConfigMap may go", () => {
    const other = { ...crd, metadata: { name: "compositecontrollers.metacontroller.k8s.io" } };
    assert.equal(installDelete("apiextensions.k8s.io", "customresourcedefinitions", other, { collection: true }).matched, false);
    assert.equal(installDelete("", "namespaces", { metadata: { name: "team-x" } }).matched, false);
    assert.equal(installDelete("", "configmaps", { metadata: { name: "trusted-controllers", namespace: "team-x" } }, { namespace: { name: "team-x" } }).matched, false);
    assert.equal(installDelete("", "configmaps", { metadata: { name: "other", namespace: "meta-project" } }, inControllerNamespace).matched, false);
  });

  test("every admission policy and binding carries the finalizer the deliberate uninstall removes, so that a stray delete leaves them enforcing", () => {
    const guards = objects.filter((object) => object.kind.startsWith("ValidatingAdmissionPolicy"));
    assert.ok(guards.length >= 12);
    for (const guard of guards) assert.deepEqual(guard.metadata.finalizers, ["agrrh.com/uninstall-deliberately"], guard.metadata.name);
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

  test("each policy is bound once, to deny, and refuses when it cannot be evaluated", () => {
    for (const policy of [projectPolicy, installPolicy, namespacePolicy]) {
      const bindings = objects.filter((object) => object.kind === "ValidatingAdmissionPolicyBinding" && object.spec.policyName === policy.metadata.name);
      assert.equal(bindings.length, 1, policy.metadata.name);
      assert.deepEqual(bindings[0].spec.validationActions, ["Deny"]);
      assert.equal(policy.spec.failurePolicy, "Fail");
    }
  });

  test("the policies come after the CRD, so that kubectl delete -f k8s.yaml meets the guard before removing it", () => {
    const index = (object: unknown) => objects.indexOf(object);
    assert.ok(index(crd) < index(installPolicy) && index(crd) < index(projectPolicy));
  });
});

describe("admission: the status sync writes survives pruning", () => {
  // The API server drops status fields its schema does not declare.
  function assertDeclared(value: unknown, schema: any, path: string) {
    assert.ok(schema, `${path} is not declared in the CRD's status schema`);
    if (Array.isArray(value)) {
      assert.equal(schema.type, "array", path);
      value.forEach((item, index) => assertDeclared(item, schema.items, `${path}[${index}]`));
    } else if (value !== null && typeof value === "object") {
      assert.equal(schema.type, "object", path);
      for (const required of schema.required ?? []) assert.ok(required in value, `${path}.${required} is required`);
      for (const [key, child] of Object.entries(value)) assertDeclared(child, schema.properties?.[key], `${path}.${key}`);
    } else {
      const type = typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : typeof value;
      assert.equal(schema.type, type, path);
      if (schema.enum) assert.ok(schema.enum.includes(value), `${path} = ${String(value)}`);
    }
  }

  const now = clock("2026-11-30T00:00:00Z");
  for (const [situation, answer] of [
    ["waiting", sync(project("test"), namespaces(), related(), now)],
    ["ready", sync(project("test"), namespaces({ "proj-test": "Active" }), related(), now)],
    ["terminating", sync(project("test"), namespaces({ "proj-test": "Terminating" }), related(), now)],
    ["invalid name", sync(project("my.project"), namespaces(), related(), now)],
    ["conflict", sync(project("test"), namespaces(), related({ "proj-test": { phase: "Active" } }), now)],
    ["members", sync(project("test", { spec: { members: [{ kind: "User", name: "a", role: "view" }] } }), namespaces({ "proj-test": "Active" }), related(), now)],
    ["invalid members", sync(project("test", { spec: { members: [{ kind: "Robot" }] } }), namespaces({ "proj-test": "Active" }), related(), now)],
  ] as const) {
    test(`every status field is declared: ${situation}`, () => {
      assertDeclared(answer.status, projectSchema.properties.status, "status");
    });
  }

  test("kubectl get projects shows the Namespace, License, Members, the Profile applied, Protected, Ready, the Generation against the one Observed, and Age", () => {
    assert.deepEqual(
      projectVersion.additionalPrinterColumns.map((column: any) => column.name),
      ["Namespace", "License", "Members", "Profile", "Protected", "Ready", "Generation", "Observed", "Age"],
    );
    const path = (name: string) => projectVersion.additionalPrinterColumns.find((column: any) => column.name === name).jsonPath;
    assert.deepEqual([path("Generation"), path("Observed")], [".metadata.generation", ".status.observedGeneration"]);
    const profile = projectVersion.additionalPrinterColumns.find((column: any) => column.name === "Profile");
    assert.equal(profile.jsonPath, ".status.profile", "the profile applied, not the one asked for");
    assert.deepEqual(projectVersion.subresources, { status: {} });
  });
});

describe("admission: a protected Project's Namespace", () => {
  // The Namespace as sync asks for it, as the API server stores it.
  const answer = sync(project("shop", { spec: { deletionProtection: true } }), namespaces(), related(), clock("2026-11-30T00:00:00Z"));
  const labelled = { ...namespaceIn(answer), metadata: { ...namespaceIn(answer)?.metadata, uid: "u", ownerReferences: [{ kind: "Project", name: "shop" }] } };
  const namespaceDelete = (oldObject: any, options?: { collection?: boolean; username?: string }) =>
    admit(namespacePolicy, deleting("", "namespaces", oldObject, options), paramsOf(namespacePolicy));

  test("is refused to a person, also by a collection delete, naming the Project and the patch that lifts its protection", () => {
    for (const collection of [false, true]) {
      const { allowed, message } = namespaceDelete(labelled, { collection });
      assert.equal(allowed, false);
      assert.match(String(message), /^Namespace proj-shop belongs to Project shop, which has spec\.deletionProtection set/);
      assert.match(String(message), /kubectl patch project shop --type=merge -p '\{"spec":\{"deletionProtection":false\}\}'$/);
    }
  });

  test("goes when the garbage collector deletes it, its Project gone, as its own ServiceAccount or as the controller manager", () => {
    for (const username of [trusted["garbage-collector"], trusted["controller-manager"]]) {
      assert.equal(namespaceDelete(labelled, { username }).allowed, true, username);
    }
    assert.equal(namespaceDelete(labelled, { username: trusted["metacontroller"] }).allowed, false, "Metacontroller never deletes it");
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
    assert.equal(namespaceDelete({ metadata: { name: "team-x", labels: { other: "x" } } }).allowed, true);
  });

  test("the policy selects by the label sync writes", () => {
    const [expression] = namespacePolicy.spec.matchConstraints.objectSelector.matchExpressions;
    assert.deepEqual(expression, { key: PROTECTED_BY_LABEL, operator: "Exists" });
    assert.ok(JSON.stringify(namespacePolicy.spec.validations).includes(`labels['${PROTECTED_BY_LABEL}']`));
  });
});

describe("admission: self-service Projects", () => {
  const policy = find("ValidatingAdmissionPolicy", `${crd.metadata.name}-self-service`);
  const requester = find("ClusterRole", `${crd.metadata.name}-requester`);
  const shop = (members: unknown[]) => project("shop", { spec: { members } }) as any;
  const dana = { username: "dana", groups: ["developers", "system:authenticated"] };
  // What a developer bound to the requester role may do.
  const mayRequest = authorizedBy(requester.rules);
  const asked = (
    operation: AdmissionRequest["operation"],
    { object, oldObject }: { object?: any; oldObject?: any },
    who: { username: string; groups?: string[] } = dana,
    authorized: string[] = mayRequest,
  ) => admit(policy, { operation, resource: { group: "agrrh.com", resource: "projects" }, name: "shop", object, oldObject, ...who, authorized }, paramsOf(policy));

  test("a developer creates a Project in which they are an admin, as a User, through a Group, or as a ServiceAccount", () => {
    assert.equal(asked("CREATE", { object: shop([{ kind: "User", name: "dana", role: "admin" }]) }).allowed, true);
    assert.equal(asked("CREATE", { object: shop([{ kind: "Group", name: "developers", role: "admin" }]) }).allowed, true);
    const robot = { username: "system:serviceaccount:ci:deployer", groups: ["system:serviceaccounts"] };
    assert.equal(asked("CREATE", { object: shop([{ kind: "ServiceAccount", namespace: "ci", name: "deployer", role: "admin" }]) }, robot).allowed, true);
  });

  // The same table the CRD and sync judge: whoever each admin member names may create that Project; whoever only a
  // member of another role names may not.
  const requesterNamedBy = (member: any) =>
    member.kind === "User"
      ? { username: member.name, groups: ["system:authenticated"] }
      : member.kind === "Group"
        ? { username: "someone", groups: [member.name, "system:authenticated"] }
        : { username: `system:serviceaccount:${member.namespace}:${member.name}`, groups: ["system:serviceaccounts"] };
  for (const { what, members } of MEMBER_CASES.filter((memberCase) => !memberCase.breaks && memberCase.members.length <= 4)) {
    test(`with ${what}: exactly the admin members may create the Project`, () => {
      for (const member of members) {
        const { allowed } = asked("CREATE", { object: shop(members) }, requesterNamedBy(member));
        assert.equal(allowed, member["role"] === "admin", `${member["kind"]} ${member["name"]} as ${member["role"]}`);
      }
    });
  }

  test("a developer cannot create a Project in which they are no admin, and is told how to be one", () => {
    for (const members of [[], [{ kind: "User", name: "dana", role: "edit" }], [{ kind: "User", name: "erin", role: "admin" }]]) {
      const { allowed, message } = asked("CREATE", { object: shop(members) });
      assert.equal(allowed, false, JSON.stringify(members));
      assert.match(String(message), /^You may create a Project only as one of its admin members: add \{"kind": "User", "name": "dana", "role": "admin"\}/);
    }
    assert.equal(asked("CREATE", { object: project("bare") as any }).allowed, false, "a Project without spec");
  });

  test("only an admin member may change or delete a Project, even to remove themselves", () => {
    const danasShop = shop([{ kind: "User", name: "dana", role: "admin" }]);
    const erin = { username: "erin", groups: ["developers"] };
    const joined = shop([{ kind: "User", name: "dana", role: "admin" }, { kind: "User", name: "erin", role: "admin" }]);
    const refusal = asked("UPDATE", { object: joined, oldObject: danasShop }, erin);
    assert.equal(refusal.allowed, false, "erin adds herself");
    assert.equal(refusal.message, "Only an admin member of Project shop may change or delete it, and erin is none. Ask one of its admins to add you to spec.members.");
    assert.equal(asked("DELETE", { oldObject: danasShop }, erin).allowed, false, "erin deletes it");
    assert.equal(asked("UPDATE", { object: joined, oldObject: danasShop }).allowed, true, "dana adds erin");
    const handedOver = shop([{ kind: "User", name: "erin", role: "admin" }]);
    assert.equal(asked("UPDATE", { object: handedOver, oldObject: joined }).allowed, true, "dana leaves erin in charge");
    assert.equal(asked("DELETE", { oldObject: danasShop }).allowed, true, "dana deletes it");
  });

  test("the last admin cannot leave a Project without an admin, and is told how to hand it over; deleting it stays theirs", () => {
    const danasShop = shop([{ kind: "User", name: "dana", role: "admin" }, { kind: "User", name: "erin", role: "view" }]);
    for (const members of [[], [{ kind: "User", name: "erin", role: "view" }], [{ kind: "User", name: "dana", role: "edit" }]]) {
      const left = asked("UPDATE", { object: shop(members), oldObject: danasShop });
      assert.equal(left.allowed, false, JSON.stringify(members));
      assert.equal(
        left.message,
        "Project shop would have no admin member left, and then only a cluster admin could change or delete it. Hand it over first: " +
          "add another admin to spec.members, then remove yourself; or delete the Project.",
      );
    }
    assert.equal(asked("UPDATE", { object: shop([{ kind: "Group", name: "shop-admins", role: "admin" }]), oldObject: danasShop }).allowed, true, "to a Group of admins");
    assert.equal(asked("DELETE", { oldObject: danasShop }).allowed, true, "deleting it");
    const administers = [...mayRequest, "agrrh.com/projects/administer"];
    assert.equal(asked("UPDATE", { object: shop([]), oldObject: danasShop }, { username: "pat" }, administers).allowed, true, "a holder of administer");
  });

  test("whoever may administer projects, as cluster-admin may through *, creates and changes Projects for others", () => {
    const platform = { username: "pat", groups: ["platform"] };
    const forTheTeam = shop([{ kind: "Group", name: "team-a", role: "admin" }]);
    const administers = [...mayRequest, "agrrh.com/projects/administer"];
    assert.equal(asked("CREATE", { object: forTheTeam }, platform, administers).allowed, true);
    assert.equal(asked("UPDATE", { object: forTheTeam, oldObject: forTheTeam }, platform, administers).allowed, true);
    assert.equal(asked("CREATE", { object: forTheTeam }, platform).allowed, false, "without the verb");
  });

  describe("a Project being deleted", () => {
    const METACONTROLLER_FINALIZER = "metacontroller.io/compositecontroller-controller-project";
    const OTHER_FINALIZER = "backup.example.com/before-delete";
    const held = (finalizers: string[], spec: Record<string, unknown> = { members: [{ kind: "User", name: "dana", role: "admin" }] }) =>
      ({ ...project("shop", { spec }), metadata: { name: "shop", deletionTimestamp: "2026-11-30T00:00:00Z", finalizers } }) as any;
    const all = held(["foregroundDeletion", METACONTROLLER_FINALIZER, OTHER_FINALIZER]);
    const without = (finalizer: string) => held(all.metadata.finalizers.filter((name: string) => name !== finalizer));
    const administers = [...mayRequest, "agrrh.com/projects/administer"];

    test("loses each finalizer only to whoever holds it: Metacontroller's to Metacontroller, the garbage collector's to it, any other to an administer holder", () => {
      const metacontroller = { username: trusted["metacontroller"] ?? "" };
      const collector = { username: trusted["garbage-collector"] ?? "" };
      assert.equal(asked("UPDATE", { object: without(METACONTROLLER_FINALIZER), oldObject: all }, metacontroller).allowed, true);
      assert.equal(asked("UPDATE", { object: without("foregroundDeletion"), oldObject: all }, collector).allowed, true);
      assert.equal(asked("UPDATE", { object: without("foregroundDeletion"), oldObject: all }, metacontroller).allowed, false, "Metacontroller takes the collector's");
      assert.equal(asked("UPDATE", { object: without(METACONTROLLER_FINALIZER), oldObject: all }, collector).allowed, false, "the collector takes Metacontroller's");
      assert.equal(asked("UPDATE", { object: without(OTHER_FINALIZER), oldObject: all }, collector).allowed, false, "the collector takes another's");
      assert.equal(asked("UPDATE", { object: without(OTHER_FINALIZER), oldObject: all }, { username: "pat" }, administers).allowed, true, "an administer holder");
    });

    test("stored before a member rule, it still loses its finalizers: a rule on members never holds a deletion back", () => {
      const ownRobot = { members: [{ kind: "ServiceAccount", namespace: "proj-shop", name: "deployer", role: "admin" }] };
      const before = held([METACONTROLLER_FINALIZER], ownRobot);
      assert.equal(asked("UPDATE", { object: held([], ownRobot), oldObject: before }, { username: trusted["metacontroller"] ?? "" }).allowed, true);
    });

    test("cannot be rewritten or held back, not even by its admin members, and the refusal says what may change", () => {
      const rewritten = held(all.metadata.finalizers, { members: [{ kind: "User", name: "mallory", role: "admin" }] });
      const refusal = asked("UPDATE", { object: rewritten, oldObject: all }, { username: "mallory" });
      assert.equal(refusal.allowed, false, "a non-member rewrites the spec");
      assert.match(String(refusal.message), /^Project shop is being deleted: only its finalizers may change now, each removed by whoever holds it/);
      assert.equal(asked("UPDATE", { object: rewritten, oldObject: all }).allowed, false, "its admin rewrites the spec");
      assert.equal(asked("UPDATE", { object: without(OTHER_FINALIZER), oldObject: all }).allowed, false, "its admin removes another controller's finalizer");
      assert.equal(asked("UPDATE", { object: held([...all.metadata.finalizers, "hold.example.com/forever"]), oldObject: all }).allowed, false, "its admin adds a finalizer");
      const marked = { ...all, metadata: { ...all.metadata, labels: { team: "a" }, annotations: { note: "a" } } };
      const relabelled = { ...marked, metadata: { ...marked.metadata, labels: { team: "b" } } };
      assert.equal(asked("UPDATE", { object: relabelled, oldObject: marked }).allowed, false, "its admin relabels it");
      assert.equal(asked("UPDATE", { object: { ...all, metadata: { ...all.metadata, labels: { team: "b" } } }, oldObject: all }).allowed, false, "its admin labels it");
      const annotated = { ...marked, metadata: { ...marked.metadata, annotations: { note: "b" } } };
      assert.equal(asked("UPDATE", { object: annotated, oldObject: marked }).allowed, false, "its admin annotates it");
      assert.equal(asked("UPDATE", { object: marked, oldObject: marked }).allowed, true, "an update that changes nothing");
      assert.equal(asked("UPDATE", { object: rewritten, oldObject: all }, { username: "pat" }, administers).allowed, true, "an administer holder may");
    });
  });

  test("the status Metacontroller writes is not the policy's: it matches the Project itself, not its status subresource", () => {
    assert.deepEqual(policy.spec.matchConstraints.resourceRules, [
      { apiGroups: ["agrrh.com"], apiVersions: ["*"], operations: ["CREATE", "UPDATE", "DELETE"], resources: ["projects"], scope: "Cluster" },
    ]);
  });

  const withProfile = (profile: string | undefined, members = [{ kind: "User", name: "dana", role: "admin" }]) => {
    const object = shop(members);
    if (profile !== undefined) object.spec.profile = profile;
    return object;
  };

  test("a developer may choose the default profile, named or not, and no other", () => {
    assert.equal(asked("CREATE", { object: withProfile(undefined) }).allowed, true, "no profile named");
    assert.equal(asked("CREATE", { object: withProfile(DEFAULT_PROFILE) }).allowed, true, "default named");
    const larger = asked("CREATE", { object: withProfile("large") });
    assert.equal(larger.allowed, false, "a larger profile");
    assert.equal(
      larger.message,
      "Choosing ProjectProfile large takes the verb use on it, which dana does not have. Ask a cluster admin to open it to you, or keep the profile you have.",
    );
  });

  test("an admin member cannot raise their own limits by switching profile, and keeps a profile once given", () => {
    const given = withProfile("large");
    assert.equal(asked("UPDATE", { object: given, oldObject: withProfile(DEFAULT_PROFILE) }).allowed, false, "switching to large");
    const renamed = { ...given, spec: { ...given.spec, description: "renamed" } };
    assert.equal(asked("UPDATE", { object: renamed, oldObject: given }).allowed, true, "changing something else of a Project on large");
    assert.equal(asked("DELETE", { oldObject: given }).allowed, true, "deleting it");
  });

  test("an admin member cannot leave a profile an admin assigned, and is told who can move the Project", () => {
    const restricted = withProfile("restricted");
    const left = asked("UPDATE", { object: withProfile(DEFAULT_PROFILE), oldObject: restricted });
    assert.equal(left.allowed, false, "back to default");
    assert.equal(
      left.message,
      "Project shop is on ProjectProfile restricted, which a cluster admin assigned: leaving it takes the verb use on it, which dana does not have. Ask a cluster admin to move the Project.",
    );
    assert.equal(asked("UPDATE", { object: withProfile(undefined), oldObject: restricted }).allowed, false, "by removing spec.profile");
    assert.equal(asked("UPDATE", { object: withProfile(DEFAULT_PROFILE), oldObject: restricted }, dana, [...mayRequest, "agrrh.com/projectprofiles/use/restricted"]).allowed, true, "with use on it");
    assert.equal(asked("UPDATE", { object: withProfile(DEFAULT_PROFILE), oldObject: withProfile(undefined) }).allowed, true, "naming the default it had");
  });

  test("a profile an admin opens with the verb use, to some or to all, may be chosen by them", () => {
    const opened = [...mayRequest, "agrrh.com/projectprofiles/use/large"];
    assert.equal(asked("CREATE", { object: withProfile("large") }, dana, opened).allowed, true, "use on large");
    assert.equal(asked("CREATE", { object: withProfile("huge") }, dana, opened).allowed, false, "use on large is not use on huge");
    assert.equal(asked("CREATE", { object: withProfile("huge") }, dana, [...mayRequest, "agrrh.com/projectprofiles/use"]).allowed, true, "use on every profile");
  });

  test("the requester role reads Projects and profiles, writes Projects only as the policy allows, uses the default profile, and the policy is bound to deny", () => {
    assert.deepEqual(requester.rules, [
      { apiGroups: ["agrrh.com"], resources: ["projects"], verbs: ["create", "get", "list", "watch", "update", "patch", "delete"] },
      { apiGroups: ["agrrh.com"], resources: ["projectprofiles"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["agrrh.com"], resources: ["projectprofiles"], resourceNames: [DEFAULT_PROFILE], verbs: ["use"] },
    ]);
    const bindings = objects.filter((object) => object.kind === "ValidatingAdmissionPolicyBinding" && object.spec.policyName === policy.metadata.name);
    assert.deepEqual(bindings.map((binding) => binding.spec.validationActions), [["Deny"]]);
    assert.equal(policy.spec.failurePolicy, "Fail");
  });
});

describe("admission: a Project's objects are Metacontroller's", () => {
  const controller = find("CompositeController");
  const OWNER_LABEL = "controller-uid";
  // A Project's NetworkPolicy as Metacontroller stores it: its label and owner reference.
  const isolation = {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: {
      name: "project-isolation",
      namespace: "proj-shop",
      labels: { [OWNER_LABEL]: "uid-of-shop" },
      ownerReferences: [{ apiVersion: API_VERSION, kind: PARENT.kind, name: "shop", uid: "uid-of-shop", controller: true }],
    },
    spec: { podSelector: {}, policyTypes: ["Ingress"], ingress: [{ from: [{ podSelector: {} }] }] },
  };
  const unlabelled = (object: any) => ({ ...object, metadata: { ...object.metadata, labels: {} } });
  const write = (
    operation: AdmissionRequest["operation"],
    { object, oldObject }: { object?: any; oldObject?: any },
    username = "mallory",
    authorized: string[] = [],
    resource = { group: "networking.k8s.io", resource: "networkpolicies" },
  ) =>
    admit(
      ownershipPolicy,
      { operation, resource, kind: (object ?? oldObject).kind, name: (object ?? oldObject).metadata.name, object, oldObject, username, authorized, namespace: { name: "proj-shop" } },
      paramsOf(ownershipPolicy),
    );

  test("a developer cannot plant an object labelled with another Project's uid, and is told whose objects these are", () => {
    const planted = { ...isolation, metadata: { name: "planted", namespace: "proj-mine", labels: { [OWNER_LABEL]: "uid-of-shop" }, annotations: { x: "<".repeat(1000) } } };
    const { allowed, message } = write("CREATE", { object: planted });
    assert.equal(allowed, false);
    assert.equal(
      message,
      "NetworkPolicy proj-shop/planted carries a controller-uid label, by which Metacontroller claims it for a Project, before or after " +
        "this change, so only Metacontroller may write it, and mallory may not. Change the Project instead; Metacontroller makes its objects match.",
    );
  });

  test("a member cannot detach a child by removing its label, edit it, annotate it, or delete it", () => {
    assert.equal(write("UPDATE", { object: unlabelled(isolation), oldObject: isolation }).allowed, false, "label removed");
    const opened = { ...isolation, spec: { ...isolation.spec, ingress: [{}] } };
    assert.equal(write("UPDATE", { object: opened, oldObject: isolation }).allowed, false, "ingress opened");
    const annotated = { ...isolation, metadata: { ...isolation.metadata, annotations: { big: "<".repeat(1000) } } };
    assert.equal(write("UPDATE", { object: annotated, oldObject: isolation }).allowed, false, "annotated");
    assert.equal(write("DELETE", { oldObject: isolation }).allowed, false, "deleted");
    assert.equal(write("UPDATE", { object: isolation, oldObject: unlabelled(isolation) }).allowed, false, "label added");
  });

  test("the trusted controllers write them: Metacontroller, the garbage collector, the namespace controller", () => {
    for (const username of Object.values(trusted)) {
      assert.equal(write("UPDATE", { object: unlabelled(isolation), oldObject: isolation }, username).allowed, true, username);
      assert.equal(write("DELETE", { oldObject: isolation }, username).allowed, true, username);
    }
  });

  test("a holder of administer may mend one by hand", () => {
    assert.equal(write("UPDATE", { object: isolation, oldObject: isolation }, "pat", ["agrrh.com/projects/administer"]).allowed, true);
  });

  test("objects that carry no Project's ownership stay free to their owners", () => {
    const own = unlabelled({ ...isolation, metadata: { name: "mine", namespace: "proj-shop" } });
    assert.equal(write("CREATE", { object: own }).allowed, true);
    assert.equal(write("UPDATE", { object: own, oldObject: own }).allowed, true);
    assert.equal(write("DELETE", { oldObject: own }).allowed, true);
    const others = { ...own, metadata: { ...own.metadata, ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "u" }] } };
    assert.equal(write("DELETE", { oldObject: others }).allowed, true, "owned by something else");
  });

  test("without the ConfigMap of whom it trusts, it refuses what it guards, and selects nothing else", () => {
    const unparamed = (object: any) =>
      admit(ownershipPolicy, { operation: "DELETE", resource: { group: "networking.k8s.io", resource: "networkpolicies" }, name: object.metadata.name, oldObject: object, username: "x" }, null);
    assert.equal(unparamed(unlabelled(isolation)).matched, false, "an object without the label never needs the params");
    assert.equal(unparamed(isolation).allowed, false, "one with it is refused");
    assert.deepEqual(ownershipPolicy.spec.matchConstraints.objectSelector, { matchExpressions: [{ key: OWNER_LABEL, operator: "Exists" }] });
    assert.equal(ownershipPolicy.spec.matchConditions, undefined, "selected by the label alone: a condition would be evaluated after the params are looked up");
  });

  test("it guards exactly the kinds the CompositeController owns, and not their status subresources", () => {
    const guarded = ownershipPolicy.spec.matchConstraints.resourceRules.flatMap((rule: any) =>
      rule.resources.map((resource: string) => `${rule.apiGroups[0] ? `${rule.apiGroups[0]}/` : ""}${resource}`),
    );
    const owned = controller.spec.childResources.map((child: any) => `${child.apiVersion.includes("/") ? `${child.apiVersion.split("/")[0]}/` : ""}${child.resource}`);
    assert.deepEqual([...guarded].sort(), [...owned].sort());
    for (const rule of ownershipPolicy.spec.matchConstraints.resourceRules) {
      assert.deepEqual(rule.operations, ["CREATE", "UPDATE", "DELETE"]);
      assert.ok(rule.resources.every((resource: string) => !resource.includes("/")), "no subresource");
    }
    for (const child of controller.spec.childResources) {
      const resource = { group: child.apiVersion.includes("/") ? child.apiVersion.split("/")[0] : "", resource: child.resource };
      assert.equal(write("DELETE", { oldObject: isolation }, "mallory", [], resource).allowed, false, child.resource);
    }
  });
});

describe("admission: access in a Project's Namespace is spec.members", () => {
  // A Namespace as sync labels it.
  const projectNamespace = namespaceIn(sync(project("shop"), namespaces(), related(), clock("2026-11-30T00:00:00Z")));
  const binding = (subjects: any[]) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "mine", namespace: "proj-shop" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
    subjects,
  });
  const bind = (subjects: any[], { username = "dana", authorized = [] as string[], labels = projectNamespace?.metadata.labels } = {}) =>
    admit(
      accessPolicy,
      {
        operation: "CREATE",
        resource: { group: "rbac.authorization.k8s.io", resource: "rolebindings" },
        kind: "RoleBinding",
        name: "mine",
        object: binding(subjects),
        username,
        authorized,
        namespace: { name: "proj-shop", ...(labels ? { labels } : {}) },
      },
      paramsOf(accessPolicy),
    );
  const everyone = { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:authenticated" };

  test("an admin member cannot bind the Namespace to system:authenticated, and is sent to spec.members", () => {
    const { allowed, message } = bind([everyone]);
    assert.equal(allowed, false);
    assert.equal(
      message,
      "Namespace proj-shop is Project shop's, where access is what its spec.members declare: a RoleBinding here may grant only this " +
        "Namespace's own ServiceAccounts (kind ServiceAccount in namespace proj-shop, or Group system:serviceaccounts:proj-shop). " +
        "Add people to the Project's spec.members instead.",
    );
  });

  test("nor a User, themselves included, another Group, or a ServiceAccount of another namespace: none of that would go with their removal", () => {
    for (const subject of [
      { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "dana" },
      { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "developers" },
      { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:serviceaccounts:proj-other" },
      { kind: "ServiceAccount", name: "deployer", namespace: "proj-other" },
      { kind: "ServiceAccount", name: "deployer" },
    ]) {
      assert.equal(bind([subject]).allowed, false, JSON.stringify(subject));
      assert.equal(bind([{ kind: "ServiceAccount", name: "ok", namespace: "proj-shop" }, subject]).allowed, false, `beside one allowed: ${JSON.stringify(subject)}`);
    }
  });

  test("a RoleBinding that grants nobody may be made", () => {
    const { subjects: _none, ...empty } = binding([]);
    const result = admit(
      accessPolicy,
      { operation: "CREATE", resource: { group: "rbac.authorization.k8s.io", resource: "rolebindings" }, kind: "RoleBinding", name: "mine", object: empty, username: "dana", namespace: { name: "proj-shop", labels: projectNamespace?.metadata.labels ?? {} } },
      paramsOf(accessPolicy),
    );
    assert.equal(result.allowed, true);
  });

  test("the Namespace's own ServiceAccounts may be bound, one by one or all together, for its workloads", () => {
    assert.equal(bind([{ kind: "ServiceAccount", name: "deployer", namespace: "proj-shop" }]).allowed, true);
    assert.equal(bind([{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:serviceaccounts:proj-shop" }]).allowed, true);
  });

  test("Metacontroller binds the members, and an administer holder anyone", () => {
    assert.equal(bind([everyone], { username: trusted["metacontroller"] }).allowed, true);
    assert.equal(bind([everyone], { username: "pat", authorized: ["agrrh.com/projects/administer"] }).allowed, true);
  });

  test("it holds in every Namespace sync labels as a Project's, and nowhere else", () => {
    assert.deepEqual(accessPolicy.spec.matchConstraints.namespaceSelector.matchExpressions, [{ key: PROJECT_LABEL, operator: "Exists" }]);
    assert.ok(JSON.stringify(accessPolicy.spec.validations).includes(`labels['${PROJECT_LABEL}']`));
    assert.equal(bind([everyone], { labels: { "kubernetes.io/metadata.name": "team-x" } }).matched, false);
  });
});

describe("admission: whom the guards trust", () => {
  const guards = objects.filter((object) => object.kind === "ValidatingAdmissionPolicy" && object.spec.paramKind);

  test("every guard that trusts a controller reads it from the one ConfigMap, bound to deny when it is missing", () => {
    assert.deepEqual(
      guards.map((policy) => policy.metadata.name).sort(),
      [accessPolicy, namespacePolicy, ownershipPolicy, find("ValidatingAdmissionPolicy", `${crd.metadata.name}-self-service`)].map((policy) => policy.metadata.name).sort(),
    );
    for (const policy of guards) {
      assert.deepEqual(find("ValidatingAdmissionPolicyBinding", policy.metadata.name).spec.paramRef, {
        name: "trusted-controllers",
        namespace: find("Namespace").metadata.name,
        parameterNotFoundAction: "Deny",
      });
    }
  });

  test("without its params, a policy refuses whatever its rules and selectors match, before its conditions are read, as the API server does", () => {
    // The first ownership guard selected by a condition, and so, seen on 1.36,
    // refused every NetworkPolicy in the cluster once the ConfigMap was gone.
    const byCondition = {
      metadata: { name: "by-condition" },
      spec: {
        paramKind: { apiVersion: "v1", kind: "ConfigMap" },
        matchConstraints: { resourceRules: [{ apiGroups: ["networking.k8s.io"], resources: ["networkpolicies"], operations: ["DELETE"] }] },
        matchConditions: [{ name: "never", expression: "false" }],
        validations: [{ expression: "true" }],
      },
    };
    const request = deleting("networking.k8s.io", "networkpolicies", { metadata: { name: "any" } });
    assert.deepEqual({ ...admit(byCondition, request, null), message: undefined }, { matched: true, allowed: false, message: undefined });
    assert.equal(admit(byCondition, request, { data: {} }).matched, false, "with them, the condition decides");
  });

  test("no policy names a controller's identity itself", () => {
    for (const policy of objects.filter((object) => object.kind === "ValidatingAdmissionPolicy")) {
      assert.doesNotMatch(JSON.stringify(policy.spec), /system:serviceaccount:[a-z]|system:kube-controller-manager/, policy.metadata.name);
    }
  });

  test("Metacontroller is named as its official install runs it, and so are the controller manager's controllers", () => {
    assert.deepEqual(trusted, {
      metacontroller: "system:serviceaccount:metacontroller:metacontroller",
      "garbage-collector": "system:serviceaccount:kube-system:generic-garbage-collector",
      "namespace-controller": "system:serviceaccount:kube-system:namespace-controller",
      "controller-manager": "system:kube-controller-manager",
    });
  });
});
