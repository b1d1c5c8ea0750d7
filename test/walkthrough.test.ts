// The parts of `npm run walkthrough` that need no cluster: reading the page's
// commands and outputs, what counts as the same output, and writing the page
// back. The examples are neutral objects, not the page's own, so that a copy
// that renames its resource changes nothing here.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { WALKTHROUGH_AS_WRITTEN, asShown, comparable, differences, linesOf, parseWalkthrough, renderOutput, renderWalkthrough, turnedAround } from "../scripts/walkthrough.ts";

const page = [
  "# A page",
  "",
  "```console",
  "$ kubectl apply -f - <<EOF",
  "kind: Widget",
  "metadata: {name: w}",
  "EOF",
  "widget.example.com/w created",
  "$ kubectl get widgets",
  "NAME   READY   AGE   NOTE",
  "w      True    4s    ",
  "$ kubectl delete widget w  # feature: cleanup",
  'widget.example.com "w" deleted  # feature: cleanup',
  "$ kubectl get configmap c -o yaml",
  "metadata:",
  '  creationTimestamp: "2026-12-01T09:27:56Z"',
  '  resourceVersion: "301"',
  "  uid: 0751fcf0-117c-4b69-b50d-8884e93a66bf",
  "```",
  "",
  "- a step in a list:",
  "",
  `  ${WALKTHROUGH_AS_WRITTEN}`,
  "  ```console",
  "  $ kubectl apply -k https://example.com/install",
  "  $ kubectl rollout status statefulset/x",
  "  statefulset rolling update complete 1 pods at revision x-...",
  "  ```",
  "",
].join("\n");

