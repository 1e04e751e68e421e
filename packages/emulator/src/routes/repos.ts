import { randomUUID } from 'node:crypto';
import { CreateAndLinkRequest, LinkRepoRequest, UnlinkRepoRequest } from '@plugin-license/api';
import type { EmulatorContext, RouteDef } from '../context.js';
import { HttpError } from '../errors.js';
import { parseWith, requireProject, requireSubject } from '../request-helpers.js';
import { repoUrl } from '../seed.js';

function requireConnected(ctx: EmulatorContext): void {
  if (!ctx.store.data.hosting.connected) {
    throw new HttpError(403, 'forbidden', 'no code-hosting account is connected; connect one in the web portal first', { connected: false });
  }
}

export function repoRoutes(ctx: EmulatorContext): RouteDef[] {
  return [
    {
      method: 'GET',
      url: '/plugin-repos/discover',
      bucket: 'general',
      handler: async (request) => {
        requireSubject(request);
        requireConnected(ctx);
        return { repos: ctx.store.data.repos };
      },
    },
    {
      method: 'POST',
      url: '/plugin-repos/link',
      bucket: 'general',
      handler: async (request) => {
        const subject = requireSubject(request);
        const body = parseWith(LinkRepoRequest, request.body, 'body');
        const project = requireProject(ctx, subject, body.project_id, 'project_id');
        requireConnected(ctx);
        const repo = ctx.store.data.repos.find((r) => r.full_name.toLowerCase() === body.repo_full_name.toLowerCase());
        if (!repo) {
          throw new HttpError(404, 'not_found', `repository ${body.repo_full_name} is not among the connected account's repositories; discover them first`, {
            field: 'repo_full_name',
          });
        }
        project.source_repo_url = repo.html_url;
        project.branch = body.branch;
        await ctx.store.commit();
        return { success: true, project_id: project.id, source_repo_url: repo.html_url };
      },
    },
    {
      method: 'POST',
      url: '/plugin-repos/unlink',
      bucket: 'general',
      handler: async (request) => {
        const subject = requireSubject(request);
        const body = parseWith(UnlinkRepoRequest, request.body, 'body');
        const project = requireProject(ctx, subject, body.project_id, 'project_id');
        if (project.source_repo_url === null) return { success: false, message: 'the project has no linked repository; nothing was unlinked' };
        project.source_repo_url = null;
        project.branch = null;
        await ctx.store.commit();
        return { success: true, message: 'unlinked the repository' };
      },
    },
    {
      method: 'POST',
      url: '/plugin-repos/create-and-link',
      bucket: 'general',
      handler: async (request, reply) => {
        const subject = requireSubject(request);
        const body = parseWith(CreateAndLinkRequest, request.body, 'body');
        requireConnected(ctx);
        if (ctx.store.data.repos.some((r) => r.full_name.toLowerCase() === body.repo_full_name.toLowerCase())) {
          throw new HttpError(400, 'bad_request', `repository ${body.repo_full_name} already exists; choose another name or link the existing one`, {
            field: 'repo_full_name',
            issue: 'already exists',
          });
        }
        const url = repoUrl(body.repo_full_name);
        const repoName = body.repo_full_name.split('/')[1] ?? body.repo_full_name;
        ctx.store.data.repos.push({
          name: repoName,
          full_name: body.repo_full_name,
          description: body.description,
          html_url: url,
          topics: [],
          default_branch: 'main',
        });
        const projectId = randomUUID();
        ctx.store.data.projects.push({
          id: projectId,
          owner_id: subject,
          name: body.name,
          description: body.description,
          visibility: body.visibility,
          source_repo_url: url,
          branch: 'main',
          webhook_secret: ctx.store.data.identity.webhook_secret,
          version: '1.0.0',
          next_build_number: 1,
          triggers: [],
          notifications: null,
        });
        await ctx.store.commit();
        reply.code(201);
        return { project_id: projectId, name: body.name, source_repo_url: url };
      },
    },
  ];
}
