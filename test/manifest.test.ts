// k8s.yaml, checked the way a cluster would take it: each object against the
// published Kubernetes schemas or Metacontroller's documented fields, every
// cross-reference between documents and the code, and the embedded code
// against the repo.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { CustomResourceDefinition } from "kubernetes-models/apiextensions.k8s.io/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from "kubernetes-models/admissionregistration.k8s.io/v1";
import { ClusterRole, ClusterRoleBinding, RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { ConfigMap, LimitRange, Namespace, ResourceQuota, Service } from "kubernetes-models/v1";
import * as v from "valibot";
import { parseAllDocuments } from "yaml";
import { CUSTOMIZE_PATH, HEALTH_PATH, SYNC_PATH, readConfig } from "../main.ts";
import {
  ANNOTATIONS_MAX_BYTES,
  API_VERSION,
  GROUP,
  PARENT,
  PROFILE,
  VERSION,
  DEFAULT_LICENSE,
  DEFAULT_PROFILE,
  MAX_ADMITTED_NAMESPACES,
  MAX_MEMBERS,
  MAX_QUANTITIES,
  MEMBER_KINDS,
  MEMBER_NAME_MAX_LENGTH,
  MEMBER_RULES,
  Members,
  ObservedChildren,
  POD_SECURITY_LEVELS,
  PROFILE_RULES,
  PROJECT_NAME_RULE,
  ProfileSpec,
  QUALIFIED_QUOTA_RESOURCE,
  QUANTITY,
  QUOTA_RESOURCES,
  PROTECTED_BY_LABEL,
  ROLES,
  RelatedObjects,
  COUNTED_RESOURCES,
  asGoJson,
  compareQuantities,
  profileNameOf,
  customize,
  type ClusterRole as ClusterRoleObject,
  type ClusterRoleBinding as ClusterRoleBindingObject,
  isValidNamespaceName,
  namespaceNameFor,
  sync,
} from "../sync.ts";
import { admit, authorizedBy, evaluateCel, schemaErrors, type AdmissionRequest } from "./cel.ts";
import { MEMBER_CASES } from "./member-cases.ts";
import { PROFILE_CASES } from "./profile-cases.ts";
import { clock, fixture, guardrailsIn, namespaceIn, namespaces, project, related, roleBindingsIn, withObserved } from "./helpers.ts";
import {
  BUNDLE_FILE,
  CHECKSUM_ANNOTATION,
  MANIFEST_PATH,
  DEPENDENCIES_FILE,
  bundleWebhook,
  type Code,
  lockedRuntimeDependencies,
  renderManifest,
} from "./manifest.ts";

const text = readFileSync(MANIFEST_PATH, "utf8");
const parsed = parseAllDocuments(text);
assert.ok(Array.isArray(parsed), "k8s.yaml parses as a stream of documents");
const documents = parsed;
// The manifest is data of any shape; each test reads what it needs.
const objects: any[] = documents.map((document) => document.toJS());
// What `npm run manifest` would write, built once for the tests that compare.
const generatedCode = await bundleWebhook();

/**
 * sync's answer for the real Project with members of every kind and role,
 * under k8s.yaml's default profile, its Namespace Active and its guardrails
 * in place.
 */
function withMembers() {
  const { parent } = fixture("members-sync");
  const name = namespaceNameFor(parent.metadata.name);
  const profiles = related({}, { [DEFAULT_PROFILE]: defaultProfile.spec });
  const first = sync(parent, namespaces({ [name]: "Active" }), profiles, clock("2026-11-30T00:00:00Z"));
  return sync(parent, withObserved(namespaces({ [name]: "Active" }), guardrailsIn(first)), profiles, clock("2026-11-30T00:00:00Z"));
}

function only(kind: string): any {
  const found = objects.filter((object) => object.kind === kind);
  assert.equal(found.length, 1, `exactly one ${kind} in k8s.yaml`);
  return found[0];
}

const namespace = only("Namespace");
const named = (kind: string, name: string): any => {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  assert.ok(found, `${kind} ${name} in k8s.yaml`);
  return found;
};
// The API server names a CRD `<plural>.<group>`.
const crd = named("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`);
const profileCrd = named("CustomResourceDefinition", `${PROFILE.plural}.${GROUP}`);
const defaultProfile = named("ProjectProfile", DEFAULT_PROFILE);
const controller = only("CompositeController");
// The generated ConfigMaps: the webhook, then the dependencies it imports.
const [configMap, dependenciesConfigMap] = objects.filter((object) => object.kind === "ConfigMap");
const service = only("Service");
const deployment = only("Deployment");
const disruptionBudget = only("PodDisruptionBudget");
const networkPolicy = only("NetworkPolicy");
const projectPolicy = named("ValidatingAdmissionPolicy", "projects.agrrh.com-deletion-protection");
const crdPolicy = named("ValidatingAdmissionPolicy", "projects.agrrh.com-crd-deletion-protection");
const namespacePolicy = named("ValidatingAdmissionPolicy", "projects.agrrh.com-namespace-deletion-protection");

/** A DELETE as the API server admits it: by name, or item by item for a collection delete, whose request names none. */
const deleting = (group: string, resource: string, oldObject: any, { collection = false, username = "alice" } = {}): AdmissionRequest => ({
  operation: "DELETE",
  resource: { group, resource },
  name: collection ? "" : oldObject.metadata.name,
  oldObject,
  username,
});
const pod = deployment.spec.template.spec;
const podLabels = deployment.spec.template.metadata.labels;
const webhook = pod.containers.find((container: any) => container.name === "webhook");
const projectVersion = crd.spec.versions.find((version: any) => version.name === "v1");
const projectSchema = projectVersion.schema.openAPIV3Schema;
const env = (name: string) => webhook.env.find((variable: any) => variable.name === name)?.value;

describe("manifest: documents", () => {
  test("every document parses, without errors or warnings", () => {
    for (const document of documents) {
      assert.deepEqual(document.errors, []);
      assert.deepEqual(document.warnings, []);
    }
  });

  test("the documents come in apply order", () => {
    assert.deepEqual(
      objects.map((object) => object.kind),
      [
        "Namespace",
        "CustomResourceDefinition",
        "CustomResourceDefinition",
        "ProjectProfile",
        "CompositeController",
        "ClusterRole",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "Service",
        "NetworkPolicy",
        "PodDisruptionBudget",
        "Deployment",
        "ConfigMap",
        "ConfigMap",
      ],
    );
  });

  test("the opening comment's table of contents names every document, in order", () => {
    const contents = [...text.matchAll(/^# +(\d+)\. (\S+) (\S+)$/gm)].map(([, number, kind, name]) => `${number}. ${kind} ${name}`);
    assert.deepEqual(contents, objects.map((object, index) => `${index + 1}. ${object.kind} ${object.metadata.name}`));
  });

  test("the generated ConfigMaps come last, under a do-not-edit marker, so that everything written by hand reads first", () => {
    const documents = text.split("---\n");
    const marked = documents.findIndex((document) => document.startsWith("# Generated by `npm run manifest`: do not edit."));
    assert.equal(documents.filter((document) => document.includes("Generated by `npm run manifest`: do not edit")).length, 1);
    assert.deepEqual(
      objects.slice(marked).map((object) => object.metadata.name),
      Object.keys(generatedCode),
      "after the marker, exactly the ConfigMaps npm run manifest writes",
    );
  });

  test("each document has a comment right above it that says why it is there", () => {
    for (const [index, chunk] of text.split("---\n").entries()) {
      const lines = chunk.split("\n");
      const start = lines.findIndex((line) => line.startsWith("apiVersion:"));
      assert.match(lines[start - 1] ?? "", /^# \S/, `${objects[index].kind} has no comment above it`);
    }
  });

  test("the names are the ones the walkthrough's commands use", () => {
    assert.deepEqual(
      [namespace.metadata.name, crd.metadata.name, controller.metadata.name, service.metadata.name, deployment.metadata.name],
      ["meta-project", "projects.agrrh.com", "controller-project", "controller", "controller"],
    );
  });
});

describe("manifest: built-in objects validate against the published Kubernetes schemas", () => {
  const models = {
    Namespace,
    CustomResourceDefinition,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    ConfigMap,
    Service,
    NetworkPolicy,
    PodDisruptionBudget,
    Deployment,
  } as const;
  for (const [kind, Model] of Object.entries(models)) {
    for (const object of objects.filter((candidate) => candidate.kind === kind)) {
      test(`${kind} ${object.metadata.name} is valid`, () => {
        assert.doesNotThrow(() => new Model(object).validate());
      });
    }
  }

  test("the schema check can fail: a Deployment with a string for replicas is refused", () => {
    const broken = structuredClone(deployment);
    broken.spec.replicas = "two";
    assert.throws(() => new Deployment(broken).validate());
  });

  test("the Namespace, guardrails and RoleBindings that sync asks for are valid too", () => {
    const answer = withMembers();
    const guardrails = guardrailsIn(answer);
    assert.deepEqual(guardrails.map((guardrail) => guardrail.kind), ["ResourceQuota", "LimitRange", "NetworkPolicy"]);
    for (const guardrail of guardrails) {
      const Model = { ResourceQuota, LimitRange, NetworkPolicy }[guardrail.kind as "ResourceQuota" | "LimitRange" | "NetworkPolicy"];
      assert.doesNotThrow(() => new Model(guardrail as any).validate(), guardrail.kind);
    }
    const [namespaceChild, roleBindings] = [namespaceIn(answer), roleBindingsIn(answer)];
    assert.equal(answer.status.conditions[0]?.reason, "WaitingForRoleBindings", "the members are valid");
    assert.doesNotThrow(() => new Namespace(namespaceChild).validate());
    assert.equal(roleBindings.length, 4, "admin-users, edit-groups, edit-serviceaccounts-ci, view-users");
    for (const binding of roleBindings) assert.doesNotThrow(() => new RoleBinding(binding).validate());
    const readers = answer.children.filter((child): child is ClusterRoleObject | ClusterRoleBindingObject => child.kind === "ClusterRole" || child.kind === "ClusterRoleBinding");
    assert.equal(readers.length, 4, "the reader role and its bindings for users, groups and ci's ServiceAccounts");
    for (const reader of readers) {
      assert.doesNotThrow(() => (reader.kind === "ClusterRole" ? new ClusterRole(reader) : new ClusterRoleBinding(reader)).validate());
    }
  });
});

describe("manifest: the names sync.ts owns", () => {
  test("the CRDs spell the group, version and names of sync.ts", () => {
    for (const [definition, names] of [[crd, PARENT], [profileCrd, PROFILE]] as const) {
      assert.equal(definition.spec.group, GROUP);
      assert.deepEqual(definition.spec.versions.map((version: any) => version.name), [VERSION]);
      assert.equal(definition.spec.names.kind, names.kind);
      assert.equal(definition.spec.names.plural, names.plural);
    }
    assert.equal(crd.spec.names.singular, PARENT.singular);
    assert.equal(defaultProfile.apiVersion, API_VERSION);
    assert.equal(defaultProfile.kind, PROFILE.kind);
  });

  test("the fixtures are requests about the parent sync.ts names, with the profile group it reads", () => {
    for (const name of ["first-sync", "steady-sync", "members-sync"] as const) {
      const request = fixture(name) as any;
      assert.equal(request.parent.apiVersion, API_VERSION, name);
      assert.equal(request.parent.kind, PARENT.kind, name);
      assert.deepEqual(Object.keys(request.related).sort(), Object.keys(RelatedObjects.entries).sort(), name);
    }
  });
});

describe("manifest: the CompositeController", () => {
  // The fields Metacontroller v4 documents for a CompositeController, as far
  // as this one uses them; strict, so that a misspelt field fails here rather
  // than being silently ignored by the cluster.
  const Duration = v.pipe(v.string(), v.regex(/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/));
  const ResourceRule = v.strictObject({ apiVersion: v.string(), resource: v.string() });
  const Webhook = v.strictObject({
    url: v.pipe(v.string(), v.url()),
    timeout: v.optional(Duration),
    etag: v.optional(
      v.strictObject({
        enabled: v.optional(v.boolean()),
        cacheTimeoutSeconds: v.optional(v.number()),
        cacheCleanupSeconds: v.optional(v.number()),
      }),
    ),
  });
  const Hook = v.strictObject({ version: v.optional(v.picklist(["v1", "v2"])), webhook: Webhook });
  const CompositeController = v.strictObject({
    apiVersion: v.literal("metacontroller.k8s.io/v1alpha1"),
    kind: v.literal("CompositeController"),
    metadata: v.strictObject({ name: v.string() }),
    spec: v.strictObject({
      generateSelector: v.optional(v.boolean()),
      resyncPeriodSeconds: v.optional(v.number()),
      parentResource: ResourceRule,
      childResources: v.array(
        v.strictObject({
          ...ResourceRule.entries,
          updateStrategy: v.optional(
            v.strictObject({
              method: v.picklist(["OnDelete", "Recreate", "InPlace", "RollingRecreate", "RollingInPlace"]),
            }),
          ),
        }),
      ),
      hooks: v.strictObject({ customize: v.optional(Hook), sync: Hook }),
    }),
  });

  test("it uses only fields Metacontroller v4 documents", () => {
    const result = v.safeParse(CompositeController, controller);
    assert.ok(result.success, JSON.stringify(result.issues?.map((issue) => [v.getDotPath(issue), issue.message])));
  });

  test("the field check can fail: a misspelt field is refused", () => {
    const misspelt = structuredClone(controller);
    misspelt.spec.generateSelectors = true;
    assert.equal(v.safeParse(CompositeController, misspelt).success, false);
  });

  test("children get labelled by Metacontroller, and every kind is updated in place", () => {
    assert.equal(controller.spec.generateSelector, true);
    assert.deepEqual(controller.spec.childResources, [
      { apiVersion: "v1", resource: "namespaces", updateStrategy: { method: "InPlace" } },
      { apiVersion: "v1", resource: "resourcequotas", updateStrategy: { method: "InPlace" } },
      { apiVersion: "v1", resource: "limitranges", updateStrategy: { method: "InPlace" } },
      { apiVersion: "networking.k8s.io/v1", resource: "networkpolicies", updateStrategy: { method: "InPlace" } },
      { apiVersion: "rbac.authorization.k8s.io/v1", resource: "rolebindings", updateStrategy: { method: "InPlace" } },
      { apiVersion: "rbac.authorization.k8s.io/v1", resource: "clusterroles", updateStrategy: { method: "InPlace" } },
      { apiVersion: "rbac.authorization.k8s.io/v1", resource: "clusterrolebindings", updateStrategy: { method: "InPlace" } },
    ]);
  });

  test("the sync webhook has an explicit timeout and the ETag cache on, with entries that expire", () => {
    const { timeout, etag } = controller.spec.hooks.sync.webhook;
    assert.match(timeout, /s$/);
    assert.equal(etag.enabled, true);
    assert.ok(etag.cacheTimeoutSeconds > 0 && etag.cacheCleanupSeconds > 0);
  });

  test("every ETag cache sets both times or neither: the timeout alone crashes Metacontroller 4.17.2", () => {
    for (const [name, hook] of Object.entries(controller.spec.hooks) as [string, any][]) {
      const etag = hook.webhook?.etag ?? {};
      assert.equal("cacheTimeoutSeconds" in etag, "cacheCleanupSeconds" in etag, name);
    }
  });
});

describe("manifest: cross-references agree", () => {
  test("the parent resource is the CRD's group, version and plural", () => {
    assert.equal(controller.spec.parentResource.apiVersion, `${crd.spec.group}/${projectVersion.name}`);
    assert.equal(controller.spec.parentResource.resource, crd.spec.names.plural);
    assert.equal(crd.metadata.name, `${crd.spec.names.plural}.${crd.spec.group}`);
  });

  for (const [hook, route] of [
    ["sync", SYNC_PATH],
    ["customize", CUSTOMIZE_PATH],
  ] as const) {
    test(`the ${hook} webhook URL reaches the Service's port and the app's ${hook} route`, () => {
      const url = new URL(controller.spec.hooks[hook].webhook.url);
      assert.equal(url.hostname, `${service.metadata.name}.${service.metadata.namespace}.svc`);
      const port = url.port === "" ? 80 : Number(url.port);
      assert.ok(service.spec.ports.some((servicePort: any) => servicePort.port === port));
      assert.equal(url.pathname, route);
    });
  }

  // Metacontroller files children and related objects under `<Kind>.<apiVersion>`.
  const kinds: Record<string, string> = {
    namespaces: "Namespace",
    resourcequotas: "ResourceQuota",
    limitranges: "LimitRange",
    networkpolicies: "NetworkPolicy",
    projectprofiles: "ProjectProfile",
    rolebindings: "RoleBinding",
    clusterroles: "ClusterRole",
    clusterrolebindings: "ClusterRoleBinding",
  };
  const groupOf = (rule: { apiVersion: string; resource: string }) => `${kinds[rule.resource]}.${rule.apiVersion}`;

  test("every group of related objects sync reads is one customize asks for, and nothing more", () => {
    assert.deepEqual(customize(project("test")).relatedResources.map(groupOf), Object.keys(RelatedObjects.entries));
  });

  test("every group of children sync reads is a declared child resource, and nothing more", () => {
    assert.deepEqual(controller.spec.childResources.map(groupOf), Object.keys(ObservedChildren.entries));
  });

  test("every kind of child sync answers with is a declared child resource", () => {
    const answer = withMembers();
    const declared = controller.spec.childResources.map((rule: any) => `${kinds[rule.resource]}.${rule.apiVersion}`);
    for (const child of answer.children) assert.ok(declared.includes(`${child.kind}.${child.apiVersion}`), child.kind);
    assert.deepEqual(
      new Set(answer.children.map((child) => child.kind)),
      new Set(["Namespace", "ResourceQuota", "LimitRange", "NetworkPolicy", "RoleBinding", "ClusterRole", "ClusterRoleBinding"]),
    );
  });

  test("the Service, Deployment, NetworkPolicy, disruption budget and topology spread select the pods by their labels", () => {
    const selectors = {
      Service: service.spec.selector,
      Deployment: deployment.spec.selector.matchLabels,
      NetworkPolicy: networkPolicy.spec.podSelector.matchLabels,
      PodDisruptionBudget: disruptionBudget.spec.selector.matchLabels,
      topologySpreadConstraints: pod.topologySpreadConstraints[0].labelSelector.matchLabels,
    };
    for (const [what, selector] of Object.entries(selectors)) {
      assert.ok(Object.keys(selector).length > 0, `${what} selects something`);
      for (const [key, value] of Object.entries(selector)) assert.equal(podLabels[key], value, `${what}: ${key}`);
    }
  });

  test("the NetworkPolicy admits only Metacontroller's pods, in its namespace, on the webhook's port, and lets nothing out", () => {
    assert.deepEqual(networkPolicy.spec.policyTypes, ["Ingress", "Egress"]);
    assert.deepEqual(networkPolicy.spec.ingress, [
      {
        // One peer with both selectors: pods so labelled in that namespace, not either.
        from: [
          {
            namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "metacontroller" } },
            podSelector: { matchLabels: { "app.kubernetes.io/name": "metacontroller" } },
          },
        ],
        ports: [{ port: service.spec.ports[0].targetPort, protocol: "TCP" }],
      },
    ]);
    assert.deepEqual(networkPolicy.spec.policyTypes, ["Ingress", "Egress"]);
    assert.equal(networkPolicy.spec.egress, undefined, "the webhook calls nothing: Egress is isolated and no rule admits any");
    assert.ok(webhook.ports.some((port: any) => port.name === networkPolicy.spec.ingress[0].ports[0].port));
  });

  test("a node drain keeps one replica, and replicas spread over nodes where they can", () => {
    assert.equal(disruptionBudget.spec.minAvailable, 1);
    assert.ok(deployment.spec.replicas > disruptionBudget.spec.minAvailable, "a drain can still evict one");
    const [spread] = pod.topologySpreadConstraints;
    assert.equal(spread.topologyKey, "kubernetes.io/hostname");
    assert.equal(spread.whenUnsatisfiable, "ScheduleAnyway");
  });

  test("Service targetPort, containerPort, PORT and the webhook's default port are one port", () => {
    const [servicePort] = service.spec.ports;
    const containerPort = webhook.ports.find((port: any) => port.name === servicePort.targetPort);
    assert.ok(containerPort, `a container port named ${servicePort.targetPort}`);
    assert.equal(String(containerPort.containerPort), env("PORT"));
    assert.equal(readConfig({}).port, containerPort.containerPort);
  });

  test("the probes ask the app's health route on the container's port", () => {
    for (const probe of [webhook.readinessProbe, webhook.livenessProbe]) {
      assert.equal(probe.httpGet.path, HEALTH_PATH);
      assert.ok(webhook.ports.some((port: any) => port.name === probe.httpGet.port));
    }
  });

  test("the pod's grace period outlasts the preStop pause plus the webhook's shutdown deadline", () => {
    const deadline = Number(env("SHUTDOWN_TIMEOUT_SECONDS") ?? readConfig({}).shutdownTimeoutSeconds);
    const pause = webhook.lifecycle?.preStop?.sleep?.seconds ?? 0;
    assert.ok(pod.terminationGracePeriodSeconds > pause + deadline);
  });

  test("the pod needs nothing but its image: the webhook runs the ConfigMaps' code from one mounted directory", () => {
    assert.equal(pod.initContainers, undefined, "no install step");
    const mount = webhook.volumeMounts.find((volumeMount: any) => volumeMount.readOnly);
    const volume = pod.volumes.find((candidate: any) => candidate.name === mount.name);
    assert.deepEqual(
      volume.projected.sources.map((source: any) => source.configMap.name),
      [configMap.metadata.name, dependenciesConfigMap.metadata.name],
    );
    assert.deepEqual(webhook.command, ["node", `${mount.mountPath}/${BUNDLE_FILE}`]);
    assert.deepEqual(Object.keys(configMap.data), [BUNDLE_FILE]);
    assert.deepEqual(Object.keys(dependenciesConfigMap.data), [DEPENDENCIES_FILE]);
    assert.match(configMap.data[BUNDLE_FILE], new RegExp(`from "\\./${DEPENDENCIES_FILE.replace(".", "\\.")}";`));
  });

  test("the webhook runs an official Node 24 image at an exact tag", () => {
    assert.match(webhook.image, /^node:24\.\d+\.\d+-alpine$/);
  });

  test("every namespaced object lives in the controller's namespace", () => {
    for (const object of [configMap, dependenciesConfigMap, service, networkPolicy, disruptionBudget, deployment]) {
      assert.equal(object.metadata.namespace, namespace.metadata.name);
    }
  });

  test("the CRD's default license is sync's", () => {
    assert.equal(projectSchema.properties.spec.properties.license.default, DEFAULT_LICENSE);
  });
});

describe("manifest: the embedded code", () => {
  test("the ConfigMaps hold main.ts and sync.ts bundled with the locked dependencies: npm run manifest changes nothing", () => {
    // assert.ok, not equal: a diff of two 6,000-line files says less than this.
    assert.ok(renderManifest(text, generatedCode) === text, "k8s.yaml is out of date: run npm run manifest");
  });

  // esbuild marks where each input file starts with a `// path` comment.
  const inputsOf = (bundle: string) => new Set([...bundle.matchAll(/^\/\/ (\S+\.m?[jt]s)$/gm)].map(([, path = ""]) => path));
  test("webhook.mjs holds only our code, and dependencies.mjs only the packages' code", () => {
    assert.deepEqual([...inputsOf(configMap.data[BUNDLE_FILE])].sort(), ["main.ts", "sync.ts"]);
    const packages = [...inputsOf(dependenciesConfigMap.data[DEPENDENCIES_FILE])];
    assert.ok(packages.length > 0 && packages.every((path) => path.startsWith("node_modules/")), packages.join(", "));
  });

  test("the bundled dependencies are the versions package-lock.json pins, exactly", () => {
    const repo = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    for (const version of Object.values(repo.dependencies)) assert.match(String(version), /^\d+\.\d+\.\d+$/);
    for (const pinned of lockedRuntimeDependencies()) {
      const [name, version] = [pinned.slice(0, pinned.lastIndexOf("@")), pinned.slice(pinned.lastIndexOf("@") + 1)];
      const installed = JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), "utf8"));
      assert.equal(installed.version, version, `${name} in node_modules is what the lockfile pins`);
      assert.equal(repo.dependencies[name], version, `${name} in package.json is what the lockfile pins`);
      const firstLine = dependenciesConfigMap.data[DEPENDENCIES_FILE].split("\n")[0];
      assert.ok(firstLine.includes(pinned), `${DEPENDENCIES_FILE}'s first line names ${pinned}`);
    }
  });

  // Client-side `kubectl apply` keeps a JSON copy of the whole object in an
  // annotation, and the API server refuses more than 256 KiB of them.
  const CLIENT_SIDE_APPLY_MARGIN = 64 * 1024;
  test(`each ConfigMap fits client-side apply's copy with ${CLIENT_SIDE_APPLY_MARGIN / 1024} KiB to spare`, () => {
    for (const object of [configMap, dependenciesConfigMap]) {
      const copy = asGoJson(object);
      const bytes = Buffer.byteLength("kubectl.kubernetes.io/last-applied-configuration") + Buffer.byteLength(copy);
      assert.ok(
        bytes <= ANNOTATIONS_MAX_BYTES - CLIENT_SIDE_APPLY_MARGIN,
        `ConfigMap ${object.metadata.name}: ${bytes} bytes, over the ${ANNOTATIONS_MAX_BYTES - CLIENT_SIDE_APPLY_MARGIN} ` +
          "that leave room for the code to grow: make it smaller, or split it once more, before the API server refuses the apply",
      );
    }
  });

  test("npm run manifest rewrites only the generated ConfigMaps and the code checksum, the rest byte for byte", () => {
    const code: Code = { [configMap.metadata.name]: { [BUNDLE_FILE]: "// changed\n" }, [dependenciesConfigMap.metadata.name]: { [DEPENDENCIES_FILE]: "// too\n" } };
    const before = text.split("---\n");
    const after = renderManifest(text, code).split("---\n");
    assert.equal(after.length, before.length);
    for (const [index, document] of before.entries()) {
      const { kind, metadata } = objects[index];
      if (kind === "ConfigMap") {
        const [file, changed] = Object.entries(code[metadata.name] ?? {})[0] ?? [];
        assert.ok(after[index]?.includes(`${file}: |\n    ${changed}`), `ConfigMap ${metadata.name} rewritten`);
      }
      else if (kind === "Deployment") {
        const changed = (after[index] ?? "").split("\n").filter((line, at) => line !== document.split("\n")[at]);
        assert.equal(changed.length, 1);
        assert.match(changed[0] ?? "", new RegExp(`${CHECKSUM_ANNOTATION}: "[0-9a-f]{64}"`));
      } else assert.equal(after[index], document, `${kind} untouched`);
    }
  });
});

