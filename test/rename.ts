// `npm run rename -- --group teams.example.org --kind Team`: makes this copy
// a controller for another resource, in every file at once (code, k8s.yaml,
// tests, fixtures, docs, package.json and its lock), as README's "Make it
// your own" says. Options, the last three defaulting from the kind:
//   --group    the API group, as teams.example.org
//   --kind     the kind, as Team
//   --plural   the resource, as teams
//   --short    the short name kubectl takes, as team
//   --prefix   what its Namespaces' names start with, as team-
// The singular, and so the install's own names (its Namespace meta-<singular>,
// its CompositeController controller-<singular>, the package
// <singular>-controller), is the kind in lower case. The names it starts
// from are sync.ts's and the CRD's, so a renamed copy can be renamed again.
// Then run `npm run manifest && npm run transcripts && npm test`.
//
// What it replaces is words, not substrings: the kind in each of its forms
// (with Team for the new kind: `Teams`, `teams`, `TEAM`, `TEAMS`, also inside
// identifiers such as `memberTeam` and `TEAM_LABEL`, never in a longer word
// such as `teamed`), with "a" or "an" before it as the new word needs; the
// features' kinds that start with it; the group, also as escaped in a
// regular expression; the prefix and short name where they stand alone. In
// what speaks GitLab's API (the reference integrations and their stand-in),
// GitLab's own lower-case `project` stays.
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { GROUP, NAMESPACE_PREFIX, PARENT } from "../sync.ts";

const root = new URL("..", import.meta.url);

export type Names = { group: string; kind: string; plural: string; short: string; prefix: string; compounds?: string[] };

/** The names this copy has now: sync.ts's, and the short name its CRD gives kubectl. */
export function currentNames(manifest = readFileSync(new URL("k8s.yaml", root), "utf8")): Names {
  const crds = parseAllDocuments(manifest)
    .map((document) => document.toJS())
    .filter((object) => object?.kind === "CustomResourceDefinition");
  const crd = crds.find((object) => object.spec?.names?.kind === PARENT.kind);
  // The features' kinds named after it (ProjectProfile) are renamed with it,
  // and so are their resources (projectprofiles), which are one word.
  const compounds = crds
    .map((object) => object.spec?.names)
    .filter((names) => names?.kind !== PARENT.kind && names?.kind?.startsWith(PARENT.kind))
    .flatMap((names) => [names.plural, names.singular]);
  return { group: GROUP, kind: PARENT.kind, plural: PARENT.plural, short: crd?.spec?.names?.shortNames?.[0] ?? PARENT.singular, prefix: NAMESPACE_PREFIX, compounds };
}

/** What a name must be for Kubernetes to take it, or undefined if it may be. */
export function invalidNames(names: Names): string | undefined {
  const label = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/.test(names.group)) return `--group ${names.group}: a DNS subdomain with a dot, as teams.example.org`;
  if (!/^[A-Z][A-Za-z0-9]*$/.test(names.kind)) return `--kind ${names.kind}: UpperCamelCase, as Team`;
  if (!label.test(names.plural)) return `--plural ${names.plural}: lower case letters, digits or '-', as teams`;
  if (!label.test(names.short)) return `--short ${names.short}: lower case letters, digits or '-', as team`;
  if (!/^[a-z]([-a-z0-9]*)-$/.test(names.prefix)) return `--prefix ${names.prefix}: lower case letters, digits or '-', ending in '-', as team-`;
  if (names.prefix.length > 32) return `--prefix ${names.prefix}: at most 32 characters, to leave the names their room`;
  return undefined;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const capitalized = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
const article = (word: string, capital: boolean) => (/^[AEIOU]/i.test(word) ? (capital ? "An" : "an") : capital ? "A" : "a");
/** The longest name a resource may have so that its Namespace's name is a DNS-1123 label. */
const longestName = (prefix: string) => 63 - prefix.length;

