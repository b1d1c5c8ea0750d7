// `npm run rename` makes this copy a controller for another resource: the
// words it replaces, the ones it leaves, and that a renamed copy of this very
// repository holds none of the old names and renames back to itself.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { GROUP, NAMESPACE_PREFIX, PARENT } from "../sync.ts";
import { escaped, GROUP_OF_KIND, namespaces, withObserved } from "./helpers.ts";
import { readManifest } from "../scripts/manifest.ts";
import { currentNames, filesToRename, gitLabParts, invalidNames, namesAfter, parse, pluralOf, renameFile, renameRepository, renamed, renamedPaths, type Files, type Names } from "../scripts/rename.ts";
import { describeNames, generatedNames } from "./rename-trees.ts";

const PROJECT: Names = { group: "agrrh.com", kind: "Project", plural: "projects", short: "proj", prefix: "proj-", kinds: [{ kind: "ProjectTier", plural: "projecttiers", singular: "projecttier" }] };
const TEAM: Names = { group: "teams.example.org", kind: "Team", plural: "teams", short: "team", prefix: "team-" };

describe("rename: the words", () => {
  test("renamed to the names it has, a text is left exactly as it is", () => {
    const names = currentNames();
    const text = `${names.kind} ${names.plural} ${names.prefix}x, and words about neither.`;
    assert.equal(renamed(text, names, names), text);
    assert.equal(renamed(text, { ...names, kinds: [] }, { ...names, kinds: [] }), text);
  });

  test("the kind in each of its forms, inside identifiers too", () => {
    const text = "Project projects PROJECT_LABEL MAX_PROJECTS memberProject projectName Projects";
    assert.equal(renamed(text, PROJECT, TEAM), "Team teams TEAM_LABEL MAX_TEAMS memberTeam teamName Teams");
  });

  test("a word that only starts like it is left alone: projected, projection, another API's project_id", () => {
    const text = "volume.projected, a projection, project_id";
    assert.equal(renamed(text, PROJECT, TEAM), text);
  });

  test("the features' kinds named after it are renamed with it, their resources too", () => {
    assert.equal(renamed("ProjectTier projecttiers.agrrh.com projecttier", PROJECT, TEAM), "TeamTier teamtiers.teams.example.org teamtier");
  });

  test("the group, also escaped in a regular expression; the prefix and short name where they stand alone", () => {
    assert.equal(renamed(String.raw`projects.agrrh.com /projects\.agrrh\.com-size/ proj-shop "proj-" - proj`, PROJECT, TEAM), String.raw`teams.teams.example.org /teams\.teams\.example\.org-size/ team-shop "team-" - team`);
  });

  test("the install's own names follow the singular", () => {
    assert.equal(renamed("meta-project controller-project project-controller", PROJECT, TEAM), "meta-team controller-team team-controller");
  });

  test("'a' becomes 'an' before a kind that starts with a vowel, and back", () => {
    const order: Names = { group: "shop.example.org", kind: "Order", plural: "orders", short: "ord", prefix: "ord-" };
    assert.equal(renamed("a Project, A project, an apple", PROJECT, order), "an Order, An order, an apple");
    assert.equal(renamed("an Order, An order", order, PROJECT), "a Project, A project");
  });

  test("the article follows the kind across a line break, past a comment's mark, and before backticks", () => {
    const order: Names = { group: "shop.example.org", kind: "Order", plural: "orders", short: "ord", prefix: "ord-" };
    const text = "when a\nProject is stuck\n// each tenant of a\n// Project\n * whenever a\n * Project\n# a\n# project\nA `Project` (cluster-scoped)";
    assert.equal(renamed(text, PROJECT, order), "when an\nOrder is stuck\n// each tenant of an\n// Order\n * whenever an\n * Order\n# an\n# order\nAn `Order` (cluster-scoped)");
    assert.equal(renamed("data\nProject, a\n\nProject", PROJECT, order), "data\nOrder, a\n\nOrder", "a word ending in a, or a paragraph between, is no article of it");
    assert.equal(
      renamed("[Create a Project](docs/cluster.md#2-create-a-project), [x](#why-a-project-waits), alpha-a-project", PROJECT, order),
      "[Create an Order](docs/cluster.md#2-create-an-order), [x](#why-an-order-waits), alpha-a-order",
      "a heading's anchor spells the article as its heading does; a dash elsewhere is no space",
    );
  });

  test("the prefix in the uid test/helpers.ts derives from an object's name is renamed with the name", () => {
    const observed = withObserved(namespaces(), [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "proj-test" } }]);
    const uid = String((observed[GROUP_OF_KIND.Namespace!] as Record<string, { metadata: { uid?: string } }>)["proj-test"]?.metadata.uid);
    assert.equal(renamed(`"name": "proj-test", "uid": "${uid}"`, PROJECT, TEAM), `"name": "team-test", "uid": "${uid.replace("proj-test", "team-test")}"`);
    assert.notEqual(uid.replace("proj-test", "team-test"), uid);
  });

  test("a plural that is not the singular and an s keeps its own spelling", () => {
    const policy: Names = { group: "policies.example.org", kind: "Policy", plural: "policies", short: "pol", prefix: "pol-" };
    assert.equal(renamed("Projects, projects, PROJECTS", PROJECT, policy), "Policies, policies, POLICIES");
  });

  test("an irregular English plural is the default, in each form: people for Person, indices for Index", () => {
    for (const [kind, plural] of [["Person", "people"], ["Index", "indices"], ["Policy", "policies"], ["Box", "boxes"]] as const) {
      const { to } = parse(["--group", "x.example.org", "--kind", kind], PROJECT);
      assert.equal(to.plural, plural);
      const Plural = plural.charAt(0).toUpperCase() + plural.slice(1);
      assert.equal(renamed("Projects, projects, PROJECTS, a Project", PROJECT, to), `${Plural}, ${plural}, ${plural.toUpperCase()}, ${/^[AEIOU]/.test(kind) ? "an" : "a"} ${kind}`);
    }
  });

  test("a feature's kind is renamed on its own, with its resource and singular, or follows the kind", () => {
    const { to } = parse(["--group", "sandboxes.example.org", "--kind", "Sandbox", "--rename", "ProjectTier=SandboxClass"], PROJECT);
    assert.deepEqual(to.kinds, [{ kind: "SandboxClass", plural: "sandboxclasses", singular: "sandboxclass" }]);
    assert.equal(
      renamed("a ProjectTier, ProjectTiers, projecttiers.agrrh.com, projecttier, Project", PROJECT, to),
      "a SandboxClass, SandboxClasses, sandboxclasses.sandboxes.example.org, sandboxclass, Sandbox",
    );
    const followed = parse(["--group", "sandboxes.example.org", "--kind", "Sandbox"], PROJECT).to;
    assert.equal(renamed("ProjectTiers projecttier", PROJECT, followed), "SandboxTiers sandboxtier");
    assert.throws(() => parse(["--group", "x.example.org", "--kind", "X", "--rename", "Nothing=Else"], PROJECT), /neither a feature's kind \(ProjectTier\) nor a label/);
  });

  // README, Make it your own, step 2: "a word with the kind's name in it changes with the kind; any other keeps its spelling".
  test("a feature's field, reason or child with the kind's name in it changes with the kind; one named after the feature's own kind keeps its word, even when that kind is renamed on its own", () => {
    const { to } = parse(["--group", "sandboxes.example.org", "--kind", "Sandbox", "--rename", "ProjectTier=SandboxClass"], PROJECT);
    assert.equal(
      renamed("a ProjectTier named in spec.tier, its tierLimit, TierNotFound, projectLimit, project-limit, ProjectLimitExceeded", PROJECT, to),
      "a SandboxClass named in spec.tier, its tierLimit, TierNotFound, sandboxLimit, sandbox-limit, SandboxLimitExceeded",
    );
  });

  test("a label is renamed on its own, also as a regular expression and a kubectl jsonpath spell it", () => {
    const { from, to } = parse(["--group", "teams.example.org", "--kind", "Team", "--rename", "agrrh.com/project=example.org/owning-team"], PROJECT);
    const text = String.raw`"agrrh.com/project" /agrrh\.com\/project/ "agrrh\.com\/project" {.metadata.labels.agrrh\.com/project} agrrh.com/tier agrrh.com/projects`;
    assert.equal(
      renamed(text, from, to),
      String.raw`"example.org/owning-team" /example\.org\/owning-team/ "example\.org\/owning-team" {.metadata.labels.example\.org/owning-team} teams.example.org/tier teams.example.org/teams`,
    );
    assert.match(invalidNames({ ...to, labels: ["Not A Label"] }) ?? "", /^--rename …=Not A Label: a label key/);
  });

  test("the group alone, or the prefix alone, is renamed where the kind stays", () => {
    const text = "Project projects.agrrh.com proj-shop agrrh.com/project";
    assert.equal(renamed(text, PROJECT, { ...PROJECT, group: "example.org" }), "Project projects.example.org proj-shop example.org/project");
    assert.equal(renamed(text, PROJECT, { ...PROJECT, prefix: "p-" }), "Project projects.agrrh.com p-shop agrrh.com/project");
  });

  test("a file whose own name holds the plural is renamed with it, and back; one that does not stays", () => {
    const to = namesAfter(PROJECT, { group: "alumni.example.org", kind: "Alumnus", plural: "alumni", short: "alumnus", prefix: "al-" }).to;
    const paths = ["scripts/kubectl-list_projects", "scripts/list-projects.plugin.yaml", "test/list-projects.test.ts", "test/sync.test.ts"];
    const moved = renamedPaths(paths, PROJECT, to);
    assert.deepEqual(moved, [
      ["scripts/kubectl-list_projects", "scripts/kubectl-list_alumni"],
      ["scripts/list-projects.plugin.yaml", "scripts/list-alumni.plugin.yaml"],
      ["test/list-projects.test.ts", "test/list-alumni.test.ts"],
    ]);
    assert.deepEqual(renamedPaths(moved.map(([, after]) => after), to, PROJECT).map(([, back]) => back), paths.slice(0, 3));
  });

  test("a prefix of another length moves the longest name with it", () => {
    const longer = { ...TEAM, prefix: "my-team-" };
    assert.equal(renamed("at most 58 letters, over 58 characters, [-a-z0-9]{0,56}", PROJECT, longer), "at most 55 letters, over 55 characters, [-a-z0-9]{0,53}");
  });

  test("where another API speaks, its lower-case project stays, and ours is still renamed", () => {
    const text = 'api("GET", `projects/${id}`) for Project ${setting("PROJECT")} in proj-shop, run in project-runners';
    assert.equal(renamed(text, PROJECT, TEAM, true), 'api("GET", `projects/${id}`) for Team ${setting("TEAM")} in team-shop, run in team-runners');
  });

  test("where the type check passed before and fails after, every file is written back, and the refusal names the errors", () => {
    const disk = new Map([["a.ts", "const team = 1; project();"], ["b.md", "a Project"]]);
    const files = (failsAfter: boolean): Files => {
      let writes = 0;
      return {
        paths: [...disk.keys()],
        read: (path) => disk.get(path) ?? "",
        write: (path, text) => (disk.set(path, text), writes++),
        typeChecks: () => (writes > 0 && writes <= 2 && failsAfter ? { ok: false, output: "a.ts(1,17): error TS2349: This expression is not callable." } : { ok: true, output: "" }),
      };
    };
    assert.throws(() => renameRepository(files(true), PROJECT, TEAM), /meet names the code already has[\s\S]*a\.ts\(1,17\): error TS2349/);
    assert.deepEqual([...disk.values()], ["const team = 1; project();", "a Project"]);
    assert.equal(renameRepository(files(false), PROJECT, TEAM), 2);
    assert.deepEqual([...disk.values()], ["const team = 1; team();", "a Team"]);
  });

  test("names Kubernetes would not take are refused, each naming its option", () => {
    assert.equal(invalidNames(TEAM), undefined);
    assert.match(invalidNames({ ...TEAM, group: "teams" }) ?? "", /^--group teams:/);
    assert.match(invalidNames({ ...TEAM, kind: "team" }) ?? "", /^--kind team:/);
    assert.match(invalidNames({ ...TEAM, plural: "Teams" }) ?? "", /^--plural Teams:/);
    assert.match(invalidNames({ ...TEAM, prefix: "team" }) ?? "", /^--prefix team:/);
  });
});

