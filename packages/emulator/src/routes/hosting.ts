import type { EmulatorContext, RouteDef } from '../context.js';
import { requireSubject } from '../request-helpers.js';

export function hostingRoutes(ctx: EmulatorContext): RouteDef[] {
  return [
    {
      method: 'GET',
      url: '/github-app-callback/status',
      bucket: 'general',
      handler: async (request) => {
        requireSubject(request);
        return { ...ctx.store.data.hosting };
      },
    },
    {
      method: 'DELETE',
      url: '/github-app-callback/disconnect',
      bucket: 'general',
      handler: async (request) => {
        requireSubject(request);
        const hosting = ctx.store.data.hosting;
        if (!hosting.connected) {
          return { success: false, message: 'no code-hosting account is connected; nothing was disconnected' };
        }
        const login = hosting.account_login;
        ctx.store.data.hosting = { connected: false, account_login: null, account_type: null, connected_at: null };
        await ctx.store.commit();
        return { success: true, message: `disconnected the code-hosting account ${login ?? ''}`.trim() };
      },
    },
  ];
}