// Each command's output as the page shows it, without markers: what a run prints when nothing changed.
const asOnThePage = (text: string) => parseWalkthrough(text).map((step) => step.output.map((line) => line.replace(/\s+# feature: [\w-]+(?:(?:, | & )[\w-]+)*$/, "")));

describe("npm run walkthrough", () => {
  test("reads each command, its heredoc and its output, in blocks indented or not", () => {
    const steps = parseWalkthrough(page);
    assert.deepEqual(steps.map((step) => step.command), [
      "kubectl apply -f - <<EOF",
      "kubectl get widgets",
      "kubectl delete widget w  # feature: cleanup",
      "kubectl get configmap c -o yaml",
      "kubectl apply -k https://example.com/install",
      "kubectl rollout status statefulset/x",
    ]);
    assert.equal(steps[0]?.script, "kubectl apply -f - <<EOF\nkind: Widget\nmetadata: {name: w}\nEOF");
    assert.deepEqual(steps[0]?.output, ["widget.example.com/w created"]);
    assert.deepEqual(steps[1]?.output, ["NAME   READY   AGE   NOTE", "w      True    4s    "]);
    assert.equal(steps[1]?.line, 9);
    assert.deepEqual(steps[4]?.output, [], "a command that printed nothing");
    assert.deepEqual(steps[5]?.output, ["statefulset rolling update complete 1 pods at revision x-..."], "without the block's indentation");
    assert.deepEqual(steps.map((step) => step.asWritten), [false, false, false, false, true, true]);
  });

  test("refuses a heredoc that never closes and a block that opens with output", () => {
    assert.throws(() => parseWalkthrough("```console\n$ cat <<EOF\nx\n```\n"), /heredoc EOF never closes/);
    assert.throws(() => parseWalkthrough("```console\noutput\n```\n"), /opens with output/);
  });

  test("compares ages, timestamps, uids and resourceVersions as placeholders, and nothing that only looks like them", () => {
    assert.deepEqual(comparable(["NAME   CPU    AGE   NOTE", "w      500m   11s   x", "", "NAME   CPU", "v      500m"]), [
      "NAME   CPU    AGE   NOTE",
      "w      500m   <age> x",
      "",
      "NAME   CPU",
      "v      500m",
    ]);
    assert.deepEqual(comparable(['  creationTimestamp: "2026-12-01T09:27:56Z"', '  resourceVersion: "301"', "  uid: 0751fcf0-117c-4b69-b50d-8884e93a66bf", "  replicas: 301"]), [
      '  creationTimestamp: "<time>"',
      '  resourceVersion: "<rv>"',
      "  uid: <uid>",
      "  replicas: 301",
    ]);
  });

  test("a page rendered from the outputs it shows is unchanged, markers and trailing blanks included", () => {
    assert.deepEqual(renderWalkthrough(page, asOnThePage(page)), { page, changed: [] });
  });

  test("a line that differs only in what is volatile keeps the page's text", () => {
    const printed = asOnThePage(page);
    printed[1] = ["NAME   READY   AGE   NOTE", "w      True    113s  "];
    printed[3] = ["metadata:", '  creationTimestamp: "2027-01-02T03:04:05Z"', '  resourceVersion: "97"', "  uid: 11111111-2222-3333-4444-555555555555"];
    assert.deepEqual(renderWalkthrough(page, printed), { page, changed: [] });
  });

  test("a changed output is named and written; a line kept keeps its marker, a new one has none", () => {
    const printed = asOnThePage(page);
    printed[1] = ["NAME   READY   AGE   NOTE", "w      False   4s    "];
    printed[2] = ['widget.example.com "w" deleted', "warning: it had finalizers"];
    const { page: rendered, changed } = renderWalkthrough(page, printed);
    assert.deepEqual(changed.map((step) => step.line), [9, 12]);
    assert.ok(rendered.includes("NAME   READY   AGE   NOTE\nw      False   4s    \n$ kubectl delete"));
    assert.ok(rendered.includes('widget.example.com "w" deleted  # feature: cleanup\nwarning: it had finalizers\n$ kubectl get configmap'));
    assert.deepEqual(renderWalkthrough(rendered, asOnThePage(rendered)).changed, [], "a fixed point once written");
  });

  test("a command refused where the page shows it succeed, or the reverse, is named with its line and section; the same refusal, or none, is not", () => {
    const refusing = page.replace("widget.example.com/w created", 'Error from server (Forbidden): widgets.example.com "w" is forbidden');
    const printed = asOnThePage(page);
    assert.deepEqual(turnedAround(page, printed), []);
    assert.deepEqual(turnedAround(refusing, asOnThePage(refusing)), [], "a refusal the page shows is expected");
    printed[0] = ['The Widget "w" is invalid: spec: Required value'];
    printed[2] = ["error: the server doesn't have a resource type \"widget\""];
    assert.deepEqual(turnedAround(page, printed), [
      `docs/cluster.md:4 (its opening): kubectl apply -f - <<EOF was refused, where the page shows it succeed:\n    The Widget "w" is invalid: spec: Required value`,
      `docs/cluster.md:12 (its opening): kubectl delete widget w  # feature: cleanup was refused, where the page shows it succeed:\n    error: the server doesn't have a resource type "widget"`,
    ]);
    const sectioned = refusing.replace("```console", "## 2. Make a widget\n\n```console");
    assert.deepEqual(turnedAround(sectioned, asOnThePage(page)), [`docs/cluster.md:6 (2. Make a widget): kubectl apply -f - <<EOF succeeded, where the page shows it refused:\n    widget.example.com/w created`]);
  });

  test("a block kept as written is never rewritten, and an indented block keeps its indentation", () => {
    const printed: (string[] | undefined)[] = asOnThePage(page);
    printed[5] = ["statefulset rolling update complete 1 pods at revision x-5d8f"];
    assert.equal(renderWalkthrough(page, printed).page, page);
    const indented = page.replace(`  ${WALKTHROUGH_AS_WRITTEN}\n`, "");
    const { page: rendered } = renderWalkthrough(indented, printed);
    assert.ok(rendered.includes("  $ kubectl rollout status statefulset/x\n  statefulset rolling update complete 1 pods at revision x-5d8f\n  ```"));
  });

  test("the causes of an invalid object are compared, and shown, in the page's order, which the API server does not keep", () => {
    const written = ['The Widget "w" is invalid: ', "* spec.b: Invalid value: two", "* spec.a: Invalid value: one", "done"];
    assert.deepEqual(renderOutput(written, ['The Widget "w" is invalid: ', "* spec.a: Invalid value: one", "* spec.b: Invalid value: two", "done"]), written);
    assert.deepEqual(renderOutput(written, ['The Widget "w" is invalid: ', "* spec.c: Invalid value: three", "* spec.a: Invalid value: one", "done"]), [
      'The Widget "w" is invalid: ',
      "* spec.a: Invalid value: one",
      "* spec.c: Invalid value: three",
      "done",
    ]);
    assert.deepEqual(renderOutput(["* b", "* a"], ["* a", "* b"]), ["* a", "* b"], "only under an is invalid: line");
  });

  test("a changed output is shown as the lines only the page has and those only the run printed", () => {
    assert.deepEqual(differences(["a", "b", "c"], ["a", "x", "c", "d"]), ["- b", "+ x", "+ d"]);
    assert.deepEqual(differences(["a"], ["a"]), []);
  });

  test("a line matched to one with other columns is the printed one, with the page's marker", () => {
    assert.deepEqual(renderOutput(["a   b  # feature: x", "c"], ["a    b", "d"]), ["a    b  # feature: x", "d"]);
  });

  test("what a terminal showed: no colour or cursor moves, and a last line without its newline", () => {
    const shown = asShown("before\r\n\x1b[1G\x1b[0JType x to go: \x1b[15Gx\r\r\ngot x\r\n\x1b[33mWarning:\x1b[0m y");
    assert.equal(shown, "before\nType x to go: x\ngot x\nWarning: y");
    assert.deepEqual(linesOf(shown), ["before", "Type x to go: x", "got x", "Warning: y"]);
    assert.deepEqual(linesOf(""), []);
  });

  test("docs/cluster.md reads as a walkthrough: every command found, few kept as written", () => {
    const cluster = readFileSync(new URL("../docs/cluster.md", import.meta.url), "utf8");
    const steps = parseWalkthrough(cluster);
    // Every `$ ` line of the page is in a console block, and is a command there.
    assert.equal(steps.length, cluster.match(/^ *\$ /gm)?.length, "every command found");
    assert.ok(steps.filter((step) => step.asWritten).length <= 2, "kept as written: only the prerequisites' install of Metacontroller");
  });
});
