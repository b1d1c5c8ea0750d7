// k8s.yaml's install, checked the way a cluster would take it: each object
// against the published Kubernetes schemas or Metacontroller's documented
// fields, every cross-reference between documents and the code, the pod
// against Pod Security, and the embedded code against the repo. Nothing here
// depends on the resource: admission.test.ts checks the CRDs' rules and the
// admission policies.
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { describe, test } from "node:test";
import { CustomResourceDefinition } from "kubernetes-models/apiextensions.k8s.io/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from "kubernetes-models/admissionregistration.k8s.io/v1";
import { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { Job } from "kubernetes-models/batch/v1"; // feature: integrations
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from "kubernetes-models/v1";
import { LimitRange, ResourceQuota } from "kubernetes-models/v1"; // feature: guardrails
import * as v from "valibot";
import { parseAllDocuments } from "yaml";
import { CUSTOMIZE_PATH, FINALIZE_PATH, HEALTH_PATH, SYNC_PATH, readConfig } from "../main.ts";
import { API_VERSION, FLEET_WIDE, GROUP, NAMESPACES, ObservedChildren, PARENT, RelatedObjects, VERSION, customize, isSettled, sync, type Child } from "../sync.ts";
import { schemaErrors } from "./cel.ts";
import { KUBECTL_LAST_APPLIED, admittedFixtureFromCode, fixtureFromCode, fixturesFromLog, parseSets, remadeFixtures, undeclaredFields } from "../scripts/capture-fixtures.ts";
import { fixture, namespaceOf, namespaces, project, related, type FixtureName } from "./helpers.ts";
import { ENVIRONMENT_ANNOTATION } from "../features/environments.ts"; // feature: members & environments
import {
  ANNOTATIONS_LIMIT_BYTES,
  BUNDLE_FILE,
  assertCrdSpells,
  CHECKSUM_ANNOTATION,
  DEPENDENCIES_FILE,
  PROM_CLIENT_FILE,
  bundleWebhook,
  clientSideApplyCopyBytes,
  lockedRuntimeDependencies,
  readManifest,
  renderManifest,
  type Code,
} from "../scripts/manifest.ts";

const { text, documents, objects, find } = readManifest();
// What `npm run manifest` would write, built once for the tests that compare.
const generatedCode = await bundleWebhook();

const namespace = find("Namespace", find("Deployment").metadata.namespace);
// The API server names a CRD `<plural>.<group>`.
const crd = find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`);
const controller = find("CompositeController");
// The generated ConfigMaps: the webhook, then the dependencies it imports.
const codeConfigMaps = Object.keys(generatedCode).map((name) => find("ConfigMap", name));
const [configMap, dependenciesConfigMap, promClientConfigMap] = codeConfigMaps;
const service = find("Service");
const deployment = find("Deployment");
const disruptionBudget = find("PodDisruptionBudget");
const networkPolicy = find("NetworkPolicy", find("Deployment").metadata.name);
const pod = deployment.spec.template.spec;
const podLabels = deployment.spec.template.metadata.labels;
const webhook = pod.containers.find((container: any) => container.name === "webhook");
const env = (name: string) => webhook.env.find((variable: any) => variable.name === name)?.value;

/** Every request in test/fixtures, with sync's answer to it. */
const answered = readdirSync(new URL("fixtures/", import.meta.url)).map((file) => {
  const name = file.replace(/\.json$/, "") as FixtureName;
  const request = fixture(name);
  return { name, request, answer: sync(request.parent, request.children, request.related) };
});

// Metacontroller files children and related objects under `<Kind>.<apiVersion>`,
// and a CompositeController names them by apiVersion and plural: lowercase,
// with "ies" for a final "y", as Kubernetes spells its own, or as a CRD says.
const pluralOf = (kind: string) =>
  objects.find((object) => object.kind === "CustomResourceDefinition" && object.spec.names.kind === kind)?.spec.names.plural ??
  kind.toLowerCase().replace(/y$/, "ie") + "s";
const asRule = (group: string) => {
  const [kind = "", ...apiVersion] = group.split(".");
  return `${apiVersion.join(".")} ${pluralOf(kind)}`;
};

describe("manifest: documents", () => {
  test("every document parses, without errors or warnings", () => {
    for (const document of documents) {
      assert.deepEqual(document.errors, []);
      assert.deepEqual(document.warnings, []);
    }
  });

  // kubectl applies the documents in order, and each must find what it
  // names already there.
  test("the documents come in apply order: each after the Namespace, CRD or policy it needs", () => {
    const before = (index: number, kind: string, which: (object: any) => boolean, what: string) => {
      const at = objects.findIndex((object) => object.kind === kind && which(object));
      assert.ok(at >= 0 && at < index, `${objects[index].kind} ${objects[index].metadata.name} comes after ${what}`);
    };
    for (const [index, object] of objects.entries()) {
      const { namespace: inNamespace } = object.metadata;
      if (inNamespace) before(index, "Namespace", (candidate) => candidate.metadata.name === inNamespace, `Namespace ${inNamespace}`);
      const [group] = String(object.apiVersion).split("/");
      if (objects.some((candidate) => candidate.kind === "CustomResourceDefinition" && candidate.spec.group === group)) {
        before(index, "CustomResourceDefinition", (crd) => crd.spec.group === group && crd.spec.names.kind === object.kind, `the CRD of ${object.kind}`);
      }
      if (object.kind === "CompositeController") {
        const { resource } = object.spec.parentResource;
        before(index, "CustomResourceDefinition", (crd) => crd.spec.names.plural === resource, `the CRD of ${resource}`);
      }
      if (object.kind === "ValidatingAdmissionPolicyBinding") {
        before(index, "ValidatingAdmissionPolicy", (policy) => policy.metadata.name === object.spec.policyName, object.spec.policyName);
      }
    }
    assert.equal(objects[0].kind, "Namespace", "the webhook's Namespace first");
  });

  test("the opening comment's table of contents names every document, in order", () => {
    const contents = [...text.matchAll(/^# +- (\S+) (\S+)(?:  # feature: [\w-]+(?: & [\w-]+)*)?$/gm)].map(([, kind, name]) => `${kind} ${name}`);
    assert.deepEqual(contents, objects.map((object) => `${object.kind} ${object.metadata.name}`));
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

  test("the walkthrough's commands name what k8s.yaml installs", () => {
    const walkthrough = readFileSync(new URL("../docs/cluster.md", import.meta.url), "utf8");
    assert.ok(walkthrough.includes(`kubectl -n ${namespace.metadata.name} rollout status deployment/${deployment.metadata.name}`));
    for (const name of [crd.metadata.name, controller.metadata.name]) assert.ok(walkthrough.includes(name), name);
  });

  // kubectl names an object `<kind>[.<group>]/<name>`, in lower case.
  const asKubectlNames = (object: any) => `${object.kind.toLowerCase()}${object.apiVersion.includes("/") ? `.${object.apiVersion.split("/")[0]}` : ""}`;
  const transcriptOf = (page: string, command: string, after = "") => {
    const start = page.indexOf(`$ ${command}\n`, page.indexOf(after));
    const rest = page.slice(start + command.length + 3);
    // A line a feature brings is marked with it, for npm run take-away.
    return rest.slice(0, rest.search(/^(\$ |```)/m)).trimEnd().split("\n").map((line) => line.replace(/\s+# feature: [\w-]+(?:(?:, | & )[\w-]+)*$/, ""));
  };

  // Custom resources of the install's own CRDs, which kubectl cannot map
  // until the apply that creates the CRD has them served.
  const ofOwnCrd = (object: any) =>
    objects.some((candidate) => candidate.kind === "CustomResourceDefinition" && `${candidate.spec.group}/${candidate.spec.versions[0].name}` === object.apiVersion);

  test("the walkthrough's first apply creates every document of k8s.yaml in order but its own custom resources, and the second those", () => {
    const walkthrough = readFileSync(new URL("../docs/cluster.md", import.meta.url), "utf8");
    const first = transcriptOf(walkthrough, "kubectl apply -f k8s.yaml", "## 1. Apply the controller");
    const created = first.filter((line) => line.endsWith(" created"));
    assert.deepEqual(created, objects.filter((object) => !ofOwnCrd(object)).map((object) => `${asKubectlNames(object)}/${object.metadata.name} created`));
    const unmapped = objects.filter(ofOwnCrd);
    // kubectl prefixes "error: " only when one object fails.
    assert.equal(first.filter((line) => /^(error: )?resource mapping not found/.test(line)).length, unmapped.length);
    const second = transcriptOf(walkthrough, "kubectl apply -f k8s.yaml | grep -v unchanged", "## 1. Apply the controller");
    for (const object of unmapped) assert.ok(second.includes(`${asKubectlNames(object)}/${object.metadata.name} created`), object.metadata.name);
  });

  test("the walkthrough's uninstall says it deletes every document of k8s.yaml, in order, before it does", () => {
    const walkthrough = readFileSync(new URL("../docs/cluster.md", import.meta.url), "utf8");
    const listed = transcriptOf(walkthrough, "npm run -s uninstall", "## 10. Uninstall");
    const line = (object: any) => `  ${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ""}${object.metadata.name}${object.kind === "Namespace" ? ", with everything in it" : ""}`;
    const documents = listed.filter((listedLine) => objects.some((object) => listedLine === line(object)));
    assert.deepEqual(documents, objects.map(line));
    assert.ok(listed.indexOf("This deletes, for good:") < listed.indexOf(documents[0]!), "it lists before it deletes");
  });
});

