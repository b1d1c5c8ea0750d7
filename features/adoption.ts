/**
 * # Adoption: a Namespace that exists already comes under its Project
 *
 * A cluster that already has its teams' Namespaces moves them to Projects
 * without losing what runs or is stored in them. A Namespace `proj-x` made
 * before Project `x` is a conflict, left as it is; a cluster admin then
 * labels it with the Project's uid, Metacontroller adopts what carries its
 * Project's label (it owns children by that label), and from its next sync
 * the Namespace is the Project's like any other: its annotations and labels
 * set, its guardrails and members' access made, deleted with the Project.
 * Everything else in it stays: workloads, data, and the RoleBindings made
 * by hand, which the members feature never takes back, as it takes back
 * only what it made. The ownership guard in k8s.yaml lets only a holder of
 * administer write that label (and nobody move a Namespace from one Project
 * to another); this file only tells the Project's status how.
 */
import type { Feature } from "../sync.ts";

// The label Metacontroller claims a Project's children by. Spelled out, not
// taken from sync.ts: a feature imports only types from it.
export const CLAIM_LABEL = "controller-uid";

export const adoption: Feature = {
  spec: {},
  children: {},
  related: {},
  refusals: [],
  reasons: [],
  // A Namespace nothing owns may come under this Project; one another
  // Project (or anything else) owns may not, and is not offered.
  foreign: (project, name, namespace) =>
    (namespace.metadata.ownerReferences ?? []).length > 0 || namespace.status?.phase === "Terminating"
      ? undefined
      : `A cluster admin may bring it under this Project instead, with all it holds: ` +
        `kubectl label namespace ${name} ${CLAIM_LABEL}=$(kubectl get ${String(project["kind"]).toLowerCase()} ${project.metadata.name} -o jsonpath='{.metadata.uid}').`,
  plan: () => ({ children: [] }),
};
