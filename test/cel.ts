// CEL as the API server evaluates it in CRD rules and admission policies,
// through @bufbuild/cel, so that the manifest's expressions are run on sample
// objects instead of only being read. Kubernetes hands CEL its objects with
// integer numbers, and a property named like a CEL keyword, such as
// `namespace`, only as `__namespace__`: plain JSON is converted the same way
// here, so a rule that reads `self.namespace` fails here as it does there
// (where the API server even refuses the CRD, its cost being unknowable).
// Only a CRD's rules see properties renamed so (seen on 1.36: admission
// policies read `namespace` by that name, a custom resource's and a
// RoleBinding subject's alike); this converter renames map keys too, which
// the manifest's rules never read by a keyword.
import { CelScalar, celFunc, celMethod, listType, run } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type CelInput = Parameters<typeof run>[1] extends Record<string, infer Value> | undefined ? Value : never;

const CEL_KEYWORDS = new Set(
  "as break const continue else false for function if import in let loop package namespace null return true var void while".split(" "),
);

function toCel(value: unknown, escapeKeywords = true): CelInput {
  if (Array.isArray(value)) return value.map((item) => toCel(item, escapeKeywords)) as CelInput;
  // A value CEL itself returned, such as a policy variable's list, is passed on as it is.
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) !== Object.prototype) return value as CelInput;
  if (value !== null && typeof value === "object") {
    const escape = (key: string) => (escapeKeywords && CEL_KEYWORDS.has(key) ? `__${key}__` : key);
    return new Map(Object.entries(value).map(([key, child]) => [escape(key), toCel(child, escapeKeywords)])) as CelInput;
  }
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value) as CelInput;
  return value as CelInput;
}

// Kubernetes' quantity library: `<sign><number><suffix>`, the suffix a
// binary (Ki … Ei) or decimal (n, u, m, k … E) multiplier or a decimal
// exponent (e3). Written here from that grammar rather than taken from
// sync.ts, so that the CRD's rules and sync's own arithmetic are two judges,
// not one. A quantity stays a string in CEL; each function parses it to an
// exact fraction.
const QUANTITY_GRAMMAR = /^([+-]?)(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;
const BINARY_SUFFIXES = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
const DECIMAL_EXPONENTS: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const INT64_MAX = 2n ** 63n - 1n;

function parseQuantity(text: string): { numerator: bigint; denominator: bigint } {
  const [, sign = "", number = "", suffix = ""] = QUANTITY_GRAMMAR.exec(text) ?? [];
  if (!number) throw new Error(`quantities must match the regular expression: ${text}`);
  const [whole = "", fraction = ""] = number.split(".");
  let numerator = BigInt(`${sign}${whole || "0"}${fraction}`);
  let denominator = 10n ** BigInt(fraction.length);
  const binary = BINARY_SUFFIXES.indexOf(suffix);
  const exponent = binary >= 0 ? 0 : (DECIMAL_EXPONENTS[suffix] ?? Number(suffix.slice(1)));
  if (binary >= 0) numerator *= 2n ** BigInt(10 * (binary + 1));
  if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
  else denominator *= 10n ** BigInt(-exponent);
  return { numerator, denominator };
}

const KUBERNETES_QUANTITY_LIBRARY = [
  celFunc("isQuantity", [CelScalar.STRING], CelScalar.BOOL, (text) => QUANTITY_GRAMMAR.test(text)),
  celFunc("quantity", [CelScalar.STRING], CelScalar.STRING, (text) => (parseQuantity(text), text)),
  celMethod("compareTo", CelScalar.STRING, [CelScalar.STRING], CelScalar.INT, function (other) {
    const [a, b] = [parseQuantity(this), parseQuantity(other)];
    const difference = a.numerator * b.denominator - b.numerator * a.denominator;
    return difference > 0n ? 1n : difference < 0n ? -1n : 0n;
  }),
  // As an int64 without loss.
  celMethod("isInteger", CelScalar.STRING, [], CelScalar.BOOL, function () {
    const { numerator, denominator } = parseQuantity(this);
    return numerator % denominator === 0n && numerator / denominator <= INT64_MAX && numerator / denominator >= -INT64_MAX - 1n;
  }),
];

// Kubernetes' regex library, as far as the manifest uses it: every match, in
// order. RE2 and JavaScript agree on the classes the manifest writes.
const KUBERNETES_REGEX_LIBRARY = [
  celMethod("findAll", CelScalar.STRING, [CelScalar.STRING], listType(CelScalar.STRING), function (pattern) {
    return [...this.matchAll(new RegExp(pattern, "g"))].map((match) => match[0]);
  }),
];

// Kubernetes' lists library, as far as the manifest uses it: the sum of a
// list of integers (of an empty one, 0).
const KUBERNETES_LISTS_LIBRARY = [
  celMethod("sum", listType(CelScalar.INT), [], CelScalar.INT, function () {
    let total = 0n;
    for (const item of this) total += item as bigint;
    return total;
  }),
];

/** The value of a CEL expression with the given variables (`self`, `oldObject`, …) bound. */
export function evaluateCel(expression: string, variables: Record<string, Json | CelInput | undefined>): unknown {
  const bound = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, toCel(value ?? null)]));
  return run(expression, bound, { funcs: [...KUBERNETES_QUANTITY_LIBRARY, ...strings, ...KUBERNETES_REGEX_LIBRARY, ...KUBERNETES_LISTS_LIBRARY] });
}

