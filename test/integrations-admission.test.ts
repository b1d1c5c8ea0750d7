// What the API server admits of the integrations feature: the profile's
// rules, judged alike by the CRD and sync; an integration's one Secret and
// its report; what a stray delete would strand; and a Project's way out of
// a teardown while it is being deleted.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { GROUP, PROJECT_LABEL, sync } from "../sync.ts";
import { PROFILE } from "../features/guardrails.ts";
import {
  HAND_OVER_LABEL_PREFIX,
  INTEGRATION_NAME_MAX_LENGTH,
  INTEGRATION_RULES,
  INTEGRATIONS_NAMESPACE,
  OUTPUTS_ANNOTATION,
  PARAMETERS_MAX_CHARACTERS,
  REPORT_MAX_CHARACTERS,
  RESERVED_ENV,
  ENVIRONMENTS_ENV, // feature: integrations & environments
  SUPPLIED_RULES,
} from "../features/integrations.ts";
import { annotatedAsTold, assertBoundToDeny, crd, deleting, find, objects, policyNamed, projectSchema, trusted } from "./admission.ts";
import { admit, schemaErrors, type AdmissionRequest } from "./cel.ts";
import { at, escaped, namespaceOf, namespaces, project, related, verdict } from "./helpers.ts";

// Project shop's Namespace, and so the name of its integrations' ServiceAccount.
const SHOP = namespaceOf("shop");
const profileCrd = find("CustomResourceDefinition", `${PROFILE.plural}.${GROUP}`);
const integrationsSchema = profileCrd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.integrations;
const controller = find("CompositeController");

describe("admission: a profile's integrations, judged alike by the CRD and sync", () => {
  const integration = (name: string, extra: Record<string, unknown> = {}) => ({ name, image: "node:24.21.0-alpine", command: ["node"], ...extra });
  const CASES: { what: string; integrations: unknown[]; breaks?: string }[] = [
    { what: "two in order", integrations: [integration("repository"), integration("runner", { after: ["repository"] })] },
    { what: "a name of the longest length", integrations: [integration("x".repeat(INTEGRATION_NAME_MAX_LENGTH))] },
    { what: "a name one longer", integrations: [integration("x".repeat(INTEGRATION_NAME_MAX_LENGTH + 1))], breaks: "name" },
    { what: "a name with capitals", integrations: [integration("Repository")], breaks: "name" },
    { what: "one name twice", integrations: [integration("tracker"), integration("tracker")], breaks: INTEGRATION_RULES.unique },
    { what: "after naming itself", integrations: [integration("tracker", { after: ["tracker"] })], breaks: "after" },
    { what: "after naming none of the list", integrations: [integration("tracker", { after: ["jira"] })], breaks: "after" },
    ...RESERVED_ENV.map((name) => ({ what: `env setting ${name}`, integrations: [integration("tracker", { env: { [name]: "x" } })], breaks: INTEGRATION_RULES.env })),
    { what: `env setting ${ENVIRONMENTS_ENV}`, integrations: [integration("runner", { env: { [ENVIRONMENTS_ENV]: "[]" } })], breaks: INTEGRATION_RULES.environmentsEnv }, // feature: integrations & environments
    { what: "one told the environments", integrations: [integration("runner", { environments: true })] }, // feature: integrations & environments
  ];
  for (const { what, integrations, breaks } of CASES) {
    test(`with ${what}, the CRD and sync agree`, () => {
      const admitted = schemaErrors(integrationsSchema, integrations);
      const answer = sync(project("shop", { spec: {} }), namespaces({ [SHOP]: "Active" }), related({}, { default: { integrations } }), at);
      const refused = verdict(answer).reason === "InvalidIntegrations";
      assert.equal(admitted.length > 0, Boolean(breaks), admitted.join("; "));
      assert.equal(refused, Boolean(breaks), verdict(answer).message);
      const named: string[] = [INTEGRATION_RULES.unique, INTEGRATION_RULES.env];
      named.push(INTEGRATION_RULES.environmentsEnv); // feature: integrations & environments
      if (breaks !== undefined && named.includes(breaks)) {
        assert.ok(admitted.some((error) => error.includes(breaks)), admitted.join("; "));
        assert.ok(verdict(answer).message.includes(breaks), verdict(answer).message);
      }
    });
  }

  test("sync alone holds that after names only integrations listed before: CEL has no index", () => {
    const backwards = [integration("runner", { after: ["repository"] }), integration("repository")];
    assert.deepEqual(schemaErrors(integrationsSchema, backwards), []);
    const answer = sync(project("shop", { spec: {} }), namespaces({ [SHOP]: "Active" }), related({}, { default: { integrations: backwards } }), at);
    assert.ok(verdict(answer).message.includes(INTEGRATION_RULES.after));
  });

  test("the CRD and sync agree that a Project's parameters come to at most 4096 characters, names and values, whatever their characters", () => {
    const supplied = projectSchema.properties.spec.properties.integrations;
    const names = Array.from({ length: 16 }, (_, index) => `p${String(index).padStart(2, "0")}`);
    const taking = [integration("repository", { parameters: names }), integration("tracker", { parameters: ["c"] })];
    // Sixteen of three and 253 characters, the most; then one more, as a parameter of one character and no value.
    const totalling = (extra: number) => ({
      repository: { parameters: Object.fromEntries(names.map((name) => [name, "é".repeat((PARAMETERS_MAX_CHARACTERS / names.length) - name.length)])) },
      ...(extra ? { tracker: { parameters: { c: "" } } } : {}),
    });
    for (const extra of [0, 1]) {
      const integrations = totalling(extra);
      const admitted = schemaErrors(supplied, integrations);
      const answer = sync(project("shop", { spec: { integrations } }), namespaces({ [SHOP]: "Active" }), related({}, { default: { integrations: taking } }), at);
      assert.deepEqual(admitted.length > 0, extra > 0, admitted.join("; "));
      assert.equal(verdict(answer).reason === "InvalidIntegrations", extra > 0, verdict(answer).message);
      if (extra) {
        assert.ok(admitted.some((error) => error.endsWith(SUPPLIED_RULES.parameters)), admitted.join("; "));
        assert.ok(verdict(answer).message.includes(SUPPLIED_RULES.parameters), verdict(answer).message);
      }
    }
  });

  test("a Project supplies parameters, a retry and skipTeardown per integration, and nothing that runs", () => {
    const supplied = projectSchema.properties.spec.properties.integrations.additionalProperties;
    assert.deepEqual(Object.keys(supplied.properties).sort(), ["parameters", "retry", "skipTeardown"]);
    // Refused under kubectl's strict field validation, pruned under a client's that asks for none: never run.
    assert.deepEqual(schemaErrors(supplied, { image: "evil" }), ['self: unknown field "image"']);
  });
});

