// CEL as the API server evaluates it in CRD rules and admission policies,
// through @bufbuild/cel, so that the manifest's expressions are run on sample
// objects instead of only being read. Kubernetes hands CEL its objects with
// integer numbers, and a property named like a CEL keyword, such as
// `namespace`, only as `__namespace__`: plain JSON is converted the same way
// here, so a rule that reads `self.namespace` fails here as it does there
// (where the API server even refuses the CRD, its cost being unknowable).
// Only objects' properties are renamed in Kubernetes; this converter renames
// map keys too, which the manifest's rules never read by a keyword.
import { run } from "@bufbuild/cel";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type CelInput = Parameters<typeof run>[1] extends Record<string, infer Value> | undefined ? Value : never;

const CEL_KEYWORDS = new Set(
  "as break const continue else false for function if import in let loop package namespace null return true var void while".split(" "),
);

function toCel(value: unknown): CelInput {
  if (Array.isArray(value)) return value.map(toCel) as CelInput;
  if (value !== null && typeof value === "object") {
    const escape = (key: string) => (CEL_KEYWORDS.has(key) ? `__${key}__` : key);
    return new Map(Object.entries(value).map(([key, child]) => [escape(key), toCel(child)])) as CelInput;
  }
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value) as CelInput;
  return value as CelInput;
}

/** The value of a CEL expression with the given variables (`self`, `oldObject`, …) bound. */
export function evaluateCel(expression: string, variables: Record<string, Json | undefined>): unknown {
  const bound = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, toCel(value ?? null)]));
  return run(expression, bound);
}

/**
 * What the API server would say against a value under a CRD's structural
 * schema, as far as this CRD uses it: type, required, enum, lengths, maxItems,
 * then the x-kubernetes-validations rules of each level that passed those.
 * An empty list means admitted.
 */
export function schemaErrors(schema: any, value: unknown, path = "self"): string[] {
  if (value === undefined) return [];
  const errors: string[] = [];
  const fail = (why: string) => errors.push(`${path}: ${why}`);
  switch (schema.type) {
    case "array":
      if (!Array.isArray(value)) return [`${path}: must be an array`];
      if (schema.maxItems !== undefined && value.length > schema.maxItems) fail(`must have at most ${schema.maxItems} items`);
      value.forEach((item, index) => errors.push(...schemaErrors(schema.items, item, `${path}[${index}]`)));
      break;
    case "object":
      if (value === null || typeof value !== "object" || Array.isArray(value)) return [`${path}: must be an object`];
      for (const key of schema.required ?? []) if (!(key in value)) fail(`${key} is required`);
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        errors.push(...schemaErrors(child, (value as Record<string, unknown>)[key], `${path}.${key}`));
      }
      break;
    case "string":
      if (typeof value !== "string") return [`${path}: must be a string`];
      if (schema.minLength !== undefined && [...value].length < schema.minLength) fail(`shorter than ${schema.minLength}`);
      if (schema.maxLength !== undefined && [...value].length > schema.maxLength) fail(`longer than ${schema.maxLength}`);
      if (schema.enum && !schema.enum.includes(value)) fail(`unsupported value ${JSON.stringify(value)}`);
      break;
    case "boolean":
      if (typeof value !== "boolean") return [`${path}: must be a boolean`];
      break;
  }
  if (errors.length > 0) return errors;
  for (const { rule, message } of schema["x-kubernetes-validations"] ?? []) {
    if (evaluateCel(rule, { self: value as Json }) !== true) fail(message);
  }
  return errors;
}
