// What the environments feature (features/environments.ts) adds to sync's
// answer: a Namespace per environment instead of the Project's one, each
// planned by the features that work per Namespace, and never one lost by an
// edit or taken from someone else.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { NAMESPACE_PREFIX, NAMESPACES, PARENT, GROUP, PROJECT_LABEL, customize, sync, type Namespace, type ObservedChildren, type SyncResponse } from "../sync.ts";
import {
  ADOPTED_BY_LABEL, // feature: adoption
  CLAIM_LABEL, // feature: adoption
  ENVIRONMENT_ANNOTATION,
  ENVIRONMENT_RULES,
  MAX_ENVIRONMENTS,
  NAMESPACE_PREFIX as ENVIRONMENTS_PREFIX,
  NAMESPACES as ENVIRONMENTS_NAMESPACES,
  PROJECT_LABEL as ENVIRONMENTS_PROJECT_LABEL,
  PROJECTS,
  environmentNameMaxLength,
  environments,
} from "../features/environments.ts";
import { ADOPTED_BY_LABEL as ADOPTION_ADOPTED_BY_LABEL, CLAIM_LABEL as ADOPTION_CLAIM_LABEL } from "../features/adoption.ts"; // feature: adoption
import { POD_SECURITY_LABEL } from "../features/guardrails.ts"; // feature: guardrails
import { MEMBER_RULES, memberBindingNameFor } from "../features/members.ts"; // feature: members
import { PROTECTED_BY_LABEL } from "../features/deletion-protection.ts"; // feature: deletion-protection
import { SETTLED, assertKeepsEveryNamespace, at, having, namespaceOf, namespaces, project, ready, related, withObserved } from "./helpers.ts";

const NAME_MAX_LENGTH = 63;
const envNamespace = (projectName: string, environment: string) => `${namespaceOf(projectName)}--${environment}`;
const THREE = [{ name: "dev" }, { name: "staging" }, { name: "prod" }];
const namespacesIn = (answer: SyncResponse) => answer.children.filter((child): child is Namespace => child.kind === "Namespace");
const namespaceOfChild = (child: SyncResponse["children"][number]) => (child.metadata as { namespace?: string }).namespace;
const namesIn = (answer: SyncResponse) => namespacesIn(answer).map((namespace) => namespace.metadata.name).sort();
const namespaceNamed = (answer: SyncResponse, name: string) => namespacesIn(answer).find((namespace) => namespace.metadata.name === name);
// What customize picked up: nothing of the Namespaces' names.
const relatedOf = () =>
  related(
    {},
    { default: { resourceQuota: { hard: { pods: "4" } } }, strict: {} }, // feature: guardrails
  );
/** The same children, each Namespace the answer asks for observed Active. */
function settled(answer: SyncResponse, children: ObservedChildren = namespaces()): ObservedChildren {
  const observed = withObserved(children, answer.children.filter((child) => child.kind !== "Namespace"));
  for (const namespace of namespacesIn(answer)) observed[NAMESPACES][namespace.metadata.name] = { ...structuredClone(namespace), status: { phase: "Active" } } as never;
  return observed;
}
/** Sync until the answer's Namespaces and children are all observed: what a cluster holds once Metacontroller is done. */
function playedOut(parent: ReturnType<typeof project>, children = namespaces(), relatedObjects = relatedOf()) {
  let observed = children;
  let answer = sync(parent, observed, relatedObjects, at);
  for (let round = 0; round < 5; round++) {
    observed = settled(answer, observed);
    answer = sync(parent, observed, relatedObjects, at);
  }
  return { answer, observed };
}

