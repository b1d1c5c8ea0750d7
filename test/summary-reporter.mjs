// A closing line for `npm test` that counts a cancelled test as failed.
// Node 20 gives every test file one deadline (--test-timeout), and a file cut
// off by it is reported as "cancelled", not "failed": a summary reading
// "fail 0" over a run that did not finish misleads whoever reads it. This
// reporter runs beside the spec reporter and ends the run with
// "N passed, N failed", where failed includes every cancelled test.
// Plain JavaScript: Node loads reporters itself, before tsx could help.

/** @param {AsyncIterable<import("node:test/reporters").TestEvent>} source */
export default async function* summary(source) {
  let passed = 0;
  let failed = 0;
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    // A suite passes or fails with its tests, which are counted themselves.
    if (event.data.details.type === "suite") continue;
    if (event.type === "test:pass" && !event.data.skip && !event.data.todo) passed += 1;
    if (event.type === "test:fail") failed += 1;
  }
  yield `${passed} passed, ${failed} failed\n`;
}
