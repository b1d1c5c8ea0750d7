// What the API server admits of the members feature: the Project CRD's rules
// on spec.members, judged alike by sync, the self-service policy and the
// requester role, and the guard on access in a Project's Namespace.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { GROUP, PARENT, PROJECT_LABEL, PROJECT_NAME_MAX_LENGTH, sync } from "../sync.ts";
import { MAX_MEMBERS, MEMBER_KINDS, MEMBER_NAME_MAX_LENGTH, MEMBER_RULES, Members, ROLES } from "../features/members.ts";
import { DEFAULT_PROFILE, PROFILE } from "../features/guardrails.ts"; // feature: guardrails
import { ADMINISTER, assertJudgedAlike, crd, find, objects, policyNamed, projectSchema, trusted, KUBERNETES_CONTROLLERS } from "./admission.ts";
import { admit, authorizedBy, schemaErrors, type AdmissionRequest } from "./cel.ts";
import { clock, escaped, namespaceIn, namespaceOf, namespaces, project, related } from "./helpers.ts";
import { MEMBER_CASES } from "./members-cases.ts";
import { ANNOTATIONS_LIMIT_BYTES, goJson } from "../scripts/manifest.ts";

// Project shop's Namespace, where its members get access.
const SHOP = namespaceOf("shop");

const accessPolicy = policyNamed("namespace-access");

describe("admission: the CRD and sync judge members alike", () => {
  const membersSchema = projectSchema.properties.spec.properties.members;

  for (const { what, members, breaks } of MEMBER_CASES) {
    test(`admission and sync agree that ${what} ${breaks ? `break the rule: ${MEMBER_RULES[breaks]}` : "can be bound"}`, () => {
      const { admission, issues } = assertJudgedAlike(membersSchema, "spec.members", Members, members, Boolean(breaks));
      if (!breaks) return;
      assert.ok(issues.some((issue) => issue.message.endsWith(MEMBER_RULES[breaks])), "sync says which rule");
      // Rules the CRD states in CEL say it in sync's words; the others are
      // Kubernetes' own enum, length and maxItems messages.
      const stated = JSON.stringify(membersSchema).includes(JSON.stringify(MEMBER_RULES[breaks]));
      if (stated) assert.ok(admission.some((error) => error.endsWith(MEMBER_RULES[breaks])), admission.join("; "));
    });
  }

  test("the self-service policy and sync agree that a ServiceAccount of the Project's own Namespace, or the Group of them all, is at most an edit member, as every edit member can act as them", () => {
    type Member = { kind: string; name: string; namespace?: string };
    const serviceAccount = (namespace: string): Member => ({ kind: "ServiceAccount", namespace, name: "deployer" });
    const allOf = (namespace: string): Member => ({ kind: "Group", name: `system:serviceaccounts:${namespace}` });
    const withMember = (member: Member, role: string) => project("shop", { spec: { members: [{ kind: "User", name: "dana", role: "admin" }, { ...member, role }] } });
    const selfService = policyNamed("self-service");
    // An admin, whom every other rule lets through: only the members are judged here.
    const authorized = [ADMINISTER];
    authorized.push(`${GROUP}/${PROFILE.plural}/use`); // feature: guardrails
    const judged = (member: Member, role: string) => {
      const object = withMember(member, role) as any;
      const decision = admit(selfService, { operation: "CREATE", resource: { group: GROUP, resource: PARENT.plural }, name: "shop", object, username: "pat", authorized });
      const admission = decision.allowed ? [] : [String(decision.message)];
      const answer = sync(withMember(member, role), namespaces({ [SHOP]: "Active" }), related(), clock("2026-11-30T00:00:00Z"));
      const reason = answer.status.conditions[0]?.reason;
      assert.equal(admission.length === 0, reason !== "InvalidMembers", `policy: ${admission.join("; ")}; sync: ${reason}`);
      return { admission, message: answer.status.conditions[0]?.message ?? "" };
    };
    for (const member of [serviceAccount(SHOP), allOf(SHOP)]) {
      const refused = judged(member, "admin");
      assert.deepEqual(refused.admission, [MEMBER_RULES.ownServiceAccount], `${member.kind} ${member.name}: refused even to a holder of administer`);
      assert.equal(refused.message, `spec.members[1]: ${MEMBER_RULES.ownServiceAccount}. Until that is fixed, no member has access.`);
    }
    for (const namespace of [SHOP, "ci", namespaceOf("other")]) {
      for (const member of [serviceAccount(namespace), allOf(namespace)]) {
        for (const role of namespace === SHOP ? ["edit", "view"] : ["admin", "edit"]) {
          assert.deepEqual(judged(member, role).admission, [], `${member.kind} ${member.name} as ${role}`);
        }
      }
    }
  });

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
    const answer = sync(project("a".repeat(PROJECT_NAME_MAX_LENGTH), { spec: { members } }), namespaces({ [namespaceOf("a".repeat(PROJECT_NAME_MAX_LENGTH))]: "Active" }), related(), clock("2026-11-30T00:00:00Z"));
    const [, binding] = answer.children;
    assert.ok(binding);
    const copyBytes = new TextEncoder().encode(goJson(binding)).length;
    assert.ok(copyBytes < ANNOTATIONS_LIMIT_BYTES * 0.75, `${copyBytes} bytes`);
  });
});