/**
 * What the API server would say against a value under a CRD's structural
 * schema, as far as the CRDs use it: type, required, enum, pattern, lengths,
 * integer bounds,
 * minItems, maxItems, maxProperties, additionalProperties, unknown fields,
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
      if (schema.minItems !== undefined && value.length < schema.minItems) fail(`should have at least ${schema.minItems} items`);
      if (schema.maxItems !== undefined && value.length > schema.maxItems) fail(`must have at most ${schema.maxItems} items`);
      value.forEach((item, index) => errors.push(...schemaErrors(schema.items, item, `${path}[${index}]`)));
      break;
    case "object":
      if (value === null || typeof value !== "object" || Array.isArray(value)) return [`${path}: must be an object`];
      for (const key of schema.required ?? []) if (!(key in value)) fail(`${key} is required`);
      if (schema.maxProperties !== undefined && Object.keys(value).length > schema.maxProperties) {
        fail(`must have at most ${schema.maxProperties} properties`);
      }
      if (schema.additionalProperties) {
        for (const [key, child] of Object.entries(value)) errors.push(...schemaErrors(schema.additionalProperties, child, `${path}[${key}]`));
      }
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        errors.push(...schemaErrors(child, (value as Record<string, unknown>)[key], `${path}.${key}`));
      }
      // kubectl asks for strict field validation: a field the schema does
      // not declare is refused, not pruned. Every object may carry the three
      // the API server itself reads at the top; its metadata is the API
      // server's own, whatever a CRD declares of it (only name's rules).
      const isMetadata = path === "self.metadata";
      if (schema.properties && !schema.additionalProperties && !schema["x-kubernetes-preserve-unknown-fields"] && !isMetadata) {
        const everywhere = path === "self" ? ["apiVersion", "kind", "metadata"] : [];
        for (const key of Object.keys(value)) if (!(key in schema.properties) && !everywhere.includes(key)) fail(`unknown field "${key}"`);
      }
      break;
    case "string":
      if (typeof value !== "string") return [`${path}: must be a string`];
      if (schema.minLength !== undefined && [...value].length < schema.minLength) fail(`shorter than ${schema.minLength}`);
      if (schema.maxLength !== undefined && [...value].length > schema.maxLength) fail(`longer than ${schema.maxLength}`);
      if (schema.enum && !schema.enum.includes(value)) fail(`unsupported value ${JSON.stringify(value)}`);
      if (schema.pattern && !new RegExp(schema.pattern).test(value)) fail(`should match '${schema.pattern}'`);
      break;
    case "boolean":
      if (typeof value !== "boolean") return [`${path}: must be a boolean`];
      break;
    case "integer":
      if (!Number.isInteger(value)) return [`${path}: must be an integer`];
      if (schema.minimum !== undefined && (value as number) < schema.minimum) fail(`should be greater than or equal to ${schema.minimum}`);
      if (schema.maximum !== undefined && (value as number) > schema.maximum) fail(`should be less than or equal to ${schema.maximum}`);
      break;
  }
  if (errors.length > 0) return errors;
  for (const { rule, message } of schema["x-kubernetes-validations"] ?? []) {
    if (evaluateCel(rule, { self: value as Json }) !== true) fail(message);
  }
  return errors;
}

/** What the API server puts in a request's admission attributes that the manifest's policies read. */
export type AdmissionRequest = {
  operation: "CREATE" | "UPDATE" | "DELETE";
  resource: { group: string; resource: string };
  /** The object's kind, as `request.kind.kind` reads it. */
  kind?: string;
  /** The name in the request's path: empty for a collection delete, which is admitted item by item. */
  name: string;
  /** The namespace of a namespaced object, with that Namespace's labels for a namespaceSelector and `namespaceObject`. */
  namespace?: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  object?: Json;
  oldObject?: Json;
  username: string;
  groups?: string[];
  /** What the authenticator adds, such as the Pod a ServiceAccount token is bound to. */
  extra?: Record<string, string[]>;
  /** The operation's options: a delete's propagationPolicy, as kubectl delete --cascade sends it. */
  options?: Record<string, Json>;
  /**
   * What the requester may do, for the policies' `authorizer` checks:
   * `group/resource/verb` on every object, `group/resource/verb/name` on one.
   */
  authorized?: string[];
};

