// `npm run uninstall`: takes the install off the current kubectl context,
// Projects and all, in one command, and says what it will delete first.
//
// Kubernetes has no order for `kubectl delete -f k8s.yaml`, and k8s.yaml's
// guards exist to refuse a stray delete: the CRDs, the install's Namespaces
// and whom the guards trust are kept until marked for deletion, and every
// admission policy and binding holds a finalizer so that it keeps enforcing
// while Terminating. A deliberate uninstall lifts each of those, in an order
// that keeps the guards until nothing is left for them to guard:
//   1. the bindings to k8s.yaml's ClusterRoles, which would point at
//      nothing, go first: nobody creates a Project meanwhile;
//   2. the Projects, while the webhook still answers, so that each takes
//      its Namespace (and runs its finalize hook, where it has one); one that
//      someone else created meanwhile stops the uninstall there;
//   3. the kept objects are marked, the policies' finalizers removed (and
//      the finalize hook, where one holds Projects back), and k8s.yaml
//      deleted whole.
// It refuses, deleting nothing, anyone who is not a cluster admin and,
// unless told `--yes`, a run that nobody confirmed at a terminal.
// feature: deletion-protection
// It refuses a Project with deletionProtection too: its owners' word,
// lifted only by them or an admin, one at a time.
// end feature: deletion-protection
// A Project that does not go within the deadline stops the uninstall with
// the guards still in place, and says why.
import { createInterface } from "node:readline/promises";
import pluralize from "pluralize";
import { stringify } from "yaml";
import { GROUP, PARENT } from "../sync.ts";
import { PROFILE } from "../features/guardrails.ts"; // feature: guardrails
import { BUDGET, PLACE } from "../features/budget.ts"; // feature: budget
import { INTEGRATIONS_NAMESPACE } from "../features/integrations.ts"; // feature: integrations
import { SHAREABLE_LABEL } from "../features/shared.ts"; // feature: shared
import { describeObject, kubectlProcess, type KubeObject, type Kubectl } from "./kubectl.ts";
import { readManifest } from "./manifest.ts";

const MANIFEST = readManifest().objects as KubeObject[];
const INSTALL_GUARD = MANIFEST.find((object) => object.metadata.name === `${PARENT.plural}.${GROUP}-install-protection`) as any;

/** The annotation that lets a kept object go, read from the install guard's own refusal. */
export const DELETION_ANNOTATION = (() => {
  const annotate = / (\S+)=true'$/.exec(INSTALL_GUARD?.spec.validations[0].messageExpression ?? "");
  if (!annotate?.[1]) throw new Error("k8s.yaml has no install guard that says how to lift it");
  return annotate[1];
})();
export const INSTALL_NAMESPACE = MANIFEST.find((object) => object.kind === "Namespace")?.metadata.name ?? "";
// The role and binding of whom the guards trust: Metacontroller.
const TRUSTED_CONTROLLERS = `${PARENT.plural}.${GROUP}-controller`;
/** What the install guard keeps until it carries the deletion annotation. */
export const keptUntilAnnotated = (object: KubeObject) =>
  object.kind === "CustomResourceDefinition" ||
  object.kind === PROFILE.kind || // feature: guardrails
  object.kind === BUDGET.kind || // feature: budget
  (object.kind === "Namespace" && object.metadata.name === INSTALL_NAMESPACE) ||
  (object.kind === "Namespace" && object.metadata.name === INTEGRATIONS_NAMESPACE) || // feature: integrations
  (/^ClusterRole(Binding)?$/.test(object.kind) && object.metadata.name === TRUSTED_CONTROLLERS);
/** Every admission policy and binding carries a finalizer that only a deliberate uninstall removes. */
export const heldByFinalizer = (object: KubeObject) => /^(Validating|Mutating)AdmissionPolicy/.test(object.kind);

// The kinds that go with their CRDs, as `kubectl get` names them.
const CUSTOM_KINDS: string[] = [
  PROFILE.plural, // feature: guardrails
  BUDGET.plural, // feature: budget
  PLACE.plural, // feature: budget
];
const INSTALL_ROLES = new Set(MANIFEST.filter((object) => object.kind === "ClusterRole").map((object) => object.metadata.name));

