// The floor test/bench.ts measures the webhook against: the same work as
// POST /sync (read the body, parse it, run sync, serialize the answer) on bare
// node:http, with no framework, no validation, no ETag and no log line.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { sync } from "../sync.ts";

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const { parent, children, related } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const body = JSON.stringify(sync(parent, children, related));
    response.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
    response.end(body);
  });
});

server.listen(Number(process.env["PORT"] ?? 0), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