describe("environments: the names", () => {
  test("the feature spells the Namespace prefix, the Namespace group, the Project label and the Projects as sync.ts does", () => {
    assert.equal(ENVIRONMENTS_PREFIX, NAMESPACE_PREFIX);
    assert.equal(ENVIRONMENTS_NAMESPACES, NAMESPACES);
    assert.equal(ENVIRONMENTS_PROJECT_LABEL, PROJECT_LABEL);
    assert.equal(PROJECTS, `${PARENT.plural}.${GROUP}`);
    assert.equal(CLAIM_LABEL, ADOPTION_CLAIM_LABEL); // feature: adoption
    assert.equal(ADOPTED_BY_LABEL, ADOPTION_ADOPTED_BY_LABEL); // feature: adoption
  });

  test("an environment's name is as long as the prefix, the Project's name and '--' leave of a Namespace name's 63", () => {
    assert.equal(environmentNameMaxLength("shop"), NAME_MAX_LENGTH - NAMESPACE_PREFIX.length - "shop".length - 2);
    const longest = "e".repeat(environmentNameMaxLength("shop"));
    assert.equal(envNamespace("shop", longest).length, NAME_MAX_LENGTH);
    const fits = sync(project("shop", { spec: { environments: [{ name: longest }] } }), namespaces(), relatedOf(), at);
    assert.deepEqual(namesIn(fits), [envNamespace("shop", longest)]);
    const over = sync(project("shop", { spec: { environments: [{ name: `${longest}e` }] } }), namespaces(), relatedOf(), at);
    assert.equal(ready(over).reason, "InvalidEnvironments");
    assert.match(ready(over).message, new RegExp(`at most ${environmentNameMaxLength("shop")} characters, so that ${NAMESPACE_PREFIX}shop--<name> is at most 63`));
    assert.deepEqual(namesIn(over), []);
  });
});