/** What a ClusterRole's rules let its holder do, in the form of AdmissionRequest's `authorized`. */
export function authorizedBy(rules: { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[]): string[] {
  return rules.flatMap(({ apiGroups, resources, verbs, resourceNames }) =>
    apiGroups.flatMap((group) =>
      resources.flatMap((resource) =>
        verbs.flatMap((verb) => (resourceNames ?? [undefined]).map((name) => [group, resource, verb, ...(name ? [name] : [])].join("/"))),
      ),
    ),
  );
}

// @bufbuild/cel has no `authorizer`; each check the manifest makes is
// answered from the request's `authorized` list before the expression runs:
// as true or false, or, where the check names an object by an expression,
// as whether that name is one of those authorized.
const AUTHORIZER_CHECK =
  /authorizer\.group\('([^']*)'\)\.resource\('([^']*)'\)(?:\.name\(([^()]*)\))?\.check\('([^']*)'\)\.allowed\(\)/g;

/** Whether a label selector selects these labels, as far as the manifest's selectors go. */
export const selects = (selector: any = {}, labels: Record<string, string>) =>
  Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value) &&
  (selector.matchExpressions ?? []).every(({ key, operator }: { key: string; operator: string }) => {
    if (operator !== "Exists") throw new Error(`selector operator ${operator} is not simulated`);
    return key in labels;
  });

/**
 * The params each of a policy's bindings judges a request against, as the
 * API server picks them: the bindings whose objectSelector selects the
 * object, and of `candidates`, those each one's paramRef selects.
 */
export function paramsJudging(bindings: any[], request: AdmissionRequest, candidates: { metadata: { labels?: Record<string, string> } }[]) {
  return bindings
    .filter((binding) => selects(binding.spec.matchResources?.objectSelector, (request.object as any)?.metadata?.labels ?? {}))
    .flatMap((binding) => candidates.filter((candidate) => selects(binding.spec.paramRef.selector, candidate.metadata.labels ?? {})));
}

/**
 * What a ValidatingAdmissionPolicy decides, as far as the manifest's
 * policies use it: resourceRules (group, resource, operation, resourceNames
 * against the request's name), the objectSelector's matchLabels and
 * matchExpressions Exists against the labels of the object or the old one
 * (either matching will do), the namespaceSelector's matchExpressions Exists against its
 * Namespace's, matchConditions, variables, then the validations in order,
 * with `params` one object its binding selects (required where the policy
 * declares a paramKind; the manifest's bindings of such a policy admit when
 * they select none, so a caller evaluates each `paramsJudging` picks).
 */
