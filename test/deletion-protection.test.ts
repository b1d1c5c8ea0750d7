// What the deletion-protection feature (features/deletion-protection.ts)
// adds to sync's answer: the label by which k8s.yaml's policies refuse to
// delete a protected Project's Namespaces.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { GROUP, PARENT, PROJECT_LABEL, sync, type Namespace } from "../sync.ts";
import { PROTECTED_BY_LABEL } from "../features/deletion-protection.ts";
import { POD_SECURITY_LABEL } from "../features/guardrails.ts"; // feature: guardrails
import { at, namespaceIn, namespaceOf, namespaces, project, ready, related } from "./helpers.ts";

describe("deletion protection: the names", () => {
  test("the label is spelled from sync.ts's group and parent", () => {
    assert.equal(PROTECTED_BY_LABEL, `${GROUP}/protected-by-${PARENT.singular}`);
  });
});

describe("deletion protection", () => {
  test("a protected Project's Namespace carries its name under the protection label", () => {
    const answer = sync(project("shop", { spec: { deletionProtection: true } }), namespaces(), related(), at);
    assert.deepEqual(namespaceIn(answer)?.metadata.labels, { [PROJECT_LABEL]: "shop", [PROTECTED_BY_LABEL]: "shop" });
  });

  test("an unprotected Project's Namespace asks for no protection label, so the one it had is removed", () => {
    for (const deletionProtection of [false, null, undefined]) {
      const answer = sync(project("shop", { spec: { deletionProtection } }), namespaces({ [namespaceOf("shop")]: "Active" }), related(), at);
      assert.deepEqual(namespaceIn(answer)?.metadata.labels, { [PROJECT_LABEL]: "shop" });
    }
  });

  test("the protection follows the spec even when the rest of it cannot be carried out", () => {
    const answer = sync(project("my.project", { spec: { deletionProtection: true } }), namespaces({ [namespaceOf("my.project")]: "Active" }), related(), at);
    assert.equal(ready(answer).reason, "InvalidName");
    assert.deepEqual(namespaceIn(answer)?.metadata.labels, { [PROJECT_LABEL]: "my.project", [PROTECTED_BY_LABEL]: "my.project" });
  });

  test("a Namespace it owns under another name keeps whose it is and its protection", () => {
    const children = namespaces({ [namespaceOf("shop")]: "Active", [namespaceOf("old-name")]: "Active" });
    const protectedShop = project("shop", { spec: { deletionProtection: true } });
    let relatedObjects = related();
    relatedObjects = related({}, { default: { podSecurity: "baseline" } }); // feature: guardrails
    const answer = sync(protectedShop, children, relatedObjects, at);
    const old = answer.children.find((child) => child.metadata.name === namespaceOf("old-name")) as Namespace;
    assert.deepEqual(old.metadata.labels, { [PROJECT_LABEL]: "shop", [PROTECTED_BY_LABEL]: "shop" });
    assert.equal(namespaceIn(answer)?.metadata.labels[POD_SECURITY_LABEL], "baseline", "its own Namespace has its profile's Pod Security level"); // feature: guardrails
  });
});
