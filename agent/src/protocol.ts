import * as z from 'zod';

/** The protocol version this agent and client speak. */
export const PROTOCOL_VERSION = 1 as const;

/** Longest line either side may send, newline included. */
export const MAX_LINE_BYTES = 65_536;

/** JSON-RPC error codes used on the socket. */
export const RpcErrorCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  serviceRefused: -32001,
  serviceUnavailable: -32002,
  overLimit: -32003,
  storageFailed: -32004,
} as const;

export type RequestId = string | number | null;

const ProjectId = z.uuid({ error: 'project_id must be a UUID (the project id shown in the vendor dashboard)' });

export const HelloParams = z.looseObject({
  client: z.string().max(200).optional(),
  protocol: z.number().int().positive().optional(),
});
export const ProjectParams = z.looseObject({ project_id: ProjectId });
export const ActivateParams = z.looseObject({
  project_id: ProjectId,
  code: z.string().trim().min(1, 'code must not be empty').max(256, 'code is too long (at most 256 characters)'),
});
export const ListParams = z.looseObject({});
export const ShutdownParams = z.looseObject({});
export const SubscribeParams = z.looseObject({ project_id: ProjectId.optional() });
/** `offline_request`: the code is optional (the online step may give it), as in `plugin-license offline request`. */
export const OfflineRequestParams = z.looseObject({
  project_id: ProjectId,
  code: z.string().trim().min(1, 'code must not be empty').max(256, 'code is too long (at most 256 characters)').nullish(),
});
/** `offline_import`: a response file's contents or its text line (the line limit bounds it first). */
export const OfflineImportParams = z.looseObject({
  document: z.string().trim().min(1, 'document must not be empty: give the response file\'s contents or its text line'),
});

export type HelloParams = z.infer<typeof HelloParams>;
export type ProjectParams = z.infer<typeof ProjectParams>;
export type ActivateParams = z.infer<typeof ActivateParams>;
export type SubscribeParams = z.infer<typeof SubscribeParams>;
export type OfflineRequestParams = z.infer<typeof OfflineRequestParams>;
export type OfflineImportParams = z.infer<typeof OfflineImportParams>;

/**
 * The methods of protocol 1 (`offline_request` and `offline_import` were added to it:
 * docs/plugin-integration.md; `shutdown` for installers: agent/README.md).
 */
export const METHODS = ['hello', 'check', 'activate', 'deactivate', 'refresh', 'list', 'subscribe', 'offline_request', 'offline_import', 'shutdown'] as const;
export type MethodName = (typeof METHODS)[number];

export interface HelloResult {
  protocol: number;
  agent: string;
  namespace: string;
  /** Additive: the data folder whose licenses this agent serves (so a tool can tell which home answers). */
  data_dir?: string;
  /** Additive: connections open now, the asking one included (plugin instances share one per process and project). */
  connections?: number;
}

/** What `shutdown` answers, before the agent stops as on SIGTERM. */
export interface ShutdownResult {
  stopping: true;
  /** The agent's process id, so the asker can wait until the process is gone (never to signal it). */
  pid: number;
}

/** What `offline_request` answers: the request as its text line, and a file name to suggest. */
export interface OfflineRequestResult {
  document: string;
  file_name: string;
}

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A request as it arrives, after the envelope check. */
export interface RpcRequest {
  id: RequestId | undefined;
  method: string;
  params: unknown;
}

export type EnvelopeResult =
  | { ok: true; request: RpcRequest }
  | { ok: false; id: RequestId; error: RpcErrorObject };

/** Checks the JSON-RPC 2.0 envelope of one parsed line (not the params). */
export function checkEnvelope(value: unknown): EnvelopeResult {
  if (Array.isArray(value)) {
    return invalid(null, 'batches are not supported: send one JSON-RPC request per line');
  }
  if (typeof value !== 'object' || value === null) {
    return invalid(null, 'expected a JSON-RPC 2.0 request object, e.g. {"jsonrpc":"2.0","id":1,"method":"hello"}');
  }
  const v = value as Record<string, unknown>;
  const rawId = v.id;
  const idOk = rawId === undefined || rawId === null || typeof rawId === 'string' || (typeof rawId === 'number' && Number.isFinite(rawId));
  const id: RequestId = idOk && rawId !== undefined ? (rawId as RequestId) : null;
  if (!idOk) return invalid(null, 'id must be a string, a number or null');
  if (typeof rawId === 'string' && rawId.length > 256) return invalid(null, 'id is too long (at most 256 characters)');
  if (v.jsonrpc !== '2.0') return invalid(id, 'jsonrpc must be "2.0"');
  if (typeof v.method !== 'string' || v.method.length === 0) return invalid(id, 'method must be a non-empty string');
  return { ok: true, request: { id: rawId as RequestId | undefined, method: v.method, params: v.params } };
}

function invalid(id: RequestId, message: string): EnvelopeResult {
  return { ok: false, id, error: { code: RpcErrorCode.invalidRequest, message: `invalid request: ${message}` } };
}

/** Turns zod issues into one readable sentence for -32602. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}