describe("manifest: the CRD keeps out what sync cannot use", () => {
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

describe("manifest: the CRD and sync judge members alike", () => {
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

describe("manifest: profiles are admitted by the rules sync applies", () => {
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
    assert.equal(profileNameOf(project("test")), DEFAULT_PROFILE);
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

describe("manifest: deletion protection", () => {
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

  test("the CRD cannot be deleted, which would delete every Project, until it is annotated for it", () => {
    const { allowed, message } = onDelete(crdPolicy, crd);
    assert.equal(allowed, false);
    const annotate = /kubectl annotate crd (\S+) (\S+)=(\S+)$/.exec(String(message));
    assert.ok(annotate, String(message));
    const [, name, key = "", value = ""] = annotate;
    assert.equal(name, crd.metadata.name);
    const marked = { ...crd, metadata: { ...crd.metadata, annotations: { other: "x", [key]: value } } };
    assert.equal(onDelete(crdPolicy, marked).allowed, true);
    const otherValue = { ...crd, metadata: { ...crd.metadata, annotations: { [key]: "yes" } } };
    assert.equal(onDelete(crdPolicy, otherValue).allowed, false);
  });

  const crdDelete = (object: any, options?: { collection?: boolean }) =>
    admit(crdPolicy, deleting("apiextensions.k8s.io", "customresourcedefinitions", object, options));

  test("the CRD guard holds for a collection delete too, and lets every other CRD go", () => {
    for (const collection of [false, true]) {
      assert.deepEqual(
        { ...crdDelete(crd, { collection }), message: undefined },
        { matched: true, allowed: false, message: undefined },
        collection ? "a collection delete" : "a delete by name",
      );
    }
    const other = { ...crd, metadata: { name: "compositecontrollers.metacontroller.k8s.io" } };
    assert.equal(crdDelete(other, { collection: true }).matched, false);
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
    for (const policy of [projectPolicy, crdPolicy, namespacePolicy]) {
      const bindings = objects.filter((object) => object.kind === "ValidatingAdmissionPolicyBinding" && object.spec.policyName === policy.metadata.name);
      assert.equal(bindings.length, 1, policy.metadata.name);
      assert.deepEqual(bindings[0].spec.validationActions, ["Deny"]);
      assert.equal(policy.spec.failurePolicy, "Fail");
    }
  });

  test("the policies come after the CRD, so that kubectl delete -f k8s.yaml meets the guard before removing it", () => {
    const index = (object: unknown) => objects.indexOf(object);
    assert.ok(index(crd) < index(crdPolicy) && index(crd) < index(projectPolicy));
  });
});

describe("manifest: the status sync writes survives pruning", () => {
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

  test("kubectl get projects shows the Namespace, License, Members, the Profile applied, Protected, Ready and Age", () => {
    assert.deepEqual(
      projectVersion.additionalPrinterColumns.map((column: any) => column.name),
      ["Namespace", "License", "Members", "Profile", "Protected", "Ready", "Age"],
    );
    const profile = projectVersion.additionalPrinterColumns.find((column: any) => column.name === "Profile");
    assert.equal(profile.jsonPath, ".status.profile", "the profile applied, not the one asked for");
    assert.deepEqual(projectVersion.subresources, { status: {} });
  });
});

describe("manifest: the pod passes Pod Security restricted", () => {
  const containers = [...pod.containers, ...(pod.initContainers ?? [])];

  test("the namespace enforces the restricted profile", () => {
    assert.equal(namespace.metadata.labels["pod-security.kubernetes.io/enforce"], "restricted");
  });

  test("the pod runs as a numeric non-root user with the runtime's default seccomp profile", () => {
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.ok(Number.isInteger(pod.securityContext.runAsUser) && pod.securityContext.runAsUser > 0);
    assert.equal(pod.securityContext.seccompProfile.type, "RuntimeDefault");
    assert.equal(pod.hostNetwork ?? false, false);
    assert.equal(pod.hostPID ?? false, false);
    assert.equal(pod.hostIPC ?? false, false);
  });

  for (const container of containers) {
    test(`container ${container.name} cannot escalate, has no capabilities and a read-only root`, () => {
      const context = container.securityContext;
      assert.equal(context.allowPrivilegeEscalation, false);
      assert.deepEqual(context.capabilities.drop, ["ALL"]);
      assert.equal(context.capabilities.add, undefined);
      assert.equal(context.privileged ?? false, false);
      assert.equal(context.readOnlyRootFilesystem, true);
      assert.notEqual(context.runAsUser, 0);
    });

    test(`container ${container.name} has CPU and memory requests and limits`, () => {
      for (const kind of ["requests", "limits"]) {
        assert.ok(container.resources[kind].cpu, `${kind}.cpu`);
        assert.ok(container.resources[kind].memory, `${kind}.memory`);
      }
    });
  }

  test("only volume types the restricted profile allows", () => {
    const allowed = ["configMap", "emptyDir", "projected", "secret", "downwardAPI", "persistentVolumeClaim", "ephemeral", "csi"];
    for (const volume of pod.volumes) {
      const types = Object.keys(volume).filter((key) => key !== "name");
      assert.ok(types.every((type) => allowed.includes(type)), `${volume.name}: ${types}`);
    }
  });

  test("at least two replicas, and a rollout never takes one away before its successor is ready", () => {
    assert.ok(deployment.spec.replicas >= 2);
    assert.equal(deployment.spec.strategy.rollingUpdate.maxUnavailable, 0);
    assert.ok(webhook.readinessProbe && webhook.livenessProbe);
  });

  test("the recommended app.kubernetes.io labels are on every object of the webhook", () => {
    for (const object of [configMap, dependenciesConfigMap, service, networkPolicy, disruptionBudget, deployment, deployment.spec.template]) {
      for (const label of ["name", "component", "part-of"]) {
        assert.ok(object.metadata.labels[`app.kubernetes.io/${label}`], `${object.kind ?? "pod template"}: ${label}`);
      }
    }
  });
});

describe("manifest: a protected Project's Namespace", () => {
  // The Namespace as sync asks for it, as the API server stores it.
  const answer = sync(project("shop", { spec: { deletionProtection: true } }), namespaces(), related(), clock("2026-11-30T00:00:00Z"));
  const labelled = { ...namespaceIn(answer), metadata: { ...namespaceIn(answer)?.metadata, uid: "u", ownerReferences: [{ kind: "Project", name: "shop" }] } };
  const namespaceDelete = (oldObject: any, options?: { collection?: boolean; username?: string }) =>
    admit(namespacePolicy, deleting("", "namespaces", oldObject, options));

  test("is refused to a person, also by a collection delete, naming the Project and the patch that lifts its protection", () => {
    for (const collection of [false, true]) {
      const { allowed, message } = namespaceDelete(labelled, { collection });
      assert.equal(allowed, false);
      assert.match(String(message), /^Namespace proj-shop belongs to Project shop, which has spec\.deletionProtection set/);
      assert.match(String(message), /kubectl patch project shop --type=merge -p '\{"spec":\{"deletionProtection":false\}\}'$/);
    }
  });

  test("goes when the garbage collector deletes it, its Project gone, as its own ServiceAccount or as the controller manager", () => {
    for (const username of ["system:serviceaccount:kube-system:generic-garbage-collector", "system:kube-controller-manager"]) {
      assert.equal(namespaceDelete(labelled, { username }).allowed, true, username);
    }
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

describe("manifest: self-service Projects", () => {
  const policy = named("ValidatingAdmissionPolicy", "projects.agrrh.com-self-service");
  const requester = named("ClusterRole", "projects.agrrh.com-requester");
  const shop = (members: unknown[]) => project("shop", { spec: { members } }) as any;
  const dana = { username: "dana", groups: ["developers", "system:authenticated"] };
  // What a developer bound to the requester role may do.
  const mayRequest = authorizedBy(requester.rules);
  const asked = (
    operation: AdmissionRequest["operation"],
    { object, oldObject }: { object?: any; oldObject?: any },
    who: { username: string; groups?: string[] } = dana,
    authorized: string[] = mayRequest,
  ) => admit(policy, { operation, resource: { group: "agrrh.com", resource: "projects" }, name: "shop", object, oldObject, ...who, authorized });

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
    assert.equal(asked("UPDATE", { object: shop([]), oldObject: danasShop }).allowed, true, "dana leaves");
    assert.equal(asked("DELETE", { oldObject: danasShop }).allowed, true, "dana deletes it");
  });

  test("whoever may administer projects, as cluster-admin may through *, creates and changes Projects for others", () => {
    const platform = { username: "pat", groups: ["platform"] };
    const forTheTeam = shop([{ kind: "Group", name: "team-a", role: "admin" }]);
    const administers = [...mayRequest, "agrrh.com/projects/administer"];
    assert.equal(asked("CREATE", { object: forTheTeam }, platform, administers).allowed, true);
    assert.equal(asked("UPDATE", { object: forTheTeam, oldObject: forTheTeam }, platform, administers).allowed, true);
    assert.equal(asked("CREATE", { object: forTheTeam }, platform).allowed, false, "without the verb");
  });

  test("a Project already being deleted can lose its finalizers, whoever removes them", () => {
    const deleting = { ...shop([]), metadata: { name: "shop", deletionTimestamp: "2026-11-30T00:00:00Z", finalizers: ["foregroundDeletion"] } };
    const gc = { username: "system:serviceaccount:kube-system:generic-garbage-collector" };
    assert.equal(asked("UPDATE", { object: { ...deleting, metadata: { ...deleting.metadata, finalizers: [] } }, oldObject: deleting }, gc).allowed, true);
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
    assert.equal(asked("UPDATE", { object: withProfile(DEFAULT_PROFILE), oldObject: given }).allowed, true, "back to default");
    assert.equal(asked("DELETE", { oldObject: given }).allowed, true, "deleting it");
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