describe("rename: this repository", () => {
  const current = currentNames();
  const files = filesToRename().map((path) => ({ path, text: readFileSync(new URL(`../${path}`, import.meta.url), "utf8") })).filter(({ text }) => !text.includes("\0"));
  // Names found nowhere in the repository (the first such of these), with a
  // prefix of another length that is not the singular and a dash, so that
  // renaming back can tell them apart.
  const unused = ["Widget", "Gizmo", "Zorblat"].find((kind) => files.every(({ text }) => !text.toLowerCase().includes(kind.toLowerCase()))) ?? "Qxzzy";
  const singular = unused.toLowerCase();
  const WIDGET: Names = { group: `${singular}s.example.net`, kind: unused, plural: pluralOf(singular), short: singular.slice(0, 3), prefix: `${singular.slice(0, 2)}-` };

  test("the names it starts from are sync.ts's, with the CRD's short name and the features' kinds named after it", () => {
    const manifest = [
      `{"kind": "CustomResourceDefinition", "spec": {"names": {"kind": "${current.kind}", "plural": "x", "shortNames": ["xs"]}}}`,
      `{"kind": "CustomResourceDefinition", "spec": {"names": {"kind": "${current.kind}Size", "plural": "y", "singular": "z"}}}`,
      `{"kind": "CustomResourceDefinition", "spec": {"names": {"kind": "Other", "plural": "o", "singular": "p"}}}`,
    ].join("\n---\n");
    assert.deepEqual(currentNames(manifest), { ...current, short: "xs", kinds: [{ kind: `${current.kind}Size`, plural: "y", singular: "z" }, { kind: "Other", plural: "o", singular: "p" }] });
  });

  test("a renamed copy holds none of the old names, but another API's own word where it speaks", () => {
    // The kind ends as a word ends, so that an English word that starts like
    // it (a Team's teammate) is not taken for it; its compounds are the CRDs'.
    const compounds = (current.kinds ?? []).filter(({ kind }) => kind.startsWith(current.kind)).flatMap(({ plural, singular }) => [`|${plural}`, `|${singular}`]).join("");
    const old = new RegExp(String.raw`${current.group.replaceAll(".", String.raw`\\?\.`)}|(?:${pluralOf(current.kind)}|${current.kind})(?![a-z])|(?:${pluralOf(current.kind).toUpperCase()}|${current.kind.toUpperCase()})(?![A-Z])|(?<![-a-z0-9])${current.prefix}|(?<![-a-z0-9./])${current.short}(?![-a-z0-9])`);
    const lower = new RegExp(String.raw`${current.kind.toLowerCase()}(?![a-z_])|${current.plural}(?![a-z_])${compounds}`);
    const left = files.flatMap(({ path, text }) =>
      gitLabParts(path, renameFile(path, text, current, WIDGET)).flatMap(({ text: part, speaksGitLab }) =>
        part.split("\n").flatMap((line) => (old.test(line) || (!speaksGitLab && lower.test(line)) ? [`${path}: ${line.trim().slice(0, 120)}`] : [])),
      ),
    );
    assert.deepEqual(left.slice(0, 10), [], `${left.length} lines`);
  });

  test("renamed to a prefix that is the singular and a dash, no alternation in the docs' commands names one alternative twice", () => {
    const prefixed: Names = { ...WIDGET, prefix: `${singular}-` };
    const twice = files
      .filter(({ path }) => path.endsWith(".md"))
      .flatMap(({ path, text }) => [...renameFile(path, text, current, prefixed).matchAll(/\(([^()\s|]+(?:\|[^()\s|]+)+)\)/g)].map(([whole, group = ""]) => ({ path, whole, alternatives: group.split("|") })))
      .filter(({ alternatives }) => new Set(alternatives).size < alternatives.length)
      .map(({ path, whole }) => `${path}: ${whole}`);
    assert.deepEqual(twice, []);
  });

  // A copy may change one name in the one place that defines it, by hand or
  // by a rename that does not know of it, and its tests must still pass: so
  // they take every install name from the code and k8s.yaml. Only the test
  // that pins a name's value spells it, on one line that says so. These files
  // are about names in general, with examples of their own.
  const EXAMPLES = ["rename.test.ts", "rename.ts", "take-away.test.ts"];
  const PIN = "// pins the name";

  test("the tests spell no install name that the code or k8s.yaml defines, but where one line pins it", () => {
    // As a string, as a regular expression, or as a string that builds one.
    const spelled = (name: string) => escaped(name).replaceAll(String.raw`\.`, String.raw`\\{0,2}\.`);
    const declared = readManifest().objects.filter((object) => /^(Namespace|CompositeController|(Validating|Mutating)AdmissionPolicy)$/.test(object?.kind));
    // Where the prefix is the singular and a dash (team- for Team, as rename
    // makes it by default), the kind's own names (team-controller) read as a
    // Namespace's, and cannot be told apart: only the names below are looked for.
    const prefixIsItsOwnName = NAMESPACE_PREFIX === `${PARENT.singular}-`;
    const names = [
      { name: GROUP, pattern: new RegExp(spelled(GROUP)) },
      // The prefix before a Project's name, or before one put in by a template.
      ...(prefixIsItsOwnName ? [] : [{ name: `${NAMESPACE_PREFIX}<name>`, pattern: new RegExp(String.raw`(?<![-a-z0-9])${spelled(NAMESPACE_PREFIX)}[a-z0-9$]`) }]),
      ...declared.map(({ metadata: { name } }) => ({ name, pattern: new RegExp(spelled(name)) })),
    ];
    const spellings = ["test/", "scripts/"]
      .flatMap((folder) => readdirSync(new URL(`../${folder}`, import.meta.url)).map((file) => `${folder}${file}`))
      .filter((path) => path.endsWith(".ts") && !EXAMPLES.includes(path.slice(path.indexOf("/") + 1)))
      .flatMap((path) =>
        readFileSync(new URL(`../${path}`, import.meta.url), "utf8")
          .split("\n")
          .flatMap((line, index) => names.filter(({ pattern }) => pattern.test(line)).map(({ name }) => ({ name, at: `${path}:${index + 1}`, pinned: line.trimEnd().endsWith(PIN), line: line.trim() }))),
      );
    assert.deepEqual(spellings.filter(({ pinned }) => !pinned).map(({ name, at, line }) => `${at}: ${name}: ${line.slice(0, 100)}`), []);
    for (const { name } of names) {
      const pins = spellings.filter((spelling) => spelling.pinned && spelling.name === name).map(({ at }) => at);
      assert.ok(pins.length <= 1, `${name} is pinned more than once: ${pins.join(", ")}`);
    }
  });

  // Resources of every shape a copy may have: a short and a long prefix, an
  // irregular plural, a feature's kind and the parent's label of names of
  // their own. Renamed there and back, every file is as it was.
  for (const names of generatedNames(files.map(({ text }) => text), current)) {
    test(`renamed to ${describeNames(names)}, then renamed back, every file is as it was`, () => {
      const { from, to } = namesAfter(current, names.to, names.renames);
      for (const { path, text } of files) {
        assert.equal(renameFile(path, renameFile(path, text, from, to), to, from), text, path);
      }
    });
  }
});
