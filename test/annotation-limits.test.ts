// What the annotation-limits feature (features/annotation-limits.ts) refuses:
// spec fields (sync.ts's NAMESPACE_ANNOTATIONS) that would take the
// Namespace's annotations, with Metacontroller's copy, over what the API
// server accepts. The first of those fields is the one made long; where the
// core has none, nothing can grow too large, and those tests say so.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LAST_APPLIED_ANNOTATION as CORE_LAST_APPLIED, PROJECT_LABEL, PROJECT_NAME_MAX_LENGTH, sync, type Namespace } from "../sync.ts";
import { ANNOTATIONS_MAX_BYTES, LAST_APPLIED_ANNOTATION, WORST_BYTES_PER_UNIT, WORST_FIXED_BYTES, annotationBytes, annotationLimits, asGoJson } from "../features/annotation-limits.ts";
import { projectSchema } from "./admission.ts";
import { ANNOTATION_FIELDS, annotationsSpec, assertKeepsEveryNamespace, at, clock, having, namespaceIn, namespaceOf, namespaces, project, ready, related } from "./helpers.ts";
import { ANNOTATIONS_LIMIT_BYTES, CLIENT_SIDE_APPLY_ANNOTATION, clientSideApplyCopyBytes, goJson } from "../scripts/manifest.ts";

const [LONG] = ANNOTATION_FIELDS;
const needsOne = { skip: LONG === undefined && "NAMESPACE_ANNOTATIONS has no field, so no annotation can grow too large" };
/** A spec with the long field set to `value`, and every other annotation field short. */
const specWith = (value: string) => ({ ...annotationsSpec("short"), ...(LONG ? { [LONG]: value } : {}) });

describe("annotation limits: counted as the API server and kubectl count", () => {
  test("the feature spells Metacontroller's annotation as sync.ts does, and writes JSON as Go does", () => {
    assert.equal(LAST_APPLIED_ANNOTATION, CORE_LAST_APPLIED);
    const object = { metadata: { annotations: { description: "<a> & <b> \u2028\u2029 ünïcode" } } };
    assert.equal(asGoJson(object), goJson(object));
  });

  test("it counts a copy of an object as kubectl and the API server do, under the same limit", () => {
    assert.equal(ANNOTATIONS_MAX_BYTES, ANNOTATIONS_LIMIT_BYTES);
    const object = { metadata: { annotations: { description: "<a> & <b> \u2028\u2029 ünïcode" } } };
    assert.equal(Buffer.byteLength(CLIENT_SIDE_APPLY_ANNOTATION) + Buffer.byteLength(asGoJson(object)), clientSideApplyCopyBytes(object));
  });

  test("the CRD limits the length of every field that becomes an annotation", () => {
    const spec = projectSchema.properties.spec.properties;
    for (const field of ANNOTATION_FIELDS) assert.equal(typeof spec[field]?.maxLength, "number", field);
  });

  test("the longest annotation fields the CRD admits, in the costliest characters, still get their Namespace", () => {
    const spec = projectSchema.properties.spec.properties;
    for (const costly of ["\u2028", "<", "😀"]) {
      const longest = Object.fromEntries(ANNOTATION_FIELDS.map((field) => [field, costly.repeat(spec[field].maxLength)]));
      const answer = sync(project("big", { spec: longest }), namespaces(), related(), clock("2026-11-30T00:00:00Z"));
      assert.equal(answer.children.length, 1, JSON.stringify(answer.status.conditions[0]?.reason));
    }
  });
});

describe("annotation limits: a refusal keeps every Namespace", () => {
  test("SpecTooLarge is the feature's one refusal", () => {
    assert.deepEqual(annotationLimits.refusals, ["SpecTooLarge"]);
  });

  const tooLarge = project("big", { spec: specWith("a".repeat(140_000)) });
  test("SpecTooLarge: every observed Namespace is in the answer, with the annotations sync owns as they were", needsOne, () => {
    assertKeepsEveryNamespace("SpecTooLarge", { parent: tooLarge, children: having(namespaceOf("big")) });
  });

  test("a Project whose spec is too large still names its Namespace in the status", needsOne, () => {
    assert.equal(sync(tooLarge, having(namespaceOf("big")), related(), at).status.namespace, namespaceOf("big"));
  });

  test("without a Namespace yet, a Project whose spec is too large asks for none and names none", needsOne, () => {
    const answer = sync(tooLarge, namespaces(), related(), at);
    assert.deepEqual(answer.children, []);
    assert.equal(answer.status.namespace, undefined);
  });
});