describe("admission: what integrations may write", () => {
  const secrets = policyNamed("integration-secrets");
  const ownership = policyNamed("ownership");
  // As sync labels it: its integration gitlab-runner hands a Secret over there.
  const projectNamespace = { name: SHOP, labels: { [PROJECT_LABEL]: "shop", [`${HAND_OVER_LABEL_PREFIX}gitlab-runner`]: "true" } };
  const shopsJobs = `system:serviceaccount:${INTEGRATIONS_NAMESPACE}:${SHOP}`;
  const writing = (name: string, username: string, { namespace = projectNamespace as AdmissionRequest["namespace"], type = undefined as string | undefined } = {}) =>
    admit(secrets, { operation: "CREATE", resource: { group: "", resource: "secrets" }, name, namespace, object: { metadata: { name }, ...(type ? { type } : {}) }, username });

  test("a Project's own integrations write into its Namespace the Secrets its labels name, Opaque, and no other", () => {
    assert.equal(writing("gitlab-runner", shopsJobs).allowed, true);
    assert.equal(writing("gitlab-runner", shopsJobs, { type: "Opaque" }).allowed, true);
    const other = writing("admin-token", shopsJobs);
    assert.equal(other.allowed, false);
    assert.match(String(other.message), /only if it is that Project's own integrations' ServiceAccount, and only an Opaque Secret an integration of its profile hands over there; admin-token is not one\.$/);
    assert.equal(writing("gitlab-runner", shopsJobs, { type: "kubernetes.io/service-account-token" }).allowed, false, "a token of one of the Namespace's ServiceAccounts");
  });

  test("another Project's integrations write nothing into this Project's Namespace, its hand-over's name included", () => {
    assert.equal(writing("gitlab-runner", `system:serviceaccount:${INTEGRATIONS_NAMESPACE}:${namespaceOf("other")}`).allowed, false);
    assert.equal(writing("gitlab-runner", `system:serviceaccount:${INTEGRATIONS_NAMESPACE}:gitlab-runner`).allowed, false, "an identity shared by Projects, as before");
  });

  test("the rule is the integrations' alone: people, the Namespace's own ServiceAccounts, and Namespaces no Project owns, are not matched", () => {
    assert.equal(writing("admin-token", "alice").matched, false);
    assert.equal(writing("admin-token", `system:serviceaccount:${SHOP}:deployer`).matched, false);
    assert.equal(writing("anything", shopsJobs, { namespace: { name: "kube-system", labels: {} } }).matched, false);
    assertBoundToDeny(secrets);
  });

  // A Job as Metacontroller made it, and the same with one change.
  const job = {
    metadata: { name: "shop-gitlab-runner-0k3ds9x2q1m", namespace: INTEGRATIONS_NAMESPACE, labels: { "controller-uid": "u", [PROJECT_LABEL]: "shop" }, annotations: { "metacontroller.k8s.io/last-applied-configuration": "{}" }, ownerReferences: [{ kind: "Project", name: "shop" }] },
    spec: { template: { spec: { serviceAccountName: SHOP } } },
  };
  /** A token the kubelet mounts in one of the Job's Pods: the Pod's name comes with it. */
  const podOf = (jobName: string) => ({ "authentication.kubernetes.io/pod-name": [`${jobName}-x7k2p`], "authentication.kubernetes.io/pod-uid": ["pod-uid"] });
  const changed = (change: (object: any) => void) => {
    const object = structuredClone(job);
    change(object);
    return object;
  };
  const updating = (object: unknown, username: string, extra?: Record<string, string[]>, authorized: string[] = []) =>
    admit(ownership, { operation: "UPDATE", resource: { group: "batch", resource: "jobs" }, kind: "Job", name: job.metadata.name, namespace: { name: INTEGRATIONS_NAMESPACE }, object: object as any, oldObject: job as any, username, authorized, ...(extra ? { extra } : {}) });
  const reported = changed((object) => (object.metadata.annotations[OUTPUTS_ANNOTATION] = '{"runner":"5"}'));

  test("a Pod of the Job itself may report on it, and change nothing else of it", () => {
    const own = podOf(job.metadata.name);
    assert.equal(updating(reported, shopsJobs, own).allowed, true);
    assert.equal(updating(changed((object) => delete object.metadata.labels["controller-uid"]), shopsJobs, own).allowed, false, "detach it");
    assert.equal(updating(changed((object) => (object.metadata.annotations.other = "x")), shopsJobs, own).allowed, false, "another annotation");
    assert.equal(updating(changed((object) => (object.spec.suspend = true)), shopsJobs, own).allowed, false, "its spec");
    assert.equal(updating(changed((object) => (object.metadata.ownerReferences = [])), shopsJobs, own).allowed, false, "its owner");
    assert.equal(updating(changed((object) => (object.metadata.finalizers = ["example.com/hold"])), shopsJobs, own).allowed, false, "a finalizer, which would keep it for good");
  });

  test("a Pod of the Job may not change the value of an annotation already there, Metacontroller's last-applied one included, nor take one away; its own report it may write again", () => {
    const own = podOf(job.metadata.name);
    const LAST_APPLIED = "metacontroller.k8s.io/last-applied-configuration";
    const before = changed((object) => {
      object.metadata.annotations["example.com/note"] = "as made";
      object.metadata.annotations[OUTPUTS_ANNOTATION] = '{"runner":"5"}';
    });
    const from = (edit: (object: any) => void) => {
      const object = structuredClone(before);
      edit(object);
      return admit(ownership, { operation: "UPDATE", resource: { group: "batch", resource: "jobs" }, kind: "Job", name: job.metadata.name, namespace: { name: INTEGRATIONS_NAMESPACE }, object, oldObject: before as any, username: shopsJobs, extra: own });
    };
    assert.equal(from((object) => (object.metadata.annotations[OUTPUTS_ANNOTATION] = '{"runner":"6"}')).allowed, true, "its report, written again");
    assert.equal(from((object) => (object.metadata.annotations[LAST_APPLIED] = '{"spec":{"suspend":true}}')).allowed, false, "Metacontroller's last-applied");
    assert.equal(from((object) => (object.metadata.annotations["example.com/note"] = "rewritten")).allowed, false, "another annotation's value");
    assert.equal(from((object) => delete object.metadata.annotations[LAST_APPLIED]).allowed, false, "Metacontroller's last-applied, taken away");
    assert.equal(from((object) => delete object.metadata.annotations["example.com/note"]).allowed, false, "another annotation, taken away");
    assert.equal(from((object) => delete object.metadata.annotations[OUTPUTS_ANNOTATION]).allowed, true, "its report, taken away");
  });

  test("a Pod of a Job that already carries a finalizer may still report, and may not add one beside it", () => {
    const own = podOf(job.metadata.name);
    const held = changed((object) => (object.metadata.finalizers = ["foregroundDeletion"]));
    const from = (object: any) =>
      admit(ownership, { operation: "UPDATE", resource: { group: "batch", resource: "jobs" }, kind: "Job", name: job.metadata.name, namespace: { name: INTEGRATIONS_NAMESPACE }, object, oldObject: held as any, username: shopsJobs, extra: own });
    const reporting = structuredClone(held) as any;
    reporting.metadata.annotations[OUTPUTS_ANNOTATION] = '{"runner":"5"}';
    assert.equal(from(reporting).allowed, true);
    reporting.metadata.finalizers = ["foregroundDeletion", "example.com/hold"];
    assert.equal(from(reporting).allowed, false);
  });

  test("a report longer than sync reads is refused, even from the Job's own Pod, so that no program makes its Project's requests grow", () => {
    const own = podOf(job.metadata.name);
    const longest = JSON.stringify({ note: "x".repeat(REPORT_MAX_CHARACTERS - '{"note":""}'.length) });
    assert.equal(updating(changed((object) => (object.metadata.annotations[OUTPUTS_ANNOTATION] = longest)), shopsJobs, own).allowed, true);
    assert.equal(updating(changed((object) => (object.metadata.annotations[OUTPUTS_ANNOTATION] = `${longest} `)), shopsJobs, own).allowed, false);
  });

  test("no other Job's Pod, no token not bound to a Pod, no other ServiceAccount and no person may report on it; Metacontroller may write it", () => {
    assert.equal(updating(reported, shopsJobs).allowed, false, "a token made by hand for the ServiceAccount");
    assert.equal(updating(reported, shopsJobs, podOf("shop-gitlab-repository-1a2b3c4d5e6")).allowed, false, "the Project's other integration");
    assert.equal(updating(reported, shopsJobs, podOf(`${job.metadata.name}-x7k2p`)).allowed, false, "a Job named like a Pod of this one");
    assert.equal(updating(reported, shopsJobs, { "authentication.kubernetes.io/pod-name": [`${job.metadata.name}x-abcd`] }).allowed, false, "a Job whose name this one's starts");
    assert.equal(updating(reported, `system:serviceaccount:${INTEGRATIONS_NAMESPACE}:${namespaceOf("other")}`, podOf(job.metadata.name)).allowed, false, "another Project's identity");
    assert.equal(updating(reported, `system:serviceaccount:${SHOP}:gitlab-runner`, podOf(job.metadata.name)).allowed, false);
    assert.equal(updating(reported, "alice").allowed, false);
    assert.equal(updating(changed((object) => (object.metadata.labels.x = "y")), trusted["metacontroller"]!.username, undefined, trusted["metacontroller"]!.authorized).allowed, true);
  });
});

