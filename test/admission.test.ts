// What the API server admits, checked the way it would: the Project CRD's
// schema and CEL rules, and the core's admission policies, judged by the same
// rules and in the same words as sync.ts. Each feature's are in
// test/<feature>-admission.test.ts; manifest.test.ts checks the rest of the
// install.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { API_VERSION, DEFAULT_LICENSE, NAMESPACE_PREFIX, PARENT, PROJECT_LABEL, PROJECT_NAME_RULE, isValidNamespaceName, namespaceNameFor, sync } from "../sync.ts";
import { annotatedAsTold, assertBoundToDeny, crd, deleting, find, objects, paramsOf, policyNamed, projectSchema, projectVersion, trusted } from "./admission.ts";
import { INTEGRATIONS_NAMESPACE } from "../features/integrations.ts"; // feature: integrations
import { admit, evaluateCel, type AdmissionRequest } from "./cel.ts";
import { clock, namespaces, project, related } from "./helpers.ts";

const installPolicy = policyNamed("install-protection");
const ownershipPolicy = policyNamed("ownership");

describe("admission: the names sync.ts owns", () => {
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
});

describe("admission: a stray delete keeps the install", () => {
  const installDelete = (group: string, resource: string, object: any, options?: Parameters<typeof deleting>[3]) =>
    admit(installPolicy, deleting(group, resource, object, options));
  const controllerNamespace = find("Namespace", find("Deployment").metadata.namespace);
  const trustedConfigMap = find("ConfigMap", "trusted-controllers");
  const inControllerNamespace = { namespace: { name: controllerNamespace.metadata.name } };
  const kept = [
    { what: "the Project CRD", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", object: crd, says: new RegExp(`^Deleting CustomResourceDefinition ${crd.metadata.name.replaceAll(".", "\\.")} deletes every ${PARENT.kind} and every ${NAMESPACE_PREFIX} Namespace`), command: `kubectl annotate crd ${crd.metadata.name} ` },
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
    const guards = objects.filter((object) => /^(Validating|Mutating)AdmissionPolicy/.test(object.kind));
    assert.ok(guards.length > 0);
    for (const guard of guards) assert.deepEqual(guard.metadata.finalizers, ["agrrh.com/uninstall-deliberately"], guard.metadata.name);
  });

  test("the install guard is bound once, to deny, and refuses when it cannot be evaluated", () => {
    assertBoundToDeny(installPolicy);
  });

  test("the install guard comes after the CRD, so that kubectl delete -f k8s.yaml meets the guard before removing it", () => {
    const index = (object: unknown) => objects.indexOf(object);
    assert.ok(index(crd) < index(installPolicy));
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
    ["members", sync(project("test", { spec: { members: [{ kind: "User", name: "a", role: "view" }] } }), namespaces({ "proj-test": "Active" }), related(), now)], // feature: members
    ["invalid members", sync(project("test", { spec: { members: [{ kind: "Robot" }] } }), namespaces({ "proj-test": "Active" }), related(), now)], // feature: members
  ] as const) {
    test(`every status field is declared: ${situation}`, () => {
      assertDeclared(answer.status, projectSchema.properties.status, "status");
    });
  }

  test("kubectl get projects shows the Namespace, License, each feature's columns, Ready, the Generation against the one Observed, and Age", () => {
    assert.deepEqual(projectVersion.additionalPrinterColumns.map((column: any) => column.name), [
      "Namespace",
      "License",
      "Members", // feature: members
      "Profile", // feature: guardrails
      "Protected", // feature: deletion-protection
      "Ready",
      "Generation",
      "Observed",
      "Age",
    ]);
    const path = (name: string) => projectVersion.additionalPrinterColumns.find((column: any) => column.name === name).jsonPath;
    assert.deepEqual([path("Generation"), path("Observed")], [".metadata.generation", ".status.observedGeneration"]);
    assert.deepEqual(projectVersion.subresources, { status: {} });
  });
});