describe("annotation limits: what the API server would refuse is refused first", () => {
  const kib = 1024;
  function withLong(value: string) {
    return sync(project("big", { spec: specWith(value) }), namespaces(), related(), at);
  }

  // Metacontroller's copy of the desired object doubles the value: 120 KiB fits in 256 KiB, 130 KiB does not.
  test(`a 120 KiB ${LONG} still gets its Namespace`, needsOne, () => {
    assert.equal(withLong("x".repeat(120 * kib)).children.length, 1);
  });

  test(`a 130 KiB ${LONG}, twice over the 256 KiB limit with Metacontroller's copy, gets no Namespace and a reason`, needsOne, () => {
    const answer = withLong("x".repeat(130 * kib));
    assert.deepEqual(answer.children, []);
    assert.equal(ready(answer).status, "False");
    assert.equal(ready(answer).reason, "SpecTooLarge");
    assert.match(ready(answer).message, /Kubernetes allows 262144/);
  });

  test("the quick worst-case bound never counts fewer bytes than the exact count", () => {
    for (const unit of ["a", "é", "<", "\u2028", "\u0001", "😀", "\ud800"]) {
      for (const length of [0, 1, 1000]) {
        const spec = Object.fromEntries(ANNOTATION_FIELDS.map((field, index) => [field, unit.repeat(index === 0 ? length : 1)]));
        const namespace = namespaceIn(sync(project("a".repeat(PROJECT_NAME_MAX_LENGTH), { spec }), namespaces(), related(), at));
        assert.ok(namespace);
        const units = Object.values(spec).join("").length;
        assert.ok(annotationBytes(namespace) <= WORST_FIXED_BYTES + WORST_BYTES_PER_UNIT * units, `${JSON.stringify(unit)} x ${length}`);
      }
    }
  });

  test("the count is every annotation key and value, Metacontroller's key and its JSON copy, and 256 bytes for its label", () => {
    const spec = annotationsSpec("d");
    const namespace = namespaceIn(sync(project("a", { spec }), namespaces(), related(), at));
    assert.ok(namespace);
    const annotations = Object.entries(spec).map(([key, value]) => `"${key}":"${value}"`).join(",");
    const copy = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"${namespaceOf("a")}","labels":{"${PROJECT_LABEL}":"a"},"annotations":{${annotations}}}}`;
    const expected =
      "metacontroller.k8s.io/last-applied-configuration".length + copy.length + 256 + Object.entries(spec).reduce((sum, [key, value]) => sum + key.length + value.length, 0);
    assert.equal(annotationBytes(namespace), expected);
  });

  // One character more in the description costs itself in UTF-8 plus itself in the JSON copy, as Go writes it.
  for (const [character, bytes] of [
    ["a", 1 + 1],
    ["é", 2 + 2],
    ['"', 1 + 2],
    ["<", 1 + 6],
    [">", 1 + 6],
    ["&", 1 + 6],
    ["\u2028", 3 + 6],
    ["\u2029", 3 + 6],
    ["😀", 4 + 4],
  ] as const) {
    test(`${JSON.stringify(character)} in a ${LONG} counts ${bytes} bytes`, needsOne, () => {
      const count = (value: string) => {
        const namespace = namespaceIn(sync(project("a", { spec: specWith(value) }), namespaces(), related(), at));
        assert.ok(namespace);
        return annotationBytes(namespace);
      };
      assert.equal(count(`x${character}`) - count("x"), bytes);
    });
  }

  test("annotations of exactly 256 KiB get their Namespace; one byte more does not", needsOne, () => {
    const bytesFor = (value: string) =>
      annotationBytes({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespaceOf("big"), labels: { [PROJECT_LABEL]: "big" }, annotations: specWith(value) } });
    const room = ANNOTATIONS_MAX_BYTES - bytesFor("");
    // "x" costs 2 bytes and '"' costs 3: together they reach any count.
    const exactly = '"'.repeat(room % 2) + "x".repeat((room - 3 * (room % 2)) / 2);
    assert.equal(bytesFor(exactly), ANNOTATIONS_MAX_BYTES);
    assert.equal(withLong(exactly).children.length, 1);
    const oneMore = exactly.replace("x", '"');
    assert.equal(bytesFor(oneMore), ANNOTATIONS_MAX_BYTES + 1);
    assert.equal(ready(withLong(oneMore)).reason, "SpecTooLarge");
  });

});

