// A recording stand-in for kubectl, for test/e2e.test.ts: the e2e runs with
// this first on PATH, so the test sees every object the run creates,
// changes and deletes without a cluster. Plain JavaScript, because it is
// started for every call and must start fast.
//
// Each call appends one JSON line to $FAKE_KUBECTL_LOG:
//   {"args": [...], "objects": ["Kind namespace/name", ...], "input": "..."}  (objects: those read from `-f -`)
// $FAKE_KUBECTL_RULES is a JSON list of {"when": regex, "exit", "stdout", "stderr", "hang"},
// matched against the call's args and objects joined by spaces; the first
// that matches decides the answer. Without one, the call succeeds silently,
// except `config current-context`, which prints "fake".
import { appendFileSync, readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const args = process.argv.slice(2);
const readsInput = args.some((arg, index) => arg === "-f" && args[index + 1] === "-");
const input = readsInput ? readFileSync(0, "utf8") : undefined;
const objects = input
  ? parseAllDocuments(input)
      .map((document) => document.toJS())
      .filter(Boolean)
      .map(({ kind, metadata }) => `${kind} ${metadata.namespace ? `${metadata.namespace}/` : ""}${metadata.name}`)
  : [];
appendFileSync(process.env.FAKE_KUBECTL_LOG, `${JSON.stringify({ args, objects, input })}\n`);

const call = [...args, ...objects].join(" ");
const rules = JSON.parse(process.env.FAKE_KUBECTL_RULES || "[]");
const rule = rules.find(({ when }) => new RegExp(when).test(call)) ?? {};
if (rule.hang) {
  // Until killed, as a `kubectl wait` on a cluster that never answers.
  setInterval(() => {}, 1000);
} else {
  process.stdout.write(rule.stdout ?? (call === "config current-context" ? "fake\n" : ""));
  process.stderr.write(rule.stderr ?? "");
  process.exitCode = rule.exit ?? 0;
}
