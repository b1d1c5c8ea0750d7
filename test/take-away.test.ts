// `npm run take-away` removes a feature by its markers: what it removes, what
// it keeps, and that every feature's markers across the repository close.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { describe, test } from "node:test";
import { parseAllDocuments } from "yaml";
import { GROUP, PARENT } from "../sync.ts";
import { FEATURES } from "../features/index.ts"; // features
import { COMPOSITION, e2eSteps, e2eStepsCited, featureNames, filesOf, neededByKept, needsOf, ownsOf, PAGE, renumberedSections, withSectionsRenumbered, withoutComposition, vocabularyPattern, withoutFeature, writtenByHand } from "../scripts/take-away.ts";
import { TRANSCRIPT } from "../scripts/transcripts.ts";
import { parseWalkthrough } from "../scripts/walkthrough.ts";

const root = new URL("..", import.meta.url);
// Tracked and still there: a copy that has taken features away may not have committed it.
const tracked = execFileSync("git", ["ls-files"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter((path) => path && existsSync(new URL(path, root)));
// The files there, committed or not: a feature just written counts.
const featuresDirectory = new URL("features/", root);
const features = existsSync(featuresDirectory) ? featureNames(readdirSync(featuresDirectory).map((file) => `features/${file}`)) : [];

describe("take-away: markers", () => {
  test("a line that ends with the feature's marker goes, in TypeScript, YAML and Markdown alike", () => {
    const text = ["keep", "  members, // feature: members", "  - rolebindings  # feature: members", "| Members | x | <!-- feature: members -->", "also kept"].join("\n");
    assert.equal(withoutFeature(text, "members"), "keep\nalso kept");
  });

  test("a block from its opening line to its end line goes, markers included, nested blocks of others with it", () => {
    const text = ["a", "  # feature: members", "  b", "  // feature: guardrails", "  c", "  // end feature: guardrails", "  # end feature: members", "d"].join("\n");
    assert.equal(withoutFeature(text, "members"), "a\nd");
  });

  test("another feature's markers, and a name that only starts like this one, are left alone", () => {
    const text = ["x // feature: guardrails", "y // feature: members-extra", "# feature: membership", "z", "# end feature: membership"].join("\n");
    assert.equal(withoutFeature(text, "members"), text);
  });

  test("what two features share stays while either does, marked with the one kept; it goes with the second", () => {
    const text = ["a", "    # feature: integrations, shared", "    - configmaps", "    # end feature: integrations, shared", "  roles, // feature: integrations, shared", "| row | <!-- feature: shared, integrations -->", "b"].join("\n");
    const withoutIntegrations = withoutFeature(text, "integrations");
    assert.equal(withoutIntegrations, ["a", "    # feature: shared", "    - configmaps", "    # end feature: shared", "  roles, // feature: shared", "| row | <!-- feature: shared -->", "b"].join("\n"));
    assert.equal(withoutFeature(withoutIntegrations, "shared"), "a\nb");
    assert.equal(withoutFeature(withoutFeature(text, "shared"), "integrations"), "a\nb");
  });

  test("what speaks of two features at once goes with either, line or block, and its marks are left alone while neither goes", () => {
    const text = ["a", "| row | <!-- feature: guardrails & members -->", "  # feature: members & guardrails", "  b", "  # end feature: members & guardrails", "c"].join("\n");
    assert.equal(withoutFeature(text, "members"), "a\nc");
    assert.equal(withoutFeature(text, "guardrails"), "a\nc");
    assert.equal(withoutFeature(text, "budget"), text);
  });

  test("a section taken away between two paragraphs leaves one blank line between them, not two; a blank line kept is kept", () => {
    const text = ["Before.", "", "<!-- feature: x -->", "## Of x", "<!-- end feature: x -->", "", "After.", "", "", "Two blank lines of its own."].join("\n");
    assert.equal(withoutFeature(text, "x"), ["Before.", "", "After.", "", "", "Two blank lines of its own."].join("\n"));
    const composed = ["Before.", "", "Composed. <!-- features -->", "", "After."].join("\n");
    assert.equal(withoutComposition(composed), ["Before.", "", "After."].join("\n"));
  });

  test("a marker that is only mentioned mid-line is no marker", () => {
    const text = "each line that ends with `// feature: members` goes, says the guide.";
    assert.equal(withoutFeature(text, "members"), text);
  });

  test("a feature's file names the features it needs; integrations needs the guardrails' profiles and the members", () => {
    assert.deepEqual(needsOf("/**\n * # X\n *\n * Needs: guardrails, members (why).\n */"), ["guardrails", "members"]);
    assert.deepEqual(needsOf("/** Needs nothing. */"), []);
    if (features.includes("integrations")) assert.deepEqual(needsOf(readFileSync(new URL("integrations.ts", featuresDirectory), "utf8")), ["guardrails", "members"]);
  });

  test("taking away a feature that a kept one needs is refused; taking both is not", () => {
    const files = { "features/integrations.ts": " * Needs: guardrails (why).", "features/guardrails.ts": "", "features/members.ts": "" };
    const read = (path: string) => files[path as keyof typeof files];
    assert.equal(neededByKept(["guardrails"], Object.keys(files), read), "integrations needs guardrails: take them away together, or neither");
    assert.equal(neededByKept(["guardrails", "integrations"], Object.keys(files), read), undefined);
    assert.equal(neededByKept(["members"], Object.keys(files), read), undefined);
  });

  test("what npm run manifest generates is left alone, from its marker at the start of a line; a marker quoted mid-line is no such start", () => {
    const generated = "# Generated by `npm run manifest`: do not edit.";
    assert.equal(writtenByHand(`a\n${generated}\nb  # feature: members`), "a\n");
    const quoting = `const marker = "${generated}";\nJob, // feature: members`;
    assert.equal(writtenByHand(quoting), quoting);
  });

  test("a block left open is refused, naming the file and line", () => {
    assert.throws(() => withoutFeature("a\n<!-- feature: members -->\nb", "members", "README.md"), /^Error: README\.md:2: feature members is opened and never ended$/);
  });

  test("a block two features share, left open, is refused when either is taken away", () => {
    assert.throws(() => withoutFeature("a\n# feature: integrations, shared\nb", "integrations", "k8s.yaml"), /^Error: k8s\.yaml:2: feature integrations is opened and never ended$/);
  });

  test("a block opened again before it ended is refused: its end was mistyped, and would take all to the next block's end", () => {
    const text = ["// feature: members", "a", "// end feature: members and more", "b", "// feature: members", "c", "// end feature: members"].join("\n");
    assert.throws(() => withoutFeature(text, "members", "x.ts"), /^Error: x\.ts:1: feature members is opened and never ended before line 5 opens it again$/);
  });

  test("a feature owns its file in features/, its page in docs/, and the test files named after it", () => {
    const paths = ["features/members.ts", "test/members.test.ts", "test/members-cases.ts", "test/fixtures/members-sync.json", "test/sync.test.ts", "docs/members.md", "docs/cluster.md", "docs/members-old.md"];
    assert.deepEqual(filesOf("members", paths), ["features/members.ts", "test/members.test.ts", "test/members-cases.ts", "test/fixtures/members-sync.json", "docs/members.md"]);
  });

  test("a feature owns too the files its file names on an Owns: line, whatever their names, and no others", () => {
    const owns = ownsOf("/**\n * # X\n *\n * Owns: scripts/kubectl-tool, test/tool.test.ts (a tool whose premise is X).\n */");
    assert.deepEqual(owns, ["scripts/kubectl-tool", "test/tool.test.ts"]);
    assert.deepEqual(ownsOf("/** Owns nothing. */"), []);
    const paths = ["features/x.ts", "scripts/kubectl-tool", "scripts/kubectl-other", "test/tool.test.ts"];
    assert.deepEqual(filesOf("x", paths, owns), ["features/x.ts", "scripts/kubectl-tool", "test/tool.test.ts"]);
  });
});

describe("take-away: docs/cluster.md's numbered sections", () => {
  test("a middle section taken away leaves the numbers in order, and each reference to a moved one follows it", () => {
    const page = ["## 0. Start", "<!-- feature: x -->", "## 1. Of x", "<!-- end feature: x -->", "## 2. After", "As in [After](#2-after).", "## 3. Last"].join("\n");
    const elsewhere = "see docs/cluster.md, §2, [last](cluster.md#3-last) and [start](cluster.md#0-start); e2e step 2 is no section";
    const changed = withSectionsRenumbered(new Map([["docs/cluster.md", withoutFeature(page, "x")], ["README.md", elsewhere], ["k8s.yaml", "# docs/cluster.md, §2"]]));
    assert.equal(changed.get("docs/cluster.md"), ["## 0. Start", "## 1. After", "As in [After](#1-after).", "## 2. Last"].join("\n"));
    assert.equal(changed.get("README.md"), "see docs/cluster.md, §1, [last](cluster.md#2-last) and [start](cluster.md#0-start); e2e step 2 is no section");
    assert.equal(changed.has("k8s.yaml"), false);
    assert.deepEqual([...renumberedSections(withoutFeature(page, "x")).moved], [[2, 1], [3, 2]]);
  });

  test("several features taken away at once leave the same pages as taken one at a time, in either order", () => {
    // Two gaps make a chain of moves (4 to 2, 2 to 1): a reference must follow it once, not twice.
    const page = ["## 0. Start", "<!-- feature: x -->", "## 1. Of x", "<!-- end feature: x -->", "## 2. After", "See [Last](#4-last) and [After](#2-after).", "<!-- feature: y -->", "## 3. Of y", "<!-- end feature: y -->", "## 4. Last"].join("\n");
    const files = new Map([["docs/cluster.md", page], ["README.md", "[last](docs/cluster.md#4-last), docs/cluster.md, §2"]]);
    const taken = (from: Map<string, string>, features: string[]) => {
      const without = new Map([...from].map(([path, text]) => [path, features.reduce((current, feature) => withoutFeature(current, feature, path), text)]));
      return new Map([...without, ...withSectionsRenumbered(without)]);
    };
    const atOnce = taken(files, ["x", "y"]);
    assert.deepEqual(atOnce, taken(taken(files, ["x"]), ["y"]));
    assert.deepEqual(atOnce, taken(taken(files, ["y"]), ["x"]));
    assert.equal(atOnce.get("docs/cluster.md"), ["## 0. Start", "## 1. After", "See [Last](#2-last) and [After](#1-after).", "## 2. Last"].join("\n"));
    assert.equal(atOnce.get("README.md"), "[last](docs/cluster.md#2-last), docs/cluster.md, §1");
  });

  test("prose cites a section of docs/cluster.md by a link to its anchor, which take-away follows, never by a bare number, which it cannot", () => {
    // In the page, `step 6` or `section 6` is one of its own sections (an e2e step says `e2e step`); elsewhere, one named as the page's.
    const bare = (path: string) => (path === PAGE ? /(?<!e2e )\b(?:steps?|sections?) \d+/gi : /cluster\.md's (?:steps?|sections?) \d+|\b(?:steps?|sections?) \d+ of (?:that page|(?:docs\/)?cluster\.md)/gi);
    const cited = tracked
      .filter((path) => path.endsWith(".md"))
      .flatMap((path) => readFileSync(new URL(path, root), "utf8").split("\n").flatMap((line, at) => [...line.matchAll(bare(path))].map(([words]) => `${path}:${at + 1}: ${words}`)));
    assert.deepEqual(cited, []);
  });

  test("in this copy they are numbered in order from 0, as take-away leaves them", () => {
    assert.equal(renumberedSections(readFileSync(new URL("docs/cluster.md", root), "utf8")).moved.size, 0);
  });
});

describe("take-away: what composes features goes with the last of them", () => {
  test("each line marked features goes, in TypeScript, YAML and Markdown alike, and so does each block", () => {
    const text = ["keep", "  ...features.spec, // features", "  # features", "  - x", "  # end features", "| row | <!-- features -->", "also kept"].join("\n");
    assert.equal(withoutComposition(text), "keep\nalso kept");
  });

  test("a feature's own marker, and the word mid-line, are no composition's marker", () => {
    const text = ["x // feature: members", "the features compose", "y // the features"].join("\n");
    assert.equal(withoutComposition(text), text);
  });

  test("a composition's block left open is refused, naming the file and line", () => {
    assert.throws(() => withoutComposition("a\n// features\nb", "sync.ts"), /^Error: sync\.ts:2: features is opened and never ended$/);
  });

  test("features/index.ts is no feature, and its file and tests belong to the composition", () => {
    assert.deepEqual(featureNames([COMPOSITION, "features/members.ts", "features/notes.md"]), ["members"]);
    assert.deepEqual(filesOf("features", [COMPOSITION, "test/features.test.ts", "test/features-cases.ts", "test/sync.test.ts", "features/members.ts"]), [COMPOSITION, "test/features.test.ts", "test/features-cases.ts"]);
  });

  test("in TypeScript, what a marked line leaves over several lines is joined where it fits one, innermost first", () => {
    const text = [
      "const labels = {",
      "  [LABEL]: name,",
      "  ...features.labels, // features",
      "};",
      "const ready =",
      "  bad ??",
      "  features.invalid ?? // features",
      "  activeWith(",
      "    name,",
      "    features.ready, // features",
      "  );",
    ].join("\n");
    assert.equal(withoutComposition(text, "x.ts"), "const labels = { [LABEL]: name };\nconst ready = bad ?? activeWith(name);");
    assert.equal(withoutComposition(text, "x.md"), text.split("\n").filter((line) => !line.endsWith("// features")).join("\n"), "only TypeScript is joined");
  });

  test("a construct that would not fit one line, or holds a comment, stays as it is", () => {
    const long = ["const x = call(", `  ${"a".repeat(150)},`, "  more, // features", ");"].join("\n");
    assert.equal(withoutComposition(long, "x.ts"), long.replace("\n  more, // features", ""));
    const commented = ["const y = [", "  a, // why a", "  b, // features", "];"].join("\n");
    assert.equal(withoutComposition(commented, "x.ts"), commented.replace("\n  b, // features", ""));
  });

  test("with every feature taken away, README, the docs, k8s.yaml and sync.ts speak of none, but where they teach adding one", () => {
    const owned = features.flatMap((feature) => filesOf(feature, tracked, ownsOf(readFileSync(new URL(`features/${feature}.ts`, root), "utf8"))));
    const kept = tracked.filter((path) => !owned.includes(path) && (["README.md", "k8s.yaml", "sync.ts", "package.json", "test/e2e.ts"].includes(path) || /^docs\/[^/]+\.md$/.test(path)));
    const core = (path: string) => withoutComposition(features.reduce((text, feature) => withoutFeature(text, feature, path), writtenByHand(readFileSync(new URL(path, root), "utf8"))), path);
    // What teaches adding one: README's guide, and each paragraph or table row that names it, a tool of it, or a marker.
    const withoutGuide = (text: string) => text.slice(0, text.indexOf("## Make it your own")) + text.slice(text.indexOf("## Layout"));
    const teaches = /Make it your own|take-away|new-feature|test:subsets|core-without-features|(slot|feature): /;
    const spoken = kept.flatMap((path) =>
      (path === "README.md" ? withoutGuide(core(path)) : core(path))
        .split(path.endsWith(".json") ? "\n" : /\n\s*\n|\n(?=\|)/)
        .filter((unit) => /\bfeatures?\b/i.test(unit) && !teaches.test(unit))
        .map((unit) => `${path}: ${unit.split("\n").find((line) => /\bfeatures?\b/i.test(line))!.trim()}`),
    );
    assert.deepEqual(spoken, []);
  });

  test("sync.ts without the composition imports nothing from features/, and is the seed: at most 250 lines", () => {
    const core = withoutComposition(readFileSync(new URL("sync.ts", root), "utf8"), "sync.ts");
    assert.doesNotMatch(core, /features\//);
    assert.ok(core.split("\n").length <= 250, `${core.split("\n").length} lines`);
  });
});

describe("take-away: every feature of this repository", () => {
  // features
  test("features/index.ts composes every file in features/, and nothing else", () => {
    assert.equal(FEATURES.length, features.length, features.join(", "));
  });
  // end features

  for (const feature of features) {
    test(`${feature}: every block it opens is closed, in every file`, () => {
      for (const path of tracked) {
        assert.doesNotThrow(() => withoutFeature(writtenByHand(readFileSync(new URL(path, root), "utf8")), feature, path));
      }
    });

    test(`${feature}: features/index.ts composes it on one marked line, and imports it on another`, () => {
      const composition = readFileSync(new URL(COMPOSITION, root), "utf8");
      const marked = composition.split("\n").filter((line) => line.endsWith(`// feature: ${feature}`));
      assert.equal(marked.length, 2, marked.join("\n"));
      assert.ok(marked.some((line) => line.startsWith("import ") && line.includes(`"./${feature}.ts"`)));
    });
  }
});

// What only a feature speaks of: its reasons, the spec and status fields
// its CRD declares as the docs write them, the kinds of its own CRDs, its
// files, and the words it names as its own (its VOCABULARY: kinds, fields,
// roles, the people its examples are about). After it is taken away, none
// of them may be left anywhere: not in code, not in prose, not in an
// example, not in a CRD's description or a transcript.
describe("take-away: nothing of a feature is left behind", () => {
  const texts = new Map(tracked.map((path) => [path, readFileSync(new URL(path, root), "utf8")]));
  const manifest = writtenByHand(texts.get("k8s.yaml") ?? "");
  const parentSchema = (text: string) =>
    parseAllDocuments(text)
      .map((document) => document.toJS())
      .find((object) => object?.kind === "CustomResourceDefinition" && object.spec.names.kind === PARENT.kind)?.spec.versions[0].schema.openAPIV3Schema.properties;
  // A kind's names: itself, and as a CRD, its resource and singular (`kubectl get projectprofiles`).
  const kinds = (text: string) =>
    new Set([
      ...[...text.matchAll(/^ {4}kind: (\w+)$/gm)].map(([, kind = ""]) => kind),
      ...parseAllDocuments(text)
        .map((document) => document.toJS())
        .filter((object) => object?.kind === "CustomResourceDefinition")
        .flatMap((object) => [object.spec.names.plural, object.spec.names.singular]),
    ]);
  // Its admission policies' names, whole and as the docs call them (`self-service`): a line that promises a check of a feature's is marked with it.
  const policies = (text: string) => new Set([...text.matchAll(/^kind: ValidatingAdmissionPolicy\n(?:.*\n)*?  name: (\S+)$/gm)].map(([, name = ""]) => name));
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  // What every feature's test compares with, parsed once.
  const parentSchemaBefore = parentSchema(manifest);
  const kindsBefore = kinds(manifest);
  const policiesBefore = policies(manifest);

  // What take-away's next steps write anew is not written by hand: the
  // fixtures (take-away makes them again from the code left) and what the
  // webhook answered in a page's `curl` transcript (npm run transcripts).
  const byHand = (path: string, text: string) =>
    path.startsWith("test/fixtures/") ? "" : writtenByHand(text).replace(TRANSCRIPT, (whole, ...groups) => whole.slice(0, whole.length - String(groups.at(-1).printed).length));
  // And what a command printed in docs/cluster.md, which `npm run walkthrough`
  // writes anew (but a block it keeps as written): a feature's words are looked
  // for in the commands, not in a table's MEMBERS header. A line's take-away
  // marker stays, so that the same lines go.
  const withoutOutputs = (path: string, text: string) => {
    if (path !== "docs/cluster.md") return text;
    const lines = text.split("\n");
    for (const { outputRange: [start, end], asWritten } of parseWalkthrough(text)) {
      for (let at = start; !asWritten && at < end; at++) {
        const line = lines[at] ?? "";
        if (/^\s*# (end )?feature: /.test(line)) continue;
        const marker = /\s# feature: [a-z0-9,& -]+$/.exec(line)?.[0];
        lines[at] = marker ? `(printed)${marker}` : "";
      }
    }
    return lines.join("\n");
  };
  // Take-away and its test take features' names as examples of their own.
  const ABOUT_NAMES = ["test/take-away.test.ts", "scripts/take-away.ts", "test/core-without-features.sh"];
  // A feature goes with those that need it, as take-away demands.
  const owned = (feature: string) => filesOf(feature, tracked, ownsOf(texts.get(`features/${feature}.ts`) ?? ""));
  const needing = (feature: string): string[] => [feature, ...features.filter((other) => needsOf(texts.get(`features/${other}.ts`) ?? "").includes(feature)).flatMap(needing)];

  // Which e2e steps the files cite that test/e2e.ts does not run, once the features go.
  const stepsMissing = (gone: string[]) => {
    const kept = (path: string, text: string) => gone.reduce((current, each) => withoutFeature(current, each, path), writtenByHand(text));
    const removed = new Set(gone.flatMap(owned));
    const steps = e2eSteps(kept("test/e2e.ts", texts.get("test/e2e.ts") ?? ""));
    return [...texts]
      .filter(([path, text]) => !removed.has(path) && !ABOUT_NAMES.includes(path) && !path.startsWith("test/fixtures/") && !text.includes("\0"))
      .flatMap(([path, text]) => e2eStepsCited(path, kept(path, text)).filter((cited) => !cited.steps.every((step) => steps.has(step))).map(({ line, words }) => `${path}:${line}: ${words}`));
  };

  test("every e2e step cited, in docs, scripts, tests and comments, is one test/e2e.ts runs", () => {
    assert.ok(e2eSteps(texts.get("test/e2e.ts") ?? "").has(2), "test/e2e.ts's steps are read from their titles");
    assert.deepEqual(stepsMissing([]), []);
  });

  test("with every feature taken away, every e2e step still cited is one the core's test/e2e.ts runs", () => {
    assert.deepEqual(stepsMissing(features), []);
  });

  // A feature with all it needs, kept alone.
  const neededBy = (feature: string): string[] => [feature, ...needsOf(texts.get(`features/${feature}.ts`) ?? "").flatMap(neededBy)];
  const keptAlone = features.map((feature) => features.filter((other) => !neededBy(feature).includes(other)));

  test("where no feature left has a mutating admission policy, README, the docs and k8s.yaml speak of none", () => {
    const spoken = [features, ...keptAlone].flatMap((gone) => {
      const kept = (path: string, text: string) => gone.reduce((current, each) => withoutFeature(current, each, path), writtenByHand(text));
      if (/^kind: MutatingAdmissionPolicy$/m.test(kept("k8s.yaml", texts.get("k8s.yaml") ?? ""))) return [];
      const removed = new Set(gone.flatMap(owned));
      return [...texts]
        .filter(([path]) => (["README.md", "k8s.yaml"].includes(path) || /^docs\/[^/]+\.md$/.test(path)) && !removed.has(path))
        .flatMap(([path, text]) => kept(path, withoutOutputs(path, text)).split("\n").flatMap((line, at) => (/mutating/i.test(line) ? [`without ${gone.join(", ")}: ${path}:${at + 1}: ${line.trim().slice(0, 100)}`] : [])));
    });
    assert.deepEqual(spoken, []);
  });

  for (const feature of features) {
    test(`${feature}: taken away, every e2e step still cited is one test/e2e.ts still runs (a citation of one of its steps is marked with it)`, () => {
      assert.deepEqual(stepsMissing(needing(feature)), []);
    });

    test(`${feature}: names its own words, each once, none of them another's it does not need`, async () => {
      const vocabulary: unknown = (await import(`../features/${feature}.ts`)).VOCABULARY;
      assert.ok(Array.isArray(vocabulary) && vocabulary.length > 0 && vocabulary.every((word) => typeof word === "string" && /^\S(.*\S)?$/.test(word)), `features/${feature}.ts exports VOCABULARY, a list of its words`);
      const own = vocabulary as string[];
      assert.equal(new Set(own.map((word) => word.toLowerCase())).size, own.length, "each word once");
      // A word two features speak of is neither's, unless one needs the other: taking either away would find it in the other.
      for (const other of features.filter((each) => each !== feature && !needing(feature).includes(each) && !needing(each).includes(feature))) {
        const theirs: string[] = (await import(`../features/${other}.ts`)).VOCABULARY ?? [];
        const both = own.filter((word) => theirs.some((their) => their.toLowerCase() === word.toLowerCase()));
        assert.deepEqual(both, [], `${feature} and ${other} both name these`);
      }
    });

    test(`${feature}: taken away, none of its words is left in any file`, async () => {
      const module = await import(`../features/${feature}.ts`);
      const own: { reasons: string[]; refusals: string[] } = Object.values(module).find((value: any) => typeof value?.plan === "function") as any;
      const without = withoutFeature(manifest, feature);
      const [before, after] = [parentSchemaBefore, parentSchema(without)];
      const added = (part: "spec" | "status") => Object.keys(before[part].properties).filter((field) => !(field in after[part].properties));
      const keptKinds = kinds(without);
      const keptPolicies = policies(without);
      const words = [
        ...own.reasons,
        ...own.refusals,
        ...added("spec").flatMap((field) => [`spec.${field}`, ...(/[A-Z]/.test(field) ? [field] : [])]),
        ...added("status").map((field) => `status.${field}`),
        ...[...kindsBefore].filter((kind) => !keptKinds.has(kind)),
        ...[...policiesBefore].filter((name) => !keptPolicies.has(name)).flatMap((name) => [name, name.slice(`${PARENT.plural}.${GROUP}-`.length)].filter((word) => word.includes("-"))),
        ...owned(feature),
      ];
      // Each word's pattern made once, not once for each line of the repository.
      const wordPatterns = words.map((word) => [word, new RegExp(`(?<![\\w-])${escape(word)}(?![\\w-])`)] as const);
      const vocabulary = (module.VOCABULARY as readonly string[]).map(vocabularyPattern);
      const together = needing(feature);
      const removed = new Set(together.flatMap(owned));
      const left = [...texts].flatMap(([path, text]) => {
        if (removed.has(path) || ABOUT_NAMES.includes(path) || text.includes("\0")) return [];
        const kept = (from: string) => together.reduce((current, each) => withoutFeature(current, each, path), from).split("\n");
        const written = byHand(path, text);
        const commands = kept(withoutOutputs(path, written));
        return kept(written).flatMap((line, at) =>
          [
            ...wordPatterns.filter(([, pattern]) => pattern.test(line)).map(([word]) => word),
            ...vocabulary.filter((pattern) => pattern.test(commands[at] ?? "")).map((pattern) => pattern.source),
          ].map((word) => `${path}:${at + 1}: ${word}: ${line.trim().slice(0, 100)}`),
        );
      });
      assert.deepEqual(left, [], `${left.length} lines:\n${left.join("\n")}`);
    });
  }
});
