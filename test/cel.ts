// CEL as the API server evaluates it in CRD rules and admission policies,
// through @bufbuild/cel, so that the manifest's expressions are run on sample
// objects instead of only being read. Kubernetes hands CEL its objects as
// maps with integer numbers; plain JSON is converted the same way here.
import { run } from "@bufbuild/cel";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type CelInput = Parameters<typeof run>[1] extends Record<string, infer Value> | undefined ? Value : never;

function toCel(value: unknown): CelInput {
  if (Array.isArray(value)) return value.map(toCel) as CelInput;
  if (value !== null && typeof value === "object") {
    return new Map(Object.entries(value).map(([key, child]) => [key, toCel(child)])) as CelInput;
  }
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value) as CelInput;
  return value as CelInput;
}

/** The value of a CEL expression with the given variables (`self`, `oldObject`, …) bound. */
export function evaluateCel(expression: string, variables: Record<string, Json | undefined>): unknown {
  const bound = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, toCel(value ?? null)]));
  return run(expression, bound);
}
