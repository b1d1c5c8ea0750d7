// How features/index.ts composes the features, with features of its own:
// those in features/ agree on every field they share, so what happens when
// two do not is tried here. It goes with the last feature, as the
// composition does.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as v from "valibot";
import { entriesOf, type Feature } from "../features/index.ts";

describe("features: their schemas, merged", () => {
  /** A feature that reads these spec fields and does nothing else. */
  const reading = (spec: Record<string, v.GenericSchema>): Feature => ({ spec, children: {}, related: {}, refusals: [], reasons: [], plan: () => ({ children: [] }) });
  const specOf = (...features: Feature[]) => v.looseObject(entriesOf((feature) => feature.spec, features));

  test("a field two features read must pass both schemas, whichever comes first", () => {
    const anyName = reading({ tier: v.nullish(v.string()) });
    const shortName = reading({ tier: v.nullish(v.pipe(v.string(), v.maxLength(5))) });
    for (const order of [[anyName, shortName], [shortName, anyName]]) {
      const spec = specOf(...order);
      assert.equal(v.is(spec, { tier: "gold" }), true);
      assert.equal(v.is(spec, { tier: "platinum" }), false, "the short name's rule holds");
      assert.equal(v.is(spec, { tier: 42 }), false, "the string's rule holds");
    }
  });

  test("the second feature's schema is given what the first makes of the field, and the first's optional or required holds", () => {
    const trimmed = reading({ owner: v.optional(v.pipe(v.string(), v.trim())) });
    const oneWord = reading({ owner: v.pipe(v.string(), v.regex(/^\S+$/)) });
    const spec = specOf(trimmed, oneWord);
    assert.deepEqual(v.parse(spec, { owner: " robin " }), { owner: "robin" }, "one word once trimmed, and trimmed in the output");
    assert.deepEqual(v.parse(spec, {}), {}, "optional, as the first says");
    assert.equal(v.is(specOf(oneWord, trimmed), {}), false, "required, where the one that requires it comes first");
    assert.equal(v.is(specOf(oneWord, trimmed), { owner: " robin " }), false);
  });

  test("a field one feature reads is checked by its schema alone", () => {
    const spec = specOf(reading({ owner: v.pipe(v.string(), v.nonEmpty()) }), reading({ other: v.optional(v.number()) }));
    assert.deepEqual(v.parse(spec, { owner: "robin", other: 1 }), { owner: "robin", other: 1 });
    assert.equal(v.is(spec, { owner: "" }), false);
    assert.equal(v.is(spec, { owner: "robin", other: "1" }), false);
  });
});