describe("manifest: what kubectl shows", () => {
  // kubectl explain shows a field's description, and nothing for one without.
  // An array's items and a map's values are shown through their own fields.
  // `kubectl explain project` shows the root's description as the kind's, and
  // `<empty>` without one.
  test("kubectl explain describes every CRD's kind and every field of it", () => {
    const undescribed: string[] = [];
    const walk = (schema: any, path: string) => {
      if (!schema.description) undescribed.push(path);
      for (const [key, field] of Object.entries<any>(schema.properties ?? {})) if (path.includes(".") || key !== "metadata") walk(field, `${path}.${key}`);
      for (const inner of [schema.items, schema.additionalProperties]) if (typeof inner === "object") walk(inner, `${path}[]`);
    };
    for (const crd of objects.filter((object) => object.kind === "CustomResourceDefinition")) {
      for (const version of crd.spec.versions) walk(version.schema.openAPIV3Schema, crd.spec.names.kind);
    }
    assert.deepEqual(undescribed.filter((path) => !path.endsWith("[]")), []);
  });

  // The API server names a refusal by the path of the schema that holds the
  // rule, and the root has none: kubectl then prints `<nil>: Invalid value`.
  test("no refusal of a CRD's rule begins with <nil>: every rule on a kind's root names the field it is about", () => {
    const unnamed = objects
      .filter((object) => object.kind === "CustomResourceDefinition")
      .flatMap((crd) => crd.spec.versions.flatMap((version: any) => version.schema.openAPIV3Schema["x-kubernetes-validations"] ?? []).map((rule: any) => ({ kind: crd.spec.names.kind, ...rule })))
      .filter((rule) => !rule.fieldPath);
    assert.deepEqual(unnamed, []);
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

  // The children sync asks for are built-in objects too; the fixtures'
  // answers ask for every kind the controller declares (a test below).
  const childModels: Record<string, { new (data: any): { validate(): void } }> = {
    Namespace,
    ResourceQuota, // feature: guardrails
    LimitRange, // feature: guardrails
    NetworkPolicy,
    RoleBinding,
    ClusterRole,
    ClusterRoleBinding,
    Role,
    Job, // feature: integrations
    ServiceAccount, // feature: integrations, shared
    Secret, // feature: shared
    ConfigMap,
    Service,
    Deployment,
  };
  for (const { name, answer } of answered) {
    test(`every child sync asks for in answer to the ${name} fixture is valid`, () => {
      for (const child of answer.children) {
        // A kind of this install's own is held to its CRD.
        const ours = objects.find((object) => object.kind === "CustomResourceDefinition" && object.spec.names.kind === child.kind);
        if (ours) {
          assert.deepEqual(schemaErrors(ours.spec.versions[0].schema.openAPIV3Schema, child), [], `${child.kind} ${child.metadata.name}`);
          continue;
        }
        const Model = childModels[child.kind];
        assert.ok(Model, `no published schema for ${child.kind} in this test: add its kubernetes-models class`);
        assert.doesNotThrow(() => new Model(child).validate(), `${child.kind} ${child.metadata.name}`);
      }
    });
  }
});

describe("manifest: fixtures captured from Metacontroller's log", () => {
  const line = (entry: object) => JSON.stringify({ level: "Level(-6)", ts: "2026-12-01T10:13:35Z", ...entry });
  const request = (name: string, round: number) => ({ controller: {}, parent: { metadata: { name } }, children: { round }, related: {}, finalizing: false });
  const log = [
    "not JSON: a line of another component",
    line({ msg: "Webhook request", type: "customize", body: { parent: { metadata: { name: "a" } } } }),
    line({ msg: "Webhook request", type: "sync", body: request("a", 1) }),
    line({ msg: "Webhook response", type: "sync", body: { status: {}, children: [] } }),
    line({ msg: "Webhook request", type: "sync", body: request("b", 1) }),
    line({ msg: "Webhook request", type: "sync", body: request("a", 2) }),
    line({ msg: "Webhook request", type: "sync", body: request("a", 3) }),
    line({ msg: "Webhook request", type: "sync", body: request("b", 2) }),
  ].join("\n");

  test("npm run fixtures takes a parent's first sync request as first-sync, and its last as any other fixture", () => {
    assert.deepEqual(fixturesFromLog(log, { "first-sync": "a", "steady-sync": "b" }), { "first-sync": request("a", 1), "steady-sync": request("b", 2) });
    assert.deepEqual(fixturesFromLog(log, { "steady-sync": "a" }), { "steady-sync": request("a", 3) });
  });

  test("npm run fixtures says so when the log holds no sync request about that parent, as at Metacontroller's default log level", () => {
    assert.throws(() => fixturesFromLog(log, { "first-sync": "c" }), /^Error: no sync request about c in the log: was Metacontroller's log level 6/);
  });

  test("the fixtures are as that command writes them: a logged request, pretty-printed", () => {
    for (const file of readdirSync(new URL("fixtures/", import.meta.url))) {
      const name = file;
      const text = readFileSync(new URL(`fixtures/${file}`, import.meta.url), "utf8");
      assert.equal(text, `${JSON.stringify(JSON.parse(text), null, 2)}\n`, name);
      assert.deepEqual(Object.keys(JSON.parse(text)), ["controller", "parent", "children", "related", "finalizing"], name);
    }
  });
});

describe("manifest: fixtures made from code", () => {
  test("a first sync made from code observes nothing yet, in every group the CompositeController and customize give", () => {
    const request = fixtureFromCode("first-sync");
    assert.deepEqual(Object.keys(request), ["controller", "parent", "children", "related", "finalizing"]);
    assert.deepEqual(request.controller, controller);
    for (const groups of [request.children, request.related]) assert.ok(Object.values(groups).every((group) => Object.keys(group).length === 0));
    assert.deepEqual(Object.keys(request.children).sort(), Object.keys(ObservedChildren.entries).sort());
    assert.deepEqual(request.parent.spec, Object.fromEntries(Object.entries(crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties).flatMap(([field, schema]: [string, any]) => (schema.default === undefined ? [] : [[field, schema.default]]))));
  });

  test("any other is played to its end: sync answers it with the status it holds and the children observed", () => {
    const request = fixtureFromCode("made-sync", { description: "made from code" });
    assert.equal(request.parent.metadata.name, "made");
    const answer = sync(request.parent, request.children, request.related);
    assert.deepEqual(answer.status, request.parent.status);
    for (const child of answer.children as Child[]) {
      const observed = (request.children as Record<string, Record<string, any>>)[`${child.kind}.${child.apiVersion}`]?.[child.metadata.namespace ? `${child.metadata.namespace}/${child.metadata.name}` : child.metadata.name];
      assert.ok(observed, `${child.kind} ${child.metadata.name} observed`);
    }
    assert.equal(answer.status.conditions[0]?.reason, "NamespaceActive");
  });

  test("--from-code refuses a spec the CRD would refuse, naming the field and why", () => {
    // A spec the CRD admits as it stands (a copy may require fields), and one field more.
    const admitted = fixture("first-sync").parent.spec ?? {};
    assert.throws(() => admittedFixtureFromCode("made-sync", { ...admitted, stray: ["alice"] }), /the CRD refuses a parent with spec \{.*"stray":\["alice"\]\}: (.*; )?\.spec\.stray: must NOT have additional properties/);
    assert.equal(admittedFixtureFromCode("made-sync", admitted).parent.metadata.name, "made");
  });

  test("--remake refuses, writing nothing, a fixture whose parent the CRD would refuse, and names it and why", () => {
    const directory = new URL("fixtures/", import.meta.url);
    const files = readdirSync(directory).filter((file) => file.endsWith(".json"));
    const read = (file: string) => readFileSync(new URL(file, directory), "utf8");
    assert.deepEqual(Object.keys(remadeFixtures(read, files)), files);
    // A field the CRD now requires, with no default, that no fixture's parent has.
    const requiring = structuredClone(crd);
    const spec = requiring.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    const field = ["owner", "steward", "keeper"].find((name) => !(name in spec.properties))!;
    spec.required = [field];
    spec.properties[field] = { type: "string", description: "Who answers for it." };
    const manifest = { ...readManifest(), find: () => requiring };
    assert.throws(
      () => remadeFixtures(read, files, manifest),
      (error: Error) => files.every((file) => error.message.includes(`${file}: the CRD refuses its parent`)) && error.message.includes(`.spec.${field}: Required value`) && error.message.includes(`npm run fixtures -- --remake --set spec.${field}=<value>`),
    );
  });

  test("--remake --set spec.FIELD=VALUE gives every parent a field the CRD now requires, kubectl's last-applied record too, and names each field it drops", () => {
    const directory = new URL("fixtures/", import.meta.url);
    const files = readdirSync(directory).filter((file) => file.endsWith(".json"));
    const read = (file: string) => readFileSync(new URL(file, directory), "utf8");
    const requiring = structuredClone(crd);
    const spec = requiring.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    const field = ["owner", "steward", "keeper"].find((name) => !(name in spec.properties))!;
    const [gone] = Object.keys(spec.properties);
    delete spec.properties[gone!];
    spec.required = [...(spec.required ?? []).filter((each: string) => each !== gone), field];
    spec.properties[field] = { type: "string", minLength: 1 };
    const manifest = { ...readManifest(), find: () => requiring };
    const set = parseSets(["--set", `spec.${field}=north`]);
    assert.deepEqual(set, { [field]: "north" });
    for (const [file, text] of Object.entries(remadeFixtures(read, files, manifest, set))) {
      const { parent } = JSON.parse(text);
      assert.equal(parent.spec[field], "north", file);
      assert.ok(!(gone! in parent.spec), `${file}: ${gone} is dropped`);
      const recorded = parent.metadata.annotations?.[KUBECTL_LAST_APPLIED];
      if (recorded) assert.equal(JSON.parse(recorded).spec[field], "north", `${file}: the last-applied record`);
    }
    assert.deepEqual(undeclaredFields(read, files, manifest), files.filter((file) => gone! in (JSON.parse(read(file)).parent.spec ?? {})).map((file) => `${file}: spec.${gone}`));
    assert.ok(undeclaredFields(read, files, manifest).length > 0, `a fixture whose parent gives ${gone}`);
    assert.throws(() => remadeFixtures(read, files, manifest, parseSets(["--set", `spec.${field}=`])), /must NOT have fewer than 1 characters/, "a value the CRD refuses is refused");
    assert.deepEqual(parseSets(["--set", "spec.replicas=3", "--set", 'spec.tags=["a"]']), { replicas: 3, tags: ["a"] }, "JSON where it parses");
    assert.throws(() => parseSets(["--set", "metadata.name=x"]), /only --set spec\.FIELD=VALUE/);
    assert.throws(() => parseSets(["--sett", "spec.a=b"]), /unknown argument --sett/);
  });

  test("--remake writes kubectl's last-applied record of each parent anew: a field given by hand is in it, one the CRD no longer declares is not, nor a default the API server filled in", () => {
    const directory = new URL("fixtures/", import.meta.url);
    const files = readdirSync(directory).filter((file) => file.endsWith(".json") && JSON.parse(readFileSync(new URL(file, directory), "utf8")).parent.metadata.annotations?.[KUBECTL_LAST_APPLIED]);
    assert.ok(files.length > 0, "a fixture whose parent kubectl applied");
    const changed = structuredClone(crd);
    const spec = changed.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    const [gone] = Object.keys(JSON.parse(JSON.parse(readFileSync(new URL(files[0]!, directory), "utf8")).parent.metadata.annotations[KUBECTL_LAST_APPLIED]).spec);
    delete spec.properties[gone!];
    // A copy may require the field that goes: the CRD no longer declares it, so no longer requires it.
    spec.required = spec.required?.filter((field: string) => field !== gone);
    const added = ["owner", "steward", "keeper"].find((name) => !(name in spec.properties))!;
    spec.properties[added] = { type: "string" };
    const manifest = { ...readManifest(), find: () => changed };
    const read = (file: string) => {
      const request = JSON.parse(readFileSync(new URL(file, directory), "utf8"));
      request.parent.spec[added] = "alice";
      return JSON.stringify(request);
    };
    for (const [file, text] of Object.entries(remadeFixtures(read, files, manifest))) {
      const { parent } = JSON.parse(text);
      const applied = JSON.parse(parent.metadata.annotations[KUBECTL_LAST_APPLIED]);
      assert.equal(applied.spec[added], "alice", file);
      assert.ok(!(gone! in applied.spec), `${file}: ${gone} is still in the record`);
      const defaulted = Object.keys(spec.properties).filter((field) => spec.properties[field].default !== undefined && JSON.stringify(parent.spec[field]) === JSON.stringify(spec.properties[field].default));
      assert.deepEqual(defaulted.filter((field) => field in applied.spec && !(field in JSON.parse(JSON.parse(read(file)).parent.metadata.annotations[KUBECTL_LAST_APPLIED]).spec)), [], file);
      assert.equal(parent.metadata.annotations[KUBECTL_LAST_APPLIED].at(-1), "\n", "kubectl ends its record with a newline");
    }
  });
});

describe("manifest: the names sync.ts owns", () => {
  test("the parent's CRD spells the group, version and names of sync.ts", () => {
    assertCrdSpells(crd, PARENT);
  });

  test("the fixtures are requests about the parent sync.ts names, with the related groups it reads", () => {
    for (const { name, request } of answered) {
      assert.equal(request.parent.apiVersion, API_VERSION, name);
      assert.equal(request.parent.kind, PARENT.kind, name);
      for (const group of Object.keys(RelatedObjects.entries)) assert.ok(group in request.related, `${name} has related ${group}`);
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
      parentResource: v.strictObject({ ...ResourceRule.entries, ignoreStatusChanges: v.optional(v.boolean()) }),
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
      hooks: v.strictObject({ customize: v.optional(Hook), sync: Hook, finalize: v.optional(Hook) }),
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

  // InPlace patches a changed child; the default, OnDelete, would never
  // update it, and Recreate would delete a Namespace with all it holds. A
  // Job is immutable: one that should change gets another name instead.
  test("children get labelled by Metacontroller, and every kind but Jobs is updated in place", () => {
    assert.equal(controller.spec.generateSelector, true);
    assert.ok(controller.spec.childResources.length > 0);
    const immutable: string[] = [];
    immutable.push("jobs"); // feature: integrations
    for (const { resource, updateStrategy } of controller.spec.childResources) {
      assert.deepEqual(updateStrategy, { method: immutable.includes(resource) ? "OnDelete" : "InPlace" }, resource);
    }
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
    assert.equal(controller.spec.parentResource.apiVersion, `${crd.spec.group}/${VERSION}`);
    assert.equal(controller.spec.parentResource.resource, crd.spec.names.plural);
    assert.equal(crd.metadata.name, `${crd.spec.names.plural}.${crd.spec.group}`);
  });

  for (const [hook, route] of [
    ["sync", SYNC_PATH],
    ["customize", CUSTOMIZE_PATH],
    ["finalize", FINALIZE_PATH], // feature: integrations
  ] as const) {
    test(`the ${hook} webhook URL reaches the Service's port and the app's ${hook} route`, () => {
      const url = new URL(controller.spec.hooks[hook].webhook.url);
      assert.equal(url.hostname, `${service.metadata.name}.${service.metadata.namespace}.svc`);
      const port = url.port === "" ? 80 : Number(url.port);
      assert.ok(service.spec.ports.some((servicePort: any) => servicePort.port === port));
      assert.equal(url.pathname, route);
    });
  }

  const rule = ({ apiVersion, resource }: { apiVersion: string; resource: string }) => `${apiVersion} ${resource}`;

  test("every group of related objects sync reads is one customize asks for, and nothing more, until the Project is settled", () => {
    const { parent } = fixture("first-sync");
    assert.deepEqual(customize(parent).relatedResources.map(rule), Object.keys(RelatedObjects.entries).map(asRule));
  });

  test("a settled Project's customize asks for every group sync reads but those listed across the fleet, which sync names", () => {
    const { parent } = fixture("steady-sync");
    assert.equal(isSettled(parent), true, "the steady fixture is settled");
    const fleetWide = (group: string) => FLEET_WIDE.includes(group);
    assert.deepEqual(customize(parent).relatedResources.map(rule), Object.keys(RelatedObjects.entries).filter((group) => !fleetWide(group)).map(asRule));
    assert.ok(FLEET_WIDE.every((group) => group in RelatedObjects.entries), "each is a related group");
  });

  test("every group of children sync reads is a declared child resource, and nothing more", () => {
    assert.deepEqual(controller.spec.childResources.map(rule), Object.keys(ObservedChildren.entries).map(asRule));
  });

  test("every child the fixtures' answers ask for is of a declared child resource, and together they ask for every one", () => {
    const asked = new Set(answered.flatMap(({ answer }) => answer.children.map((child) => asRule(`${child.kind}.${child.apiVersion}`))));
    assert.deepEqual([...asked].sort(), controller.spec.childResources.map(rule).sort());
  });

  test("the Service, Deployment, NetworkPolicy, PodDisruptionBudget and topology spread select the pods by their labels", () => {
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
      codeConfigMaps.map((object) => object.metadata.name),
    );
    assert.deepEqual(webhook.command, ["node", `${mount.mountPath}/${BUNDLE_FILE}`]);
    assert.deepEqual(Object.keys(configMap.data), [BUNDLE_FILE]);
    assert.deepEqual(Object.keys(dependenciesConfigMap.data), [DEPENDENCIES_FILE]);
    assert.deepEqual(Object.keys(promClientConfigMap.data), [PROM_CLIENT_FILE]);
    for (const file of [DEPENDENCIES_FILE, PROM_CLIENT_FILE]) assert.match(configMap.data[BUNDLE_FILE], new RegExp(`from "\\./${file.replace(".", "\\.")}";`));
  });

  test("the webhook runs an official Node 24 image at an exact tag", () => {
    assert.match(webhook.image, /^node:24\.\d+\.\d+-alpine$/);
  });

  test("every namespaced object lives in the controller's namespace", () => {
    for (const object of [...codeConfigMaps, service, networkPolicy, disruptionBudget, deployment]) {
      assert.equal(object.metadata.namespace, namespace.metadata.name);
    }
  });
});

describe("manifest: the embedded code", () => {
  test("the ConfigMaps hold main.ts and sync.ts bundled with the locked dependencies: npm run manifest changes nothing", () => {
    // assert.ok, not equal: a diff of two 6,000-line files says less than this.
    assert.ok(renderManifest(text, generatedCode) === text, "k8s.yaml is out of date: run npm run manifest");
  });

  // esbuild marks where each input file starts with a `// path` comment.
  const inputsOf = (bundle: string) => new Set([...bundle.matchAll(/^\/\/ (\S+\.m?[jt]s)$/gm)].map(([, path = ""]) => path));
  test("webhook.mjs holds only our code, dependencies.mjs only the packages' code, and prom-client.mjs only the parts of prom-client main.ts uses", () => {
    const features = new URL("../features/", import.meta.url);
    const ours = existsSync(features) ? readdirSync(features).map((file) => `features/${file}`) : [];
    assert.deepEqual([...inputsOf(configMap.data[BUNDLE_FILE])].sort(), [...ours, "main.ts", "sync.ts"].sort());
    const packages = [...inputsOf(dependenciesConfigMap.data[DEPENDENCIES_FILE])];
    assert.ok(packages.length > 0 && packages.every((path) => path.startsWith("node_modules/") && !path.startsWith("node_modules/prom-client/")), packages.join(", "));
    const promClient = [...inputsOf(promClientConfigMap.data[PROM_CLIENT_FILE])];
    assert.ok(promClient.length > 0 && promClient.every((path) => path.startsWith("node_modules/prom-client/lib/")), promClient.join(", "));
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

  const CLIENT_SIDE_APPLY_MARGIN = 64 * 1024;
  test(`each ConfigMap fits client-side apply's copy with ${CLIENT_SIDE_APPLY_MARGIN / 1024} KiB to spare`, () => {
    for (const object of codeConfigMaps) {
      const bytes = clientSideApplyCopyBytes(object);
      assert.ok(
        bytes <= ANNOTATIONS_LIMIT_BYTES - CLIENT_SIDE_APPLY_MARGIN,
        `ConfigMap ${object.metadata.name}: ${bytes} bytes, over the ${ANNOTATIONS_LIMIT_BYTES - CLIENT_SIDE_APPLY_MARGIN} ` +
          "that leave room for the code to grow: make it smaller, or split it once more, before the API server refuses the apply",
      );
    }
  });

  test("npm run manifest writes the generated ConfigMaps into the install's Namespace, labelled as its Deployment, and drops a checksum of an older name", () => {
    const renamed = text
      .replace(`kind: Namespace\nmetadata:\n  name: ${namespace.metadata.name}\n`, "kind: Namespace\nmetadata:\n  name: renamed-system\n")
      .replace(`  annotations:\n        # Changes whenever`, `  annotations:\n        old.invalid${CHECKSUM_ANNOTATION.slice(CHECKSUM_ANNOTATION.indexOf("/"))}: "0"\n        # Changes whenever`)
      .replaceAll(`app.kubernetes.io/part-of: ${deployment.metadata.labels["app.kubernetes.io/part-of"]}`, "app.kubernetes.io/part-of: renamed-controller");
    assert.notEqual(renamed, text);
    const rendered = parseAllDocuments(renderManifest(renamed, generatedCode)).map((document) => document.toJS());
    for (const name of Object.keys(generatedCode)) {
      const configMap = rendered.find((object) => object.kind === "ConfigMap" && object.metadata.name === name);
      assert.equal(configMap.metadata.namespace, "renamed-system", name);
      assert.equal(configMap.metadata.labels["app.kubernetes.io/part-of"], "renamed-controller", name);
    }
    const annotations = rendered.find((object) => object.kind === "Deployment").spec.template.metadata.annotations;
    assert.deepEqual(Object.keys(annotations), [CHECKSUM_ANNOTATION]);
  });

  test("the webhook's app labels name the package, so that renaming it in package.json shows what else to rename", () => {
    const { name } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    for (const object of [service, networkPolicy, disruptionBudget, deployment, deployment.spec.template, ...codeConfigMaps]) {
      for (const label of ["name", "part-of"]) assert.equal(object.metadata.labels[`app.kubernetes.io/${label}`], name, `${object.kind ?? "pod template"}: ${label}`);
    }
  });

  test("npm run manifest rewrites only the generated ConfigMaps and the code checksum, the rest byte for byte", () => {
    const code: Code = { [configMap.metadata.name]: { [BUNDLE_FILE]: "// changed\n" }, [dependenciesConfigMap.metadata.name]: { [DEPENDENCIES_FILE]: "// too\n" } };
    const before = text.split("---\n");
    const after = renderManifest(text, code).split("---\n");
    assert.equal(after.length, before.length);
    for (const [index, document] of before.entries()) {
      const { kind, metadata } = objects[index];
      if (kind === "ConfigMap" && code[metadata.name]) {
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

describe("manifest: the pod passes Pod Security restricted", () => {
  const containers = [...pod.containers, ...(pod.initContainers ?? [])];

  test("the namespace enforces the restricted Pod Security Standard", () => {
    assert.equal(namespace.metadata.labels["pod-security.kubernetes.io/enforce"], "restricted");
  });

  test("the pod runs as a numeric non-root user with the runtime's default seccompProfile", () => {
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

  test("only volume types the restricted Pod Security Standard allows", () => {
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
    for (const object of [...codeConfigMaps, service, networkPolicy, disruptionBudget, deployment, deployment.spec.template]) {
      for (const label of ["name", "component", "part-of"]) {
        assert.ok(object.metadata.labels[`app.kubernetes.io/${label}`], `${object.kind ?? "pod template"}: ${label}`);
      }
    }
  });
});

describe("manifest: the CRD's status", () => {
  test("declares only fields sync writes, in the fixtures' answers or the plays beside them: one nothing writes would stay in a copy, empty", () => {
    const answers = [
      ...readdirSync(new URL("fixtures", import.meta.url)).map((file) => {
        const { parent, children, related } = fixture(file.replace(/\.json$/, ""));
        return sync(parent, children, related, () => new Date());
      }),
      sync(project("shop", { spec: { environments: [{ name: "dev" }] } }), namespaces(), related(), () => new Date()), // feature: environments
      // feature: members & environments
      // A member that kept prod withholds (environments.test.ts plays it out).
      (() => {
        const [dev, prod] = [`${namespaceOf("shop")}--dev`, `${namespaceOf("shop")}--prod`];
        const observed = namespaces({ [dev]: "Active", [prod]: "Active" });
        observed[NAMESPACES][prod]!.metadata = { name: prod, annotations: { [ENVIRONMENT_ANNOTATION]: "prod" } };
        const spec = { members: [{ kind: "ServiceAccount", namespace: dev, name: "x", role: "edit" }], environments: [{ name: "dev" }] };
        return sync(project("shop", { spec }), observed, related(), () => new Date());
      })(),
      // end feature: members & environments
    ];
    const written = new Set(answers.flatMap((answer) => Object.keys(answer.status)));
    const declared = Object.keys(crd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties);
    assert.deepEqual(declared.filter((field) => !written.has(field)), []);
  });
});

describe("manifest: docs/kube-state-metrics.yaml", () => {
  const config = parseAllDocuments(readFileSync(new URL("../docs/kube-state-metrics.yaml", import.meta.url), "utf8"))[0]?.toJS();
  const [resource] = config.spec.resources;
  test("it exports the kind sync.ts serves, at the group and version the CRD serves", () => {
    assert.equal(config.kind, "CustomResourceStateMetrics");
    assert.deepEqual(resource.groupVersionKind, { group: GROUP, version: VERSION, kind: PARENT.kind });
    assert.deepEqual(crd.spec.versions.map((version: any) => version.name), [resource.groupVersionKind.version]);
  });

  test("every field it reads of a Project is its generation, or one the CRD's status schema declares: the generation observed, or the Ready condition's", () => {
    const status = crd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties;
    const condition = status.conditions.items;
    const generations = resource.metrics.filter((metric: any) => metric.each.gauge.path[1] !== "conditions");
    assert.deepEqual(
      generations.map((metric: any) => [...metric.each.gauge.path, ...metric.each.gauge.valueFrom]),
      [["metadata", "generation"], ["status", "observedGeneration"]],
    );
    assert.ok("observedGeneration" in status, "the status declares observedGeneration");
    for (const metric of resource.metrics.filter((each: any) => !generations.includes(each))) {
      const { path, labelsFromPath, valueFrom } = metric.each.gauge;
      assert.deepEqual(path, ["status", "conditions"], metric.name);
      for (const field of [...Object.values<string[]>(labelsFromPath), valueFrom]) {
        assert.equal(field.length, 1, `${metric.name}: ${field.join(".")}`);
        assert.ok(condition.required.includes(field[0]), `${metric.name}: ${field[0]} is always there`);
      }
    }
  });
});
