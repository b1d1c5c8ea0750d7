// The checks the API server makes of a CRD's schema when the CRD is applied,
// and of an object when it is created, run here with a JSON Schema validator
// (ajv) so that a schema the API server would refuse fails `npm test`, long
// before an e2e meets it: a `required` field under a `default: {}` without a
// default of its own, say, which the API server refuses as
// `properties[spec].default.<field>: Required value`.
//
// What is checked, as apiextensions-apiserver does:
// - the schema is structural: every level says its type (but where
//   x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields says
//   what it holds), an array says what its items are, a level has properties
//   or additionalProperties but not both, and what stands under allOf, anyOf,
//   oneOf or not only constrains (no type, default, nullable or description);
// - every default, once the defaults below it are filled in, satisfies the
//   schema of its own level: types, required fields, enums, formats, lengths,
//   bounds, unknown fields (which the API server would prune) and the
//   x-kubernetes-validations rules, evaluated in CEL as test/cel.ts does.
// The same validator judges an object as a create would (`admissionErrors`),
// which `npm run fixtures -- --remake` uses to refuse a parent the CRD would.
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import formats from "ajv-formats";
import { evaluateCel } from "./cel.ts";

type Schema = Record<string, any>;

// ajv-formats is CommonJS: under NodeNext its default import is the module, which holds the plugin as its default.
const addFormats = formats.default;

/** Where a schema breaks the rules of a structural schema; empty when it keeps them. */
export function structuralErrors(schema: Schema, path = "openAPIV3Schema"): string[] {
  const errors: string[] = [];
  const open = schema["x-kubernetes-int-or-string"] === true || schema["x-kubernetes-preserve-unknown-fields"] === true;
  if (!schema.type && !open) errors.push(`${path}.type: Required value: must not be empty for specified object fields`);
  if (schema.type === "array" && !schema.items) errors.push(`${path}.items: Required value: must be specified`);
  if (schema.properties && schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
    errors.push(`${path}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`);
  }
  for (const [name, child] of Object.entries<Schema>(schema.properties ?? {})) errors.push(...structuralErrors(child, `${path}.properties[${name}]`));
  if (typeof schema.additionalProperties === "object") errors.push(...structuralErrors(schema.additionalProperties, `${path}.additionalProperties`));
  if (schema.items) errors.push(...structuralErrors(schema.items, `${path}.items`));
  for (const junctor of ["allOf", "anyOf", "oneOf"] as const) {
    (schema[junctor] ?? []).forEach((branch: Schema, index: number) => errors.push(...onlyConstrains(branch, `${path}.${junctor}[${index}]`)));
  }
  if (schema.not) errors.push(...onlyConstrains(schema.not, `${path}.not`));
  return errors;
}