export interface UninstallOptions {
  kubectl: Kubectl;
  /** Answers the question at a terminal; absent where there is none. */
  confirm?: (question: string) => Promise<string>;
  yes?: boolean;
  log: (line: string) => void;
  signal: AbortSignal;
  /** How long the Projects and Namespaces may take to go. */
  timeout?: string;
}

export class Refusal extends Error {}

const objects = (list: KubeObject[]) => list.map((object) => stringify(reference(object))).join("---\n");

type Plan = {
  projects: {
    name: string;
    uid?: string;
    namespace?: string;
    protected?: boolean; // feature: deletion-protection
  }[];
  /** Namespaces of Projects gone already (an earlier run's), still being deleted. */
  going: string[];
  bindings: KubeObject[];
  custom: string[];
  install: KubeObject[];
  /** An admin's own roles that name the install's resources, with their bindings: kept unless they say so. */
  ownRoles: KubeObject[];
  /** What an admin keeps in the install's Namespaces, which goes with them and a reinstall will not have. */
  ownData: { object: KubeObject; what: string }[];
};

const identity = (object: { kind: string; metadata: { name: string; namespace?: string } }) => `${object.kind} ${object.metadata.namespace ?? ""}/${object.metadata.name}`;
/** Just what names an object, as `kubectl delete -f -` needs it. */
const reference = ({ apiVersion, kind, metadata: { name, namespace } }: KubeObject): KubeObject => ({ apiVersion, kind, metadata: namespace ? { name, namespace } : { name } });

/** What there is to delete; nothing is changed. */
async function survey(run: (args: string[], input?: string) => Promise<string>, tolerant: (args: string[]) => Promise<string | undefined>): Promise<Plan> {
  const live = new Set<string>(JSON.parse(await run(["get", "-f", "-", "-o", "json", "--ignore-not-found"], objects(MANIFEST))).items.map(identity));
  const install = MANIFEST.filter((object) => live.has(identity(object)));
  const projects = JSON.parse((await tolerant(["get", PARENT.plural, "-o", "json"])) ?? '{"items":[]}').items.map((project: any) => ({
    name: project.metadata.name,
    uid: project.metadata.uid,
    namespace: project.status?.namespace,
    protected: project.spec?.deletionProtection === true, // feature: deletion-protection
  }));
  const bindings = JSON.parse(await run(["get", "clusterrolebindings,rolebindings", "--all-namespaces", "-o", "json"])).items.filter(
    (binding: KubeObject & { roleRef: { kind: string; name: string } }) =>
      binding.roleRef.kind === "ClusterRole" && INSTALL_ROLES.has(binding.roleRef.name) && !MANIFEST.some((object) => identity(object) === identity(binding)),
  );
  const custom: string[] = [];
  for (const kind of CUSTOM_KINDS) custom.push(...((await tolerant(["get", kind, "-o", "name"])) ?? "").split("\n").filter(Boolean));
  // Owned by a Project: nobody but Metacontroller writes such an owner reference (the ownership guard).
  const ownedByAProject = (namespace: any) => (namespace.metadata.ownerReferences ?? []).some((owner: any) => owner.kind === PARENT.kind && owner.apiVersion.startsWith(`${GROUP}/`));
  const going = JSON.parse(await run(["get", "namespaces", "-o", "json"])).items
    .filter((namespace: any) => namespace.metadata.deletionTimestamp && ownedByAProject(namespace))
    .map((namespace: any) => namespace.metadata.name)
    .filter((name: string) => !projects.some((project: { namespace?: string }) => project.namespace === name));
  const ownRoles = await rolesOfTheirOwn(run, ownedByAProject);
  const ownData: Plan["ownData"] = [];
  const items = async (args: string[]) => JSON.parse((await tolerant(args)) || '{"items":[]}').items as (KubeObject & { type?: string })[];
  // feature: shared
  for (const source of await items(["get", "secrets,configmaps", "-n", INSTALL_NAMESPACE, "-l", `${SHAREABLE_LABEL}=true`, "-o", "json"])) {
    ownData.push({ object: reference(source), what: "a source the Projects' profiles share" });
  }
  // end feature: shared
  // feature: integrations
  for (const secret of await items(["get", "secrets", "-n", INTEGRATIONS_NAMESPACE, "-o", "json"])) {
    if (!ownedByAProject(secret) && secret.type !== "kubernetes.io/service-account-token") ownData.push({ object: reference(secret), what: "credentials the integrations run with" });
  }
  // end feature: integrations
  return { projects, going, bindings: bindings.map(reference), custom, install, ownRoles, ownData };
}

