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
  PROJECT_QUOTA_NAME,
  compareQuantities,
  guardrails,
  nanosOf,
  quantityOf,
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


describe("guardrails: one quota for a whole Project", () => {
  // A Project on profile team, whose total holds across every Namespace it
  // owns; each is planned on its own, as here, with the profile its `spec`
  // names.
  const TOTAL = { pods: "10", "requests.cpu": "4", "requests.memory": "8Gi" };
  const team: ProfileSpec = { resourceQuota: { hard: { pods: "20", resourcequotas: "1" } }, projectQuota: { hard: TOTAL } };
  const SECOND = `${SHOP}-second`;
  const THIRD = `${SHOP}-third`;
  const total = (answer: { children: { kind: string; metadata: { name: string } }[] }) =>
    answer.children.find((child) => child.kind === "ResourceQuota" && child.metadata.name === PROJECT_QUOTA_NAME) as ResourceQuota | undefined;
  /** The Project's quotas across Namespaces as observed, each with this usage. */
  const using = (usage: Record<string, Record<string, string> | undefined>, children = namespaces({ [SHOP]: "Active" })) => {
    const observed = structuredClone(children);
    for (const [namespace, used] of Object.entries(usage)) {
      observed[RESOURCE_QUOTAS]![`${namespace}/${PROJECT_QUOTA_NAME}`] = {
        apiVersion: "v1",
        kind: "ResourceQuota",
        metadata: { name: PROJECT_QUOTA_NAME, namespace, labels: { [PROFILE_LABEL]: "team" } },
        spec: { hard: { ...TOTAL } },
        ...(used ? { status: { used } } : {}),
      };
    }
    return observed;
  };
  /** One Namespace's plan, `profile` the one its spec names. */
  const planIn = (namespace: string, children: ObservedChildren, { profile = "team", profiles = { team } as Record<string, ProfileSpec> } = {}) =>
    guardrails.plan({
      project: project("shop", { spec: { profile: "team" } }),
      spec: { profile },
      namespace,
      observed: { metadata: { name: namespace }, status: { phase: "Active" } },
      active: true,
      children,
      related: related({}, profiles),
      finalizing: false,
      earlierInPlace: true,
    } as never);
  const hardIn = (namespace: string, children: ObservedChildren, options?: Parameters<typeof planIn>[2]) => total(planIn(namespace, children, options))?.spec.hard;

  test("each Namespace may use what it uses plus what is left of the total, which moves with usage between Namespaces", () => {
    const observed = using({ [SHOP]: { pods: "3", "requests.cpu": "1500m", "requests.memory": "1Gi" }, [SECOND]: { pods: "2", "requests.cpu": "500m", "requests.memory": "3Gi" } });
    assert.deepEqual(hardIn(SHOP, observed), { pods: "8", "requests.cpu": "3500m", "requests.memory": "5Gi" });
    assert.deepEqual(hardIn(SECOND, observed), { pods: "7", "requests.cpu": "2500m", "requests.memory": "7Gi" });
    // A Namespace whose quota is not observed yet gets the headroom alone.
    assert.deepEqual(hardIn(THIRD, observed), { pods: "5", "requests.cpu": "2", "requests.memory": "4Gi" });
    // Pods moved from one Namespace to the other: the same total, shared anew.
    const moved = using({ [SHOP]: { pods: "0", "requests.cpu": "0", "requests.memory": "0" }, [SECOND]: { pods: "5", "requests.cpu": "2", "requests.memory": "4Gi" } });
    assert.deepEqual(hardIn(SHOP, moved), { pods: "5", "requests.cpu": "2", "requests.memory": "4Gi" });
    assert.deepEqual(hardIn(SECOND, moved), { pods: "10", "requests.cpu": "4", "requests.memory": "8Gi" });
  });

  test("with one Namespace, its quota across Namespaces is the total, and a quota not yet counted counts as nothing used", () => {
    assert.deepEqual(hardIn(SHOP, using({})), TOTAL);
    assert.deepEqual(hardIn(SHOP, using({ [SHOP]: undefined })), TOTAL);
    assert.deepEqual(hardIn(SHOP, using({ [SHOP]: { pods: "4" } })), TOTAL);
  });

  test("the headroom is never negative: over the total, each Namespace may use what it uses and nothing more", () => {
    const over = using({ [SHOP]: { pods: "7", "requests.cpu": "3", "requests.memory": "6Gi" }, [SECOND]: { pods: "6", "requests.cpu": "2", "requests.memory": "3Gi" } });
    assert.deepEqual(hardIn(SHOP, over), { pods: "7", "requests.cpu": "3", "requests.memory": "6Gi" });
    assert.deepEqual(hardIn(SECOND, over), { pods: "6", "requests.cpu": "2", "requests.memory": "3Gi" });
    assert.deepEqual(hardIn(THIRD, over), { pods: "0", "requests.cpu": "0", "requests.memory": "0" });
  });

  test("a usage that cannot be read leaves no headroom", () => {
    const unreadable = using({ [SHOP]: { pods: "1" }, [SECOND]: { pods: "many" } });
    assert.equal(hardIn(SHOP, unreadable)?.["pods"], "1");
  });

  test("the total is the Project's own profile's, whatever profile a Namespace's plan names, so Namespaces on different profiles share one", () => {
    const strict: ProfileSpec = { resourceQuota: { hard: { pods: "5" } }, projectQuota: { hard: { pods: "1" } } };
    const observed = using({ [SHOP]: { pods: "3" } });
    const plan = planIn(SECOND, observed, { profile: "strict", profiles: { team, strict } });
    assert.deepEqual(total(plan)?.spec.hard, { pods: "7", "requests.cpu": "4", "requests.memory": "8Gi" });
    assert.deepEqual(total(plan)?.metadata.labels, { [PROFILE_LABEL]: "team" });
    // The Namespace's own quota is its profile's.
    assert.deepEqual(plan.children.find((child) => child.metadata.name === "project-quota")?.["spec" as never], { hard: { pods: "5" } });
    // A Namespace on a profile with a total, of a Project on one without, gets none.
    assert.equal(total(planIn(SECOND, observed, { profile: "strict", profiles: { team: {}, strict } })), undefined);
  });

  test("while the Project's profile cannot be read, a Namespace on another profile keeps its quota across Namespaces as observed, gets none made, and says why", () => {
    const observed = using({ [SHOP]: { pods: "3" } });
    (observed[RESOURCE_QUOTAS]![`${SHOP}/${PROJECT_QUOTA_NAME}`]!["spec"] as any).hard.pods = "6";
    const other = { other: { resourceQuota: { hard: { pods: "5" } } } };
    const plan = planIn(SHOP, observed, { profile: "other", profiles: other });
    assert.equal(total(plan)?.spec.hard["pods"], "6");
    assert.equal(plan.unavailable?.reason, "ProfileNotFound");
    assert.match(plan.unavailable?.message ?? "", /^ProjectProfile team does not exist, so Namespace /);
    assert.equal(total(planIn(SECOND, observed, { profile: "other", profiles: other })), undefined);
  });

  test("the same usage gives the same answer, a quantity stored another way is asked for as stored, and a synced Project is a fixed point", () => {
    const observed = using({ [SHOP]: { pods: "3", "requests.cpu": "1500m", "requests.memory": "1Gi" }, [SECOND]: { pods: "2", "requests.cpu": "500m", "requests.memory": "3Gi" } });
    assert.deepEqual(planIn(SHOP, observed), planIn(SHOP, structuredClone(observed)));
    (observed[RESOURCE_QUOTAS]![`${SHOP}/${PROJECT_QUOTA_NAME}`]!["spec"] as any).hard = { pods: "8", "requests.cpu": "3.5", "requests.memory": "5120Mi" };
    assert.deepEqual(hardIn(SHOP, observed), { pods: "8", "requests.cpu": "3.5", "requests.memory": "5120Mi" });
    const first = sync(project("shop", { spec: { profile: "team" } }), namespaces({ [SHOP]: "Active" }), related({}, { team }), at);
    const settled = withObserved(namespaces({ [SHOP]: "Active" }), first.children.filter((child) => child.kind !== "Namespace"));
    const again = sync(project("shop", { spec: { profile: "team" }, status: first.status }), settled, related({}, { team }), at);
    assert.deepEqual(again.children, first.children);
  });

  test("a Project gets ResourceQuota project-total-quota beside its Namespace's own; Ready waits for it to exist, not for its hard, which moves with usage", () => {
    const onTeam = project("shop", { spec: { profile: "team" }, status: SETTLED });
    const answer = sync(onTeam, namespaces({ [SHOP]: "Active" }), related({}, { team }), at);
    assert.deepEqual(childrenOfKind<ResourceQuota>(answer, ["ResourceQuota"]).map((quota) => quota.metadata.name), ["project-quota", PROJECT_QUOTA_NAME]);
    const withoutTotal = withObserved(namespaces({ [SHOP]: "Active" }), answer.children.filter((child) => child.kind !== "Namespace" && child.metadata.name !== PROJECT_QUOTA_NAME));
    assert.equal(ready(sync(onTeam, withoutTotal, related({}, { team }), at)).message, `Namespace ${SHOP} is Active; waiting for ResourceQuota ${PROJECT_QUOTA_NAME} to be as its profile says.`);
    const settled = withObserved(namespaces({ [SHOP]: "Active" }), answer.children.filter((child) => child.kind !== "Namespace"));
    (settled[RESOURCE_QUOTAS]![`${SHOP}/${PROJECT_QUOTA_NAME}`]!["spec"] as any).hard.pods = "9";
    assert.equal(ready(sync(onTeam, settled, related({}, { team }), at)).reason, "NamespaceActive");
    assert.equal(total(sync(onTeam, settled, related({}, { team }), at))?.spec.hard["pods"], "10", "put back to what the usage leaves");
  });

  // feature: environments
  test("a Project's environments, on different profiles, each get a share of the Project's own profile's total, by what each uses", () => {
    const strict: ProfileSpec = { resourceQuota: { hard: { pods: "5" } }, projectQuota: { hard: { pods: "1" } } };
    const cart = project("cart", { spec: { profile: "team", environments: [{ name: "dev" }, { name: "prod", profile: "strict" }] }, status: SETTLED });
    const [dev, prod] = [`${namespaceOf("cart")}--dev`, `${namespaceOf("cart")}--prod`];
    const observed = using({ [dev]: { pods: "3", "requests.cpu": "1", "requests.memory": "2Gi" }, [prod]: { pods: "1", "requests.cpu": "500m", "requests.memory": "1Gi" } }, namespaces({ [dev]: "Active", [prod]: "Active" }));
    const answer = sync(cart, observed, related({}, { team, strict }), at);
    const quotas = (namespace: string) => Object.fromEntries(childrenOfKind<ResourceQuota>(answer, ["ResourceQuota"]).filter((quota) => quota.metadata.namespace === namespace).map((quota) => [quota.metadata.name, quota.spec.hard]));
    assert.deepEqual(quotas(dev), { "project-quota": { pods: "20", resourcequotas: "2" }, [PROJECT_QUOTA_NAME]: { pods: "9", "requests.cpu": "3500m", "requests.memory": "7Gi" } });
    assert.deepEqual(quotas(prod), { "project-quota": { pods: "5" }, [PROJECT_QUOTA_NAME]: { pods: "7", "requests.cpu": "3", "requests.memory": "6Gi" } });
  });
  // end feature: environments

  test("a Namespace quota that counts ResourceQuotas counts the one across Namespaces too, so that Metacontroller can create it", () => {
    assert.equal((planIn(SHOP, using({})).children[0] as ResourceQuota).spec.hard["resourcequotas"], "2");
    const alone = { team: { resourceQuota: { hard: { resourcequotas: "1" } } } };
    assert.equal((planIn(SHOP, using({}), { profiles: alone }).children[0] as ResourceQuota).spec.hard["resourcequotas"], "1");
  });

  test("quantities are read in every form the API server writes, and written as it writes them back", () => {
    for (const [quantity, nanos] of [["1500m", 1_500_000_000n], ["2Gi", 2n * 1024n ** 3n * 10n ** 9n], ["1e3", 10n ** 12n], ["5n", 5n], ["3u", 3000n], ["0.5", 500_000_000n], ["1.5Ki", 1536n * 10n ** 9n], ["0.1n", 1n]] as const) {
      assert.equal(nanosOf(quantity), nanos, quantity);
    }
    for (const bad of ["", ".", "-1", "1 Gi", "1gi", "1e", "Gi"]) assert.equal(nanosOf(bad), undefined, JSON.stringify(bad));
    for (const [nanos, binary, written] of [[0n, true, "0"], [1_500_000_000n, false, "1500m"], [2000n * 10n ** 9n, false, "2k"], [1500n * 10n ** 9n, false, "1500"], [1536n * 1024n ** 2n * 10n ** 9n, true, "1536Mi"], [2000n * 10n ** 9n, true, "2k"], [512n * 10n ** 9n, true, "512"], [5n, false, "5n"], [1024n ** 7n * 10n ** 9n, true, "1024Ei"], [2n * 10n ** 18n * 10n ** 9n, false, "2E"], [3n * 10n ** 21n * 10n ** 9n, false, "3000E"]] as const) {
      assert.equal(quantityOf(nanos, binary), written, `${nanos} ${binary}`);
    }
    const random = seeded(7);
    for (let round = 0; round < 2000; round++) {
      const nanos = BigInt(Math.floor(random() * 1e6)) * 10n ** BigInt(Math.floor(random() * 25));
      const binary = random() < 0.5;
      const written = quantityOf(nanos, binary);
      assert.equal(nanosOf(written), nanos, written);
      // Written again from what it reads as, the same: the API server's canonical form is a fixed point.
      assert.equal(quantityOf(nanosOf(written)!, /i$/.test(written)), written);
    }
  });

  test("a burst in k Namespaces at once, each filling what the last sync left it, passes the total by at most (k - 1) times that sync's headroom, over many random states", () => {
    const random = seeded(49);
    const whole = (most: number) => BigInt(Math.floor(random() * (most + 1)));
    for (let round = 0; round < 3000; round++) {
      const k = 1 + Math.floor(random() * 4);
      const limit = whole(30);
      const namespaces_ = Array.from({ length: k }, (_, index) => `${SHOP}-${index}`);
      // Some Namespaces not observed yet; usage anywhere from none to past the total.
      const usage = Object.fromEntries(namespaces_.filter(() => random() < 0.8).map((namespace) => [namespace, whole(20)]));
      const observed = using(Object.fromEntries(Object.entries(usage).map(([namespace, used]) => [namespace, { pods: String(used) }])));
      const planned = { team: { projectQuota: { hard: { pods: String(limit) } } } };
      const hard = Object.fromEntries(namespaces_.map((namespace) => [namespace, nanosOf(hardIn(namespace, observed, { profiles: planned })!["pods"]!)! / NANO]));
      const before = Object.values(usage).reduce((sum, used) => sum + used, 0n);
      const headroom = limit > before ? limit - before : 0n;
      // Each Namespace then uses anything up to its hard (quota admission refuses more); at most, all of it.
      const after = namespaces_.reduce((sum, namespace) => sum + (random() < 0.5 ? hard[namespace]! : whole(Number(hard[namespace]!))), 0n);
      const most = namespaces_.reduce((sum, namespace) => sum + hard[namespace]!, 0n);
      const bound = (limit > before ? limit : before) + BigInt(k - 1) * headroom;
      assert.ok(after <= bound, `round ${round}: ${after} > ${bound}`);
      assert.equal(most, before + BigInt(k) * headroom, `round ${round}: the bound is reached when every Namespace fills its hard`);
      // Past the total, the next sync leaves no Namespace more than it uses.
      const filled = using(Object.fromEntries(namespaces_.map((namespace) => [namespace, { pods: String(hard[namespace]) }])));
      if (most >= limit) for (const namespace of namespaces_) assert.equal(nanosOf(hardIn(namespace, filled, { profiles: planned })!["pods"]!), hard[namespace]! * NANO);
    }
  });
});

const NANO = 10n ** 9n;
/** A small deterministic generator (mulberry32), so that a failing state can be found again. */
function seeded(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
