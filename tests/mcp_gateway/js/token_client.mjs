// The official TypeScript MCP SDK with a bearer token (a personal access token),
// against one Deep Recall MCP endpoint: a tool profile such as /mcp/graph.
//
// Driven by tests/mcp_gateway/test_typescript_profiles.py. Runs the steps in
// MCP_STEPS in order and prints one JSON line per step, then exits 0:
//   {"step": <index>, "result": ...}   the SDK's result (tools/list, tools/call, resources/...)
//   {"step": <index>, "error": {"code": ..., "message": ...}}  a JSON-RPC error of that step
//
// Environment:
//   MCP_URL     the MCP endpoint URL (required)
//   MCP_TOKEN   the bearer token (required)
//   MCP_STEPS   JSON list of steps: {"list_tools": true} | {"call": name, "arguments": {...}}
//               | {"list_resources": true} | {"read_resource": uri}

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.MCP_URL;
const token = process.env.MCP_TOKEN;
const steps = JSON.parse(process.env.MCP_STEPS || "[]");

function emit(object) {
  process.stdout.write(JSON.stringify(object) + "\n");
}

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "deeprecall-ts-profile-test", version: "1.0.0" });
await client.connect(transport);

for (const [index, step] of steps.entries()) {
  try {
    let result;
    if (step.list_tools) result = await client.listTools();
    else if (step.list_resources) result = await client.listResources();
    else if (step.read_resource) result = await client.readResource({ uri: step.read_resource });
    else result = await client.callTool({ name: step.call, arguments: step.arguments || {} });
    emit({ step: index, result });
  } catch (error) {
    emit({ step: index, error: { code: error.code ?? null, message: String(error.message) } });
  }
}
await client.close();
