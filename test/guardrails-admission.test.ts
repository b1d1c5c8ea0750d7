// What the API server admits of the guardrails feature: ProjectProfiles by
// the rules sync applies, and the guard that keeps them from a stray delete.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as v from "valibot";
import { API_VERSION, GROUP } from "../sync.ts";
import { BUILT_IN_PROFILE, COUNTED_RESOURCES, DEFAULT_PROFILE, MAX_ADMITTED_NAMESPACES, MAX_QUANTITIES, POD_SECURITY_LEVELS, PROFILE, PROFILE_RULES, ProfileSpec, QUALIFIED_QUOTA_RESOURCE, QUANTITY, QUOTA_RESOURCES, compareQuantities, profileNameOf } from "../features/guardrails.ts";
import { annotatedAsTold, assertBoundToDeny, assertJudgedAlike, crd, deleting, find, objects, policyNamed, projectSchema } from "./admission.ts";
import { admit, schemaErrors } from "./cel.ts";
import { PROFILE_CASES } from "./guardrails-cases.ts";
import { escaped } from "./helpers.ts";
import { assertCrdSpells } from "../scripts/manifest.ts";

const profileCrd = find("CustomResourceDefinition", `${PROFILE.plural}.${GROUP}`);
/** The built-in default profile, as an admin would write it as ProjectProfile default. */
const defaultProfile = { apiVersion: API_VERSION, kind: PROFILE.kind, metadata: { name: DEFAULT_PROFILE }, spec: BUILT_IN_PROFILE };

describe("admission: the profile's names", () => {
  test("the profile's CRD spells the group, version and names of sync.ts", () => {
    assertCrdSpells(profileCrd, PROFILE);
  });

  test("k8s.yaml ships no ProjectProfile, so that re-applying it never undoes an admin's", () => {
    assert.deepEqual(objects.filter((object) => object.kind === PROFILE.kind), []);
  });
});

describe("admission: profiles are admitted by the rules sync applies", () => {
  const profileVersion = profileCrd.spec.versions.find((version: any) => version.name === "v1");
  const profileSpecSchema = profileVersion.schema.openAPIV3Schema.properties.spec;
  const projectProfileSchema = projectSchema.properties.spec.properties.profile;

  for (const { what, spec, breaks } of PROFILE_CASES) {
    test(`admission and sync agree that ${what} ${breaks ? `breaks the rule: ${PROFILE_RULES[breaks]}` : "is a profile"}`, () => {
      const { admission, issues } = assertJudgedAlike(profileSpecSchema, "spec", ProfileSpec, spec, Boolean(breaks));
      if (!breaks) return;
      assert.ok(issues.some((issue) => issue.message === PROFILE_RULES[breaks]), "sync says which rule");
      // What the CRD says in CEL is the rule broken, in sync's words; the
      // rest are Kubernetes' own type, enum, pattern and size messages.
      const ownWords = /: (must be an? \w+|must have at most \d+ \w+|unsupported value .*|should match '.*'|longer than \d+)$/;
      for (const error of admission.filter((error) => !ownWords.test(error))) assert.ok(error.endsWith(PROFILE_RULES[breaks]), error);
    });
  }

  test("the CRD's quantity and resource rules are sync's regular expressions, lists and limits", () => {
    const inCel = (pattern: RegExp) => pattern.source.replaceAll("\\", "\\\\");
    const hard = profileSpecSchema.properties.resourceQuota.properties.hard;
    const rules = JSON.stringify(profileSpecSchema);
    assert.ok(rules.includes(JSON.stringify(inCel(QUANTITY)).slice(1, -1)), "QUANTITY");
    assert.ok(rules.includes(JSON.stringify(inCel(QUALIFIED_QUOTA_RESOURCE)).slice(1, -1)), "QUALIFIED_QUOTA_RESOURCE");
    const listed = hard["x-kubernetes-validations"][1].rule.match(/\[([^\]]*)\]/)[1].split(",").map((name: string) => name.trim().slice(1, -1));
    assert.deepEqual(listed, [...QUOTA_RESOURCES]);
    const counted = hard["x-kubernetes-validations"][2].rule.match(/\[([^\]]*)\]/)[1].split(",").map((name: string) => name.trim().slice(1, -1));
    assert.deepEqual(counted, [...COUNTED_RESOURCES]);
    assert.equal(hard.maxProperties, MAX_QUANTITIES);
    assert.deepEqual(profileSpecSchema.properties.podSecurity.enum, [...POD_SECURITY_LEVELS]);
    assert.equal(profileSpecSchema.properties.networkPolicy.properties.allowFromNamespaces.maxItems, MAX_ADMITTED_NAMESPACES);
  });

  test("k8s.yaml's default profile follows the rules, and a Project names it unless it says otherwise", () => {
    assert.deepEqual(schemaErrors(profileSpecSchema, defaultProfile.spec, "spec"), []);
    assert.equal(v.safeParse(ProfileSpec, defaultProfile.spec).success, true);
    assert.equal(projectProfileSchema.default, DEFAULT_PROFILE);
    assert.equal(profileNameOf({}), DEFAULT_PROFILE);
  });

  test("a Project names a profile by a name a ProjectProfile can have", () => {
    for (const [name, admitted] of [["large", true], ["team-a.large", true], ["", false], ["Large", false], ["a".repeat(254), false]] as const) {
      assert.equal(schemaErrors(projectProfileSchema, name).length === 0, admitted, JSON.stringify(name));
    }
  });

  test("the default profile's quota counts what its default limits let in: with limits in the quota, a container stating none still fits", () => {
    const hard = defaultProfile.spec.resourceQuota?.hard ?? {};
    const { default: limits = {}, defaultRequest = {} } = defaultProfile.spec.limitRange ?? {};
    for (const resource of ["cpu", "memory"]) {
      if (!(`limits.${resource}` in hard)) continue;
      assert.ok(limits[resource], `a default ${resource} limit`);
      assert.ok(compareQuantities(limits[resource]!, hard[`limits.${resource}`]!) <= 0, resource);
      assert.ok(compareQuantities(defaultRequest[resource]!, hard[`requests.${resource}`]!) <= 0, resource);
    }
  });
});


