// `npm run fixtures -- LOG first-sync=NAME steady-sync=NAME [members-sync=NAME]`:
// the fixtures, captured from what Metacontroller really sent. At log level 6
// Metacontroller logs every hook request whole, one JSON line each
// (`"msg":"Webhook request"`, its `type`, and the request as `body`), so a run
// of `METACONTROLLER_LOG_LEVEL=6 npm run test:e2e:local` leaves, in
// .cache/local-k8s/logs/metacontroller.log, a sync request for every state its
// parents went through. For each fixture named, this writes the request about
// that parent: `first-sync` takes its first (nothing observed yet), every
// other its last (its children as they settled). Then run `npm run
// transcripts`, which makes the steady fixture's status sync's own answer.
//
// The rules the fixtures must follow (manifest.test.ts and readme.test.ts
// hold them): each is a request about the parent sync.ts names, carrying
// every related group sync reads; together their answers ask for every
// child resource the CompositeController declares (so one parent has
// members); and `steady-sync`'s status is sync's answer to it, a fixed point.
import { readFileSync, writeFileSync } from "node:fs";
import type { FixtureName } from "./helpers.ts";

export const DEFAULT_LOG = ".cache/local-k8s/logs/metacontroller.log";

/** The sync requests about each named parent, from a Metacontroller log, as each fixture takes them. */
export function fixturesFromLog(log: string, wanted: Partial<Record<FixtureName, string>>): Partial<Record<FixtureName, unknown>> {
  const requests = new Map<string, unknown[]>();
  for (const line of log.split("\n")) {
    if (!line.startsWith("{") || !line.includes('"Webhook request"')) continue;
    const entry = JSON.parse(line);
    if (entry.msg !== "Webhook request" || entry.type !== "sync") continue;
    const name = entry.body?.parent?.metadata?.name;
    requests.set(name, [...(requests.get(name) ?? []), entry.body]);
  }
  return Object.fromEntries(
    Object.entries(wanted).map(([fixture, parent]) => {
      const seen = requests.get(parent ?? "") ?? [];
      if (seen.length === 0) {
        throw new Error(`no sync request about ${parent} in the log: was Metacontroller's log level 6 (METACONTROLLER_LOG_LEVEL=6)?`);
      }
      return [fixture, fixture === "first-sync" ? seen[0] : seen[seen.length - 1]];
    }),
  );
}

if (import.meta.filename === process.argv[1]) {
  const [log = DEFAULT_LOG, ...pairs] = process.argv.slice(2);
  const wanted = Object.fromEntries(pairs.map((pair) => pair.split("=")));
  if (pairs.length === 0 || pairs.some((pair) => !/^[a-z-]+=\S+$/.test(pair))) {
    console.error("usage: npm run fixtures -- LOG first-sync=NAME steady-sync=NAME [members-sync=NAME] [integrations-sync=NAME] [budget-sync=NAME]");
    process.exit(2);
  }
  try {
    for (const [fixture, request] of Object.entries(fixturesFromLog(readFileSync(log, "utf8"), wanted))) {
      writeFileSync(new URL(`fixtures/${fixture}.json`, import.meta.url), `${JSON.stringify(request, null, 2)}\n`);
      console.log(`test/fixtures/${fixture}.json: the request about ${wanted[fixture]}`);
    }
    console.log("now run npm run transcripts");
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
