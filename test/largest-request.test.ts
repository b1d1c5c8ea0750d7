// The webhook answers every request Metacontroller can send about a Project
// a tenant can make: the largest one, as scripts/largest-request.ts builds it
// from what the API server stores, fits the default body limit and gets its
// answer; and the largest such Project leaves room for its status.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DEFAULT_BODY_LIMIT_BYTES, SYNC_PATH, CUSTOMIZE_PATH, createApp, readConfig } from "../main.ts";
import { GROUP, PARENT } from "../sync.ts";
import { admit, schemaErrors } from "./cel.ts";
import { ETCD_MAX_REQUEST_BYTES, WRITABLE_CHARACTERS, bodyLimitFor, largestLegalRequest, largestStatus } from "../scripts/largest-request.ts";
import { goJson, readManifest } from "../scripts/manifest.ts";

const { request, body, parent } = largestLegalRequest();
const bytes = Buffer.byteLength(body);
const { find } = readManifest();
const projectSchema = find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`).spec.versions[0].schema.openAPIV3Schema;
const sizePolicy = find("ValidatingAdmissionPolicy", `${PARENT.plural}.${GROUP}-size`);
const app = createApp({ bodyLimitBytes: readConfig({}).bodyLimitBytes, logHealthChecks: false });
const post = (path: string, payload: string) => app.request(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: payload });
const creating = (object: unknown) => admit(sizePolicy, { operation: "CREATE", resource: { group: GROUP, resource: PARENT.plural }, name: "", object: object as any, username: "robin" });

describe("the largest Project a tenant can make", () => {
  test(`is one the CRD and ${sizePolicy.metadata.name} admit, at their limits`, () => {
    assert.deepEqual(schemaErrors(projectSchema, parent), []);
    assert.equal(creating(parent).allowed, true, creating(parent).message);
    // As many members as one Namespace may have: the Project's, and an environment's own beside them. // feature: members
    let own = 0; // feature: members
    own = ((parent.spec?.["environments"] ?? []) as { members?: unknown[] }[])[0]?.members?.length ?? 0; // feature: environments & members
    assert.equal((parent.spec?.members as unknown[]).length + own, projectSchema.properties.spec.properties.members.maxItems); // feature: members
  });

  test("one character more of annotations is refused, saying how many it carries and how many leave room", () => {
    const larger = structuredClone(parent);
    larger.metadata.annotations["one"] = "";
    const refused = creating(larger);
    assert.equal(refused.allowed, false);
    assert.match(String(refused.message), new RegExp(`would carry ${WRITABLE_CHARACTERS + 3} characters of\\s+labels and annotations, more than the ${WRITABLE_CHARACTERS} that leave room for its status`));
  });

  test("leaves room in one etcd request for the largest status sync writes, whatever the features make it say", () => {
    const stored = Buffer.byteLength(goJson({ ...parent, status: largestStatus() }));
    assert.ok(stored <= ETCD_MAX_REQUEST_BYTES, `${stored} bytes: etcd takes ${ETCD_MAX_REQUEST_BYTES}`);
  });

  test("no owner and no more than 64 labels: owners would delete it with them, and labels are text too", () => {
    assert.equal(creating({ ...parent, metadata: { ...parent.metadata, ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "x", uid: "u" }] } }).allowed, false);
    const labels = Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`l${index}`, "v"]));
    assert.equal(creating({ ...parent, metadata: { ...parent.metadata, annotations: {}, labels } }).allowed, false);
  });
});

describe("the largest request Metacontroller can send", () => {
  test("fits the default body limit, which is it and 5 %, as npm run manifest writes it into main.ts", () => {
    assert.equal(readConfig({}).bodyLimitBytes, DEFAULT_BODY_LIMIT_BYTES);
    assert.ok(bytes < DEFAULT_BODY_LIMIT_BYTES);
    assert.equal(DEFAULT_BODY_LIMIT_BYTES, bodyLimitFor(bytes), `${bytes} bytes: run npm run manifest`);
  });

  test("is answered 200 by sync", async () => {
    const response = await post(SYNC_PATH, body);
    assert.equal(response.status, 200);
  });

  test("carries no child whose annotations, Metacontroller's copy of what it applied among them, exceed the 256 KiB the API server stores", () => {
    for (const [group, objects] of Object.entries(request.children)) {
      for (const [key, child] of Object.entries<any>(objects)) {
        const bytes = Object.entries<string>(child.metadata.annotations ?? {}).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(value), 0);
        assert.ok(bytes <= 256 * 1024, `${group} ${key}: ${bytes} bytes of annotations`);
      }
    }
  });

  test("and its customize request is answered 200 too", async () => {
    const response = await post(CUSTOMIZE_PATH, goJson({ controller: request.controller, parent: request.parent }));
    assert.equal(response.status, 200);
  });
});
