// Every CRD in k8s.yaml is one the API server takes: its schema structural,
// its defaults within its own rules. Without this, a required field added by
// hand under a spec that defaults to {} passed every unit test, and only the
// API server said no, at the e2e's first apply.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { NAMESPACE_ANNOTATIONS, PARENT } from "../sync.ts";
import { admissionErrors, crdSchemas, defaultErrors, structuralErrors } from "./crd-schema.ts";
import { fixture } from "./helpers.ts";
import { readManifest } from "../scripts/manifest.ts";

const { objects } = readManifest();
const schemas = crdSchemas(objects);
const parentSchema = () => structuredClone(schemas.find(({ name }) => name.startsWith(`${PARENT.plural}.`))!.schema);

describe("CRD schemas: as the API server checks them when the CRD is applied", () => {
  for (const { name, schema } of schemas) {
    test(`${name} is structural: every level typed, arrays with items, junctors that only constrain`, () => {
      assert.deepEqual(structuralErrors(schema), []);
    });

    test(`${name}: every default, with the defaults under it filled in, satisfies its own level's schema`, () => {
      assert.deepEqual(defaultErrors(schema), []);
    });
  }

  test("a required field under a spec that defaults to {} is refused, in the API server's words", () => {
    // The parent's own spec, made to default to {} as the seed's does (a copy may require fields instead).
    const schema = parentSchema();
    schema.properties.spec.default = {};
    schema.properties.spec.required = ["owner"];
    schema.properties.spec.properties.owner = { type: "string", description: "Who answers for it." };
    assert.deepEqual(defaultErrors(schema), ["openAPIV3Schema.properties[spec].default.owner: Required value"]);
    // Given a default of its own, the field is filled in and the spec's default holds.
    schema.properties.spec.properties.owner.default = "nobody";
    assert.deepEqual(defaultErrors(schema), []);
  });

  test("a default of the wrong type, out of an enum, a format or a bound, or with an unknown field, is refused", () => {
    const level = (extra: object) => ({ type: "object", properties: { field: { type: "string", ...extra } }, default: {} });
    const errorsOf = (schema: object) => defaultErrors({ type: "object", properties: { spec: schema } });
    assert.match(errorsOf(level({ default: 3 })).join(), /properties\[field\]\.default: must be string/);
    assert.match(errorsOf(level({ enum: ["a", "b"], default: "c" })).join(), /default: must be equal to one of the allowed values/);
    assert.match(errorsOf(level({ format: "date-time", default: "yesterday" })).join(), /default: must match format "date-time"/);
    assert.match(errorsOf(level({ maxLength: 2, default: "abc" })).join(), /default: must NOT have more than 2 characters/);
    assert.match(errorsOf({ type: "object", properties: { count: { type: "integer", minimum: 1 } }, default: { count: 0 } }).join(), /default\.count: must be >= 1/);
    assert.match(errorsOf({ type: "object", properties: {}, default: { stray: true } }).join(), /default\.stray: must NOT have additional properties/);
  });

  test("a default is judged by its level's CEL rules too", () => {
    const schema = { type: "object", properties: { spec: { type: "object", properties: { size: { type: "integer", default: 5, "x-kubernetes-validations": [{ rule: "self < 4", message: "size must be below 4" }] } } } } };
    assert.deepEqual(defaultErrors(schema), ["openAPIV3Schema.properties[spec].properties[size].default: size must be below 4"]);
  });

  test("a schema that is not structural is refused: a level without a type, an array without items, a typed junctor", () => {
    assert.deepEqual(structuralErrors({ type: "object", properties: { spec: { properties: {} } } }), ["openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"]);
    assert.deepEqual(structuralErrors({ type: "object", properties: { list: { type: "array" } } }), ["openAPIV3Schema.properties[list].items: Required value: must be specified"]);
    assert.deepEqual(structuralErrors({ type: "object", anyOf: [{ type: "string" }] }), ["openAPIV3Schema.anyOf[0].type: Forbidden: must be empty to be structural"]);
    assert.deepEqual(structuralErrors({ type: "object", properties: { x: { "x-kubernetes-int-or-string": true } } }), []);
  });
});

describe("CRD schemas: as the API server checks an object when it is created", () => {
  test("the fixtures' parents are admitted, and get the spec's defaults", () => {
    for (const name of ["first-sync", "steady-sync"]) assert.deepEqual(admissionErrors(parentSchema(), fixture(name).parent), [], name);
  });

  test("a parent the CRD refuses is named with why: a field of the wrong type, an unknown one", () => {
    const [field] = Object.keys(NAMESPACE_ANNOTATIONS);
    const parent = { apiVersion: "x/v1", kind: PARENT.kind, metadata: { name: "bad" }, spec: { ...(field ? { [field]: 42 } : {}), stray: "x" } };
    const errors = admissionErrors(parentSchema(), parent);
    assert.ok(errors.includes(".spec.stray: must NOT have additional properties"), errors.join("\n"));
    if (field) assert.ok(errors.includes(`.spec.${field}: must be string`), errors.join("\n"));
  });

  test("the parent's name rule, a CEL rule at the top of the schema, is applied", () => {
    const errors = admissionErrors(parentSchema(), { metadata: { name: "Not_A_Name" }, spec: fixture("first-sync").parent.spec ?? {} });
    assert.equal(errors.length, 1, errors.join("\n"));
  });
});