describe("environments: a Project holds a Namespace per environment", () => {
  test("a Project that declares none gets proj-<name> alone, and no status of environments", () => {
    const answer = sync(project("shop"), namespaces(), relatedOf(), at);
    assert.deepEqual(namesIn(answer), [namespaceOf("shop")]);
    assert.equal(answer.status["environments"], undefined);
  });

  test("a Project with three environments gets exactly their Namespaces, proj-<name>--<env>, and no proj-<name>", () => {
    const { answer } = playedOut(project("shop", { spec: { environments: THREE } }));
    assert.deepEqual(namesIn(answer), ["dev", "prod", "staging"].map((environment) => envNamespace("shop", environment)));
    assert.equal(ready(answer).status, "True", ready(answer).message);
    assert.equal(answer.status.namespace, envNamespace("shop", "dev"));
    assert.deepEqual(answer.status["environments"], [
      { name: "dev", namespace: envNamespace("shop", "dev"), state: "Active" },
      { name: "staging", namespace: envNamespace("shop", "staging"), state: "Active" },
      { name: "prod", namespace: envNamespace("shop", "prod"), state: "Active" },
    ]);
    for (const environment of ["dev", "staging", "prod"]) {
      const namespace = namespaceNamed(answer, envNamespace("shop", environment))!;
      assert.equal(namespace.metadata.labels[PROJECT_LABEL], "shop");
      assert.equal(namespace.metadata.annotations[ENVIRONMENT_ANNOTATION as never], environment);
      assert.equal(namespace.metadata.annotations.description, "");
    }
  });

  test("what goes in an environment's Namespace is asked for with it, and Ready waits for every environment's Namespace", () => {
    const parent = project("shop", { spec: { environments: THREE }, status: SETTLED });
    const dev = envNamespace("shop", "dev");
    const answer = sync(parent, namespaces({ [dev]: "Active" }), related(), at);
    assert.deepEqual(namesIn(answer), ["dev", "prod", "staging"].map((environment) => envNamespace("shop", environment)));
    assert.equal(ready(answer).reason, "WaitingForEnvironments");
    assert.equal(ready(answer).message, `Namespace ${dev} is Active; waiting for Namespace ${envNamespace("shop", "staging")}, ${envNamespace("shop", "prod")} to be Active.`);
    // feature: guardrails
    const withQuota = sync(parent, namespaces({ [dev]: "Active" }), relatedOf(), at);
    const quotas = withQuota.children.filter((child) => child.kind === "ResourceQuota").map(namespaceOfChild).sort();
    assert.deepEqual(quotas, ["dev", "prod", "staging"].map((environment) => envNamespace("shop", environment)));
    // end feature: guardrails
  });

  // feature: guardrails
  test("each environment's Namespace gets the guardrails of its own profile: the Project's, or the environment's in its place", () => {
    const lenient = related({}, { default: { podSecurity: "baseline", resourceQuota: { hard: { pods: "20" } } }, strict: { podSecurity: "restricted", resourceQuota: { hard: { pods: "5" } } } });
    const { answer } = playedOut(project("shop", { spec: { environments: [...THREE.slice(0, 2), { name: "prod", profile: "strict" }] } }), namespaces(), lenient);
    const quotaIn = (environment: string) => answer.children.find((child) => child.kind === "ResourceQuota" && child.metadata.namespace === envNamespace("shop", environment)) as { spec: { hard: Record<string, string> } } | undefined;
    assert.equal(quotaIn("dev")?.spec.hard["pods"], "20");
    assert.equal(quotaIn("staging")?.spec.hard["pods"], "20");
    assert.equal(quotaIn("prod")?.spec.hard["pods"], "5");
    assert.equal(namespaceNamed(answer, envNamespace("shop", "dev"))!.metadata.labels[POD_SECURITY_LABEL], "baseline");
    assert.equal(namespaceNamed(answer, envNamespace("shop", "prod"))!.metadata.labels[POD_SECURITY_LABEL], "restricted");
  });

  test("a settled Project with environments asks for none of their Namespaces by name, as the core asks for none of its own; once not Ready it asks again", () => {
    const atRest = (status: "True" | "False") =>
      project("shop", { spec: { environments: THREE }, status: { observedGeneration: 1, conditions: [{ type: "Ready", status, lastTransitionTime: "2026-01-01T00:00:00Z", reason: "R", message: "" }] } });
    const namespacesAsked = (parent: ReturnType<typeof atRest>) =>
      customize(parent).relatedResources.flatMap((rule) => (rule.resource === "namespaces" && "names" in rule ? rule.names : []));
    assert.deepEqual(namespacesAsked(atRest("True")), []);
    assert.deepEqual(namespacesAsked(atRest("False")).sort(), [namespaceOf("shop"), ...THREE.map((environment) => envNamespace("shop", environment.name))].sort());
  });

  test("customize asks for each environment's Namespace and each profile they name", () => {
    const rules = customize(project("shop", { spec: { environments: [...THREE.slice(0, 2), { name: "prod", profile: "strict" }] } })).relatedResources;
    assert.ok(rules.some((rule) => rule.resource === "namespaces" && "names" in rule && ["dev", "staging", "prod"].every((environment) => rule.names.includes(envNamespace("shop", environment)))));
    const profilesAsked = rules.filter((rule) => rule.resource === "projectprofiles").flatMap((rule) => ("names" in rule ? rule.names : []));
    assert.deepEqual(profilesAsked.sort(), ["default", "strict"]);
  });
  // end feature: guardrails

  // feature: members
  test("an environment's members replace the Project's entry for the same subject and add the others", () => {
    const spec = {
      members: [
        { kind: "User", name: "alice", role: "admin" },
        { kind: "Group", name: "devs", role: "edit" },
      ],
      environments: [
        { name: "dev" },
        {
          name: "prod",
          members: [
            { kind: "Group", name: "devs", role: "view" },
            { kind: "ServiceAccount", namespace: "ci", name: "deployer", role: "edit" },
          ],
        },
      ],
    };
    const { answer } = playedOut(project("shop", { spec }));
    const grants = (environment: string) =>
      answer.children
        .filter((child) => child.kind === "RoleBinding" && child.metadata.namespace === envNamespace("shop", environment) && child.metadata.name.startsWith("project-"))
        .flatMap((binding) => (binding as unknown as { roleRef: { name: string }; subjects: { name: string }[] }).subjects.map((subject) => `${subject.name}:${(binding as unknown as { roleRef: { name: string } }).roleRef.name}`))
        .sort();
    assert.deepEqual(grants("dev"), ["alice:admin", "devs:edit"]);
    assert.deepEqual(grants("prod"), ["alice:admin", "deployer:edit", "devs:view"]);
  });

  test("a member of one environment alone may read the Project too, and the Project becomes Ready", () => {
    const spec = {
      members: [{ kind: "User", name: "dana", role: "admin" }],
      environments: [
        { name: "dev", members: [{ kind: "Group", name: "devs", role: "view" }] },
        { name: "prod", members: [{ kind: "User", name: "robot", role: "edit" }, { kind: "Group", name: "devs", role: "edit" }] },
      ],
    };
    const { answer } = playedOut(project("robo", { spec }));
    assert.equal(ready(answer).status, "True", ready(answer).message);
    const readers = answer.children.filter((child) => child.kind === "ClusterRoleBinding");
    assert.deepEqual(readers.map((binding) => binding.metadata.name), [memberBindingNameFor("robo")]);
    const subjects = (readers[0] as unknown as { subjects: { kind: string; name: string }[] }).subjects;
    assert.deepEqual(subjects.map(({ kind, name }) => `${kind} ${name}`).sort(), ["Group devs", "User dana", "User robot"]);
  });

  test("a ServiceAccount of one of the Project's Namespaces is a member of that Namespace alone, at most edit: not of another environment's, nor of a kept one's", () => {
    const robot = (namespace: string, role = "admin") => ({ kind: "ServiceAccount", namespace, name: "deployer", role });
    const withProd = (...members: unknown[]) => ({ members: [{ kind: "User", name: "dana", role: "admin" }], environments: [{ name: "dev" }, { name: "prod", members }] });
    for (const [what, spec] of [
      ["dev's ServiceAccount admin in prod", withProd(robot(envNamespace("shop", "dev")))],
      ["dev's ServiceAccount edit in prod", withProd(robot(envNamespace("shop", "dev"), "edit"))],
      ["all of dev's as their Group in prod", withProd({ kind: "Group", name: `system:serviceaccounts:${envNamespace("shop", "dev")}`, role: "view" })],
      ["a kept Namespace's ServiceAccount in prod", withProd(robot(envNamespace("shop", "old"), "edit"))],
      ["the Project's own Namespace's, of before environments, in prod", withProd(robot(namespaceOf("shop"), "edit"))],
      ["prod's ServiceAccount as the Project's member, granted in dev too", { members: [{ kind: "User", name: "dana", role: "admin" }, robot(envNamespace("shop", "prod"), "edit")], environments: [{ name: "dev" }, { name: "prod" }] }],
      ["a kept Namespace's ServiceAccount as the Project's admin, no environment declared", { members: [{ kind: "User", name: "dana", role: "admin" }, robot(envNamespace("shop", "old"))] }],
    ] as const) {
      const { answer } = playedOut(project("shop", { spec }));
      assert.equal(ready(answer).reason, "InvalidMembers", what);
      assert.ok(ready(answer).message.includes(MEMBER_RULES.elsewhere), `${what}: ${ready(answer).message}`);
      // Granted in its own Namespace at most, where it is at most edit.
      const elsewhere = answer.children.filter((child) => child.kind === "RoleBinding" && /-serviceaccounts-/.test(child.metadata.name) && !child.metadata.name.endsWith(`-serviceaccounts-${namespaceOfChild(child)}`));
      assert.deepEqual(elsewhere, [], what);
    }
    // The issue's deploy robot: edit in prod, of prod, alone.
    const { answer } = playedOut(project("shop", { spec: withProd(robot(envNamespace("shop", "prod"), "edit")) }));
    assert.equal(ready(answer).status, "True", ready(answer).message);
    // Another's Namespace is the admins' to trust, as before.
    assert.equal(ready(playedOut(project("shop", { spec: withProd(robot("ci")) })).answer).status, "True");
  });

  test("a member admitted as the Project's that a kept Namespace may not grant is withheld there alone, and the status names it and the Namespace", () => {
    const dana = { kind: "User", name: "dana", role: "admin" };
    const robot = { kind: "ServiceAccount", namespace: envNamespace("shop", "dev"), name: "x", role: "edit" };
    const before = playedOut(project("shop", { spec: { members: [dana], environments: [{ name: "dev" }, { name: "prod" }] } }));
    // prod no longer declared, its Namespace kept: admission cannot see it, and admits dev's ServiceAccount.
    const { answer } = playedOut(project("shop", { spec: { members: [dana, robot], environments: [{ name: "dev" }] } }), before.observed);
    const prod = envNamespace("shop", "prod");
    assert.equal(ready(answer).status, "True", ready(answer).message);
    const subjectsIn = (namespace: string) =>
      answer.children
        .filter((child) => child.kind === "RoleBinding" && namespaceOfChild(child) === namespace)
        .flatMap((binding) => (binding as unknown as { subjects: { kind: string; name: string; namespace?: string }[] }).subjects)
        .map(({ kind, namespace: of, name }) => `${kind} ${of ? `${of}/` : ""}${name}`)
        .sort();
    assert.deepEqual(subjectsIn(prod), ["User dana"]);
    assert.deepEqual(subjectsIn(envNamespace("shop", "dev")), [`ServiceAccount ${envNamespace("shop", "dev")}/x`, "User dana"]);
    assert.match(String(answer.status["membersWithheld"]), new RegExp(`^ServiceAccount ${envNamespace("shop", "dev")}/x in Namespace ${prod}: not granted there`));
    // Declared again, prod refuses it, as admission does.
    const declared = sync(project("shop", { spec: { members: [dana, robot], environments: [{ name: "dev" }, { name: "prod" }] } }), before.observed, relatedOf(), at);
    assert.equal(ready(declared).reason, "InvalidMembers");
  });
  // end feature: members

  // feature: deletion-protection
  test("deletion protection labels every environment's Namespace", () => {
    const answer = sync(project("shop", { spec: { deletionProtection: true, environments: THREE } }), namespaces(), relatedOf(), at);
    for (const namespace of namespacesIn(answer)) assert.equal(namespace.metadata.labels[PROTECTED_BY_LABEL], "shop");
  });
  // end feature: deletion-protection
});