/** The text with every old name replaced by the new one; `speaksGitLab` keeps GitLab's lower-case `project`. */
export function renamed(text: string, from: Names, to: Names, speaksGitLab = false): string {
  // Each form of the old names, beside the same form of the new ones.
  const forms = (names: Names) => {
    const singular = names.kind.toLowerCase();
    return [
      ...(from.compounds ?? []).map((compound) => singular + compound.slice(from.kind.length)),
      names.plural === `${singular}s` ? `${names.kind}s` : capitalized(names.plural),
      names.kind,
      names.plural,
      singular,
      names.plural.toUpperCase().replaceAll("-", "_"),
      singular.toUpperCase(),
    ];
  };
  const newForms = forms(to);
  const wordOf = new Map(forms(from).map((form, index) => [form, newForms[index]!]));
  // Longest first, so that `Projects` is one word and not `Project` + `s`.
  const words = [...wordOf.keys()].sort((a, b) => b.length - a.length);
  // A form ends where the next character cannot continue it: a lower-case
  // form is not followed by a lower-case letter (nor `_`, GitLab's
  // `project_id`), an upper-case one not by an upper-case letter.
  const word = words.map((form) => `${escape(form)}${/^[A-Z]+$/.test(form) ? "(?![A-Z])" : "(?![a-z_])"}`).join("|");
  const pattern = new RegExp(
    [
      `(?<article>\\b(?:[Aa]n?) )(?<articled>${word})`,
      `(?<escapedGroup>${escape(escape(from.group))})`,
      `(?<group>${escape(from.group)})`,
      `(?<prefix>(?<![-a-z0-9])${escape(from.prefix)})`,
      `(?<short>(?<![-a-z0-9./])${escape(from.short)}(?![-a-z0-9]))`,
      `(?<word>${word})`,
      `(?<longest>at most ${longestName(from.prefix)}\\b|over ${longestName(from.prefix)} characters|\\{0,${longestName(from.prefix) - 2}\\})`,
    ].join("|"),
    "g",
  );
  // GitLab's lower-case word, but not a name of ours joined by a dash (the
  // Namespace project-integrations, where the programs run).
  return text.replace(pattern, (match, ...rest) => {
    const groups = rest.at(-1) as Record<string, string | undefined>;
    const next = (rest.at(-2) as string).charAt((rest.at(-3) as number) + match.length);
    const gitLabs = (form: string) => speaksGitLab && /^[a-z]/.test(form) && next !== "-";
    if (groups.articled !== undefined) {
      if (gitLabs(groups.articled)) return match;
      const replacement = wordOf.get(groups.articled)!;
      const capital = groups.article!.startsWith("A");
      return `${article(replacement, capital)} ${replacement}`;
    }
    if (groups.escapedGroup !== undefined) return escape(to.group);
    if (groups.group !== undefined) return to.group;
    if (groups.prefix !== undefined) return to.prefix;
    if (groups.short !== undefined) return to.short;
    if (groups.word !== undefined) return gitLabs(groups.word) ? match : wordOf.get(groups.word)!;
    // The CRD's name rule counts the letters between the first and the last.
    return match.replace(/\d+(?=\D*$)/, (number) => String(Number(number) - longestName(from.prefix) + longestName(to.prefix)));
  });
}

/** Whether a file's text speaks GitLab's API: the stand-in's test, and the document of k8s.yaml that ships the programs. */
export function gitLabParts(path: string, text: string): { text: string; speaksGitLab: boolean }[] {
  if (path.endsWith("-gitlab.test.ts")) return [{ text, speaksGitLab: true }];
  if (path !== "k8s.yaml") return [{ text, speaksGitLab: false }];
  return text.split(/(?=^---$)/m).map((document) => ({ text: document, speaksGitLab: /^ {2}name: gitlab-integrations$/m.test(document) }));
}

// This script and its test speak of names in general, with examples of
// their own that must stay as they are.
const ABOUT_NAMES = ["test/rename.ts", "test/rename.test.ts"];