describe("admission: what a stray delete would strand", () => {
  const guard = policyNamed("integrations-protection");
  const namespace = find("Namespace", INTEGRATIONS_NAMESPACE);

  test(`Namespace ${INTEGRATIONS_NAMESPACE} is kept until it is annotated as the refusal says`, () => {
    const refused = admit(guard, deleting("", "namespaces", namespace));
    assert.equal(refused.allowed, false);
    assert.match(String(refused.message), new RegExp(`^Namespace ${escaped(INTEGRATIONS_NAMESPACE)} holds the integrations' credentials`));
    assert.equal(admit(guard, deleting("", "namespaces", annotatedAsTold(namespace, refused.message))).allowed, true);
    assert.equal(admit(guard, deleting("", "namespaces", { metadata: { name: SHOP } })).matched, false);
  });

  test("the CompositeController is kept while it declares the finalize hook; the patch the refusal gives lets it go", () => {
    const refused = admit(guard, deleting("metacontroller.k8s.io", "compositecontrollers", controller));
    assert.equal(refused.allowed, false);
    const patch = /--type=json -p '(.+)'$/.exec(String(refused.message))?.[1];
    assert.deepEqual(JSON.parse(patch ?? "null"), [{ op: "remove", path: "/spec/hooks/finalize" }]);
    const unhooked = structuredClone(controller);
    delete unhooked.spec.hooks.finalize;
    assert.equal(admit(guard, deleting("metacontroller.k8s.io", "compositecontrollers", unhooked)).allowed, true);
    assertBoundToDeny(guard);
  });

  test("the CompositeController declares the finalize hook and owns Jobs (OnDelete) and Roles", () => {
    assert.ok(controller.spec.hooks.finalize.webhook.url.endsWith("/finalize"));
    const jobs = controller.spec.childResources.find((child: any) => child.resource === "jobs");
    assert.deepEqual([jobs?.apiVersion, jobs?.updateStrategy.method], ["batch/v1", "OnDelete"]);
    assert.ok(controller.spec.childResources.some((child: any) => child.resource === "roles"));
  });

  test(`every object of the integrations' own lives in Namespace ${INTEGRATIONS_NAMESPACE}, which Pod Security holds to restricted`, () => {
    assert.equal(namespace.metadata.labels["pod-security.kubernetes.io/enforce"], "restricted");
    for (const kind of ["ResourceQuota", "ServiceAccount", "Role", "RoleBinding"]) {
      for (const object of objects.filter((candidate) => candidate.kind === kind)) assert.equal(object.metadata.namespace, INTEGRATIONS_NAMESPACE, `${kind} ${object.metadata.name}`);
    }
    assert.equal(find("ConfigMap", "gitlab-integrations").metadata.namespace, INTEGRATIONS_NAMESPACE);
  });
});

