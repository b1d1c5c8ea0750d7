// The ownership guard's rules for adoption: a Namespace nobody owns comes
// under a Project only by an admin's hand, and only under the Project of
// its name; one a Project owns is moved to another by nobody.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { API_VERSION, GROUP, namespaceNameFor, PARENT } from "../sync.ts";
import { ADOPTED_BY_LABEL, CLAIM_LABEL } from "../features/adoption.ts";
import { ADMINISTER, policyNamed, trusted } from "./admission.ts";
import { admit } from "./cel.ts";

const ownership = policyNamed("ownership");
const namespaceOwner = policyNamed("namespace-owner");
const metacontroller = trusted["metacontroller"]!;
const ownerRef = (owner: string) => ({ apiVersion: API_VERSION, kind: PARENT.kind, name: owner, uid: `uid-of-${owner}`, controller: true, blockOwnerDeletion: true });
const namespace = (name: string, labels: Record<string, string>, owner?: string) => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name, labels: { team: "payments", ...labels }, ...(owner ? { ownerReferences: [ownerRef(owner)] } : {}) },
});
const legacy = (labels: Record<string, string>, owner?: string) => namespace(namespaceNameFor("legacy"), labels, owner);
const update = (oldObject: any, object: any, username: string, authorized: string[] = [], policy = ownership) =>
  admit(policy, { operation: "UPDATE", resource: { group: "", resource: "namespaces" }, kind: "Namespace", name: object.metadata.name, object, oldObject, username, authorized });
/** A write that gives a Namespace an owner passes both guards, or is refused. */
const owning = (oldObject: any, object: any, username: string, authorized: string[]) => {
  const verdicts = [ownership, namespaceOwner].map((policy) => update(oldObject, object, username, authorized, policy));
  return verdicts.find((verdict) => !verdict.allowed) ?? { allowed: true, message: undefined };
};
const byMetacontroller = (oldObject: any, object: any) => owning(oldObject, object, metacontroller.username, metacontroller.authorized);

describe("adoption: who may bring a Namespace under a Project", () => {
  test("a holder of administer labels a Namespace nobody owns with a Project's uid", () => {
    assert.equal(update(legacy({}), legacy({ [CLAIM_LABEL]: "uid-of-legacy" }), "pat", [ADMINISTER]).allowed, true);
  });

  test("a tenant who may write Namespaces may not, and is told whose label it is", () => {
    const { allowed, message } = update(legacy({}), legacy({ [CLAIM_LABEL]: "uid-of-legacy" }), "robin");
    assert.equal(allowed, false);
    assert.match(String(message), /^Namespace .* carries a controller-uid label, by which Metacontroller claims it for a Project/);
  });

  test("nobody moves one a Project owns to another in one write, an admin or Metacontroller, and the refusal says how to free it", () => {
    const owned = legacy({ [CLAIM_LABEL]: "uid-of-old" }, "old");
    const moved = legacy({ [CLAIM_LABEL]: "uid-of-legacy" }, "old");
    for (const [username, authorized] of [["pat", [ADMINISTER]], [metacontroller.username, metacontroller.authorized]] as const) {
      const { allowed, message } = update(owned, moved, username, [...authorized]);
      assert.equal(allowed, false, username);
      assert.match(String(message), /carries the controller-uid label of a Project, which owns it, so it cannot be moved to another\. Delete that Project, or ask a holder of the verb administer/);
    }
  });

  test("one write that relabels a Namespace a Project owns and drops or replaces its owners is judged by the owners it had, and refused", () => {
    const owned = legacy({ [CLAIM_LABEL]: "uid-of-old" }, "old");
    const dropped = legacy({ [CLAIM_LABEL]: "uid-of-legacy" });
    const replaced = legacy({ [CLAIM_LABEL]: "uid-of-legacy" }, "legacy");
    for (const [username, authorized] of [["pat", [ADMINISTER]], [metacontroller.username, metacontroller.authorized]] as const) {
      for (const [what, object] of [["owners dropped", dropped], ["owner replaced by the label's Project", replaced]] as const) {
        const { allowed, message } = owning(owned, object, username, [...authorized]);
        assert.equal(allowed, false, `${username}: ${what}`);
        assert.match(String(message), /carries the controller-uid label of a Project, which owns it, so it cannot be moved to another/, `${username}: ${what}`);
      }
    }
  });

  test("one write that relabels a Namespace nothing owned and gives it the owner its new label names passes: it had no owner to lose", () => {
    const stale = legacy({ [CLAIM_LABEL]: "uid-of-gone" });
    assert.equal(owning(stale, legacy({ [CLAIM_LABEL]: "uid-of-legacy" }, "legacy"), "pat", [ADMINISTER]).allowed, true);
    const ownedByThing = { ...stale, metadata: { ...stale.metadata, ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "x", uid: "u" }] } };
    assert.equal(owning(ownedByThing, legacy({ [CLAIM_LABEL]: "uid-of-legacy" }, "legacy"), "pat", [ADMINISTER]).allowed, true, "an owner that is no Project's is none to lose");
  });

  test("an admin relabels in one write a Namespace nothing owns, as the status's command does for a stale label", () => {
    assert.equal(update(legacy({ [CLAIM_LABEL]: "uid-of-gone" }), legacy({ [CLAIM_LABEL]: "uid-of-legacy" }), "pat", [ADMINISTER]).allowed, true);
  });

  test("a label pasted onto a Namespace not named as a Project's is refused at the paste, an admin's too, saying why", () => {
    for (const name of ["payments", "team-proj-legacy"]) {
      const { allowed, message } = update(namespace(name, {}), namespace(name, { [CLAIM_LABEL]: "uid-of-legacy" }), "pat", [ADMINISTER]);
      assert.equal(allowed, false, name);
      assert.match(String(message), new RegExp(`^Namespace ${name} is not named as a Project's Namespace, proj-<its name>, so no Project can own it`));
    }
  });

  test("an admin may take the label off, leaving it nobody's, and keep it as it is", () => {
    const owned = legacy({ [CLAIM_LABEL]: "uid-of-old" }, "old");
    assert.equal(update(owned, legacy({}, "old"), "pat", [ADMINISTER]).allowed, true, "taken off");
    assert.equal(update(owned, { ...owned, metadata: { ...owned.metadata, annotations: { note: "x" } } }, "pat", [ADMINISTER]).allowed, true, "kept");
  });
});