describe("environments: nothing is lost by an edit", () => {
  test("an environment renamed by a typo adds one and keeps the other, planned as before, and the status says how it goes", () => {
    const before = playedOut(project("shop", { spec: { environments: [{ name: "dev" }, { name: "prod" }] } }));
    const parent = project("shop", { spec: { environments: [{ name: "dev" }, { name: "prdo" }] } });
    const answer = sync(parent, before.observed, relatedOf(), at);
    const prod = envNamespace("shop", "prod");
    assert.deepEqual(namesIn(answer), [envNamespace("shop", "dev"), prod, envNamespace("shop", "prdo")].sort());
    assert.equal(namespaceNamed(answer, prod)!.metadata.annotations[ENVIRONMENT_ANNOTATION as never], "prod");
    // Everything the Project asked for in it is still asked for.
    const inProd = (children: SyncResponse["children"]) => children.filter((child) => namespaceOfChild(child) === prod).map((child) => `${child.kind} ${child.metadata.name}`).sort();
    assert.deepEqual(inProd(answer.children), inProd(before.answer.children));
    assert.notDeepEqual(inProd(answer.children), [], "the quota in it stays"); // feature: guardrails
    assert.deepEqual((answer.status["environments"] as unknown[]).at(-1), { name: "prod", namespace: prod, state: "Kept" });
    const settledAnswer = playedOut(parent, before.observed).answer;
    assert.match(ready(settledAnswer).message, new RegExp(`no environment names Namespace ${prod} any more: kept with all it holds, it goes with the Project \\(unless protected\\), or by hand with kubectl delete namespace`));
  });

  // feature: guardrails
  test("an environment taken out keeps the guardrails of its own profile, not the Project's", () => {
    const profiles = related({}, { default: { resourceQuota: { hard: { pods: "20" } } }, strict: { resourceQuota: { hard: { pods: "5" } } } });
    const before = playedOut(project("shop", { spec: { environments: [{ name: "dev" }, { name: "prod", profile: "strict" }] } }), namespaces(), profiles);
    const answer = sync(project("shop", { spec: { environments: [{ name: "dev" }] } }), before.observed, profiles, at);
    const quota = answer.children.find((child) => child.kind === "ResourceQuota" && namespaceOfChild(child) === envNamespace("shop", "prod")) as { spec: { hard: Record<string, string> } } | undefined;
    assert.equal(quota?.spec.hard["pods"], "5");
  });

  test("while the environments cannot be read, every environment's Namespace keeps what is asked for in it", () => {
    const before = playedOut(project("shop", { spec: { environments: THREE } }));
    const answer = sync(project("shop", { spec: { environments: [{ name: "Dev" }] } }), before.observed, relatedOf(), at);
    assert.equal(ready(answer).reason, "InvalidEnvironments");
    const inEnvironments = (children: SyncResponse["children"]) => children.filter((child) => child.kind !== "Namespace").map((child) => `${child.kind} ${namespaceOfChild(child)}/${child.metadata.name}`).sort();
    assert.notDeepEqual(inEnvironments(before.answer.children), []);
    assert.deepEqual(inEnvironments(answer.children), inEnvironments(before.answer.children));
  });
  // end feature: guardrails

  test("declaring environments keeps proj-<name> with what it holds", () => {
    const before = playedOut(project("shop"));
    const answer = sync(project("shop", { spec: { environments: [{ name: "dev" }] } }), before.observed, relatedOf(), at);
    assert.deepEqual(namesIn(answer), [namespaceOf("shop"), envNamespace("shop", "dev")].sort());
    const inOwn = (children: SyncResponse["children"]) => children.filter((child) => namespaceOfChild(child) === namespaceOf("shop")).map((child) => `${child.kind} ${child.metadata.name}`);
    assert.deepEqual(inOwn(answer.children), inOwn(before.answer.children));
    assert.notDeepEqual(inOwn(answer.children), [], "the quota in it stays"); // feature: guardrails
  });

  test("taking every environment out keeps their Namespaces and gives the Project proj-<name> again", () => {
    const before = playedOut(project("shop", { spec: { environments: [{ name: "dev" }] } }));
    const answer = sync(project("shop", { spec: { environments: [] } }), before.observed, relatedOf(), at);
    assert.deepEqual(namesIn(answer), [namespaceOf("shop"), envNamespace("shop", "dev")].sort());
  });
});