describe("admission: a Project being deleted, and its teardowns", () => {
  const policy = policyNamed("self-service");
  const members = [{ kind: "User", name: "dana", role: "admin" }, { kind: "User", name: "erin", role: "edit" }];
  const stored = { ...project("shop", { spec: { members, integrations: { runner: { retry: 1 } } } }), metadata: { name: "shop", deletionTimestamp: "2026-12-01T00:00:00Z" } } as any;
  const updating = (object: any, username: string) =>
    admit(policy, { operation: "UPDATE", resource: { group: GROUP, resource: "projects" }, name: "shop", object, oldObject: stored, username, groups: ["developers"] });
  const withSpec = (spec: Record<string, unknown>) => ({ ...stored, spec: { ...stored.spec, ...spec } });

  test("its admin may still raise a retry, or skip a teardown", () => {
    assert.equal(updating(withSpec({ integrations: { runner: { retry: 2 } } }), "dana").allowed, true);
    assert.equal(updating(withSpec({ integrations: { runner: { retry: 1, skipTeardown: true } } }), "dana").allowed, true);
  });

  test("nobody else may, and even its admin changes nothing else of the spec", () => {
    const refused = updating(withSpec({ integrations: { runner: { skipTeardown: true } } }), "erin");
    assert.equal(refused.allowed, false);
    assert.match(String(refused.message), /only its admin members may still\s+change spec.integrations/);
    assert.equal(updating(withSpec({ description: "renamed while going" }), "dana").allowed, false);
    assert.equal(updating(withSpec({ integrations: {}, description: "x" }), "dana").allowed, false);
  });
});