describe("admission: a Project's objects are Metacontroller's", () => {
  const controller = find("CompositeController");
  const OWNER_LABEL = "controller-uid";
  // A Project's Namespace as Metacontroller stores it: its label and owner reference.
  const owned = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: "proj-shop",
      labels: { [OWNER_LABEL]: "uid-of-shop", [PROJECT_LABEL]: "shop" },
      ownerReferences: [{ apiVersion: API_VERSION, kind: PARENT.kind, name: "shop", uid: "uid-of-shop", controller: true }],
    },
  };
  // A namespaced child is written in the Project's Namespace.
  const inNamespaceIfNamespaced = (resource: string) =>
    ownershipPolicy.spec.matchConstraints.resourceRules.some((rule: any) => rule.resources.includes(resource) && rule.scope === "Namespaced") ? { namespace: { name: "proj-shop" } } : {};
  const unlabelled = (object: any) => ({ ...object, metadata: { ...object.metadata, labels: {} } });
  const write = (
    operation: AdmissionRequest["operation"],
    { object, oldObject }: { object?: any; oldObject?: any },
    username = "mallory",
    authorized: string[] = [],
    resource = { group: "", resource: "namespaces" },
  ) =>
    admit(
      ownershipPolicy,
      { operation, resource, kind: (object ?? oldObject).kind, name: (object ?? oldObject).metadata.name, object, oldObject, username, authorized, ...inNamespaceIfNamespaced(resource.resource) },
      paramsOf(ownershipPolicy),
    );

  test("a developer cannot plant an object labelled with another Project's uid, and is told whose objects these are", () => {
    const planted = { ...owned, metadata: { name: "planted", labels: { [OWNER_LABEL]: "uid-of-shop" }, annotations: { x: "<".repeat(1000) } } };
    const { allowed, message } = write("CREATE", { object: planted });
    assert.equal(allowed, false);
    assert.equal(
      message,
      "Namespace planted carries a controller-uid label, by which Metacontroller claims it for a Project, before or after " +
        "this change, so only Metacontroller may write it, and mallory may not. Change the Project instead; Metacontroller makes its objects match.",
    );
  });

  test("a member cannot detach a child by removing its label, edit it, annotate it, or delete it", () => {
    assert.equal(write("UPDATE", { object: unlabelled(owned), oldObject: owned }).allowed, false, "label removed");
    const loosened = { ...owned, metadata: { ...owned.metadata, labels: { ...owned.metadata.labels, "pod-security.kubernetes.io/enforce": "privileged" } } };
    assert.equal(write("UPDATE", { object: loosened, oldObject: owned }).allowed, false, "Pod Security loosened");
    const annotated = { ...owned, metadata: { ...owned.metadata, annotations: { big: "<".repeat(1000) } } };
    assert.equal(write("UPDATE", { object: annotated, oldObject: owned }).allowed, false, "annotated");
    assert.equal(write("DELETE", { oldObject: owned }).allowed, false, "deleted");
    assert.equal(write("UPDATE", { object: owned, oldObject: unlabelled(owned) }).allowed, false, "label added");
  });

  test("the trusted controllers write them: Metacontroller, the garbage collector, the namespace controller", () => {
    for (const username of Object.values(trusted)) {
      assert.equal(write("UPDATE", { object: unlabelled(owned), oldObject: owned }, username).allowed, true, username);
      assert.equal(write("DELETE", { oldObject: owned }, username).allowed, true, username);
    }
  });

  test("a holder of administer may mend one by hand", () => {
    assert.equal(write("UPDATE", { object: owned, oldObject: owned }, "pat", ["agrrh.com/projects/administer"]).allowed, true);
  });

  test("objects that carry no Project's ownership stay free to their owners", () => {
    const own = unlabelled({ ...owned, metadata: { name: "mine" } });
    assert.equal(write("CREATE", { object: own }).allowed, true);
    assert.equal(write("UPDATE", { object: own, oldObject: own }).allowed, true);
    assert.equal(write("DELETE", { oldObject: own }).allowed, true);
    const others = { ...own, metadata: { ...own.metadata, ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "u" }] } };
    assert.equal(write("DELETE", { oldObject: others }).allowed, true, "owned by something else");
  });

  test("without the ConfigMap of whom it trusts, it refuses what it guards, and selects nothing else", () => {
    const unparamed = (object: any) =>
      admit(ownershipPolicy, { operation: "DELETE", resource: { group: "", resource: "namespaces" }, name: object.metadata.name, oldObject: object, username: "x" }, null);
    assert.equal(unparamed(unlabelled(owned)).matched, false, "an object without the label never needs the params");
    assert.equal(unparamed(owned).allowed, false, "one with it is refused");
    assert.deepEqual(ownershipPolicy.spec.matchConstraints.objectSelector, { matchExpressions: [{ key: OWNER_LABEL, operator: "Exists" }] });
    // Selected by the label alone: a condition is evaluated after the params
    // are looked up, so one may only let through what the label selected.
    const exemptions: string[] = [
      "not-an-integration-report", // feature: integrations
    ];
    assert.deepEqual((ownershipPolicy.spec.matchConditions ?? []).map((condition: any) => condition.name), exemptions);
  });

  test("it guards exactly the kinds the CompositeController owns, and not their status subresources", () => {
    const guarded = ownershipPolicy.spec.matchConstraints.resourceRules.flatMap((rule: any) =>
      rule.resources.map((resource: string) => `${rule.apiGroups[0] ? `${rule.apiGroups[0]}/` : ""}${resource}`),
    );
    const ownedKinds = controller.spec.childResources.map((child: any) => `${child.apiVersion.includes("/") ? `${child.apiVersion.split("/")[0]}/` : ""}${child.resource}`);
    assert.deepEqual([...guarded].sort(), [...ownedKinds].sort());
    for (const rule of ownershipPolicy.spec.matchConstraints.resourceRules) {
      assert.deepEqual(rule.operations, ["CREATE", "UPDATE", "DELETE"]);
      assert.ok(rule.resources.every((resource: string) => !resource.includes("/")), "no subresource");
    }
    for (const child of controller.spec.childResources) {
      const resource = { group: child.apiVersion.includes("/") ? child.apiVersion.split("/")[0] : "", resource: child.resource };
      assert.equal(write("DELETE", { oldObject: owned }, "mallory", [], resource).allowed, false, child.resource);
    }
  });
});


