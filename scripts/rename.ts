// `npm run rename -- --group example.org --kind Team`: makes this copy
// a controller for another resource, in every file at once (code, k8s.yaml,
// tests, fixtures, docs, package.json and its lock), as README's "Make it
// your own" says. Options, the last three defaulting from the kind:
//   --group    the API group, as example.org (the resource is then teams.example.org)
//   --kind     the kind, as Team
//   --plural   the resource, as teams (the English plural of the kind:
//              policies for Policy, people for Person)
//   --short    the short name kubectl takes, as team
//   --prefix   what its Namespaces' names start with, as team- (any length
//              that leaves a name room: every length figure follows it)
//   --rename   OLD=NEW, as often as needed: a feature's kind on its own
//              (ProjectClass=TeamClass, with its resource and singular),
//              or a label (agrrh.com/project=example.org/team). Without it,
//              a feature's kind named after the parent's follows the new
//              kind (ProjectClass becomes TeamClass), and a label the
//              group and kind it is spelt with.
// The singular, and so the install's own names (its Namespace meta-<singular>,
// its CompositeController controller-<singular>, the package
// <singular>-controller), is the kind in lower case. The names it starts
// from are sync.ts's and the CRD's, so a renamed copy can be renamed again.
// Then the check it prints (take-away.ts's NEXT).
//
// What it replaces is words, not substrings: the kind in each of its forms
// (with Team for the new kind: `Teams`, `teams`, `TEAM`, `TEAMS`, also inside
// identifiers such as `memberTeam` and `TEAM_LABEL`, never in a longer word
// such as `teamed`), with "a" or "an" before it as the new word needs (also
// at the end of the line before, and before backticks); the
// features' kinds that start with it; the group, also as escaped in a
// regular expression; the prefix and short name where they stand alone.
// feature: integrations
// In what speaks GitLab's API (the reference integrations and their
// stand-in), GitLab's own lower-case `project` stays.
// end feature: integrations
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pluralize from "pluralize";
import { parseAllDocuments } from "yaml";
import { GROUP, NAMESPACE_PREFIX, PARENT } from "../sync.ts";
import { NEXT } from "./take-away.ts";

/** The core's names, as sync.ts spells them; another commit's are read from its text. */
export type CoreNames = { GROUP: string; PARENT: { kind: string; plural: string; singular: string }; NAMESPACE_PREFIX: string };
const CORE: CoreNames = { GROUP, PARENT, NAMESPACE_PREFIX };

const root = new URL("..", import.meta.url);

/** A kind's names as a CRD gives them. */
export type KindNames = { kind: string; plural: string; singular: string };
/**
 * Every name a rename changes. `kinds` are the features' CRDs' and `labels`
 * label keys renamed on their own: in two Names of one rename, the same
 * index is the same kind or label, before and after.
 */
export type Names = { group: string; kind: string; plural: string; short: string; prefix: string; kinds?: KindNames[]; labels?: string[] };

/** The English plural of a word, in its case: Policies, people. */
export const pluralOf = (word: string) => pluralize.plural(word);

/** The names this copy has now: sync.ts's, the short name its CRD gives kubectl, and the features' kinds. */
export function currentNames(manifest = readFileSync(new URL("k8s.yaml", root), "utf8"), { GROUP, PARENT, NAMESPACE_PREFIX } = CORE): Names {
  const crds = parseAllDocuments(manifest)
    .map((document) => document.toJS())
    .filter((object) => object?.kind === "CustomResourceDefinition");
  const crd = crds.find((object) => object.spec?.names?.kind === PARENT.kind);
  const kinds = crds
    .map((object) => object.spec?.names)
    .filter((names) => names?.kind && names.kind !== PARENT.kind)
    .map(({ kind, plural, singular }) => ({ kind, plural, singular: singular ?? kind.toLowerCase() }));
  return { group: GROUP, kind: PARENT.kind, plural: PARENT.plural, short: crd?.spec?.names?.shortNames?.[0] ?? PARENT.singular, prefix: NAMESPACE_PREFIX, kinds, labels: [] };
}

