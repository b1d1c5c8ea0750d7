// The resources rename.test.ts and rename-trees.test.ts rename this whole
// repository to: a short and a long Namespace prefix, irregular English
// plurals, a feature's kind and the parent's label under names of their own.
// Each is made of words found nowhere in the repository, so that renaming
// back can tell them from what was there.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import * as core from "../sync.ts";
import { ABOUT_NAMES, filesToRename, pluralOf, renameFile, type Names } from "../scripts/rename.ts";

// This file is not renamed (rename.ts's ABOUT_NAMES), so it finds the
// parent's label by the name rename gives it: <SINGULAR>_LABEL.
const labelExport = (core as Record<string, unknown>)[`${core.PARENT.singular.toUpperCase()}_LABEL`];
if (typeof labelExport !== "string") throw new Error(`sync.ts exports no ${core.PARENT.singular.toUpperCase()}_LABEL`);
const PARENT_LABEL: string = labelExport;

export type Generated = { to: Omit<Names, "kinds" | "labels">; renames: [string, string][] };

const absent = (texts: string[], word: string) => texts.every((text) => !text.toLowerCase().includes(word.toLowerCase()));
const first = (texts: string[], candidates: string[]) => candidates.find((word) => absent(texts, word)) ?? candidates.at(-1)!;

/** Three resources, each of words none of these texts holds, from the names this copy has. */
export function generatedNames(texts: string[], current: Names): Generated[] {
  // Latin plurals (alumni) and a final y (galleries), which `${kind}s` gets wrong;
  // the first starts with a vowel, so that "a Project" must become "an Alumnus".
  const irregular = first(texts, ["Alumnus", "Ellipsis", "Index", "Octopus"]);
  const ies = first(texts, ["Gallery", "Dynasty", "Quarry"]);
  const regular = first(texts, ["Widget", "Gizmo", "Zorblat"]);
  // A prefix or short name is found nowhere in the texts where rename would take it for one (the ca- of a ca-bundle).
  const unused = (candidates: string[]) =>
    candidates.find((word) => {
      const taken = word.endsWith("-") ? new RegExp(`(?<![-a-z0-9])${word}`) : new RegExp(`(?<![-a-z0-9./])${word}(?![-a-z0-9])`);
      return texts.every((text) => !taken.test(text));
    }) ?? candidates.at(-1)!;
  const letters = (kind: string) => {
    const word = kind.toLowerCase();
    return [...word.slice(1)].map((letter) => word[0] + letter);
  };
  const named = (kind: string, prefix: string): Generated["to"] => {
    const singular = kind.toLowerCase();
    // Where the short name is the singular, it stays the singular.
    const short = current.short === current.kind.toLowerCase() ? singular : unused(letters(kind).map((two) => `${two}k`));
    return { group: `${pluralOf(singular)}.example.net`, kind, plural: pluralOf(singular), short, prefix };
  };
  const shortPrefix = (kind: string) => unused(letters(kind).map((two) => `${two}-`));
  // A feature's kind named after the parent's, renamed on its own.
  const feature = current.kinds?.find(({ kind }) => kind.startsWith(current.kind));
  return [
    { to: named(irregular, shortPrefix(irregular)), renames: [] },
    // The longest prefix rename takes, which leaves a name 31 characters.
    { to: named(ies, `${ies.toLowerCase()}-${"x".repeat(31 - ies.length - 1)}-`), renames: [] },
    {
      to: named(regular, shortPrefix(regular)),
      renames: [...(feature ? [[feature.kind, `${regular}Tier`] as [string, string]] : []), [PARENT_LABEL, `example.net/owning-${regular.toLowerCase()}`]],
    },
  ];
}

export const describeNames = ({ to, renames }: Generated) =>
  `${to.kind} (${to.plural}.${to.group}, ${to.prefix}<name>${renames.map(([old, renamed]) => `, ${old} as ${renamed}`).join("")})`;

/** A copy of this repository renamed, in a new folder under the system's temporary one, with this one's node_modules: its path. */
export function renamedTree(from: Names, to: Names): string {
  const root = new URL("..", import.meta.url);
  const tree = mkdtempSync(join(tmpdir(), `renamed-${to.kind.toLowerCase()}-`));
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=rename-trees", "-c", "user.email=rename-trees@localhost", ...args], { cwd: tree, stdio: "ignore" });
  // This repository's history under the renamed files, as a person's renamed
  // clone has it: the scripts list a copy's files as git does, and in a copy
  // that took its last feature away, new-feature brings back from history
  // what composes features.
  git("clone", "-q", "--no-checkout", root.pathname, ".");
  for (const path of [...filesToRename(), ...ABOUT_NAMES]) {
    const bytes = readFileSync(new URL(path, root));
    const text = bytes.toString("utf8");
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), text.includes("\0") || ABOUT_NAMES.includes(path) ? bytes : renameFile(path, text, from, to));
  }
  symlinkSync(new URL("node_modules", root).pathname, join(tree, "node_modules"), "dir");
  git("add", "-A");
  git("commit", "-q", "--no-verify", "-m", "the renamed tree");
  return tree;
}
