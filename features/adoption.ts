/**
 * # Adoption: a Namespace that exists already comes under its Project
 *
 * A cluster that already has its teams' Namespaces moves them to Projects
 * without losing what runs or is stored in them. A Namespace `proj-x` made
 * before Project `x` is a conflict, left as it is; a cluster admin then
 * labels it with the Project's uid, Metacontroller adopts what carries its
 * Project's label (it owns children by that label), and from its next sync
 * the Namespace is the Project's like any other: its annotations and labels
 * set, what the features ask for made in it, deleted with the Project.
 * Everything else in it stays: workloads, data, and what was made there by
 * hand, which no feature takes back, as each takes back only what is the
 * Project's.
 *
 * The label is pasted by a person, so the guards in k8s.yaml do not trust
 * it: only a holder of administer may write it, nobody moves a Namespace
 * from one Project to another in one write, and no Namespace becomes a
 * Project's unless it is named as that Project's and labelled with its uid
 * (a uid pasted onto the wrong Namespace, or one freed from another
 * Project, is refused at Metacontroller's adoption, and the Namespace stays
 * nobody's). This file only tells the Project's status what an admin may
 * do.
 */
import type { Feature } from "./index.ts";

// Its words, none left once it is taken away (take-away.ts's VOCABULARY says which).
export const VOCABULARY = ["adoption", "CLAIM_LABEL"] as const;

// The label Metacontroller claims a Project's children by. Spelled out, not
// taken from sync.ts: a feature imports only types from it.
export const CLAIM_LABEL = "controller-uid";
// A Namespace of any other name than its Project's comes under it only with
// this label too, the Project's name, pasted by the same admin (k8s.yaml's
// namespace-owner guard): what the Project does with it is the features'.
export const ADOPTED_BY_LABEL = "agrrh.com/adopted-by";
// The Projects by resource and group: a cluster may have another kind named
// Project, which a bare `kubectl get project` could pick instead.
export const PROJECTS = "projects.agrrh.com";

export const adoption: Feature = {
  spec: {},
  children: {},
  related: {},
  refusals: [],
  reasons: [],
  // Offered only for a Namespace nothing owns and that is staying. One that
  // still carries a claim label that is not this Project's (a Project gone,
  // or a uid pasted wrong) has it overwritten: nothing owns it, so the
  // guard lets an admin relabel it in one write.
  foreign: (project, name, namespace) => {
    if ((namespace.metadata.ownerReferences ?? []).length > 0 || namespace.status?.phase === "Terminating") return undefined;
    const claimed = namespace.metadata.labels?.[CLAIM_LABEL];
    if (claimed !== undefined && claimed === project.metadata.uid) return undefined;
    const uid = `$(kubectl get ${PROJECTS} ${project.metadata.name} -o jsonpath='{.metadata.uid}')`;
    const overwrite = claimed === undefined ? "" : " --overwrite";
    return (
      `A cluster admin may bring it under this Project instead, with all it holds, once nothing in it is named like this Project's objects ` +
      `(docs/cluster.md, "Bring an existing Namespace under a Project"): kubectl label namespace ${name} ${CLAIM_LABEL}=${uid}${overwrite}`
    );
  },
  plan: () => ({ children: [] }),
};