describe("environments: a Project owns at most MAX_ENVIRONMENTS Namespaces, kept ones included", () => {
  const named = (prefix: string, count = MAX_ENVIRONMENTS) => Array.from({ length: count }, (_, index) => ({ name: `${prefix}${index}` }));

  test("renaming every environment again and again makes no Namespace past the bound, keeps every one, and says TooManyNamespaces with the way out", () => {
    let { observed } = playedOut(project("shop", { spec: { environments: named("a") } }));
    const before = Object.keys(observed[NAMESPACES]).sort();
    assert.equal(before.length, MAX_ENVIRONMENTS);
    for (const prefix of ["b", "c", "d"]) {
      const parent = project("shop", { spec: { environments: named(prefix) } });
      const played = playedOut(parent, observed);
      observed = played.observed;
      assert.deepEqual(namesIn(played.answer), before, "none made, none dropped");
      assert.equal(ready(played.answer).reason, "TooManyNamespaces");
      assert.match(ready(played.answer).message, new RegExp(`Namespace ${envNamespace("shop", `${prefix}0`)} of environment ${prefix}0\\b.*at most ${MAX_ENVIRONMENTS}.*A cluster admin deletes a kept Namespace it no longer needs`));
    }
  });

  test("past the bound the later environments wait, the rest are made, and once a cluster admin deletes a kept Namespace the next is made", () => {
    const { observed } = playedOut(project("shop", { spec: { environments: named("a", 3) } }));
    const parent = project("shop", { spec: { environments: [{ name: "a0" }, ...named("n", 4)] } });
    const played = playedOut(parent, observed);
    const made = [0, 1, 2].map((index) => envNamespace("shop", `n${index}`));
    assert.deepEqual(namesIn(played.answer), [...["a0", "a1", "a2"].map((name) => envNamespace("shop", name)), ...made].sort());
    assert.equal(ready(played.answer).reason, "TooManyNamespaces");
    assert.match(ready(played.answer).message, new RegExp(`^Namespace ${envNamespace("shop", "n3")} of environment n3 is not made`));
    assert.deepEqual((played.answer.status["environments"] as { namespace: string; state: string }[]).find(({ namespace }) => namespace === envNamespace("shop", "n3"))?.state, "Pending");
    delete played.observed[NAMESPACES][envNamespace("shop", "a1")];
    assert.ok(namesIn(playedOut(parent, played.observed).answer).includes(envNamespace("shop", "n3")));
  });
});