describe("admission: whom the guards trust", () => {
  const guards = objects.filter((object) => object.kind === "ValidatingAdmissionPolicy" && object.spec.paramKind?.kind === "ConfigMap");

  test("every guard that trusts a controller reads it from the one ConfigMap, bound to deny when it is missing", () => {
    assert.deepEqual(
      guards.map((policy) => policy.metadata.name).sort(),
      [
        "ownership",
        "namespace-access", // feature: members
        "self-service", // feature: members
        "namespace-deletion-protection", // feature: deletion-protection
      ].map((guarded) => policyNamed(guarded).metadata.name).sort(),
    );
    for (const policy of guards) {
      assert.deepEqual(find("ValidatingAdmissionPolicyBinding", policy.metadata.name).spec.paramRef, {
        name: "trusted-controllers",
        namespace: find("ConfigMap", "trusted-controllers").metadata.namespace,
        parameterNotFoundAction: "Deny",
      });
    }
  });

  test("a request about a Namespace names that Namespace as its namespace, as the API server does; any other cluster-wide one names none", () => {
    // Seen on 1.36, in the ownership guard's refusal of a planted Namespace.
    const namespaceOf = {
      metadata: { name: "namespace-of" },
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: ["", "rbac.authorization.k8s.io"], resources: ["namespaces", "clusterroles"], operations: ["DELETE"] }] },
        validations: [{ expression: "false", messageExpression: "'[' + request.namespace + ']'" }],
      },
    };
    assert.equal(admit(namespaceOf, deleting("", "namespaces", { metadata: { name: "team-x" } }), null).message, "[team-x]");
    assert.equal(admit(namespaceOf, deleting("rbac.authorization.k8s.io", "clusterroles", { metadata: { name: "reader" } }), null).message, "[]");
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
      let spec = JSON.stringify(policy.spec);
      // Integrations are told apart by the Namespace they run in, and trusted with nothing.
      spec = spec.replaceAll(`system:serviceaccount:${INTEGRATIONS_NAMESPACE}:`, ""); // feature: integrations
      assert.doesNotMatch(spec, /system:serviceaccount:[a-z]|system:kube-controller-manager/, policy.metadata.name);
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