describe("admission: self-service Projects", () => {
  const policy = policyNamed("self-service");
  const requester = find("ClusterRole", `${crd.metadata.name}-requester`);
  const shop = (members: unknown[]) => project("shop", { spec: { members } }) as any;
  const dana = { username: "dana", groups: ["developers", "system:authenticated"] };
  // What a developer bound to the requester role may do.
  const mayRequest = authorizedBy(requester.rules);
  const asked = (
    operation: AdmissionRequest["operation"],
    { object, oldObject, options }: { object?: any; oldObject?: any; options?: AdmissionRequest["options"] },
    who: { username: string; groups?: string[] } = dana,
    authorized: string[] = mayRequest,
  ) =>
    admit(
      policy,
      { operation, resource: { group: GROUP, resource: "projects" }, name: "shop", object, oldObject, ...who, authorized, ...(options ? { options } : {}) }
    );

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
    const handedOver = shop([{ kind: "User", name: "erin", role: "admin" }]);
    assert.equal(asked("UPDATE", { object: handedOver, oldObject: joined }).allowed, true, "dana leaves erin in charge");
    assert.equal(asked("DELETE", { oldObject: danasShop }).allowed, true, "dana deletes it");
  });

  test("the last admin cannot leave a Project without an admin, and is told how to hand it over; deleting it stays theirs", () => {
    const danasShop = shop([{ kind: "User", name: "dana", role: "admin" }, { kind: "User", name: "erin", role: "view" }]);
    for (const members of [[], [{ kind: "User", name: "erin", role: "view" }], [{ kind: "User", name: "dana", role: "edit" }]]) {
      const left = asked("UPDATE", { object: shop(members), oldObject: danasShop });
      assert.equal(left.allowed, false, JSON.stringify(members));
      assert.equal(
        left.message,
        "Project shop would have no admin member left, and then only a cluster admin could change or delete it. Hand it over first: " +
          "add another admin to spec.members, then remove yourself; or delete the Project.",
      );
    }
    assert.equal(asked("UPDATE", { object: shop([{ kind: "Group", name: "shop-admins", role: "admin" }]), oldObject: danasShop }).allowed, true, "to a Group of admins");
    assert.equal(asked("DELETE", { oldObject: danasShop }).allowed, true, "deleting it");
    const administers = [...mayRequest, ADMINISTER];
    assert.equal(asked("UPDATE", { object: shop([]), oldObject: danasShop }, { username: "pat" }, administers).allowed, true, "a holder of administer");
  });

  test("whoever may administer projects, as cluster-admin may through *, creates and changes Projects for others", () => {
    const platform = { username: "pat", groups: ["platform"] };
    const forTheTeam = shop([{ kind: "Group", name: "team-a", role: "admin" }]);
    const administers = [...mayRequest, ADMINISTER];
    assert.equal(asked("CREATE", { object: forTheTeam }, platform, administers).allowed, true);
    assert.equal(asked("UPDATE", { object: forTheTeam, oldObject: forTheTeam }, platform, administers).allowed, true);
    assert.equal(asked("CREATE", { object: forTheTeam }, platform).allowed, false, "without the verb");
  });

  describe("finalizers, which hold a Project until whoever holds each lets go", () => {
    const METACONTROLLER_FINALIZER = `metacontroller.io/compositecontroller-${find("CompositeController").metadata.name}`;
    const members = [{ kind: "User", name: "dana", role: "admin" }];
    const holding = (finalizers: string[]) => ({ ...shop(members), metadata: { name: "shop", finalizers } }) as any;
    const administers = [...mayRequest, ADMINISTER];

    test("its admin member may add only Metacontroller's finalizer and the garbage collector's foregroundDeletion, at create or later", () => {
      for (const finalizer of [METACONTROLLER_FINALIZER, "foregroundDeletion"]) {
        assert.equal(asked("UPDATE", { object: holding([finalizer]), oldObject: holding([]) }).allowed, true, finalizer);
        assert.equal(asked("CREATE", { object: holding([finalizer]) }).allowed, true, finalizer);
      }
    });

    test("orphan is refused to its admin member: the garbage collector would leave the Namespace behind, owned by nothing", () => {
      assert.equal(asked("UPDATE", { object: holding(["orphan"]), oldObject: holding([]) }).allowed, false);
      assert.equal(asked("CREATE", { object: holding(["orphan"]) }).allowed, false);
    });

    test("copies of an admitted finalizer stop at 16, which keep a Project far below what etcd stores; an administer holder may add more", () => {
      const copies = (count: number) => holding(Array.from({ length: count }, () => METACONTROLLER_FINALIZER));
      assert.equal(asked("UPDATE", { object: copies(16), oldObject: copies(1) }).allowed, true);
      const refusal = asked("UPDATE", { object: copies(17), oldObject: copies(16) });
      assert.equal(refusal.allowed, false);
      assert.match(String(refusal.message), /^Project shop would carry 17 finalizers, and only a holder of the verb administer/);
      assert.equal(asked("CREATE", { object: copies(17) }).allowed, false);
      assert.equal(asked("UPDATE", { object: copies(17), oldObject: copies(17) }).allowed, true, "a list it had already");
      assert.equal(asked("UPDATE", { object: copies(17), oldObject: copies(1) }, { username: "pat" }, administers).allowed, true);
    });

    test("any other finalizer is refused to its admin member, naming it, at create or later: it could keep the Project Terminating for good", () => {
      const refusal = asked("UPDATE", { object: holding([METACONTROLLER_FINALIZER, "hold.example.com/forever"]), oldObject: holding([METACONTROLLER_FINALIZER]) });
      assert.equal(refusal.allowed, false);
      assert.match(String(refusal.message), new RegExp(String.raw`and dana adds hold\.example\.com\/forever\. A holder of the verb administer on ${escaped(`${PARENT.plural}.${GROUP}`)} may add others\.$`));
      assert.equal(asked("CREATE", { object: holding(["hold.example.com/forever"]) }).allowed, false);
      assert.equal(asked("UPDATE", { object: holding(["metacontroller.io/compositecontroller-other"]), oldObject: holding([]) }).allowed, false, "another controller's, which nobody would remove");
    });

    test("a finalizer it already had stays admitted, and a holder of administer may add any", () => {
      assert.equal(asked("UPDATE", { object: holding(["hold.example.com/forever"]), oldObject: holding(["hold.example.com/forever"]) }).allowed, true);
      assert.equal(asked("UPDATE", { object: holding(["hold.example.com/forever"]), oldObject: holding([]) }, { username: "pat" }, administers).allowed, true);
    });

    test("the one Metacontroller finalizer it admits is the one the CompositeController's name gives", () => {
      const message = String(asked("UPDATE", { object: holding(["x.example.com/y"]), oldObject: holding([]) }).message);
      assert.ok(message.includes(`metacontroller.io/compositecontroller-${find("CompositeController").metadata.name}`), message);
    });
  });

  describe("deleting a Project so that what it owns is orphaned", () => {
    const members = [{ kind: "User", name: "dana", role: "admin" }];
    const holding = (finalizers: string[]) => ({ ...shop(members), metadata: { name: "shop", finalizers } }) as any;
    const administers = [...mayRequest, ADMINISTER];
    const deleting = (options: AdmissionRequest["options"], finalizers: string[] = []) => ({ oldObject: holding(finalizers), ...(options ? { options } : {}) });

    test("is refused to its admin member, as kubectl delete --cascade=orphan asks it, or the older orphanDependents", () => {
      const refusal = asked("DELETE", deleting({ kind: "DeleteOptions", propagationPolicy: "Orphan" }));
      assert.equal(refusal.allowed, false);
      assert.match(String(refusal.message), new RegExp(String.raw`^Deleting Project shop so that what it owns is orphaned would leave Namespace\s+${escaped(SHOP)} and its members' access behind`));
      assert.equal(asked("DELETE", deleting({ kind: "DeleteOptions", orphanDependents: true })).allowed, false);
    });

    test("is refused where the Project holds the orphan finalizer and the delete does not say otherwise", () => {
      assert.equal(asked("DELETE", deleting({ kind: "DeleteOptions" }, ["orphan"])).allowed, false);
      assert.equal(asked("DELETE", deleting(undefined, ["orphan"])).allowed, false);
      assert.equal(asked("DELETE", deleting({ kind: "DeleteOptions", propagationPolicy: "Background" }, ["orphan"])).allowed, true, "the API server drops the finalizer");
    });

    test("kubectl delete's default, background, and foreground pass; a holder of administer may orphan", () => {
      for (const propagationPolicy of ["Background", "Foreground"]) assert.equal(asked("DELETE", deleting({ kind: "DeleteOptions", propagationPolicy })).allowed, true, propagationPolicy);
      assert.equal(asked("DELETE", deleting({ kind: "DeleteOptions" })).allowed, true, "no policy given");
      assert.equal(asked("DELETE", deleting({ kind: "DeleteOptions", propagationPolicy: "Orphan" }), { username: "pat" }, administers).allowed, true);
    });
  });

  describe("a Project being deleted", () => {
    const METACONTROLLER_FINALIZER = `metacontroller.io/compositecontroller-${find("CompositeController").metadata.name}`;
    const OTHER_FINALIZER = "backup.example.com/before-delete";
    const held = (finalizers: string[], spec: Record<string, unknown> = { members: [{ kind: "User", name: "dana", role: "admin" }] }) =>
      ({ ...project("shop", { spec }), metadata: { name: "shop", deletionTimestamp: "2026-11-30T00:00:00Z", finalizers } }) as any;
    const all = held(["foregroundDeletion", METACONTROLLER_FINALIZER, OTHER_FINALIZER]);
    const without = (finalizer: string) => held(all.metadata.finalizers.filter((name: string) => name !== finalizer));
    const administers = [...mayRequest, ADMINISTER];

    test("loses each finalizer only to whoever holds it: Metacontroller's to Metacontroller, the garbage collector's to it, any other to an administer holder", () => {
      const metacontroller = trusted["metacontroller"]!;
      const collector = { username: KUBERNETES_CONTROLLERS.garbageCollector, authorized: [] };
      // Metacontroller is known by the verb control, the garbage collector by its name.
      const as = ({ username, authorized }: { username: string; authorized: string[] }) => [{ username }, authorized] as const;
      assert.equal(asked("UPDATE", { object: without(METACONTROLLER_FINALIZER), oldObject: all }, ...as(metacontroller)).allowed, true);
      assert.equal(asked("UPDATE", { object: without("foregroundDeletion"), oldObject: all }, ...as(collector)).allowed, true);
      assert.equal(asked("UPDATE", { object: without("foregroundDeletion"), oldObject: all }, ...as(metacontroller)).allowed, false, "Metacontroller takes the collector's");
      assert.equal(asked("UPDATE", { object: without(METACONTROLLER_FINALIZER), oldObject: all }, ...as(collector)).allowed, false, "the collector takes Metacontroller's");
      assert.equal(asked("UPDATE", { object: without(METACONTROLLER_FINALIZER), oldObject: all }, { username: metacontroller.username }).allowed, false, "Metacontroller's name without what RBAC grants it");
      assert.equal(asked("UPDATE", { object: without(OTHER_FINALIZER), oldObject: all }, ...as(collector)).allowed, false, "the collector takes another's");
      assert.equal(asked("UPDATE", { object: without(OTHER_FINALIZER), oldObject: all }, { username: "pat" }, administers).allowed, true, "an administer holder");
    });

    test("before its deletion too, its admin member cannot take Metacontroller's finalizer off, which would skip its finalize hook", () => {
      const living = (finalizers: string[]) => ({ ...project("shop", { spec: { members: [{ kind: "User", name: "dana", role: "admin" }] } }), metadata: { name: "shop", finalizers } }) as any;
      const before = living([METACONTROLLER_FINALIZER]);
      const refused = asked("UPDATE", { object: living([]), oldObject: before });
      assert.equal(refused.allowed, false);
      assert.match(String(refused.message), new RegExp(`dana may not remove ${METACONTROLLER_FINALIZER.replaceAll(".", "\\.")}\\.$`));
      assert.equal(asked("UPDATE", { object: living([]), oldObject: before }, { username: "pat" }, administers).allowed, true, "an administer holder");
      assert.equal(asked("UPDATE", { object: living([METACONTROLLER_FINALIZER]), oldObject: before }).allowed, true, "any other change keeps it");
    });

    test("stored before a member rule, it still loses its finalizers: a rule on members never holds a deletion back", () => {
      const ownRobot = { members: [{ kind: "ServiceAccount", namespace: SHOP, name: "deployer", role: "admin" }] };
      const before = held([METACONTROLLER_FINALIZER], ownRobot);
      assert.equal(asked("UPDATE", { object: held([], ownRobot), oldObject: before }, { username: trusted["metacontroller"]!.username }, trusted["metacontroller"]!.authorized).allowed, true);
    });

    test("cannot be rewritten or held back, not even by its admin members, and the refusal says what may change", () => {
      const rewritten = held(all.metadata.finalizers, { members: [{ kind: "User", name: "mallory", role: "admin" }] });
      const refusal = asked("UPDATE", { object: rewritten, oldObject: all }, { username: "mallory" });
      assert.equal(refusal.allowed, false, "a non-member rewrites the spec");
      assert.match(String(refusal.message), /^Project shop is being deleted: only its finalizers may change now, each removed by whoever holds it/);
      assert.equal(asked("UPDATE", { object: rewritten, oldObject: all }).allowed, false, "its admin rewrites the spec");
      assert.equal(asked("UPDATE", { object: without(OTHER_FINALIZER), oldObject: all }).allowed, false, "its admin removes another controller's finalizer");
      assert.equal(asked("UPDATE", { object: held([...all.metadata.finalizers, "hold.example.com/forever"]), oldObject: all }).allowed, false, "its admin adds a finalizer");
      const marked = { ...all, metadata: { ...all.metadata, labels: { team: "a" }, annotations: { note: "a" } } };
      const relabelled = { ...marked, metadata: { ...marked.metadata, labels: { team: "b" } } };
      assert.equal(asked("UPDATE", { object: relabelled, oldObject: marked }).allowed, false, "its admin relabels it");
      assert.equal(asked("UPDATE", { object: { ...all, metadata: { ...all.metadata, labels: { team: "b" } } }, oldObject: all }).allowed, false, "its admin labels it");
      const annotated = { ...marked, metadata: { ...marked.metadata, annotations: { note: "b" } } };
      assert.equal(asked("UPDATE", { object: annotated, oldObject: marked }).allowed, false, "its admin annotates it");
      assert.equal(asked("UPDATE", { object: marked, oldObject: marked }).allowed, true, "an update that changes nothing");
      assert.equal(asked("UPDATE", { object: rewritten, oldObject: all }, { username: "pat" }, administers).allowed, true, "an administer holder may");
    });
  });

  test("the status Metacontroller writes is not the policy's: it matches the Project itself, not its status subresource", () => {
    assert.deepEqual(policy.spec.matchConstraints.resourceRules, [
      { apiGroups: [GROUP], apiVersions: ["*"], operations: ["CREATE", "UPDATE", "DELETE"], resources: ["projects"], scope: "Cluster" },
    ]);
  });

  // feature: guardrails
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

  test("without the verb use on the default profile, a developer creates no Project on it, named or not", () => {
    const withoutDefault = mayRequest.filter((grant) => !grant.startsWith(`${GROUP}/projectprofiles/use`));
    assert.notDeepEqual(withoutDefault, mayRequest, "the requester role grants use on the default profile");
    for (const profile of [undefined, DEFAULT_PROFILE]) {
      const refused = asked("CREATE", { object: withProfile(profile) }, dana, withoutDefault);
      assert.equal(refused.allowed, false, `profile ${profile ?? "not named"}`);
      assert.match(String(refused.message), new RegExp(`^Choosing ProjectProfile ${DEFAULT_PROFILE} takes the verb use on it`));
    }
  });

  test("an admin member cannot raise their own limits by switching profile, and keeps a profile once given", () => {
    const given = withProfile("large");
    assert.equal(asked("UPDATE", { object: given, oldObject: withProfile(DEFAULT_PROFILE) }).allowed, false, "switching to large");
    const renamed = { ...given, spec: { ...given.spec, description: "renamed" } };
    assert.equal(asked("UPDATE", { object: renamed, oldObject: given }).allowed, true, "changing something else of a Project on large");
    assert.equal(asked("DELETE", { oldObject: given }).allowed, true, "deleting it");
  });

  test("an admin member cannot leave a profile an admin assigned, and is told who can move the Project", () => {
    const restricted = withProfile("restricted");
    const left = asked("UPDATE", { object: withProfile(DEFAULT_PROFILE), oldObject: restricted });
    assert.equal(left.allowed, false, "back to default");
    assert.equal(
      left.message,
      "Project shop is on ProjectProfile restricted, which a cluster admin assigned: leaving it takes the verb use on it, which dana does not have. Ask a cluster admin to move the Project.",
    );
    assert.equal(asked("UPDATE", { object: withProfile(undefined), oldObject: restricted }).allowed, false, "by removing spec.profile");
    assert.equal(asked("UPDATE", { object: withProfile(DEFAULT_PROFILE), oldObject: restricted }, dana, [...mayRequest, `${GROUP}/projectprofiles/use/restricted`]).allowed, true, "with use on it");
    assert.equal(asked("UPDATE", { object: withProfile(DEFAULT_PROFILE), oldObject: withProfile(undefined) }).allowed, true, "naming the default it had");
  });

  test("a profile an admin opens with the verb use, to some or to all, may be chosen by them", () => {
    const opened = [...mayRequest, `${GROUP}/projectprofiles/use/large`];
    assert.equal(asked("CREATE", { object: withProfile("large") }, dana, opened).allowed, true, "use on large");
    assert.equal(asked("CREATE", { object: withProfile("huge") }, dana, opened).allowed, false, "use on large is not use on huge");
    assert.equal(asked("CREATE", { object: withProfile("huge") }, dana, [...mayRequest, `${GROUP}/projectprofiles/use`]).allowed, true, "use on every profile");
  });
  // end feature: guardrails

  test("the requester role creates Projects only as the policy allows and reads none (each Project's members read theirs), and the policy is bound to deny", () => {
    assert.deepEqual(requester.rules, [
      { apiGroups: [GROUP], resources: ["projects"], verbs: ["create"] },
      // feature: guardrails
      { apiGroups: [GROUP], resources: ["projectprofiles"], verbs: ["get", "list", "watch"] },
      { apiGroups: [GROUP], resources: ["projectprofiles"], resourceNames: [DEFAULT_PROFILE], verbs: ["use"] },
      // end feature: guardrails
    ]);
    const bindings = objects.filter((object) => object.kind === "ValidatingAdmissionPolicyBinding" && object.spec.policyName === policy.metadata.name);
    assert.deepEqual(bindings.map((binding) => binding.spec.validationActions), [["Deny"]]);
    assert.equal(policy.spec.failurePolicy, "Fail");
  });
});


