// What the guardrails feature (features/guardrails.ts) adds to sync's
// answer: a ResourceQuota, LimitRange, NetworkPolicy and Pod Security level
// from the Project's ProjectProfile, kept while the profile cannot be read.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { API_VERSION, NAMESPACES, PROJECT_LABEL, customize, sync, type ObservedChildren, type Project, type SyncResponse } from "../sync.ts";
import {
  BUILT_IN_PROFILE,
  DEFAULT_PROFILE,
  LIMIT_RANGES,
  NETWORK_POLICIES,
  POD_SECURITY_AUDIT_LABEL,
  POD_SECURITY_LABEL,
  POD_SECURITY_WARN_LABEL,
  PROFILE,
  PROFILE_LABEL,
  PROFILE_RULES,
  PROFILES as PROFILES_GROUP,
  RESOURCE_QUOTAS,
  RULE_ANNOTATIONS,
  COUNTED_RESOURCES,
  LIMITED_RESOURCES,
  compareQuantities,
  guardrails,
  type Guardrail,
  type LimitRange,
  type NetworkPolicy,
  type ProfileSpec,
  type ResourceQuota,
} from "../features/guardrails.ts";
import type { RoleBinding } from "../features/members.ts"; // feature: members
import { DEFAULT_ANNOTATIONS, SETTLED, annotationsSpec, assertKeepsEveryNamespace, at, childrenOfKind, escaped, having, later, namespaceIn, namespaceOf, namespaces, project, ready, related, verdict, withObserved } from "./helpers.ts";
import { PROFILE_CASES } from "./guardrails-cases.ts";

// Project shop's Namespace, where its guardrails go.
const SHOP = namespaceOf("shop");

const guardrailsIn = (answer: SyncResponse) => childrenOfKind<Guardrail>(answer, ["ResourceQuota", "LimitRange", "NetworkPolicy"]);
// feature: members
const roleBindingsIn = (answer: SyncResponse) => childrenOfKind<RoleBinding>(answer, ["RoleBinding"]);
// end feature: members

describe("guardrails: the names", () => {
  test("the profile's API version is sync.ts's", () => {
    assert.equal(PROFILE.apiVersion, API_VERSION);
    assert.equal(PROFILE_LABEL, `${API_VERSION.split("/")[0]}/profile`);
  });

  test("customize asks for the Project's profile by name, default unless it names one, so that every edit of it syncs the Project", () => {
    // Other features ask for the same profile, and for more: the one rule is there, once.
    const profileRules = (spec?: NonNullable<Project["spec"]>) => customize(project("test", spec ? { spec } : {})).relatedResources.filter((rule) => rule.resource === PROFILE.plural);
    assert.deepEqual(profileRules(), [{ apiVersion: API_VERSION, resource: PROFILE.plural, names: ["default"] }]);
    assert.deepEqual(profileRules({ profile: "gold" }), [{ apiVersion: API_VERSION, resource: PROFILE.plural, names: ["gold"] }]);
  });
});

describe("guardrails: a refusal keeps every Namespace", () => {
  test("the feature's refusals", () => {
    assert.deepEqual(guardrails.refusals, ["ProfileNotFound", "InvalidProfile"]);
  });

  test("ProfileNotFound: every observed Namespace is in the answer, with the annotations sync owns as they were", () => {
    assertKeepsEveryNamespace("ProfileNotFound", { parent: project("shop", { spec: { profile: "gone" } }), children: having(SHOP) });
  });

  test("InvalidProfile: every observed Namespace is in the answer, with the annotations sync owns as they were", () => {
    const invalid = related({}, { default: { podSecurity: "lenient" } });
    assertKeepsEveryNamespace("InvalidProfile", { parent: project("shop"), children: having(SHOP), related: invalid });
  });
});