describe("adoption: a Namespace comes under the Project of its name alone", () => {
  test("Metacontroller adopts the Namespace of Project legacy's name for it", () => {
    const claimed = legacy({ [CLAIM_LABEL]: "uid-of-legacy" });
    assert.equal(byMetacontroller(claimed, legacy({ [CLAIM_LABEL]: "uid-of-legacy" }, "legacy")).allowed, true);
  });

  test("a uid pasted onto a Namespace of another name leaves it nobody's: Metacontroller's adoption is refused, and the message says how to take the label off", () => {
    for (const name of [namespaceNameFor("other"), `${namespaceNameFor("legacy")}-old`]) {
      const claimed = namespace(name, { [CLAIM_LABEL]: "uid-of-legacy" });
      const { allowed, message } = byMetacontroller(claimed, namespace(name, { [CLAIM_LABEL]: "uid-of-legacy" }, "legacy"));
      assert.equal(allowed, false, name);
      assert.equal(
        message,
        `Namespace ${name} cannot come under Project legacy: a Project owns only the Namespaces of its name, and one of another name that a cluster admin ` +
          `labelled ${ADOPTED_BY_LABEL} with its name. If it carries that Project's controller-uid label, ` +
          `a holder of the verb administer on ${PARENT.plural}.${GROUP} takes it off with kubectl label namespace ${name} controller-uid-`,
      );
    }
  });

  test("the Namespaces of a Project's name are proj-<name> and proj-<name>--<anything>: Metacontroller adopts those, and no other Project's", () => {
    const name = `${namespaceNameFor("legacy")}--dev`;
    const claimed = namespace(name, { [CLAIM_LABEL]: "uid-of-legacy" });
    assert.equal(byMetacontroller(claimed, namespace(name, { [CLAIM_LABEL]: "uid-of-legacy" }, "legacy")).allowed, true);
    const othersClaimed = namespace(name, { [CLAIM_LABEL]: "uid-of-leg" });
    assert.equal(byMetacontroller(othersClaimed, namespace(name, { [CLAIM_LABEL]: "uid-of-leg" }, "leg")).allowed, false);
  });

  test("a Namespace of any other name comes under the Project an admin labelled it adopted-by, pasted with its uid; under no other, and not one named like a Project's", () => {
    const labels = { [ADOPTED_BY_LABEL]: "legacy", [CLAIM_LABEL]: "uid-of-legacy" };
    assert.equal(update(namespace("payments", {}), namespace("payments", labels), "pat", [ADMINISTER]).allowed, true);
    assert.equal(update(namespace("payments", {}), namespace("payments", { [CLAIM_LABEL]: "uid-of-legacy" }), "pat", [ADMINISTER]).allowed, false);
    assert.equal(update(namespace("payments", {}), namespace("payments", labels), "robin").allowed, false);
    assert.equal(byMetacontroller(namespace("payments", labels), namespace("payments", labels, "legacy")).allowed, true);
    const forAnother = { [ADOPTED_BY_LABEL]: "other", [CLAIM_LABEL]: "uid-of-legacy" };
    assert.equal(byMetacontroller(namespace("payments", forAnother), namespace("payments", forAnother, "legacy")).allowed, false);
    const projectsName = namespaceNameFor("other");
    assert.equal(byMetacontroller(namespace(projectsName, labels), namespace(projectsName, labels, "legacy")).allowed, false);
  });

  test("one freed from its Project and labelled for another, in two writes, does not come under the other", () => {
    const freed = legacy({}, "legacy");
    const claimed = legacy({ [CLAIM_LABEL]: "uid-of-thief" }, "legacy");
    assert.equal(update(freed, claimed, "pat", [ADMINISTER]).allowed, true, "the label itself is an admin's to write");
    const adopted = { ...claimed, metadata: { ...claimed.metadata, ownerReferences: [ownerRef("thief")] } };
    assert.equal(byMetacontroller(claimed, adopted).allowed, false);
  });

  test("an adoption from Metacontroller's cache just after the label came off is refused too, the label gone", () => {
    const unclaimed = namespace("payments", {});
    assert.equal(byMetacontroller(unclaimed, namespace("payments", {}, "legacy")).allowed, false);
  });

  test("whoever may patch Namespaces, an admin too, cannot write a Project of another name as one's owner", () => {
    const unclaimed = namespace("payments", {});
    for (const [username, authorized] of [["robin", []], ["pat", [ADMINISTER]]] as const) {
      assert.equal(owning(unclaimed, namespace("payments", {}, "legacy"), username, [...authorized]).allowed, false, username);
    }
  });

  test("an owner written by hand under the right name but another Project's uid is refused, an admin's too: the owner is the Project the label names", () => {
    const victims = legacy({ [CLAIM_LABEL]: "uid-of-legacy" }, "legacy");
    const handedOver = { ...victims, metadata: { ...victims.metadata, ownerReferences: [{ ...ownerRef("legacy"), uid: "uid-of-thief" }] } };
    for (const [username, authorized] of [["pat", [ADMINISTER]], [metacontroller.username, metacontroller.authorized]] as const) {
      const { allowed, message } = owning(victims, handedOver, username, [...authorized]);
      assert.equal(allowed, false, username);
      assert.match(String(message), /cannot come under Project legacy by this owner: a Namespace comes under the Project whose uid its controller-uid label carries/);
    }
  });

  test("an owner renamed in place, its uid kept, is refused: the garbage collector would find no such owner, and delete the Namespace", () => {
    const owned = legacy({ [CLAIM_LABEL]: "uid-of-legacy" }, "legacy");
    const renamed = { ...owned, metadata: { ...owned.metadata, ownerReferences: [{ ...ownerRef("legacy"), name: "ghost" }] } };
    assert.equal(owning(owned, renamed, "pat", [ADMINISTER]).allowed, false);
  });

  test("an owner of another kind with a Project's name and uid, rewritten as that Project's, counts as new, and is refused", () => {
    const unclaimed = namespace("payments", {});
    const disguised = { ...unclaimed, metadata: { ...unclaimed.metadata, ownerReferences: [{ apiVersion: "example.invalid/v1", kind: "Thing", name: "legacy", uid: "uid-of-legacy" }] } };
    assert.equal(owning(unclaimed, disguised, "robin", []).allowed, true, "a Thing is no Project");
    assert.equal(owning(disguised, namespace("payments", {}, "legacy"), "robin", []).allowed, false);
  });

  test("an owner of another kind carrying the uid of the claim label is refused, an admin's too: Metacontroller would claim the Namespace by it", () => {
    const claimed = namespaceNameFor("other");
    const before = namespace(claimed, { [CLAIM_LABEL]: "uid-of-legacy" });
    const byThing = { ...before, metadata: { ...before.metadata, ownerReferences: [{ apiVersion: "example.invalid/v1", kind: "Thing", name: "t", uid: "uid-of-legacy", controller: true }] } };
    const { allowed, message } = owning(before, byThing, "pat", [ADMINISTER]);
    assert.equal(allowed, false);
    assert.match(String(message), /cannot have an owner of another kind than Project with the uid its\s+controller-uid label carries/);
  });

  test("a Namespace owned by something else than a Project is no concern of the guard", () => {
    const byDeployment = { ...namespace("payments", {}), metadata: { name: "payments", ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "x", uid: "u" }] } };
    assert.equal(admit(namespaceOwner, { operation: "UPDATE", resource: { group: "", resource: "namespaces" }, kind: "Namespace", name: "payments", object: byDeployment, oldObject: namespace("payments", {}), username: "robin", authorized: [] }).matched, false);
  });

  test("a Namespace made with an owner Project of another name is refused too, and one kept under an owner it had is not", () => {
    const made = namespace("payments", { [CLAIM_LABEL]: "uid-of-legacy" }, "legacy");
    const create = admit(namespaceOwner, { operation: "CREATE", resource: { group: "", resource: "namespaces" }, kind: "Namespace", name: "payments", object: made, username: metacontroller.username, authorized: metacontroller.authorized });
    assert.equal(create.allowed, false);
    const older = namespace("named-before-a-rename", { [CLAIM_LABEL]: "uid-of-legacy" }, "legacy");
    assert.equal(byMetacontroller(older, { ...older, metadata: { ...older.metadata, annotations: { note: "x" } } }).allowed, true);
  });
});