export function admit(policy: any, request: AdmissionRequest, params?: Json): { matched: boolean; allowed: boolean; message?: string } {
  const rules: any[] = policy.spec.matchConstraints.resourceRules;
  const ruleMatches = rules.some(
    (rule) =>
      rule.apiGroups.includes(request.resource.group) &&
      rule.resources.includes(request.resource.resource) &&
      rule.operations.includes(request.operation) &&
      (!rule.resourceNames || rule.resourceNames.includes(request.name)),
  );
  // Against both the object and the old one, matching if either does.
  const labelled = [request.object, request.oldObject].filter((object): object is any => object !== undefined && object !== null);
  const { objectSelector, namespaceSelector } = policy.spec.matchConstraints;
  const selected =
    labelled.some((object) => selects(objectSelector, object.metadata?.labels ?? {})) &&
    (namespaceSelector === undefined || (request.namespace !== undefined && selects(namespaceSelector, request.namespace.labels ?? {})));
  if (policy.spec.paramKind && params === undefined) throw new Error(`${policy.metadata.name} takes params: pass one its binding selects`);
  const authorized = new Set(request.authorized ?? []);
  const check = (group: string, resource: string, name: string | undefined, verb: string) => {
    if (authorized.has(`${group}/${resource}/${verb}`)) return "true";
    if (name === undefined) return "false";
    const names = [...authorized].filter((entry) => entry.startsWith(`${group}/${resource}/${verb}/`)).map((entry) => entry.split("/").pop());
    return `((${name}) in ${JSON.stringify(names)})`;
  };
  const evaluate = (expression: string, variables: Record<string, Json | CelInput | undefined>) =>
    evaluateCel(expression.replace(AUTHORIZER_CHECK, (_, group, resource, name, verb) => check(group, resource, name, verb)), variables);
  // The request is a typed object in Kubernetes, whose `namespace` is read as
  // such, unlike an object's property of that name. A request about a
  // Namespace names the Namespace itself as its namespace (seen on 1.36).
  const aboutANamespace = request.resource.group === "" && request.resource.resource === "namespaces";
  const requestAttributes = {
    operation: request.operation,
    resource: request.resource,
    name: request.name,
    namespace: aboutANamespace ? request.name : (request.namespace?.name ?? ""),
    kind: { kind: request.kind ?? "" },
    userInfo: { username: request.username, groups: request.groups ?? [], ...(request.extra ? { extra: request.extra } : {}) },
    ...(request.options ? { options: request.options } : {}),
  };
  // An admission policy sees every object's properties by their own names,
  // a custom resource's too (seen on 1.36: a custom resource's `m.namespace`
  // is set, `m.__namespace__` never is); only a CRD's own rules escape them.
  const bound: Record<string, Json | CelInput | undefined> = {
    object: toCel(request.object ?? null, false),
    oldObject: toCel(request.oldObject ?? null, false),
    request: new Map(Object.entries(requestAttributes).map(([key, value]) => [key, toCel(value)])) as CelInput,
    namespaceObject: request.namespace ? { metadata: { labels: {}, ...request.namespace } } : null,
    params: params ?? null,
  };
  const conditionsHold = (policy.spec.matchConditions ?? []).every(
    ({ expression }: { expression: string }) => evaluate(expression, bound) === true,
  );
  if (!ruleMatches || !selected || !conditionsHold) return { matched: false, allowed: true };
  const variables: Record<string, Json> = {};
  for (const { name, expression } of policy.spec.variables ?? []) {
    variables[name] = evaluate(expression, { ...bound, variables }) as Json;
  }
  for (const validation of policy.spec.validations) {
    if (evaluate(validation.expression, { ...bound, variables }) === true) continue;
    const message = validation.messageExpression ? String(evaluate(validation.messageExpression, { ...bound, variables })) : validation.message;
    return { matched: true, allowed: false, message };
  }
  return { matched: true, allowed: true };
}