/**
 * The names after a rename to `kind`: a feature's kind named after the old
 * one follows it (ProjectClass, TeamClass), any other keeps its name;
 * `renames` (OLD=NEW) names a feature's kind or a label on its own.
 */
export function namesAfter(from: Names, to: Omit<Names, "kinds" | "labels">, renames: [string, string][] = []): { from: Names; to: Names } {
  const given = new Map(renames);
  const kinds = (from.kinds ?? []).map((names): KindNames => {
    const kind = given.get(names.kind) ?? (names.kind.startsWith(from.kind) ? to.kind + names.kind.slice(from.kind.length) : names.kind);
    if (kind === names.kind) return names;
    const singular = kind.toLowerCase();
    return { kind, plural: pluralOf(singular), singular };
  });
  const known = new Set((from.kinds ?? []).map(({ kind }) => kind));
  const labels = renames.filter(([old]) => !known.has(old));
  for (const [old] of labels) if (!old.includes("/")) throw new Error(`--rename ${old}=…: neither a feature's kind (${[...known].join(", ")}) nor a label, as ${GROUP}/${PARENT.singular}`);
  return {
    from: { ...from, labels: [...(from.labels ?? []), ...labels.map(([old]) => old)] },
    to: { ...to, kinds, labels: [...(from.labels ?? []), ...labels.map(([, renamed]) => renamed)] },
  };
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
  for (const { kind } of names.kinds ?? []) if (!/^[A-Z][A-Za-z0-9]*$/.test(kind)) return `--rename …=${kind}: a kind is UpperCamelCase, as TeamClass`;
  const labelKey = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/;
  for (const label of names.labels ?? []) if (!labelKey.test(label) || label.length > 253 + 1 + 63) return `--rename …=${label}: a label key, as example.org/team`;
  return undefined;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const capitalized = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
const article = (word: string, capital: boolean) => (/^[AEIOU]/i.test(word) ? (capital ? "An" : "an") : capital ? "A" : "a");
/** The longest name a resource may have so that its Namespace's name is a DNS-1123 label. */
const longestName = (prefix: string) => 63 - prefix.length;

/** The text with every old name replaced by the new one; `speaksGitLab` keeps another API's own lower-case word (`project`). */
export function renamed(text: string, from: Names, given: Names, speaksGitLab = false): string {
  // Where the new names do not say what becomes of the features' kinds, they
  // follow the kind; where the old ones name none, none is renamed.
  const to = !from.kinds ? { ...given, kinds: [] } : given.kinds ? given : { ...given, kinds: namesAfter(from, given).to.kinds };
  if ((to.kinds ?? []).length !== (from.kinds ?? []).length) throw new Error(`${(from.kinds ?? []).length} features' kinds to rename, and ${(to.kinds ?? []).length} new ones`);
  // Each form of the old names, beside the same form of the new ones.
  const forms = (names: Names) => {
    const singular = names.kind.toLowerCase();
    return [
      // The features' kinds, each in the forms a CRD and the code give it.
      ...(names.kinds ?? []).flatMap(({ kind, plural, singular }) => [pluralOf(kind), kind, plural, singular]),
      // The kind's plural as a word, in the kind's own case where the resource is its English plural.
      pluralOf(singular) === names.plural ? pluralOf(names.kind) : capitalized(names.plural),
      names.kind,
      names.plural,
      singular,
      names.plural.toUpperCase().replaceAll("-", "_"),
      singular.toUpperCase(),
    ];
  };
  const newForms = forms(to);
  // A form that stays as it is (a feature's kind not named after the parent) is no word to replace.
  const wordOf = new Map(forms(from).flatMap((form, index) => (form === newForms[index] ? [] : [[form, newForms[index]!] as const])));
  // Labels renamed on their own, also as a regular expression or a kubectl jsonpath spells them.
  // Each spelling: as it is; its dots escaped (a kubectl jsonpath, a regular
  // expression), its slash too; and those two inside a string, backslashes doubled.
  const spellings = (label: string) => {
    const dots = label.replaceAll(".", "\\.");
    const slash = dots.replaceAll("/", "\\/");
    return [label, dots, slash, dots.replaceAll("\\", "\\\\"), slash.replaceAll("\\", "\\\\")];
  };
  const labelOf = new Map(
    (from.labels ?? []).flatMap((label, index) => {
      const after = spellings(to.labels?.[index] ?? label);
      return spellings(label).map((spelling, form) => [spelling, after[form]!] as const);
    }),
  );
  const labels = [...labelOf.keys()].sort((a, b) => b.length - a.length).map(escape).join("|");
  // Longest first, so that `Projects` is one word and not `Project` + `s`.
  const words = [...wordOf.keys()].sort((a, b) => b.length - a.length);
  // Names that stay as they are rename nothing; a group, prefix or short name
  // may change alone (an empty word would match everywhere, so none is asked for).
  if (words.length === 0 && !labels && from.group === to.group && from.prefix === to.prefix && from.short === to.short) return text;
  // A form ends where the next character cannot continue it: a lower-case
  // form is not followed by a lower-case letter (nor `_`, another API's
  // `project_id`), an upper-case one not by an upper-case letter.
  const word = words.map((form) => `${escape(form)}${/^[A-Z]+$/.test(form) ? "(?![A-Z])" : "(?![a-z_])"}`).join("|");
  const pattern = new RegExp(
    [
      ...(labels ? [`(?<label>(?<![-a-z0-9])(?:${labels}))(?![-a-z0-9_.])`] : []),
      // The article may end a line whose next one, past a comment's mark, holds the kind (`a\n// Team`), and the kind alone may be in backticks;
      // in a heading's anchor (`#2-create-a-project`) a dash stands for the space.
      ...(words.length ? [`(?<article>\\b[Aa]n?)(?<gap> |\\n[ \\t]*(?:(?:\\/\\/|\\*|#) )?|(?<=#[-a-z0-9]*-an?)-)(?<tick>\`(?=(?:${word})\`))?(?<articled>${word})`] : []),
      `(?<escapedGroup>${escape(escape(from.group))})`,
      `(?<group>${escape(from.group)})`,
      // The prefix where it stands alone, and in the uid test/helpers.ts gives an object after its name (`uid-of-proj-test`).
      `(?<prefix>(?:(?<![-a-z0-9])|(?<=\\buid-of-))${escape(from.prefix)})`,
      // A short name that is the singular is the word itself, and follows it.
      ...(from.short === from.kind.toLowerCase() ? [] : [`(?<short>(?<![-a-z0-9./])${escape(from.short)}(?![-a-z0-9]))`]),
      ...(words.length ? [`(?<word>${word})`] : []),
      `(?<longest>at most ${longestName(from.prefix)}\\b|over ${longestName(from.prefix)} characters|\\{0,${longestName(from.prefix) - 2}\\})`,
    ].join("|"),
    "g",
  );
  // Another API's lower-case word, but not a name of ours joined by a dash
  // (`project-controller`, or a Namespace where that API's programs run).
  return text.replace(pattern, (match, ...rest) => {
    const groups = rest.at(-1) as Record<string, string | undefined>;
    const next = (rest.at(-2) as string).charAt((rest.at(-3) as number) + match.length);
    const gitLabs = (form: string) => speaksGitLab && /^[a-z]/.test(form) && next !== "-";
    if (groups.articled !== undefined) {
      if (gitLabs(groups.articled)) return match;
      const replacement = wordOf.get(groups.articled)!;
      const capital = groups.article!.startsWith("A");
      return `${article(replacement, capital)}${groups.gap}${groups.tick ?? ""}${replacement}`;
    }
    if (groups.label !== undefined) return labelOf.get(groups.label)!;
    if (groups.escapedGroup !== undefined) return escape(to.group);
    if (groups.group !== undefined) return to.group;
    if (groups.prefix !== undefined) return to.prefix;
    if (groups.short !== undefined) return to.short;
    if (groups.word !== undefined) return gitLabs(groups.word) ? match : wordOf.get(groups.word)!;
    // The CRD's name rule counts the letters between the first and the last.
    return match.replace(/\d+(?=\D*$)/, (number) => String(Number(number) - longestName(from.prefix) + longestName(to.prefix)));
  });
}

/** The parts of a file's text, each saying whether it speaks another API than ours, whose own words stay. */
export function gitLabParts(path: string, text: string): { text: string; speaksGitLab: boolean }[] {
  // feature: integrations
  // GitLab's: the stand-in's test, and the document of k8s.yaml that ships the programs.
  if (path.endsWith("-gitlab.test.ts")) return [{ text, speaksGitLab: true }];
  if (path === "k8s.yaml") return text.split(/(?=^---$)/m).map((document) => ({ text: document, speaksGitLab: /^ {2}name: gitlab-integrations$/m.test(document) }));
  // end feature: integrations
  return [{ text, speaksGitLab: false }];
}

// This script and its test speak of names in general, with examples of
// their own that must stay as they are.
export const ABOUT_NAMES = ["scripts/rename.ts", "test/rename.test.ts", "test/rename-trees.ts", "test/rename-trees.test.ts"];

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

/** The names the command line asks for, from the names this copy has. */
export function parse(args: string[], from: Names): { from: Names; to: Names } {
  const given = new Map<string, string>();
  const renames: [string, string][] = [];
  for (let index = 0; index < args.length; index += 2) {
    const [flag, value] = [args[index]!, args[index + 1]];
    if (!["--group", "--kind", "--plural", "--short", "--prefix", "--rename"].includes(flag) || value === undefined) throw new Error(`unknown option ${flag}, or no value after it`);
    if (flag !== "--rename") given.set(flag.slice(2), value);
    else if (/^[^=]+=[^=]+$/.test(value)) renames.push(value.split("=") as [string, string]);
    else throw new Error(`--rename ${value}: OLD=NEW, as ${from.kinds?.[0]?.kind ?? "Kind"}=TeamClass or ${GROUP}/${PARENT.singular}=example.org/team`);
  }
  const kind = given.get("kind");
  const group = given.get("group");
  if (!kind || !group) throw new Error("--group and --kind are needed");
  const singular = kind.toLowerCase();
  return namesAfter(from, { group, kind, plural: given.get("plural") ?? pluralOf(singular), short: given.get("short") ?? singular, prefix: given.get("prefix") ?? `${singular}-` }, renames);
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

/** The files whose own name holds an old name (kubectl-my_projects), each with its new path. */
export function renamedPaths(paths: string[], from: Names, to: Names): [string, string][] {
  return paths.map((path): [string, string] => [path, renamed(path, from, to)]).filter(([path, after]) => after !== path);
}

if (import.meta.filename === process.argv[1]) {
  try {
    const { from, to } = parse(process.argv.slice(2), currentNames());
    const invalid = invalidNames(to);
    if (invalid) throw new Error(invalid);
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
    for (const [path, after] of renamedPaths(filesToRename(), from, to)) renameSync(new URL(path, root), new URL(after, root));
    const others = [...(from.kinds ?? []).map(({ kind }, index) => [kind, to.kinds?.[index]?.kind]), ...(from.labels ?? []).map((label, index) => [label, to.labels?.[index]])].filter(([old, renamed]) => old !== renamed);
    console.log(`renamed ${from.kind} (${from.plural}.${from.group}, ${from.prefix}<name>) to ${to.kind} (${to.plural}.${to.group}, ${to.prefix}<name>)${others.map(([old, renamed]) => `, ${old} to ${renamed}`).join("")} in ${changed} files`);
    console.log(NEXT);
  } catch (error) {
    console.error(`rename: ${(error as Error).message}\nnothing was changed`);
    console.error("usage: npm run rename -- --group teams.example.org --kind Team [--plural teams] [--short team] [--prefix team-] [--rename OLD=NEW]...");
    process.exit(2);
  }
}
