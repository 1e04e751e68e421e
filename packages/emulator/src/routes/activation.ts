import { randomUUID } from 'node:crypto';
import { ActivationRequest, GenerateRequest } from '@plugin-license/api';
import * as z from 'zod';
import { codeHint, isWellFormedCode } from '../code-format.js';
import type { EmulatorContext, RouteDef } from '../context.js';
import { HttpError } from '../errors.js';
import { parseWith, requireProject, requireSubject, requireUuidParam } from '../request-helpers.js';
import type { CodeRecord } from '../state.js';

/** machine_id is caller-chosen; the emulator caps it at 256 characters. */
const ActivationBody = ActivationRequest.extend({ machine_id: z.string().min(1).max(256) });
type ActivationBody = z.infer<typeof ActivationBody>;

const KEY_TYPE = 'project_test';

function invalidCode(code: string): HttpError {
  return new HttpError(
    400,
    'invalid_code',
    `activation code ${codeHint(code)} is not a valid code (expected UUID-like text: 8-4-4-4-12 hexadecimal digits); check for a typo`,
    { field: 'code' },
  );
}

function codeNotFound(code: string): HttpError {
  return new HttpError(404, 'code_not_found', `activation code ${codeHint(code)} does not exist for this product; check for a typo or ask the vendor for a new code`, {
    field: 'code',
  });
}

/** The code a request names, or undefined when it is unknown or belongs to another project than plugin_id. */
function findCode(ctx: EmulatorContext, body: ActivationBody): CodeRecord | undefined {
  const record = ctx.store.code(body.code);
  if (!record) return undefined;
  if (body.plugin_id !== undefined && body.plugin_id.toLowerCase() !== record.project_id) return undefined;
  return record;
}

/** Activate/deactivate share this: 400 invalid_code, 404 code_not_found. */
function requireCode(ctx: EmulatorContext, body: ActivationBody): CodeRecord {
  if (!isWellFormedCode(body.code)) throw invalidCode(body.code);
  const record = findCode(ctx, body);
  if (!record) throw codeNotFound(body.code);
  return record;
}

export function activationRoutes(ctx: EmulatorContext): RouteDef[] {
  const now = (): string => ctx.clock.iso();
  return [
    {
      method: 'POST',
      url: '/plugin-activation/activate',
      bucket: 'activation',
      lenientContentType: true,
      handler: async (request) => {
        const body = parseWith(ActivationBody, request.body, 'body');
        const record = requireCode(ctx, body);
        if (record.is_revoked) {
          throw new HttpError(403, 'code_revoked', `activation code ${codeHint(record.code)} has been revoked; contact the vendor for a new code`, {
            field: 'code',
          });
        }
        const held = record.slots.some((s) => s.machine_id === body.machine_id);
        if (!held) {
          if (record.slots.length >= record.max_activations) {
            throw new HttpError(
              403,
              'max_activations_reached',
              `activation code ${codeHint(record.code)} has no free slot (${record.slots.length} of ${record.max_activations} used); deactivate another machine first`,
              { activations: record.slots.length, max_activations: record.max_activations },
            );
          }
          record.slots.push({ machine_id: body.machine_id, activated_at: now() });
          record.released = record.released.filter((r) => r.machine_id !== body.machine_id);
          await ctx.store.commit();
        }
        return {
          success: true,
          activations: record.slots.length,
          max_activations: record.max_activations,
          remaining: record.max_activations - record.slots.length,
          already_activated: held,
        };
      },
    },
    {
      method: 'POST',
      url: '/plugin-activation/deactivate',
      bucket: 'activation',
      lenientContentType: true,
      handler: async (request) => {
        const body = parseWith(ActivationBody, request.body, 'body');
        const record = requireCode(ctx, body);
        const index = record.slots.findIndex((s) => s.machine_id === body.machine_id);
        if (index < 0) {
          return {
            success: false,
            activations: record.slots.length,
            max_activations: record.max_activations,
            message: `this machine holds no slot of activation code ${codeHint(record.code)}; nothing was released`,
          };
        }
        record.slots.splice(index, 1);
        record.released = record.released.filter((r) => r.machine_id !== body.machine_id);
        record.released.push({ machine_id: body.machine_id, deactivated_at: now() });
        await ctx.store.commit();
        return {
          success: true,
          activations: record.slots.length,
          max_activations: record.max_activations,
          message: `released this machine's slot; ${record.max_activations - record.slots.length} of ${record.max_activations} slots are free`,
        };
      },
    },
    {
      method: 'POST',
      url: '/plugin-activation/validate',
      bucket: 'activation',
      lenientContentType: true,
      handler: async (request) => {
        const body = parseWith(ActivationBody, request.body, 'body');
        const record = isWellFormedCode(body.code) ? findCode(ctx, body) : undefined;
        if (!record) return { valid: false, reason: 'code_not_found' };
        if (record.is_revoked) return { valid: false, reason: 'code_revoked' };
        if (record.slots.some((s) => s.machine_id === body.machine_id)) return { valid: true };
        if (record.released.some((r) => r.machine_id === body.machine_id)) return { valid: false, reason: 'deactivated' };
        return { valid: false, reason: 'not_activated' };
      },
    },
    {
      method: 'GET',
      url: '/plugin-activation/status/:code',
      bucket: 'activation',
      handler: async (request) => {
        const code = (request.params as { code: string }).code;
        if (!isWellFormedCode(code)) throw invalidCode(code);
        const record = ctx.store.code(code);
        if (!record) throw codeNotFound(code);
        return {
          activations: record.slots.length,
          max_activations: record.max_activations,
          available: record.max_activations - record.slots.length,
          is_revoked: record.is_revoked,
        };
      },
    },
    {
      method: 'POST',
      url: '/plugin-activation/generate',
      bucket: 'activation',
      handler: async (request, reply) => {
        const subject = requireSubject(request);
        const body = parseWith(GenerateRequest, request.body, 'body');
        const project = requireProject(ctx, subject, body.project_id, 'project_id');
        const record: CodeRecord = {
          code: randomUUID(),
          project_id: project.id,
          key_type: KEY_TYPE,
          max_activations: body.max_activations,
          notes: body.notes ?? null,
          created_at: now(),
          is_revoked: false,
          revoked_at: null,
          slots: [],
          released: [],
        };
        ctx.store.data.codes.push(record);
        await ctx.store.commit();
        reply.code(201);
        return {
          code: record.code,
          key_type: record.key_type,
          max_activations: record.max_activations,
          notes: record.notes,
          created_at: record.created_at,
        };
      },
    },
    {
      method: 'GET',
      url: '/plugin-activation/project/:projectId/keys',
      bucket: 'activation',
      handler: async (request) => {
        const subject = requireSubject(request);
        const projectId = requireUuidParam(request, 'projectId');
        const project = requireProject(ctx, subject, projectId, 'projectId');
        return {
          keys: ctx.store.data.codes
            .filter((c) => c.project_id === project.id)
            .map((c) => ({
              code: c.code,
              key_type: c.key_type,
              max_activations: c.max_activations,
              current_activations: c.slots.length,
              is_revoked: c.is_revoked,
              notes: c.notes,
              created_at: c.created_at,
            })),
        };
      },
    },
  ];
}