describe("admission: access in a Project's Namespace is spec.members", () => {
  // A Namespace as sync labels it.
  const projectNamespace = namespaceIn(sync(project("shop"), namespaces(), related(), clock("2026-11-30T00:00:00Z")));
  const binding = (subjects: any[]) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "mine", namespace: SHOP },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
    subjects,
  });
  const bind = (subjects: any[], { username = "dana", authorized = [] as string[], labels = projectNamespace?.metadata.labels } = {}) =>
    admit(
      accessPolicy,
      {
        operation: "CREATE",
        resource: { group: "rbac.authorization.k8s.io", resource: "rolebindings" },
        kind: "RoleBinding",
        name: "mine",
        object: binding(subjects),
        username,
        authorized,
        namespace: { name: SHOP, ...(labels ? { labels } : {}) },
      }
    );
  const everyone = { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:authenticated" };

  test("an admin member cannot bind the Namespace to system:authenticated, and is sent to spec.members", () => {
    const { allowed, message } = bind([everyone]);
    assert.equal(allowed, false);
    assert.equal(
      message,
      `Namespace ${SHOP} is Project shop's, where access is what its spec.members declare: a RoleBinding here may grant only this ` +
        `Namespace's own ServiceAccounts (kind ServiceAccount in namespace ${SHOP}, or Group system:serviceaccounts:${SHOP}). ` +
        "Add people to the Project's spec.members instead.",
    );
  });

  test("nor a User, themselves included, another Group, or a ServiceAccount of another namespace: none of that would go with their removal", () => {
    for (const subject of [
      { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "dana" },
      { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "developers" },
      { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: `system:serviceaccounts:${namespaceOf("other")}` },
      { kind: "ServiceAccount", name: "deployer", namespace: namespaceOf("other") },
      { kind: "ServiceAccount", name: "deployer" },
      // A User of that name is whoever authenticates as it, not the Namespace's ServiceAccounts.
      { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: `system:serviceaccounts:${SHOP}` },
    ]) {
      assert.equal(bind([subject]).allowed, false, JSON.stringify(subject));
      assert.equal(bind([{ kind: "ServiceAccount", name: "ok", namespace: SHOP }, subject]).allowed, false, `beside one allowed: ${JSON.stringify(subject)}`);
    }
  });

  test("a RoleBinding that grants nobody may be made", () => {
    const { subjects: _none, ...empty } = binding([]);
    const result = admit(
      accessPolicy,
      { operation: "CREATE", resource: { group: "rbac.authorization.k8s.io", resource: "rolebindings" }, kind: "RoleBinding", name: "mine", object: empty, username: "dana", namespace: { name: SHOP, labels: projectNamespace?.metadata.labels ?? {} } }
    );
    assert.equal(result.allowed, true);
  });

  test("the Namespace's own ServiceAccounts may be bound, one by one or all together, for its workloads", () => {
    assert.equal(bind([{ kind: "ServiceAccount", name: "deployer", namespace: SHOP }]).allowed, true);
    assert.equal(bind([{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: `system:serviceaccounts:${SHOP}` }]).allowed, true);
  });

  test("a change that grants nobody anything new passes: the garbage collector orphaning a binding, a label; a subject added is refused", () => {
    const granting = { ...binding([{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "alice" }]), metadata: { name: "mine", namespace: SHOP, ownerReferences: [{ apiVersion: "v1", kind: "Project", name: "shop", uid: "u" }] } };
    const update = (object: any, username: string) =>
      admit(accessPolicy, { operation: "UPDATE", resource: { group: "rbac.authorization.k8s.io", resource: "rolebindings" }, kind: "RoleBinding", name: "mine", object, oldObject: granting, username, namespace: { name: SHOP, labels: projectNamespace?.metadata.labels ?? {} } });
    const orphaned = { ...granting, metadata: { name: "mine", namespace: SHOP } };
    assert.equal(update(orphaned, KUBERNETES_CONTROLLERS.garbageCollector).allowed, true, "orphaned");
    assert.equal(update({ ...granting, metadata: { ...granting.metadata, labels: { team: "x" } } }, "dana").allowed, true, "labelled");
    assert.equal(update({ ...granting, subjects: [...granting.subjects, everyone] }, "dana").allowed, false, "a subject added");
    assert.equal(update({ ...granting, roleRef: { ...granting.roleRef, name: "cluster-admin" } }, "dana").allowed, false, "another role");
    const { subjects: _, ...grantless } = granting;
    assert.equal(update(grantless, "dana").allowed, true, "subjects taken away grant nothing");
  });

  test("Metacontroller binds the members, and an administer holder anyone", () => {
    assert.equal(bind([everyone], trusted["metacontroller"]).allowed, true);
    assert.equal(bind([everyone], { username: "pat", authorized: [ADMINISTER] }).allowed, true);
  });

  test("it holds in every Namespace sync labels as a Project's, and nowhere else", () => {
    assert.deepEqual(accessPolicy.spec.matchConstraints.namespaceSelector.matchExpressions, [{ key: PROJECT_LABEL, operator: "Exists" }]);
    assert.ok(JSON.stringify(accessPolicy.spec.validations).includes(`labels['${PROJECT_LABEL}']`));
    assert.equal(bind([everyone], { labels: { "kubernetes.io/metadata.name": "kube-public" } }).matched, false);
  });
});