describe("environments: names no Project can collide with", () => {
  test("a Project named with '--' may declare no environment: InvalidEnvironments keeps every Namespace", () => {
    const parent = project("a--b", { spec: { environments: [{ name: "c" }] } });
    assertKeepsEveryNamespace("InvalidEnvironments", { parent, children: having(namespaceOf("a--b")), related: relatedOf() });
    assert.match(ready(sync(parent, namespaces(), relatedOf(), at)).message, new RegExp(ENVIRONMENT_RULES.legacy.slice(0, 40)));
  });

  test("names that are not DNS labels, listed twice, too many, or a namespace of a Project's prefix are refused, naming each", () => {
    const refused = (list: unknown[]) => ready(sync(project("shop", { spec: { environments: list } }), namespaces(), relatedOf(), at));
    assert.equal(refused([{ name: "Dev" }]).reason, "InvalidEnvironments");
    assert.equal(refused([{ name: "-dev" }]).reason, "InvalidEnvironments");
    assert.match(refused([{ name: "dev" }, { name: "dev" }]).message, new RegExp(ENVIRONMENT_RULES.unique));
    assert.match(refused(Array.from({ length: MAX_ENVIRONMENTS + 1 }, (_, at) => ({ name: `e${at}` }))).message, new RegExp(ENVIRONMENT_RULES.count));
    assert.match(refused([{ name: "dev", namespace: namespaceOf("other") }]).message, /not starting with/);
    assert.equal(refused([{ name: "dev" }, { name: "prod" }]).status, "False");
    assert.notEqual(refused([{ name: "dev" }, { name: "prod" }]).reason, "InvalidEnvironments");
  });

  test("Project a's environment b, taken by a legacy Project a--b first, is never asked for; a's other environments are made", () => {
    const taken = envNamespace("a", "b");
    const others = related({ [taken]: { phase: "Active", owners: [{ kind: PARENT.kind, name: "a--b", controller: true }] } });
    const parent = project("a", { spec: { environments: [{ name: "x" }, { name: "b" }] } });
    const answer = sync(parent, namespaces({ [envNamespace("a", "x")]: "Active" }), others, at);
    assert.deepEqual(namesIn(answer), [envNamespace("a", "x")]);
    assert.equal(ready(answer).reason, "EnvironmentConflict");
    assert.match(ready(answer).message, new RegExp(`Namespace ${taken} of environment b already exists and is not this Project's`));
    assert.deepEqual((answer.status["environments"] as { state: string }[]).map((environment) => environment.state), ["Active", "Conflict"]);
  });

  test("a legacy Project a--b whose Namespace is Project a's environment meets the core's NamespaceConflict, never takes it", () => {
    const taken = envNamespace("a", "b");
    const owned = related({ [taken]: { phase: "Active", owners: [{ kind: PARENT.kind, name: "a", controller: true }] } });
    const answer = sync(project("a--b"), namespaces(), owned, at);
    assert.equal(ready(answer).reason, "NamespaceConflict");
    assert.deepEqual(namesIn(answer), []);
  });
});

