// The webhook's app as main.ts serves it, with its metrics (METRICS=on) or
// without (METRICS=off): `npm run bench -- --metrics` loads the two in turn,
// so that the only difference between them is the counting.
import { serve } from "@hono/node-server";
import { createApp, readConfig } from "../main.ts";

const config = readConfig({ PORT: process.env["PORT"], HOST: process.env["HOST"] });
const app = createApp({ ...config, measure: process.env["METRICS"] !== "off" });
serve({ fetch: app.fetch, port: config.port, hostname: config.host }, ({ address, port }) => console.log(`listening on http://${address}:${port}`));