/** Under a junctor a schema may only constrain what the levels outside it declare. */
function onlyConstrains(schema: Schema, path: string): string[] {
  const declaring = ["type", "default", "nullable", "description", "title", "additionalProperties", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource"];
  const errors = declaring.filter((key) => key in schema).map((key) => `${path}.${key}: Forbidden: must be empty to be structural`);
  for (const [name, child] of Object.entries<Schema>(schema.properties ?? {})) errors.push(...onlyConstrains(child, `${path}.properties[${name}]`));
  if (schema.items) errors.push(...onlyConstrains(schema.items, `${path}.items`));
  return errors;
}

/** The schema as JSON Schema: Kubernetes' own extensions turned into what they mean, unknown fields refused as pruning would drop them. */
function asJsonSchema(schema: Schema, root: boolean): Schema {
  const {
    "x-kubernetes-int-or-string": intOrString,
    "x-kubernetes-preserve-unknown-fields": preserve,
    "x-kubernetes-embedded-resource": _embedded,
    "x-kubernetes-list-type": _listType,
    "x-kubernetes-list-map-keys": _listMapKeys,
    "x-kubernetes-map-type": _mapType,
    ...rest
  } = schema;
  const converted: Schema = { ...rest };
  if (intOrString) converted.anyOf = [...(converted.anyOf ?? []), { type: "integer" }, { type: "string" }];
  if (rest.properties) {
    converted.properties = Object.fromEntries(Object.entries<Schema>(rest.properties).map(([name, child]) => [name, asJsonSchema(child, false)]));
    // Every object carries these three, whatever its schema says; a CRD may say only metadata's name.
    // and the rest of metadata is the API server's own.
    if (root) {
      const { additionalProperties: _closed, ...metadata } = converted.properties.metadata ?? { type: "object" };
      converted.properties = { apiVersion: { type: "string" }, kind: { type: "string" }, ...converted.properties, metadata };
    }
    if (!preserve && rest.additionalProperties === undefined) converted.additionalProperties = false;
  }
  if (typeof rest.additionalProperties === "object") converted.additionalProperties = asJsonSchema(rest.additionalProperties, false);
  if (rest.items) converted.items = asJsonSchema(rest.items, false);
  for (const junctor of ["allOf", "anyOf", "oneOf"] as const) if (rest[junctor]) converted[junctor] = rest[junctor].map((branch: Schema) => asJsonSchema(branch, false));
  return converted;
}

function validator(): Ajv {
  // useDefaults fills in missing fields from their defaults as the API server does before it validates.
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, strictTypes: false, strictRequired: false, validateFormats: true });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: "x-kubernetes-validations",
    errors: true,
    validate: function celRules(this: unknown, rules: { rule: string; message?: string }[], data: unknown) {
      // A transition rule (oldSelf) is not evaluated on create, nor on a default.
      const failed = rules.filter(({ rule }) => !/\boldSelf\b/.test(rule)).filter(({ rule }) => {
        try {
          return evaluateCel(rule, { self: data as never }) !== true;
        } catch {
          return true;
        }
      });
      (celRules as { errors?: Partial<ErrorObject>[] }).errors = failed.map(({ rule, message }) => ({ keyword: "x-kubernetes-validations", message: message ?? `failed rule: ${rule}`, params: {} }));
      return failed.length === 0;
    },
  });
  return ajv;
}

const explained = (errors: ErrorObject[] | null | undefined, at: string) =>
  (errors ?? []).map((error) => {
    const field = error.keyword === "required" ? `/${error.params.missingProperty}` : error.keyword === "additionalProperty" || error.keyword === "additionalProperties" ? `/${error.params.additionalProperty}` : "";
    const path = `${at}${error.instancePath}${field}`.replaceAll("/", ".");
    return error.keyword === "required" ? `${path}: Required value` : `${path}: ${error.message}`;
  });

/** Every default in the schema that does not satisfy its own level's schema once the defaults under it are filled in, as `<path>.default<field>: <why>`. */
export function defaultErrors(schema: Schema, path = "openAPIV3Schema"): string[] {
  const ajv = validator();
  const errors: string[] = [];
  const walk = (level: Schema, at: string, root: boolean) => {
    if (level.default !== undefined) {
      // Its own default is what is judged, not one to fill in.
      const { default: _own, ...judge } = asJsonSchema(level, root);
      const validate = ajv.compile(judge);
      validate(structuredClone(level.default));
      errors.push(...explained(validate.errors, `${at}.default`));
    }
    for (const [name, child] of Object.entries<Schema>(level.properties ?? {})) walk(child, `${at}.properties[${name}]`, false);
    if (typeof level.additionalProperties === "object") walk(level.additionalProperties, `${at}.additionalProperties`, false);
    if (level.items) walk(level.items, `${at}.items`, false);
  };
  walk(schema, path, true);
  return errors;
}

const compiled = new WeakMap<Schema, ValidateFunction>();

/** What the API server would refuse in a create of this object under the CRD's schema, defaults filled in first; empty when it would admit it. */
export function admissionErrors(schema: Schema, object: unknown): string[] {
  let validate = compiled.get(schema);
  if (!validate) {
    const { default: _own, ...judge } = asJsonSchema(schema, true);
    compiled.set(schema, (validate = validator().compile(judge)));
  }
  validate(structuredClone(object));
  return explained(validate.errors, "");
}

/** The openAPIV3Schema of each version of each CRD, by `<crd name> <version>`. */
export function crdSchemas(objects: any[]): { name: string; schema: Schema }[] {
  return objects
    .filter((object) => object?.kind === "CustomResourceDefinition")
    .flatMap((crd) => crd.spec.versions.map((version: any) => ({ name: `${crd.metadata.name} ${version.name}`, schema: version.schema.openAPIV3Schema })));
}
