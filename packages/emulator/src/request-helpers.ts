import type { FastifyRequest } from 'fastify';
import * as z from 'zod';
import type { EmulatorContext } from './context.js';
import { HttpError } from './errors.js';
import type { ProjectRecord } from './state.js';

/** Parses a body or query with a zod schema; failures become 400 bad_request naming the field. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query'): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.slice(0, 20).map((issue) => ({
    field: issue.path.length > 0 ? issue.path.map(String).join('.') : where,
    issue: issue.message,
  }));
  const first = issues[0] ?? { field: where, issue: 'invalid' };
  throw new HttpError(400, 'bad_request', `invalid request ${where}: ${first.field}: ${first.issue}; fix that field and send the request again`, {
    field: first.field,
    issue: first.issue,
    issues,
  });
}

/** The account behind the bearer token; 401 unauthorized without a valid one. */
export function requireSubject(request: FastifyRequest): string {
  const auth = request.auth;
  if (auth === null || auth.kind === 'none') {
    throw new HttpError(401, 'unauthorized', 'this endpoint needs a bearer token; send "Authorization: Bearer <token>"', {
      header: 'authorization',
    });
  }
  if (auth.kind === 'invalid') {
    throw new HttpError(401, 'unauthorized', `the bearer token was refused: ${auth.reason}; get a new token and retry`, {
      header: 'authorization',
    });
  }
  return auth.subject;
}

/** A project the account owns; 404 not_found when it does not exist, 403 forbidden when it belongs to another account. */
export function requireProject(ctx: EmulatorContext, subject: string, projectId: string, field: string): ProjectRecord {
  const project = ctx.store.project(projectId);
  if (!project) {
    throw new HttpError(404, 'not_found', `project ${projectId} does not exist; check the ${field}`, { field, project_id: projectId });
  }
  if (project.owner_id !== subject) {
    throw new HttpError(403, 'forbidden', `the token has no permission on project ${projectId}; use a token of the project's owner`, {
      field,
      project_id: projectId,
    });
  }
  return project;
}

/** A path parameter that must be a UUID; 400 bad_request naming it otherwise. */
export function requireUuidParam(request: FastifyRequest, name: string): string {
  const value = (request.params as Record<string, string | undefined>)[name] ?? '';
  if (!z.uuid().safeParse(value).success) {
    throw new HttpError(400, 'bad_request', `path parameter ${name} must be a UUID; check the URL`, { field: name, issue: 'expected a UUID' });
  }
  return value.toLowerCase();
}