describe("admission: a stray delete keeps the profiles", () => {
  const profilePolicy = policyNamed("profile-protection");
  const profileDelete = (group: string, resource: string, object: any, options?: Parameters<typeof deleting>[3]) => admit(profilePolicy, deleting(group, resource, object, options));
  const kept = [
    { what: "the profile CRD", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", object: profileCrd, says: new RegExp(`^Deleting CustomResourceDefinition ${escaped(profileCrd.metadata.name)} deletes every ProjectProfile an admin wrote, ProjectProfile default included\\.`), command: `kubectl annotate crd ${profileCrd.metadata.name} ` },
    { what: "ProjectProfile default", group: GROUP, resource: PROFILE.plural, object: defaultProfile, says: /^Deleting ProjectProfile default gives every Project that names no other profile the built-in default's guardrails instead of these/, command: "kubectl annotate projectprofile default " },
    { what: "a ProjectProfile", group: GROUP, resource: PROFILE.plural, object: { ...defaultProfile, metadata: { name: "large" } }, says: /^Deleting ProjectProfile large leaves every Project that names it ProfileNotFound: their Namespaces keep the guardrails they have/, command: "kubectl annotate projectprofile large " },
  ];
  for (const { what, group, resource, object, says, command } of kept) {
    test(`a stray delete of ${what} is refused, also as a collection, saying what it would do and how to go ahead; annotated as told, it goes`, () => {
      for (const collection of [false, true]) {
        const { allowed, message } = profileDelete(group, resource, object, { collection });
        assert.equal(allowed, false, collection ? "a collection delete" : "a delete by name");
        assert.match(String(message), says);
        assert.ok(String(message).endsWith(`If that is what you want, first run: ${command}${GROUP}/allow-deletion=true`), String(message));
        assert.equal(profileDelete(group, resource, annotatedAsTold(object, message)).allowed, true);
      }
      const otherValue = { ...object, metadata: { ...object.metadata, annotations: { [`${GROUP}/allow-deletion`]: "yes" } } };
      assert.equal(profileDelete(group, resource, otherValue).allowed, false, "another value");
    });
  }

  test("every other CRD may go, and the Project CRD is the install guard's", () => {
    const other = { ...crd, metadata: { name: "compositecontrollers.metacontroller.k8s.io" } };
    assert.equal(profileDelete("apiextensions.k8s.io", "customresourcedefinitions", other, { collection: true }).matched, false);
    assert.equal(profileDelete("apiextensions.k8s.io", "customresourcedefinitions", crd).matched, false);
  });

  test("it is bound once, to deny, refuses when it cannot be evaluated, and comes after the profile CRD", () => {
    assertBoundToDeny(profilePolicy);
    assert.ok(objects.indexOf(profileCrd) < objects.indexOf(profilePolicy));
  });
});
