// The Helm chart in chart/, written by `npm run manifest` from k8s.yaml, so
// that the two never drift: its one template is k8s.yaml itself with the
// install settings an admin would otherwise keep in a kustomize overlay
// (docs/operating.md, "Install settings") made values, and its values'
// defaults are what k8s.yaml sets. Rendered with those defaults it is
// k8s.yaml, object for object (e2e step 74 renders it with a real helm);
// chart.test.ts fails whenever chart/ is not what this would write.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseAllDocuments, parseDocument, stringify } from "yaml";

export const CHART_DIRECTORY = fileURLToPath(new URL("../chart/", import.meta.url));
const root = new URL("..", import.meta.url);

/** The files `npm run manifest` writes into chart/, by their path there. */
export const GENERATED_FILES = ["Chart.yaml", "values.yaml", "templates/k8s.yaml"];

// What a template expression stands in for while the documents are edited
// as YAML: a plain word the YAML library keeps as it is, replaced by the
// expression once the text is written.
const HOOK_URL = "__chart_hook_url__";
const METACONTROLLER_NAMESPACE = "__chart_metacontroller_namespace__";
const METACONTROLLER_SERVICE_ACCOUNT = "__chart_metacontroller_service_account__";
const METACONTROLLER_POD_LABELS = "__chart_metacontroller_pod_labels__";
const REPLICAS = "__chart_replicas__";
const RESOURCES = "__chart_resources__";

const SEPARATOR = "---\n";

