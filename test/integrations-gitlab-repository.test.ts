// gitlab-repository, the reference integration k8s.yaml ships, against a
// stand-in GitLab and API server: its tests are in test/integrations-gitlab.ts.
import { describe } from "node:test";
import { against } from "./integrations-gitlab.ts";

describe("the reference GitLab integrations, against a stand-in GitLab", () => against("gitlab-repository"));