/** The files to rename in, by path from the root: every one git knows or would add, that is there, but this script's own. */
export function filesToRename(): string[] {
  return execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { cwd: root, encoding: "utf8" })
    .split("\n")
    .filter((path) => path && !ABOUT_NAMES.includes(path) && statSync(new URL(path, root), { throwIfNoEntry: false })?.isFile());
}

export function renameFile(path: string, text: string, from: Names, to: Names): string {
  return gitLabParts(path, text)
    .map((part) => renamed(part.text, from, to, part.speaksGitLab))
    .join("");
}

function parse(args: string[]): Names {
  const given = new Map<string, string>();
  for (let index = 0; index < args.length; index += 2) {
    const [flag, value] = [args[index]!, args[index + 1]];
    if (!["--group", "--kind", "--plural", "--short", "--prefix"].includes(flag) || value === undefined) throw new Error(`unknown option ${flag}, or no value after it`);
    given.set(flag.slice(2), value);
  }
  const kind = given.get("kind");
  const group = given.get("group");
  if (!kind || !group) throw new Error("--group and --kind are needed");
  const singular = kind.toLowerCase();
  return { group, kind, plural: given.get("plural") ?? `${singular}s`, short: given.get("short") ?? singular, prefix: given.get("prefix") ?? `${singular}-` };
}

/** A file system for the rename, so that a test can watch what it writes. */
export type Files = { paths: string[]; read: (path: string) => string; write: (path: string, text: string) => void; typeChecks: () => { ok: boolean; output: string } };

/** Renames in every file, or in none: where the type check passed before and fails after, every file is written back. Returns how many changed. */
export function renameRepository(files: Files, from: Names, to: Names): number {
  // Every file is read and renamed before any is written.
  const changed = files.paths.flatMap((path) => {
    const text = files.read(path);
    const after = text.includes("\0") ? text : renameFile(path, text, from, to);
    return after === text ? [] : [{ path, text, after }];
  });
  // A new name can be one the code holds already (a test's local `team`
  // where Project becomes Team): two names become one, and only the type
  // check tells.
  const before = files.typeChecks().ok;
  for (const { path, after } of changed) files.write(path, after);
  const after = files.typeChecks();
  if (before && !after.ok) {
    for (const { path, text } of changed) files.write(path, text);
    const errors = after.output.split("\n").filter((line) => line.includes("error TS")).slice(0, 5);
    throw new Error(`the new names meet names the code already has, and the type check fails:\n${errors.join("\n")}\nrename those first, or choose another kind`);
  }
  return changed.length;
}

if (import.meta.filename === process.argv[1]) {
  try {
    const to = parse(process.argv.slice(2));
    const invalid = invalidNames(to);
    if (invalid) throw new Error(invalid);
    const from = currentNames();
    const tsc = fileURLToPath(new URL("node_modules/.bin/tsc", root));
    const changed = renameRepository(
      {
        paths: filesToRename(),
        read: (path) => readFileSync(new URL(path, root), "utf8"),
        write: (path, text) => writeFileSync(new URL(path, root), text),
        typeChecks: () => {
          const result = spawnSync(tsc, ["-p", "."], { cwd: root, encoding: "utf8" });
          return { ok: result.status === 0, output: result.stdout };
        },
      },
      from,
      to,
    );
    console.log(`renamed ${from.kind} (${from.plural}.${from.group}, ${from.prefix}<name>) to ${to.kind} (${to.plural}.${to.group}, ${to.prefix}<name>) in ${changed} files`);
    console.log("next: npm run manifest && npm run transcripts && npm test");
  } catch (error) {
    console.error(`rename: ${(error as Error).message}\nnothing was changed`);
    console.error("usage: npm run rename -- --group teams.example.org --kind Team [--plural teams] [--short team] [--prefix team-]");
    process.exit(2);
  }
}