// The finalize hook makes Metacontroller put its finalizer on every Project;
// written by the API server at create, it costs Metacontroller no GET and PUT.
describe("admission: Metacontroller's finalizer, written at create", () => {
  const policy = find("MutatingAdmissionPolicy", `${crd.metadata.name}-finalizer`);
  const finalizerWritten = () => {
    const shape = /^Object\{metadata: Object\.metadata\{finalizers: \['([^']+)'\]\}\}$/.exec(policy.spec.mutations[0].applyConfiguration.expression.trim());
    assert.ok(shape, `the mutation writes the finalizer alone: ${policy.spec.mutations[0].applyConfiguration.expression}`);
    return shape[1];
  };

  test("every Project is created with the finalizer Metacontroller names after the CompositeController", () => {
    assert.equal(finalizerWritten(), `metacontroller.io/compositecontroller-${controller.metadata.name}`);
    assert.ok(controller.spec.hooks.finalize, "only while the CompositeController declares the finalize hook");
    assert.deepEqual(policy.spec.matchConstraints.resourceRules.map((rule: any) => [rule.resources, rule.operations]), [[["projects"], ["CREATE"]]]);
    assert.equal(find("MutatingAdmissionPolicyBinding", policy.metadata.name).spec.policyName, policy.metadata.name);
  });

  test("a failure of it refuses no create: Metacontroller then adds the finalizer itself", () => {
    assert.equal(policy.spec.failurePolicy, "Ignore");
  });
});