/** The chart's files for this k8s.yaml, by their path in chart/. */
export function renderChart(manifest: string): Record<string, string> {
  const objects = parseAllDocuments(manifest).map((document) => document.toJS());
  const namespace: string = objects.find((object) => object?.kind === "Namespace")?.metadata.name;
  const controller = objects.find((object) => object?.kind === "CompositeController");
  const service = objects.find((object) => object?.kind === "Service");
  const deployment = objects.find((object) => object?.kind === "Deployment");
  const binding = objects.find((object) => object?.kind === "ClusterRoleBinding");
  const crd = objects.find((object) => object?.kind === "CustomResourceDefinition"); // feature: environments
  const metacontroller: { name: string; namespace: string } = binding.subjects.find((subject: { kind: string }) => subject.kind === "ServiceAccount");
  // The Service's own address, in the Namespace the chart installs into.
  const inCluster = `http://${service.metadata.name}.%s.svc`;
  const defaults = {
    namespace,
    hookUrl: "",
    metacontroller: {
      namespace: metacontroller.namespace,
      serviceAccount: metacontroller.name,
      podLabels: undefined as Record<string, string> | undefined,
    },
    replicas: deployment.spec.replicas,
    resources: deployment.spec.template.spec.containers[0].resources,
  };
  const edited = new Set<string>();
  const template = manifest
    .split(SEPARATOR)
    .map((text) => {
      const document = parseDocument(text);
      const kind = document.get("kind");
      const edit = (path: unknown[], value: string, placeholder = value) => {
        if (!document.hasIn(path)) throw new Error(`k8s.yaml's ${kind} has no ${path.join(".")}, which the chart sets`);
        document.setIn(path, value);
        edited.add(placeholder);
      };
      if (kind === "CompositeController") {
        for (const [hook, { webhook }] of Object.entries<{ webhook: { url: string } }>(controller.spec.hooks)) {
          if (new URL(webhook.url).origin !== inCluster.replace("%s", namespace)) throw new Error(`the ${hook} hook calls ${webhook.url}, not the Service`);
          edit(["spec", "hooks", hook, "webhook", "url"], `${HOOK_URL}${new URL(webhook.url).pathname}`, HOOK_URL);
        }
      } else if (kind === "ClusterRoleBinding") {
        const at = binding.subjects.indexOf(metacontroller);
        edit(["subjects", at, "name"], METACONTROLLER_SERVICE_ACCOUNT);
        edit(["subjects", at, "namespace"], METACONTROLLER_NAMESPACE);
      } else if (kind === "NetworkPolicy" && document.getIn(["metadata", "namespace"]) === namespace) {
        // Who may call the webhook: Metacontroller's pods, by their Namespace and labels.
        const from = document.toJS().spec.ingress[0].from[0];
        defaults.metacontroller.podLabels = from.podSelector.matchLabels;
        if (from.namespaceSelector.matchLabels["kubernetes.io/metadata.name"] !== metacontroller.namespace) throw new Error("the webhook's NetworkPolicy admits another Namespace than Metacontroller's");
        edit(["spec", "ingress", 0, "from", 0, "namespaceSelector", "matchLabels", "kubernetes.io/metadata.name"], METACONTROLLER_NAMESPACE);
        edit(["spec", "ingress", 0, "from", 0, "podSelector", "matchLabels"], METACONTROLLER_POD_LABELS);
      } else if (kind === "ValidatingAdmissionPolicy" && document.getIn(["metadata", "name"]) === `${crd.metadata.name}-environments`) { // feature: environments
        // The Namespaces no environment may name hold Metacontroller's. // feature: environments
        const at = document.toJS().spec.variables.findIndex((variable: { name: string }) => variable.name === "reserved"); // feature: environments
        const reserved: string = document.getIn(["spec", "variables", at, "expression"]) as string; // feature: environments
        if (!reserved.includes(`'${metacontroller.namespace}'`)) throw new Error("the environments policy does not reserve Metacontroller's Namespace"); // feature: environments
        edit(["spec", "variables", at, "expression"], reserved.replace(`'${metacontroller.namespace}'`, `'${METACONTROLLER_NAMESPACE}'`), METACONTROLLER_NAMESPACE); // feature: environments
      } else if (kind === "Deployment") {
        edit(["spec", "replicas"], REPLICAS);
        edit(["spec", "template", "spec", "containers", 0, "resources"], RESOURCES);
      } else {
        return text;
      }
      return document.toString({ lineWidth: 0 });
    })
    .join(SEPARATOR);
  const missing = [HOOK_URL, METACONTROLLER_NAMESPACE, METACONTROLLER_SERVICE_ACCOUNT, METACONTROLLER_POD_LABELS, REPLICAS, RESOURCES].filter((value) => !edited.has(value));
  if (missing.length) throw new Error(`k8s.yaml has nowhere for the chart's ${missing.join(", ")}`);

  // Blocks go on the lines after their key, indented under it.
  const block = (expression: string) => (_: string, indent: string, key: string) => `${indent}${key}:{{- ${expression} | nindent ${indent.length + 2} }}`;
  const body = template
    // Text that Go's templates would read as an action is written as text.
    .replaceAll("{{", '{{ "{{" }}')
    .replaceAll(HOOK_URL, `{{ .Values.hookUrl | default (printf "${inCluster}" .Values.namespace) | trimSuffix "/" }}`)
    .replace(new RegExp(`(?<![\\w-])${namespace.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w-])`, "g"), "{{ .Values.namespace }}")
    .replaceAll(METACONTROLLER_NAMESPACE, "{{ .Values.metacontroller.namespace }}")
    .replaceAll(METACONTROLLER_SERVICE_ACCOUNT, "{{ .Values.metacontroller.serviceAccount }}")
    .replace(new RegExp(`^( *)(\\S+): ${METACONTROLLER_POD_LABELS}$`, "m"), block("toYaml .Values.metacontroller.podLabels"))
    .replaceAll(REPLICAS, "{{ .Values.replicas }}")
    .replace(new RegExp(`^( *)(\\S+): ${RESOURCES}$`, "m"), block("toYaml .Values.resources"));

  const { name, version, description } = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
  const kubernetes = /Kubernetes\s+(1\.\d+)\s+or\s+later/.exec(manifest.slice(0, 300))?.[1];
  if (!kubernetes) throw new Error("k8s.yaml's first lines name no Kubernetes version");
  // take-away's marker for what it leaves to `npm run manifest`.
  const generated = "# Generated by `npm run manifest`: do not edit.";
  const chart = `${generated}\n${stringify({
    apiVersion: "v2",
    name,
    description,
    type: "application",
    version,
    appVersion: version,
    // The "-0" admits a provider's pre-release suffix, as 1.36.2-gke.100.
    kubeVersion: `>=${kubernetes}.0-0`,
  })}`;
  const values = `${generated}
# The install settings k8s.yaml fixes, each here with k8s.yaml's own value
# (docs/operating.md, "Install settings"). Anything else is k8s.yaml's.

# The install's Namespace, where the webhook runs. Once installed, change it
# only by uninstalling first.
namespace: ${defaults.namespace}

# Where Metacontroller calls the hooks, without their paths (/sync and the
# others are added). Empty: the webhook's Service in the Namespace above.
# Set it where pods cannot start, to a webhook run outside the cluster
# (docs/cluster.md, "Where pods cannot start").
hookUrl: ${JSON.stringify(defaults.hookUrl)}

# Metacontroller's identity: the ServiceAccount the guards trust (whoever
# holds the verb control on ${objects.find((object) => object?.kind === "CustomResourceDefinition")?.metadata.name}), and the pods the webhook's
# NetworkPolicy lets call it. A Metacontroller installed by its own Helm
# chart runs as the release's name in the release's Namespace.
${stringify({ metacontroller: defaults.metacontroller }).trimEnd()}

# The webhook's Deployment.
replicas: ${defaults.replicas}
${stringify({ resources: defaults.resources }).trimEnd()}
`;
  return { "Chart.yaml": chart, "values.yaml": values, "templates/k8s.yaml": `${generated}\n${body}` };
}
