// The official TypeScript MCP SDK as a third-party agent would use it: OAuth
// (dynamic client registration, authorization code + PKCE + resource), then
// tools/list and tools/call against a Deep Recall server.
//
// Driven by tests/mcp_gateway/test_typescript_client.py over stdin/stdout, one
// JSON object per line:
//   out: {"authorize": "<authorization URL>"}   the person must approve this
//   in:  {"code": "...", "state": "..."}         what came back on the redirect
//   out: {"step": "...", "result": ...}          one per step
//   out: {"error": {...}}                        on failure (exit status 1)
//
// Environment:
//   MCP_URL             the MCP endpoint, e.g. http://127.0.0.1:8000/mcp (required)
//   MCP_CALLS           JSON list of {"name", "arguments"} to call after listing
//                       tools (default: recall with MCP_QUERY)
//   MCP_QUERY           the recall query for the default call
//   MCP_CLIENT_NAME     client_name registered by DCR
//   MCP_REDIRECT_PORT   port of the loopback redirect URI (nothing listens: the
//                       test reads the redirect itself)

import { createInterface } from "node:readline";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const MCP_URL = process.env.MCP_URL;
const CLIENT_NAME = process.env.MCP_CLIENT_NAME || "Deep Recall TS SDK test";
const REDIRECT_PORT = process.env.MCP_REDIRECT_PORT || "33419";
const REDIRECT_URI = `http://127.0.0.1:${REDIRECT_PORT}/callback`;
const QUERY = process.env.MCP_QUERY || "What do I keep on the roof?";
const CALLS = process.env.MCP_CALLS
  ? JSON.parse(process.env.MCP_CALLS)
  : [{ name: "recall", arguments: { query: QUERY } }];

function emit(object) {
  process.stdout.write(JSON.stringify(object) + "\n");
}

// One line at a time from stdin, on demand.
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
const pendingLines = [];
const waiters = [];
let stdinClosed = false;
lines.on("line", (line) => {
  if (waiters.length) waiters.shift().resolve(line);
  else pendingLines.push(line);
});
lines.on("close", () => {
  stdinClosed = true;
  while (waiters.length) waiters.shift().reject(new Error("stdin closed before the authorization code came"));
});

function readLine() {
  if (pendingLines.length) return Promise.resolve(pendingLines.shift());
  if (stdinClosed) return Promise.reject(new Error("stdin closed before the authorization code came"));
  return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
}

/** An OAuthClientProvider that keeps everything in memory and asks the driver to play the person. */
class InMemoryOAuthProvider {
  constructor() {
    this._clientInformation = undefined;
    this._tokens = undefined;
    this._codeVerifier = undefined;
    this._discoveryState = undefined;
    this.authorizations = 0;
    this.expectedState = undefined;
    this.lastState = undefined;
  }

  get redirectUrl() {
    return REDIRECT_URI;
  }

  get clientMetadata() {
    return {
      client_name: CLIENT_NAME,
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      // No scope of its own, as Claude Code and the Inspector: the SDK asks for what the
      // server's 401 challenge names.
    };
  }

  state() {
    this.expectedState = crypto.randomUUID();
    return this.expectedState;
  }

  clientInformation() {
    return this._clientInformation;
  }

  saveClientInformation(info) {
    this._clientInformation = info;
  }

  tokens() {
    return this._tokens;
  }

  saveTokens(tokens) {
    this._tokens = tokens;
  }

  saveCodeVerifier(verifier) {
    this._codeVerifier = verifier;
  }

  codeVerifier() {
    if (!this._codeVerifier) throw new Error("no code verifier saved");
    return this._codeVerifier;
  }

  saveDiscoveryState(state) {
    this._discoveryState = state;
  }

  discoveryState() {
    return this._discoveryState;
  }

  invalidateCredentials(scope) {
    if (scope === "all" || scope === "client") this._clientInformation = undefined;
    if (scope === "all" || scope === "tokens") this._tokens = undefined;
    if (scope === "all" || scope === "verifier") this._codeVerifier = undefined;
    if (scope === "all" || scope === "discovery") this._discoveryState = undefined;
  }

  // The "browser": hand the URL to the driver and wait for the redirect's query.
  async redirectToAuthorization(authorizationUrl) {
    this.authorizations += 1;
    emit({ authorize: authorizationUrl.toString() });
    const answer = JSON.parse(await readLine());
    if (!answer.code) throw new Error(`no authorization code: ${JSON.stringify(answer)}`);
    if (answer.state !== this.expectedState) throw new Error("the state on the redirect does not match");
    this.lastCode = answer.code;
  }

  takeCode() {
    const code = this.lastCode;
    this.lastCode = undefined;
    if (!code) throw new Error("unauthorized, but no authorization code was obtained");
    return code;
  }
}

function newClient() {
  return new Client({ name: "deeprecall-ts-sdk-test", version: "0.0.0" }, { capabilities: {} });
}

async function connect(provider) {
  // First attempt: 401 -> discovery, DCR, redirect to the person -> UnauthorizedError.
  let client = newClient();
  let transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider });
  try {
    await client.connect(transport);
    return { client, transport };
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await transport.finishAuth(provider.takeCode());
    await client.close().catch(() => {});
  }
  // Reconnect with the token.
  client = newClient();
  transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider });
  await client.connect(transport);
  return { client, transport };
}

// A request that may send the person to authorize again (step-up on a 403
// insufficient_scope): finish that authorization and retry once.
async function withReauthorization(transport, provider, request) {
  try {
    return await request();
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await transport.finishAuth(provider.takeCode());
    return await request();
  }
}

function errorObject(error) {
  return {
    name: error?.name,
    message: String(error?.message ?? error),
    code: error?.code,
    data: error?.data,
  };
}

async function main() {
  if (!MCP_URL) throw new Error("MCP_URL is not set");
  const provider = new InMemoryOAuthProvider();
  const { client, transport } = await connect(provider);
  emit({
    step: "connect",
    result: {
      server: client.getServerVersion(),
      protocolVersion: transport.protocolVersion,
      authorizations: provider.authorizations,
      client_id: provider.clientInformation()?.client_id,
      scope: provider.tokens()?.scope,
    },
  });

  const tools = await withReauthorization(transport, provider, () => client.listTools());
  emit({ step: "listTools", result: tools });

  for (const call of CALLS) {
    const result = await withReauthorization(transport, provider, () =>
      client.callTool({ name: call.name, arguments: call.arguments ?? {} }),
    );
    emit({ step: "callTool", tool: call.name, result });
  }

  emit({
    step: "done",
    result: { authorizations: provider.authorizations, scope: provider.tokens()?.scope },
  });
  await client.close();
}

main().then(
  () => {
    lines.close();
    process.exit(0);
  },
  (error) => {
    emit({ error: errorObject(error) });
    lines.close();
    process.exit(1);
  },
);