// A role an admin wrote that names the install's group (to let a team use
// one of its kinds, say) grants nothing once the install is gone, and all it
// granted again at a reinstall; Metacontroller's own, made for a Project,
// go with it.
async function rolesOfTheirOwn(run: (args: string[]) => Promise<string>, ownedByAProject: (object: any) => boolean): Promise<KubeObject[]> {
  const all = (text: string): any[] => (text.trim() ? JSON.parse(text).items : []);
  const ours = (object: KubeObject) => MANIFEST.some((one) => identity(one) === identity(object));
  const roles = all(await run(["get", "clusterroles,roles", "--all-namespaces", "-o", "json"])).filter(
    (role) => !ours(role) && !ownedByAProject(role) && (role.rules ?? []).some((rule: { apiGroups?: string[] }) => (rule.apiGroups ?? []).includes(GROUP)),
  );
  const bindings = all(await run(["get", "clusterrolebindings,rolebindings", "--all-namespaces", "-o", "json"])).filter((binding) =>
    roles.some((role) => role.kind === binding.roleRef.kind && role.metadata.name === binding.roleRef.name && (role.kind === "ClusterRole" || role.metadata.namespace === binding.metadata.namespace)),
  );
  return [...bindings, ...roles].map(reference);
}

// feature: deletion-protection
/** A Project with deletionProtection is its owners' word: lifted only by them, or an admin, one at a time. */
function refuseProtected(plan: Plan) {
  const protectedOnes = plan.projects.filter((project) => project.protected);
  if (protectedOnes.length === 0) return;
  throw new Refusal(
    `${protectedOnes.map((project) => `${PARENT.kind} ${project.name}`).join(", ")} ${protectedOnes.length === 1 ? "has" : "have"} deletionProtection; ` +
      "lift it first, if its owners agree: " +
      protectedOnes.map((project) => `kubectl patch ${PARENT.singular} ${project.name} --type=merge -p '{"spec":{"deletionProtection":false}}'`).join("; ") +
      ". Nothing was deleted.",
  );
}
// end feature: deletion-protection