describe("guardrails from the Project's profile", () => {
  // A profile like k8s.yaml's default, written as an admin might.
  const everyGuardrail: ProfileSpec = {
    resourceQuota: { hard: { "requests.cpu": "2", "limits.memory": "8Gi", pods: "20" } },
    limitRange: { default: { cpu: "0.5", memory: "512Mi" }, defaultRequest: { cpu: "100m" } },
    networkPolicy: { allowFromNamespaces: ["ingress-nginx"] },
    podSecurity: "baseline",
  };
  const profiles = (spec: ProfileSpec | Record<string, unknown> = everyGuardrail) => related({}, { default: spec });
  const active = () => namespaces({ [SHOP]: "Active" });
  const dana = [{ kind: "User", name: "dana", role: "admin" }]; // feature: members
  const shop = (spec: NonNullable<Project["spec"]> = {}) => project("shop", { spec });
  const kinds = (answer: SyncResponse) => answer.children.map((child) => `${child.kind} ${child.metadata.name}`);
  /** The children as Metacontroller leaves them once it has applied the answer. */
  const applied = (answer: SyncResponse, children = active()) => {
    const observed = withObserved(children, answer.children.filter((child) => child.kind !== "Namespace"));
    const namespace = namespaceIn(answer);
    if (namespace) observed[NAMESPACES][namespace.metadata.name]!.metadata = structuredClone(namespace.metadata);
    return observed;
  };
  const quotaIn = (answer: SyncResponse) => guardrailsIn(answer).find((guardrail) => guardrail.kind === "ResourceQuota") as ResourceQuota | undefined;

  test("an Active Namespace gets the profile's ResourceQuota, LimitRange and NetworkPolicy, each labelled with the profile", () => {
    const answer = sync(shop(), active(), profiles(), at);
    const labels = { [PROFILE_LABEL]: "default" };
    assert.deepEqual(guardrailsIn(answer), [
      { apiVersion: "v1", kind: "ResourceQuota", metadata: { name: "project-quota", namespace: SHOP, labels }, spec: { hard: everyGuardrail.resourceQuota!.hard } },
      {
        apiVersion: "v1",
        kind: "LimitRange",
        metadata: { name: "project-limits", namespace: SHOP, labels },
        // A default request left out is the default limit, as the API server fills it in.
        spec: { limits: [{ type: "Container", default: { cpu: "0.5", memory: "512Mi" }, defaultRequest: { cpu: "100m", memory: "512Mi" } }] },
      },
      {
        apiVersion: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: { name: "project-isolation", namespace: SHOP, labels },
        spec: {
          podSelector: {},
          policyTypes: ["Ingress"],
          ingress: [
            {
              from: [
                { podSelector: {} },
                { namespaceSelector: { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["ingress-nginx"] }] } },
              ],
            },
          ],
        },
      },
    ]);
    assert.equal(answer.status.profile, "default");
  });

  test("the Namespace enforces the profile's Pod Security level from its creation, and warns and audits at the same level", () => {
    const answer = sync(shop(), namespaces(), profiles(), at);
    const levels = { [POD_SECURITY_LABEL]: "baseline", [POD_SECURITY_WARN_LABEL]: "baseline", [POD_SECURITY_AUDIT_LABEL]: "baseline" };
    assert.deepEqual(namespaceIn(answer)?.metadata.labels, { [PROJECT_LABEL]: "shop", ...levels });
  });

  test("a profile's egress lets pods reach the cluster's DNS, their own Namespace and what it lists, and nothing else; without it, egress is not limited", () => {
    const isolationOf = (spec: Record<string, unknown>) =>
      guardrailsIn(sync(shop(), active(), related({}, { default: spec }), at)).find((guardrail) => guardrail.kind === "NetworkPolicy") as NetworkPolicy;
    const limited = isolationOf({ networkPolicy: { egress: { toNamespaces: ["monitoring"], toCIDRs: ["10.0.0.0/8"] } } });
    assert.deepEqual(limited.spec.policyTypes, ["Ingress", "Egress"]);
    assert.deepEqual(limited.spec.egress, [
      { to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }], ports: [{ protocol: "UDP", port: 53 }, { protocol: "TCP", port: 53 }] },
      { to: [{ podSelector: {} }, { namespaceSelector: { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["monitoring"] }] } }, { ipBlock: { cidr: "10.0.0.0/8" } }] },
    ]);
    assert.deepEqual(isolationOf({ networkPolicy: { egress: {} } }).spec.egress?.[1], { to: [{ podSelector: {} }] }, "only the Namespace itself, and DNS");
    const open = isolationOf({ networkPolicy: {} });
    assert.deepEqual(open.spec.policyTypes, ["Ingress"]);
    assert.equal(open.spec.egress, undefined);
  });

  test("the profile's node selector and allowed classes become the Namespace's annotations, lists space-separated", () => {
    const spec = { pods: { nodeSelector: { pool: "tenants", "kubernetes.io/os": "linux" } }, allowedClasses: { storage: ["standard", "fast"], ingress: ["nginx"], priority: [], runtime: ["gvisor"] } };
    const annotations = namespaceIn(sync(shop(), namespaces(), related({}, { default: spec }), at))?.metadata.annotations;
    assert.deepEqual(annotations, {
      ...DEFAULT_ANNOTATIONS,
      [RULE_ANNOTATIONS.profile]: "default",
      [RULE_ANNOTATIONS.nodeSelector]: "pool=tenants kubernetes.io/os=linux",
      [RULE_ANNOTATIONS.allowedStorageClasses]: "standard fast",
      [RULE_ANNOTATIONS.allowedIngressClasses]: "nginx",
      [RULE_ANNOTATIONS.allowedPriorityClasses]: "",
      [RULE_ANNOTATIONS.allowedRuntimeClasses]: "gvisor",
    });
  });

  test("a profile that warns and audits at a stricter level than it enforces announces a tightening before it refuses", () => {
    const announcing = related({}, { default: { podSecurity: "baseline", podSecurityWarn: "restricted", podSecurityAudit: "restricted" } });
    const labels = namespaceIn(sync(shop(), namespaces(), announcing, at))?.metadata.labels;
    assert.deepEqual(labels, { [PROJECT_LABEL]: "shop", [POD_SECURITY_LABEL]: "baseline", [POD_SECURITY_WARN_LABEL]: "restricted", [POD_SECURITY_AUDIT_LABEL]: "restricted" });
    const warnOnly = namespaceIn(sync(shop(), namespaces(), related({}, { default: { podSecurityWarn: "restricted" } }), at))?.metadata.labels;
    assert.deepEqual(warnOnly, { [PROJECT_LABEL]: "shop", [POD_SECURITY_WARN_LABEL]: "restricted" }, "no level is enforced that the profile does not name");
  });

  test("the profile's pod rules become the Namespace's annotations, where the admission policies read them, with the profile's name for their refusals", () => {
    const pods = { imagePullPolicy: "RequireAlways", securityContextDefaults: "Restricted", allowedRegistries: ["registry.example.com/", "ghcr.io/acme/"] };
    const annotations = namespaceIn(sync(shop({ profile: "strict" }), namespaces(), related({}, { strict: { pods } }), at))?.metadata.annotations;
    assert.deepEqual(annotations, {
      ...DEFAULT_ANNOTATIONS,
      [RULE_ANNOTATIONS.profile]: "strict",
      [RULE_ANNOTATIONS.imagePullPolicy]: "RequireAlways",
      [RULE_ANNOTATIONS.securityContextDefaults]: "Restricted",
      [RULE_ANNOTATIONS.allowedRegistries]: "registry.example.com/ ghcr.io/acme/",
    });
    const none = namespaceIn(sync(shop({ profile: "strict" }), namespaces(), related({}, { strict: {} }), at))?.metadata.annotations;
    assert.deepEqual(none, DEFAULT_ANNOTATIONS, "a rule taken out of the profile is taken off the Namespace");
  });

  test("the quota and the isolation come in the answer that asks for the Namespace, which Metacontroller makes first; the LimitRange, which it would make before, in the next", () => {
    assert.deepEqual(kinds(sync(shop(), namespaces(), profiles(), at)), [`Namespace ${SHOP}`, "ResourceQuota project-quota", "NetworkPolicy project-isolation"]);
    assert.deepEqual(kinds(sync(shop(), active(), profiles(), at)), [`Namespace ${SHOP}`, "ResourceQuota project-quota", "LimitRange project-limits", "NetworkPolicy project-isolation"]);
  });

  test("no guardrail goes into a Namespace being deleted, or one someone else owns", () => {
    assert.deepEqual(kinds(sync(shop(), namespaces({ [SHOP]: "Terminating" }), profiles(), at)), [`Namespace ${SHOP}`]);
    assert.deepEqual(kinds(sync(shop(), namespaces(), related({ [SHOP]: { phase: "Active" } }, { default: everyGuardrail }), at)), []);
  });

  test("a Namespace stuck Terminating keeps the guardrails it has, as its pods may still run", () => {
    const guarded = withObserved(namespaces({ [SHOP]: "Terminating" }), guardrailsIn(sync(shop(), active(), profiles(), at)));
    assert.deepEqual(kinds(sync(shop(), guarded, profiles(), at)), [`Namespace ${SHOP}`, "ResourceQuota project-quota", "LimitRange project-limits", "NetworkPolicy project-isolation"]);
  });

  test("isolation without other namespaces admits the Project's own pods only", () => {
    const answer = sync(shop(), active(), profiles({ networkPolicy: {} }), at);
    const [policy] = guardrailsIn(answer) as NetworkPolicy[];
    assert.deepEqual(policy?.spec.ingress, [{ from: [{ podSelector: {} }] }]);
  });

  test("an empty profile asks for no guardrail and no Pod Security label", () => {
    const answer = sync(shop(), active(), profiles({}), at);
    assert.deepEqual(kinds(answer), [`Namespace ${SHOP}`]);
    assert.deepEqual(namespaceIn(answer)?.metadata.labels, { [PROJECT_LABEL]: "shop" });
  });

  // feature: members
  test("members get access once the quota and the isolation are in place, so that nothing they run escapes them; the LimitRange comes with it", () => {
    const first = sync(shop({ members: dana }), namespaces(), profiles(), at);
    assert.deepEqual(roleBindingsIn(first), [], "no access before the guardrails are there");
    const second = sync(project("shop", { spec: { members: dana }, status: first.status }), applied(first), profiles(), at);
    assert.deepEqual(roleBindingsIn(second).map((binding) => binding.metadata.name), ["project-admin-users"]);
    assert.ok(guardrailsIn(second).some((guardrail) => guardrail.kind === "LimitRange"));
    const third = sync(project("shop", { spec: { members: dana }, status: second.status }), applied(second), profiles(), at);
    assert.equal(ready(third).reason, "NamespaceActive");
  });

  test("a new Project says WaitingForNamespace from its first sync until all it asks for exists, so that Metacontroller writes its status twice, not at each round", () => {
    const first = sync(shop({ members: dana }), namespaces(), profiles(), at);
    const second = sync(project("shop", { spec: { members: dana }, status: first.status }), applied(first), profiles(), later);
    assert.deepEqual(second.status, first.status);
    assert.deepEqual(verdict(first), { status: "False", reason: "WaitingForNamespace", message: `Waiting for Metacontroller to create Namespace ${SHOP} and what goes in it.` });
  });

  test("once Ready, what a Project waits for is told in detail", () => {
    const filled = applied(sync(shop({ members: dana }), applied(sync(shop({ members: dana }), namespaces(), profiles(), at)), profiles(), at));
    const quotaGone = structuredClone(filled);
    delete quotaGone[RESOURCE_QUOTAS]![`${SHOP}/project-quota`];
    assert.deepEqual(verdict(sync(project("shop", { spec: { members: dana }, status: SETTLED }), quotaGone, profiles(), at)), {
      status: "False",
      reason: "WaitingForGuardrails",
      message: `Namespace ${SHOP} is Active; waiting for ResourceQuota project-quota to be as its profile says.`,
    });
  });

  test("access once given is not taken back while a deleted guardrail is made again", () => {
    const settled = applied(sync(shop({ members: dana }), applied(sync(shop({ members: dana }), active(), profiles(), at)), profiles(), at));
    delete settled[RESOURCE_QUOTAS]![`${SHOP}/project-quota`];
    const answer = sync(project("shop", { spec: { members: dana }, status: SETTLED }), settled, profiles(), at);
    assert.ok(quotaIn(answer), "the quota is asked for again");
    assert.deepEqual(roleBindingsIn(answer).map((binding) => binding.metadata.name), ["project-admin-users"]);
    assert.equal(ready(answer).reason, "WaitingForGuardrails");
  });
  // end feature: members

  test("a quantity the API server stored another way is asked for as stored, so the answer is a fixed point", () => {
    const first = sync(shop(), active(), profiles(), at);
    const observed = applied(first);
    // The API server writes 0.5 CPU as 500m.
    (observed[LIMIT_RANGES]![`${SHOP}/project-limits`]!["spec"] as any).limits[0].default.cpu = "500m";
    const again = sync(shop(), observed, profiles(), at);
    const [, limitRange] = guardrailsIn(again) as [ResourceQuota, LimitRange];
    assert.equal(limitRange.spec.limits[0].default?.cpu, "500m");
    assert.equal(ready(again).reason, "NamespaceActive");
    assert.deepEqual(sync(project("shop", { spec: {}, status: again.status }), observed, profiles(), later).status, again.status);
  });

  test("a quota raised by hand is put back and reported until it is", () => {
    const observed = applied(sync(shop(), active(), profiles(), at));
    (observed[RESOURCE_QUOTAS]![`${SHOP}/project-quota`]!["spec"] as any).hard.pods = "1000";
    const answer = sync(shop(), observed, profiles(), at);
    assert.equal(quotaIn(answer)?.spec.hard["pods"], "20");
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "WaitingForGuardrails",
      message: `Namespace ${SHOP} is Active; waiting for ResourceQuota project-quota to be as its profile says.`,
    });
  });

  test("a source of traffic added by hand to the NetworkPolicy is not as its profile says: it is put back, and reported until it is", () => {
    const observed = applied(sync(shop(), active(), profiles(), at));
    const policy = observed[NETWORK_POLICIES]![`${SHOP}/project-isolation`]!["spec"] as any;
    const asked = structuredClone(policy.ingress);
    policy.ingress[0].from.push({ namespaceSelector: {} });
    const answer = sync(shop(), observed, profiles(), at);
    assert.deepEqual((guardrailsIn(answer).find((guardrail) => guardrail.kind === "NetworkPolicy") as NetworkPolicy).spec.ingress, asked);
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "WaitingForGuardrails",
      message: `Namespace ${SHOP} is Active; waiting for NetworkPolicy project-isolation to be as its profile says.`,
    });
  });

  test("a NetworkPolicy narrowed by hand to some pods, which the merge cannot undo, is left out once so that it is made afresh", () => {
    const observed = applied(sync(shop(), active(), profiles(), at));
    (observed[NETWORK_POLICIES]![`${SHOP}/project-isolation`]!["spec"] as any).podSelector = { matchLabels: { app: "db" } };
    const answer = sync(shop(), observed, profiles(), at);
    assert.deepEqual(kinds(answer), [`Namespace ${SHOP}`, "ResourceQuota project-quota", "LimitRange project-limits"]);
    assert.equal(ready(answer).reason, "WaitingForGuardrails");
    delete observed[NETWORK_POLICIES]![`${SHOP}/project-isolation`];
    assert.ok(kinds(sync(shop(), observed, profiles(), at)).includes("NetworkPolicy project-isolation"), "and asked for again");
  });

  test("an edited profile changes the quota of every Project that uses it", () => {
    const observed = applied(sync(shop(), active(), profiles(), at));
    const raised = { ...everyGuardrail, resourceQuota: { hard: { ...everyGuardrail.resourceQuota!.hard, pods: "50" } } };
    assert.equal(quotaIn(sync(shop(), observed, profiles(raised), at))?.spec.hard["pods"], "50");
  });

  test("a part taken out of the profile is removed from the Namespace, and Ready waits for it", () => {
    const observed = applied(sync(shop(), active(), profiles(), at));
    const { networkPolicy: _, ...withoutIsolation } = everyGuardrail;
    const answer = sync(shop(), observed, profiles(withoutIsolation), at);
    assert.deepEqual(kinds(answer), [`Namespace ${SHOP}`, "ResourceQuota project-quota", "LimitRange project-limits"]);
    assert.deepEqual(verdict(answer).message, `Namespace ${SHOP} is Active; waiting for NetworkPolicy project-isolation to be removed.`);
  });

  test("a Project naming another profile gets that one's guardrails, and customize asks for it", () => {
    const large = { resourceQuota: { hard: { pods: "100" } } };
    const answer = sync(shop({ profile: "large" }), active(), related({}, { default: everyGuardrail, large }), at);
    assert.deepEqual(quotaIn(answer)?.spec.hard, { pods: "100" });
    assert.equal(quotaIn(answer)?.metadata.labels[PROFILE_LABEL], "large");
    assert.deepEqual(customize(shop({ profile: "large" })).relatedResources.find((rule) => rule.resource === "projectprofiles"), { apiVersion: API_VERSION, resource: "projectprofiles", names: ["large"] });
  });

  test("a new Project naming a profile that does not exist gets no Namespace, and says why", () => {
    const answer = sync(shop({ profile: "large" }), namespaces(), profiles(), at);
    assert.deepEqual(answer.children, []);
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "ProfileNotFound",
      message:
        "ProjectProfile large does not exist, so no Namespace is created without guardrails. " +
        "Set spec.profile to the name of a ProjectProfile that does (kubectl get projectprofiles), or ask a cluster admin to create it.",
    });
  });

  test("while its profile is missing, a Project keeps its guardrails, Pod Security labels and pod rules exactly as observed", () => {
    const onLarge = { profile: "large" };
    Object.assign(onLarge, { members: dana }); // feature: members
    const large = related({}, { large: { ...everyGuardrail, pods: { allowedRegistries: ["registry.example.com/"] } } });
    const observed = applied(sync(shop(onLarge), applied(sync(shop(onLarge), active(), large, at)), large, at));
    (observed[RESOURCE_QUOTAS]![`${SHOP}/project-quota`]!["spec"] as any).hard.pods = "7";
    const answer = sync(shop({ ...onLarge, ...annotationsSpec("changed") }), observed, related({}, {}), at);
    assert.equal(ready(answer).reason, "ProfileNotFound");
    assert.match(ready(answer).message, new RegExp(`^ProjectProfile large does not exist, so Namespace ${escaped(SHOP)} keeps the guardrails it has`));
    assert.deepEqual(namespaceIn(answer)?.metadata, {
      name: SHOP,
      labels: { [PROJECT_LABEL]: "shop", [POD_SECURITY_LABEL]: "baseline", [POD_SECURITY_WARN_LABEL]: "baseline", [POD_SECURITY_AUDIT_LABEL]: "baseline" },
      annotations: { ...DEFAULT_ANNOTATIONS, [RULE_ANNOTATIONS.profile]: "large", [RULE_ANNOTATIONS.allowedRegistries]: "registry.example.com/" },
    });
    assert.equal(quotaIn(answer)?.spec.hard["pods"], "7", "as observed, not as any profile says");
    assert.deepEqual(kinds(answer).slice(1, 4), ["ResourceQuota project-quota", "LimitRange project-limits", "NetworkPolicy project-isolation"]);
    assert.deepEqual(roleBindingsIn(answer).map((binding) => binding.metadata.name), ["project-admin-users"], "access is not the profile's"); // feature: members
    assert.equal(answer.status.profile, "large", "the profile the guardrails came from");
  });

  test("while its profile is missing, each guardrail is kept under the apiVersion it was observed with, so Metacontroller keeps it rather than deleting it", () => {
    const observed = applied(sync(shop({ profile: "large" }), active(), related({}, { large: everyGuardrail }), at));
    const answer = sync(shop({ profile: "large" }), observed, related({}, {}), at);
    assert.equal(ready(answer).reason, "ProfileNotFound");
    const kept = guardrailsIn(answer);
    assert.deepEqual(kept.map((guardrail) => guardrail.kind), ["ResourceQuota", "LimitRange", "NetworkPolicy"]);
    for (const guardrail of kept) {
      const group = `${guardrail.kind}.${guardrail.apiVersion}`;
      assert.ok(observed[group]?.[`${SHOP}/${guardrail.metadata.name}`], `${guardrail.kind} is filed under ${group}, where it was observed`);
    }
  });

  test("without ProjectProfile default, a Project that names no profile gets the built-in default's guardrails", () => {
    const answer = sync(shop(), active(), related({}, {}), at);
    assert.deepEqual(quotaIn(answer)?.spec, BUILT_IN_PROFILE.resourceQuota);
    assert.equal(namespaceIn(answer)?.metadata.labels[POD_SECURITY_LABEL], BUILT_IN_PROFILE.podSecurity);
    assert.equal(namespaceIn(answer)?.metadata.annotations[RULE_ANNOTATIONS.imagePullPolicy as never], "SetAlways");
    assert.equal(answer.status.profile, DEFAULT_PROFILE);
    assert.equal(ready(sync(shop({ profile: "large" }), active(), related({}, {}), at)).reason, "ProfileNotFound", "a profile named, and missing, is not replaced");
  });

  // What kubectl-mtb's 19 benchmarks at level 2 ask of a tenant's Namespace
  // (docs/operating.md, "Multi-tenancy benchmarks"): the e2e holds the same
  // on a real API server.
  test("the built-in default is what the multi-tenancy benchmarks ask: restricted everywhere, quotas on every resource they name, images pulled afresh", () => {
    const { resourceQuota, limitRange, podSecurity, podSecurityWarn = podSecurity, podSecurityAudit = podSecurity, pods } = BUILT_IN_PROFILE;
    assert.deepEqual([podSecurity, podSecurityWarn, podSecurityAudit], ["restricted", "restricted", "restricted"]);
    assert.deepEqual(pods, { imagePullPolicy: "SetAlways", securityContextDefaults: "Restricted" });
    const hard = resourceQuota!.hard;
    for (const counted of COUNTED_RESOURCES) assert.ok(hard[counted] !== undefined, `a quota on ${counted}`);
    for (const resource of LIMITED_RESOURCES) {
      for (const kind of ["requests", "limits"] as const) assert.ok(hard[`${kind}.${resource}`] !== undefined, `a quota on ${kind}.${resource}`);
      // A container that states nothing gets defaults the quota accepts, many times over.
      const [request, limit] = [limitRange!.defaultRequest![resource]!, limitRange!.default![resource]!];
      assert.ok(compareQuantities(request, limit) <= 0 && compareQuantities(limit, hard[`limits.${resource}`]!) < 0, resource);
      assert.ok(compareQuantities(request, hard[`requests.${resource}`]!) < 0, resource);
    }
    assert.equal(hard["services.nodeports"], "0");
    assert.equal(hard["services.loadbalancers"], "0");
  });

  test("a profile that breaks its rules is reported with where and why, and the guardrails are kept", () => {
    const observed = applied(sync(shop(), active(), profiles(), at));
    const answer = sync(shop(), observed, profiles({ ...everyGuardrail, limitRange: { default: { cpu: "1" }, defaultRequest: { cpu: "2" } } }), at);
    assert.deepEqual(verdict(answer), {
      status: "False",
      reason: "InvalidProfile",
      message:
        `ProjectProfile default breaks its rules (spec.limitRange: ${PROFILE_RULES.requestOverLimit}), so Namespace ${SHOP} ` +
        "keeps the guardrails it has, and is otherwise left as it is. A cluster admin must fix it.",
    });
    assert.equal(guardrailsIn(answer).length, 3);
  });

  for (const { what, spec, breaks } of PROFILE_CASES.filter((profileCase) => profileCase.breaks)) {
    test(`a profile that breaks a rule gets its Projects InvalidProfile naming it: ${what}`, () => {
      assert.ok(breaks);
      const answer = sync(shop(), active(), profiles(spec), at);
      assert.equal(ready(answer).reason, "InvalidProfile");
      assert.ok(ready(answer).message.includes(PROFILE_RULES[breaks]), ready(answer).message);
    });
  }

  for (const { what, spec } of PROFILE_CASES.filter((profileCase) => !profileCase.breaks)) {
    test(`a profile that keeps every rule is taken as it is: ${what}`, () => {
      const answer = sync(shop(), active(), profiles(spec), at);
      assert.notEqual(ready(answer).reason, "InvalidProfile", ready(answer).message);
      const hard = (spec as ProfileSpec).resourceQuota?.hard;
      if (hard) assert.deepEqual(quotaIn(answer)?.spec.hard, hard);
    });
  }

  test("a default request for a resource without a default limit is asked for alone, and the limit of another resource fills its own request", () => {
    const answer = sync(shop(), active(), profiles({ limitRange: { default: { memory: "512Mi" }, defaultRequest: { cpu: "100m" } } }), at);
    const limitRange = guardrailsIn(answer).find((guardrail) => guardrail.kind === "LimitRange") as LimitRange;
    assert.deepEqual(limitRange.spec.limits, [{ type: "Container", default: { memory: "512Mi" }, defaultRequest: { memory: "512Mi", cpu: "100m" } }]);
    const requestsOnly = sync(shop(), active(), profiles({ limitRange: { defaultRequest: { cpu: "100m" } } }), at);
    assert.deepEqual((guardrailsIn(requestsOnly)[0] as LimitRange).spec.limits, [{ type: "Container", defaultRequest: { cpu: "100m" } }], "no default limit asked for");
  });

  test("a ResourceQuota value the API server stored another way is asked for as stored, so the next sync is a fixed point", () => {
    const first = sync(shop(), active(), profiles({ resourceQuota: { hard: { "requests.memory": "1Gi", "requests.cpu": "0.5" } } }), at);
    const observed = applied(first);
    const hard = (observed[RESOURCE_QUOTAS]![`${SHOP}/project-quota`]!["spec"] as any).hard;
    Object.assign(hard, { "requests.memory": "1024Mi", "requests.cpu": "500m" });
    const again = sync(shop(), observed, profiles({ resourceQuota: { hard: { "requests.memory": "1Gi", "requests.cpu": "0.5" } } }), at);
    assert.deepEqual(quotaIn(again)?.spec.hard, { "requests.memory": "1024Mi", "requests.cpu": "500m" });
    assert.equal(ready(again).reason, "NamespaceActive");
    hard["requests.memory"] = "2Gi";
    const changed = sync(shop(), observed, profiles({ resourceQuota: { hard: { "requests.memory": "1Gi", "requests.cpu": "0.5" } } }), at);
    assert.equal(quotaIn(changed)?.spec.hard["requests.memory"], "1Gi", "another value is put back as the profile says");
  });

  test("a ProjectProfile without spec is an empty profile: no guardrail and no Pod Security label, and Ready", () => {
    const bare = related({}, {});
    bare[PROFILES_GROUP] = { default: { apiVersion: PROFILE.apiVersion, kind: PROFILE.kind, metadata: { name: "default" } } };
    const answer = sync(shop(), active(), bare, at);
    assert.deepEqual(kinds(answer), [`Namespace ${SHOP}`]);
    assert.deepEqual(namespaceIn(answer)?.metadata.labels, { [PROJECT_LABEL]: "shop" });
    assert.equal(ready(answer).reason, "NamespaceActive");
    assert.equal(answer.status.profile, "default");
  });

  test("quantities compare by value, whatever their units", () => {
    for (const [a, b] of [["1Gi", "1024Mi"], ["0.5", "500m"], ["1k", "1000"], ["1.5Gi", "1536Mi"], ["0.001", "1m"], ["2E", "2000P"], ["1Ei", "1024Pi"], ["1Ti", "1099511627776"]]) {
      assert.equal(compareQuantities(a!, b!), 0, `${a} = ${b}`);
    }
    for (const [a, b] of [["1G", "1Gi"], ["999m", "1"], ["1Mi", "1.049M"], ["128Mi", "0.126Gi"], ["1023Pi", "1Ei"], ["1E", "1Ei"]]) {
      assert.equal(compareQuantities(a!, b!), -1, `${a} < ${b}`);
      assert.equal(compareQuantities(b!, a!), 1, `${b} > ${a}`);
    }
  });
});

