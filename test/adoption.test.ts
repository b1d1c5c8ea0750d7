// The adoption feature: what a Project says of a Namespace of its name that
// nobody owns, and that, once adopted, the Namespace is the Project's.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { GROUP, PARENT, sync } from "../sync.ts";
import { CLAIM_LABEL, PROJECTS } from "../features/adoption.ts";
import { annotationsSpec, clock, namespaceIn, namespaceOf, namespaces, project, ready, related } from "./helpers.ts";

const at = clock("2026-12-01T00:00:00Z");
const LEGACY = namespaceOf("legacy");
const uidOfLegacy = `$(kubectl get ${PARENT.plural}.${GROUP} legacy -o jsonpath='{.metadata.uid}')`;
const offer = `A cluster admin may bring it under this ${PARENT.kind} instead, with all it holds, once nothing in it is named like this Project's objects (docs/cluster.md, "Bring an existing Namespace under a Project"): `;
const legacyProject = () => project("legacy");

describe("adoption", () => {
  test("the command names the Projects by resource and group, as sync.ts spells them, so that no other kind named Project answers it", () => {
    assert.equal(PROJECTS, `${PARENT.plural}.${GROUP}`);
  });

  test("a Namespace of its name that nobody owns is a conflict whose message gives a cluster admin the command to bring it under the Project", () => {
    const answer = sync(legacyProject(), namespaces(), related({ [LEGACY]: { phase: "Active" } }), at);
    assert.equal(ready(answer).reason, "NamespaceConflict");
    assert.ok(ready(answer).message.endsWith(offer + `kubectl label namespace ${LEGACY} ${CLAIM_LABEL}=${uidOfLegacy}`), ready(answer).message);
    assert.equal(namespaceIn(answer), undefined, "and it is not asked for meanwhile");
  });

  test("one that still carries another's claim label, and nobody owns, gets the command that overwrites it", () => {
    const answer = sync(legacyProject(), namespaces(), related({ [LEGACY]: { phase: "Active", labels: { [CLAIM_LABEL]: "uid-of-a-project-gone" } } }), at);
    assert.ok(ready(answer).message.endsWith(offer + `kubectl label namespace ${LEGACY} ${CLAIM_LABEL}=${uidOfLegacy} --overwrite`), ready(answer).message);
  });

  test("one another Project owns, one being deleted, or one already claimed for this Project offers no such thing", () => {
    const cases = {
      owned: { phase: "Active", owners: [{ kind: PARENT.kind, name: "other", controller: true }] },
      going: { phase: "Terminating" },
      claimed: { phase: "Active", labels: { [CLAIM_LABEL]: "uid-of-legacy" } },
    };
    for (const [what, namespace] of Object.entries(cases)) {
      const answer = sync(legacyProject(), namespaces(), related({ [LEGACY]: namespace }), at);
      assert.equal(ready(answer).reason, "NamespaceConflict", what);
      assert.doesNotMatch(ready(answer).message, /kubectl label/, what);
    }
  });

  test("adopted, it is the Project's own Namespace: asked for with the Project's annotations and label, and Ready once Active", () => {
    const adopted = namespaces({ [LEGACY]: "Active" });
    adopted["Namespace.v1"][LEGACY]!.metadata = { labels: { team: "payments", [CLAIM_LABEL]: "uid-of-legacy" }, annotations: { owner: "ops" } };
    const answer = sync(project("legacy", { spec: annotationsSpec("moved in") }), adopted, related({ [LEGACY]: { phase: "Active" } }), at);
    assert.deepEqual(namespaceIn(answer)?.metadata.annotations, annotationsSpec("moved in"));
    assert.equal(ready(answer).status, "True", ready(answer).message);
  });
});
