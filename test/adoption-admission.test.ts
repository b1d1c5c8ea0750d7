// The ownership guard's rule for adoption: a Namespace nobody owns comes
// under a Project only by an admin's hand, and one a Project owns is moved
// to another by nobody.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { API_VERSION, PARENT } from "../sync.ts";
import { CLAIM_LABEL } from "../features/adoption.ts";
import { ADMINISTER, policyNamed, trusted } from "./admission.ts";
import { admit } from "./cel.ts";
import { namespaceOf } from "./helpers.ts";

const ownership = policyNamed("ownership");
const legacy = (labels: Record<string, string>, owner?: string) => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: {
    name: namespaceOf("legacy"),
    labels: { team: "payments", ...labels },
    ...(owner ? { ownerReferences: [{ apiVersion: API_VERSION, kind: PARENT.kind, name: owner, uid: `uid-of-${owner}`, controller: true }] } : {}),
  },
});
const relabel = (oldObject: any, object: any, username: string, authorized: string[] = []) =>
  admit(ownership, { operation: "UPDATE", resource: { group: "", resource: "namespaces" }, kind: "Namespace", name: namespaceOf("legacy"), object, oldObject, username, authorized });

describe("adoption: who may bring a Namespace under a Project", () => {
  test("a holder of administer labels a Namespace nobody owns with a Project's uid", () => {
    assert.equal(relabel(legacy({}), legacy({ [CLAIM_LABEL]: "uid-of-legacy" }), "pat", [ADMINISTER]).allowed, true);
  });

  test("a developer who may write Namespaces may not, and is told whose label it is", () => {
    const { allowed, message } = relabel(legacy({}), legacy({ [CLAIM_LABEL]: "uid-of-legacy" }), "dana");
    assert.equal(allowed, false);
    assert.match(String(message), /^Namespace .* carries a controller-uid label, by which Metacontroller claims it for a Project/);
  });

  test("nobody moves one a Project owns to another, an admin or Metacontroller, and the refusal says how to free it", () => {
    const owned = legacy({ [CLAIM_LABEL]: "uid-of-old" }, "old");
    const moved = legacy({ [CLAIM_LABEL]: "uid-of-legacy" }, "old");
    for (const [username, authorized] of [["pat", [ADMINISTER]], [trusted["metacontroller"]!.username, trusted["metacontroller"]!.authorized]] as const) {
      const { allowed, message } = relabel(owned, moved, username, [...authorized]);
      assert.equal(allowed, false, username);
      assert.match(String(message), /carries the controller-uid label of a Project, which owns it, so it cannot be moved to another\. Delete that Project, or ask a holder of the verb administer/);
    }
  });

  test("an admin may take the label off, leaving it nobody's, and keep it as it is", () => {
    const owned = legacy({ [CLAIM_LABEL]: "uid-of-old" }, "old");
    assert.equal(relabel(owned, legacy({}, "old"), "pat", [ADMINISTER]).allowed, true, "taken off");
    assert.equal(relabel(owned, { ...owned, metadata: { ...owned.metadata, annotations: { note: "x" } } }, "pat", [ADMINISTER]).allowed, true, "kept");
  });
});
