// One table of ProjectProfile specs, good and bad, that both judges of a
// profile must agree on: the CRD at admission (admission.test.ts) and `sync`,
// for profiles admitted before the rules (sync.test.ts). Each bad case names
// the rule it breaks, so both can be held to saying why in the same words.
import { MAX_ADMITTED_NAMESPACES, MAX_QUANTITIES, MAX_REGISTRIES, PROFILE_RULES } from "../features/guardrails.ts";

export type ProfileCase = { what: string; spec: Record<string, unknown>; breaks?: keyof typeof PROFILE_RULES };

const hard = (quantities: Record<string, unknown>) => ({ resourceQuota: { hard: quantities } });
const limits = (limitRange: Record<string, unknown>) => ({ limitRange });
const many = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`count/thing${index}.example.com`, "1"]));

export const PROFILE_CASES: ProfileCase[] = [
  { what: "an empty profile, which asks for no guardrail", spec: {} },
  { what: "a quota of standard resources", spec: hard({ "requests.cpu": "2", "limits.memory": "8Gi", pods: "20", "services.loadbalancers": "0" }) },
  { what: "a quota of object counts and huge pages", spec: hard({ "count/deployments.apps": "10", "requests.hugepages-2Mi": "1Gi" }) },
  { what: "a quota of a storage class's storage", spec: hard({ "gold.storageclass.storage.k8s.io/requests.storage": "500Gi" }) },
  { what: "quantities with decimals and every kind of unit", spec: hard({ cpu: "1.5", memory: "1.25Gi", "requests.storage": "2.5T", "limits.cpu": "250m", pods: "0" }) },
  { what: `a quota of ${MAX_QUANTITIES} resources`, spec: hard(many(MAX_QUANTITIES)) },
  { what: `a quota of ${MAX_QUANTITIES + 1} resources`, spec: hard(many(MAX_QUANTITIES + 1)), breaks: "most" },
  { what: "a quantity written as a number", spec: hard({ pods: 20 }), breaks: "quantity" },
  { what: "a negative quantity", spec: hard({ pods: "-1" }), breaks: "quantity" },
  { what: "a quantity with an exponent", spec: hard({ cpu: "1e3" }), breaks: "quantity" },
  { what: "a quantity in nano-units, which the API server rounds up to 1m", spec: hard({ cpu: "5n" }), breaks: "quantity" },
  { what: "a fraction of a milli-unit, which the API server rounds up to 1m", spec: hard({ cpu: "0.5m" }), breaks: "quantity" },
  { what: "counts written with units", spec: hard({ pods: "1k", "count/deployments.apps": "2000m", configmaps: "1.5k" }) },
  { what: "counts written with binary units, whole by their value", spec: hard({ pods: "0.5Ki", secrets: "1Gi", configmaps: "7Ei" }) },
  { what: "half a pod", spec: hard({ pods: "0.5" }), breaks: "count" },
  { what: "a count in binary units that is no whole number", spec: hard({ pods: "0.001Ki" }), breaks: "count" },
  { what: "a count of 8Ei, one more than a 64-bit integer holds", spec: hard({ secrets: "8Ei" }), breaks: "count" },
  { what: "a fraction of a counted resource named with a /", spec: hard({ "count/deployments.apps": "1500m" }), breaks: "count" },
  { what: "a count no 64-bit integer holds", spec: hard({ secrets: "10E" }), breaks: "count" },
  { what: "a quota of storage of any class, which Kubernetes calls requests.storage", spec: hard({ storage: "1Ti" }), breaks: "quotaResource" },
  { what: "a quantity with four decimals", spec: hard({ cpu: "0.0001" }), breaks: "quantity" },
  { what: "a unit in the wrong case", spec: hard({ memory: "4gi" }), breaks: "quantity" },
  { what: "a quota of a resource Kubernetes does not count", spec: hard({ gpus: "1" }), breaks: "quotaResource" },
  { what: "a quota of a misspelt standard resource", spec: hard({ "request.cpu": "1" }), breaks: "quotaResource" },
  { what: "default limits and requests for containers", spec: limits({ default: { cpu: "500m", memory: "512Mi" }, defaultRequest: { cpu: "100m", memory: "128Mi" } }) },
  { what: "default limits alone", spec: limits({ default: { cpu: "1" } }) },
  { what: "a default request equal to the limit, written another way", spec: limits({ default: { cpu: "0.5" }, defaultRequest: { cpu: "500m" } }) },
  { what: "a default request over the default limit", spec: limits({ default: { memory: "1Gi" }, defaultRequest: { memory: "1025Mi" } }), breaks: "requestOverLimit" },
  { what: "a default limit for a resource containers do not use", spec: limits({ default: { pods: "1" } }), breaks: "limitedResource" },
  { what: "isolation admitting no other namespace", spec: { networkPolicy: {} } },
  { what: "isolation admitting an ingress controller's namespace", spec: { networkPolicy: { allowFromNamespaces: ["ingress-nginx", "monitoring"] } } },
  { what: "a namespace admitted twice", spec: { networkPolicy: { allowFromNamespaces: ["ingress-nginx", "ingress-nginx"] } }, breaks: "admittedNamespace" },
  { what: "an admitted namespace that cannot be a name", spec: { networkPolicy: { allowFromNamespaces: ["Ingress_Nginx"] } }, breaks: "admittedNamespace" },
  {
    what: `${MAX_ADMITTED_NAMESPACES + 1} admitted namespaces`,
    spec: { networkPolicy: { allowFromNamespaces: Array.from({ length: MAX_ADMITTED_NAMESPACES + 1 }, (_, index) => `ns-${index}`) } },
    breaks: "admittedNamespace",
  },
  { what: "a Pod Security level", spec: { podSecurity: "restricted" } },
  { what: "a Pod Security level that does not exist", spec: { podSecurity: "lenient" }, breaks: "podSecurity" },
  { what: "warn and audit levels stricter than the one enforced", spec: { podSecurity: "baseline", podSecurityWarn: "restricted", podSecurityAudit: "restricted" } },
  { what: "a warn level that does not exist", spec: { podSecurityWarn: "strict" }, breaks: "podSecurity" },
  { what: "every pod rule", spec: { pods: { imagePullPolicy: "RequireAlways", securityContextDefaults: "Restricted", allowedRegistries: ["registry.example.com/", "ghcr.io/acme/", "localhost:5000/"] } } },
  { what: "pull policies set to Always", spec: { pods: { imagePullPolicy: "SetAlways" } } },
  { what: "a pull policy the rule does not know", spec: { pods: { imagePullPolicy: "Always" } }, breaks: "imagePullPolicy" },
  { what: "security context defaults of a level there are none for", spec: { pods: { securityContextDefaults: "Baseline" } }, breaks: "securityContextDefaults" },
  { what: "a registry without the closing /, which registry.example.com.evil.io would meet", spec: { pods: { allowedRegistries: ["registry.example.com"] } }, breaks: "registry" },
  { what: "a registry with a space, the annotation's separator", spec: { pods: { allowedRegistries: ["registry.example.com/a b/"] } }, breaks: "registry" },
  { what: "a registry allowed twice", spec: { pods: { allowedRegistries: ["ghcr.io/", "ghcr.io/"] } }, breaks: "registry" },
  { what: `${MAX_REGISTRIES + 1} registries`, spec: { pods: { allowedRegistries: Array.from({ length: MAX_REGISTRIES + 1 }, (_, index) => `r${index}.example.com/`) } }, breaks: "registry" },
];