export async function uninstall(options: UninstallOptions): Promise<void> {
  const { log, signal } = options;
  const timeout = options.timeout ?? "300s";
  const run = async (args: string[], input?: string) => {
    const result = await options.kubectl(args, input, signal);
    if (!result.ok) throw new Error(`kubectl ${args.join(" ")} failed:\n${result.stderr.trim()}`);
    return result.stdout;
  };
  // A kind whose CRD is gone already is simply not there.
  const tolerant = async (args: string[]) => {
    const result = await options.kubectl(args, undefined, signal);
    if (result.ok) return result.stdout;
    if (/the server doesn't have a resource type|no matches for kind|could not find the requested resource/.test(result.stderr)) return undefined;
    throw new Error(`kubectl ${args.join(" ")} failed:\n${result.stderr.trim()}`);
  };

  const admin = await options.kubectl(["auth", "can-i", "*", "*", "--all-namespaces"], undefined, signal);
  if (admin.stdout.trim() !== "yes") throw new Refusal("only a cluster admin can uninstall: `kubectl auth can-i '*' '*' --all-namespaces` does not say yes. Nothing was deleted.");

  const plan = await survey(run, tolerant);
  const nothing = plan.projects.length + plan.going.length + plan.bindings.length + plan.custom.length + plan.install.length === 0;
  if (nothing) {
    log("Nothing of k8s.yaml is installed on this cluster: nothing to delete.");
    return;
  }
  refuseProtected(plan); // feature: deletion-protection

  log("This deletes, for good:");
  for (const project of plan.projects) log(`  ${PARENT.kind} ${project.name}${project.namespace ? `, and Namespace ${project.namespace} with everything in it` : ""}`);
  for (const name of plan.going) log(`  (Namespace ${name}, whose ${PARENT.kind} is gone already, is still being deleted: waited for)`);
  for (const binding of plan.bindings) log(`  ${describeObject(binding)}, which binds a role of k8s.yaml`);
  for (const name of plan.custom) log(`  ${name}`);
  for (const object of plan.install) log(`  ${describeObject(object)}${object.kind === "Namespace" ? ", with everything in it" : ""}`);
  if (plan.ownData.length > 0) {
    log("Of everything in those Namespaces, these are yours, and a reinstall will not have them: keep a copy first (kubectl get -o yaml) if you will want them again:");
    for (const { object, what } of plan.ownData) log(`  ${describeObject(object)}, ${what}`);
  }
  if (plan.ownRoles.length > 0) {
    log("These roles and bindings of yours name the install's resources. They are kept, unless you say so below: they grant nothing once it is gone, and all they granted again at a reinstall:");
    for (const object of plan.ownRoles) log(`  ${describeObject(object)}`);
  }

  if (!options.yes) {
    if (!options.confirm) throw new Refusal("nobody is at a terminal to confirm: run it again with --yes to delete all of the above. Nothing was deleted.");
    const answer = await options.confirm(`Type ${INSTALL_NAMESPACE} to delete all of the above: `);
    if (answer.trim() !== INSTALL_NAMESPACE) throw new Refusal("not confirmed. Nothing was deleted.");
  }
  const removeOwnRoles = plan.ownRoles.length > 0 && options.confirm !== undefined && !options.yes && (await options.confirm("Delete those roles and bindings of yours too? Type yes to: ")).trim() === "yes";

  // What was confirmed is what goes: a Project created since, one of the
  // names listed deleted and made anew included (its uid is another), or one
  // that may no longer go, stops it here, before anything is deleted.
  const now = await survey(run, tolerant);
  refuseProtected(now); // feature: deletion-protection
  const names = (projects: Plan["projects"]) => projects.map((project) => `${project.name}/${project.uid ?? ""}`).sort().join(" ");
  if (names(now.projects) !== names(plan.projects)) throw new Refusal(`the ${pluralize(PARENT.kind)} changed since they were listed. Nothing was deleted: run it again.`);

  const done: string[] = [];
  const stop = (why: string) => new Refusal(`${why}; so the install and its guards stay (run it again once that is put right). ${done.length ? `Deleted already: ${done.join(", ")}.` : "Nothing was deleted."}`);
  if (plan.bindings.length > 0) {
    await run(["delete", "-f", "-", "--ignore-not-found"], objects(plan.bindings));
    done.push(...plan.bindings.map(describeObject));
  }
  if (plan.projects.length > 0) {
    log(`Deleting ${plan.projects.length} ${pluralize(PARENT.kind, plan.projects.length)} while the webhook still answers...`);
    const projects = plan.projects.map((project) => project.name);
    const deleted = await options.kubectl(["delete", PARENT.plural, ...projects, "--ignore-not-found", "--wait=false"], undefined, signal);
    if (!deleted.ok) throw stop(`not every ${PARENT.kind} could be deleted:\n${deleted.stderr.trim()}\n`);
    done.push(`${projects.length} ${pluralize(PARENT.kind, projects.length)}`);
    const waited = await options.kubectl(["wait", "--for=delete", ...projects.map((name) => `${PARENT.singular}/${name}`), `--timeout=${timeout}`], undefined, signal);
    if (!waited.ok) {
      const left = await tolerant(["get", PARENT.plural, "-o", `custom-columns=NAME:.metadata.name,REASON:.status.conditions[?(@.type=="Ready")].message`]);
      throw stop(`these ${pluralize(PARENT.kind)} did not go within ${timeout} (docs/operating.md, Troubleshooting):\n${left ?? ""}`);
    }
  }
  // A Namespace goes after its Project, once everything in it has: content
  // that a finalizer holds keeps it, and the install's guards stay until it is gone.
  const projectNamespaces = [...plan.projects.flatMap((project) => (project.namespace ? [project.namespace] : [])), ...plan.going];
  if (projectNamespaces.length > 0) {
    const waited = await options.kubectl(["wait", "--for=delete", ...projectNamespaces.map((name) => `namespace/${name}`), `--timeout=${timeout}`], undefined, signal);
    if (!waited.ok) {
      const holding = await options.kubectl(["get", "namespaces", ...projectNamespaces, "--ignore-not-found", "-o", 'jsonpath={range .items[*]}{.metadata.name}: {.status.conditions[?(@.status=="True")].message}{"\\n"}{end}'], undefined, signal);
      throw stop(`these Namespaces did not go within ${timeout}:\n${holding.stdout.trim()}\n(a finalizer on something in it, which its owner or an admin can remove)`);
    }
  }
  const since = ((await tolerant(["get", PARENT.plural, "-o", "name"])) ?? "").split("\n").filter(Boolean);
  if (since.length > 0) throw stop(`${since.join(", ")} came meanwhile`);
  const kept = plan.install.filter(keptUntilAnnotated);
  if (kept.length > 0) await run(["annotate", "-f", "-", `${DELETION_ANNOTATION}=true`, "--overwrite"], objects(kept));
  // feature: integrations
  // The integrations' guard keeps a CompositeController with the finalize
  // hook, lest it leave Metacontroller's finalizer on Projects; none is left.
  const controllers = plan.install.filter((object) => object.kind === "CompositeController");
  if (controllers.length > 0) await run(["patch", "-f", "-", "--type=merge", "-p", '{"spec":{"hooks":{"finalize":null}}}'], objects(controllers));
  // end feature: integrations
  const held = plan.install.filter(heldByFinalizer);
  if (held.length > 0) await run(["patch", "-f", "-", "--type=merge", "-p", '{"metadata":{"finalizers":null}}'], objects(held));
  if (plan.install.length > 0) await run(["delete", "-f", "-", "--ignore-not-found", `--timeout=${timeout}`], objects(plan.install));
  const namespaces = plan.install.filter((object) => object.kind === "Namespace").map((object) => `namespace/${object.metadata.name}`);
  if (namespaces.length > 0) await run(["wait", "--for=delete", ...namespaces, `--timeout=${timeout}`]);
  log(`Uninstalled: ${plan.projects.length} ${pluralize(PARENT.kind, plan.projects.length)}, ${plan.bindings.length} binding(s) and ${plan.install.length} object(s) of k8s.yaml are gone.`);
  if (removeOwnRoles) {
    await run(["delete", "-f", "-", "--ignore-not-found"], objects(plan.ownRoles));
    log(`Your ${plan.ownRoles.length} role(s) and binding(s) naming the install are gone too.`);
  } else if (plan.ownRoles.length > 0) {
    const commands = plan.ownRoles.map((object) => `kubectl delete ${object.kind.toLowerCase()} ${object.metadata.name}${object.metadata.namespace ? ` -n ${object.metadata.namespace}` : ""}`);
    log(`Kept your roles and bindings naming the install; to delete them: ${commands.join("; ")}`);
  }
}

if (import.meta.filename === process.argv[1]) {
  const args = process.argv.slice(2);
  const unknown = args.filter((arg) => arg !== "--yes");
  if (unknown.length > 0) {
    console.error(`npm run uninstall: unknown argument ${unknown[0]}; the only one is --yes (delete without asking)`);
    process.exit(2);
  }
  const interrupted = new AbortController();
  process.on("SIGINT", () => interrupted.abort());
  const terminal = process.stdin.isTTY ? createInterface({ input: process.stdin, output: process.stdout }) : undefined;
  try {
    await uninstall({
      kubectl: kubectlProcess(process.env["KUBECTL"] || undefined),
      ...(terminal ? { confirm: (question: string) => terminal.question(question) } : {}),
      yes: args.includes("--yes"),
      log: (line) => console.log(line),
      signal: interrupted.signal,
    });
  } catch (failure) {
    console.error(`npm run uninstall: ${failure instanceof Error ? failure.message : failure}`);
    process.exitCode = 1;
  } finally {
    terminal?.close();
  }
}