describe("environments: an existing Namespace of any name", () => {
  const spec = { environments: [{ name: "dev" }, { name: "payments", namespace: "payments" }] };

  test("named by an environment and nobody's, it is never asked for; the status gives a cluster admin the command that brings it under the Project", () => {
    const nobodys = related({ payments: { phase: "Active" } });
    const answer = sync(project("shop", { spec }), namespaces({ [envNamespace("shop", "dev")]: "Active" }), nobodys, at);
    assert.deepEqual(namesIn(answer), [envNamespace("shop", "dev")]);
    assert.equal(ready(answer).reason, "EnvironmentConflict");
    assert.match(ready(answer).message, new RegExp(`kubectl label namespace payments ${ADOPTED_BY_LABEL}=shop ${CLAIM_LABEL}=`)); // feature: adoption
    assert.ok(ready(answer).message.endsWith(`-o jsonpath='{.metadata.uid}')`), "the command ends the message, to be pasted whole"); // feature: adoption
  });

  test("once the Project's, it is planned as any environment's, its own annotations kept", () => {
    const children = namespaces({ [envNamespace("shop", "dev")]: "Active", payments: "Active" });
    children[NAMESPACES]["payments"]!.metadata = { name: "payments", annotations: { "team.example.com/owner": "payments" } };
    const { answer } = playedOut(project("shop", { spec }), children);
    const payments = namespaceNamed(answer, "payments")!;
    assert.equal(payments.metadata.labels[PROJECT_LABEL], "shop");
    assert.equal(payments.metadata.annotations[ENVIRONMENT_ANNOTATION as never], "payments");
    assert.equal(ready(answer).status, "True", ready(answer).message);
    assert.equal(answer.status.namespace, envNamespace("shop", "dev"));
  });
});

describe("environments: a refusal keeps every Namespace", () => {
  test("InvalidEnvironments is the feature's one refusal, and keeps the environments' Namespaces as observed", () => {
    assert.deepEqual(environments.refusals, ["InvalidEnvironments"]);
    const parent = project("shop", { spec: { environments: [{ name: "Dev" }] } });
    assertKeepsEveryNamespace("InvalidEnvironments", { parent, children: having(envNamespace("shop", "dev"), namespaceOf("shop")), related: relatedOf() });
  });
});
