// The webhook answers every request Metacontroller can send: the largest
// one, as test/largest-request.ts builds it from what the API server stores,
// fits the default body limit and gets its answer.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DEFAULT_BODY_LIMIT_BYTES, SYNC_PATH, CUSTOMIZE_PATH, createApp, readConfig } from "../main.ts";
import { GROUP, PARENT } from "../sync.ts";
import { schemaErrors } from "./cel.ts";
import { ETCD_MAX_REQUEST_BYTES, largestLegalRequest } from "./largest-request.ts";
import { goJson, readManifest } from "./manifest.ts";

const { request, body } = largestLegalRequest();
const bytes = Buffer.byteLength(body);
const projectSchema = readManifest().find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`).spec.versions[0].schema.openAPIV3Schema;
const app = createApp({ bodyLimitBytes: readConfig({}).bodyLimitBytes, logHealthChecks: false });
const post = (path: string, payload: string) => app.request(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: payload });

describe("the largest request Metacontroller can send", () => {
  test("is about a Project the CRD admits, as large as etcd stores one", () => {
    assert.deepEqual(schemaErrors(projectSchema, request.parent), []);
    assert.equal(Buffer.byteLength(goJson(request.parent)), ETCD_MAX_REQUEST_BYTES);
    assert.equal((request.parent.spec?.members as unknown[]).length, projectSchema.properties.spec.properties.members.maxItems); // feature: members
  });

  test("fits the default body limit, which is sized from it with at most 10 % to spare", () => {
    assert.equal(readConfig({}).bodyLimitBytes, DEFAULT_BODY_LIMIT_BYTES);
    assert.ok(bytes <= DEFAULT_BODY_LIMIT_BYTES, `${bytes} bytes: raise DEFAULT_BODY_LIMIT_BYTES in main.ts`);
    // Members' bindings make the largest request; without them the limit is generous.
    assert.ok(DEFAULT_BODY_LIMIT_BYTES <= bytes * 1.1, `${bytes} bytes: DEFAULT_BODY_LIMIT_BYTES is more than 10 % above it`); // feature: members
  });

  test("is answered 200 by sync, the Project Ready", async () => {
    const response = await post(SYNC_PATH, body);
    assert.equal(response.status, 200);
    const answer: any = await response.json();
    assert.equal(answer.status.conditions[0].reason, "NamespaceActive", answer.status.conditions[0].message);
  });

  test("and its customize request is answered 200 too", async () => {
    const response = await post(CUSTOMIZE_PATH, goJson({ controller: request.controller, parent: request.parent }));
    assert.equal(response.status, 200);
  });
});
