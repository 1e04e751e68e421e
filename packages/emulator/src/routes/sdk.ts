import type { EmulatorContext, RouteDef } from '../context.js';
import { requireSubject } from '../request-helpers.js';
import { SDK_VERSION } from '../seed.js';

export const SDK_FILE_NAME = `plugin-sdk-${SDK_VERSION}.zip`;

export function sdkRoutes(ctx: EmulatorContext): RouteDef[] {
  return [
    {
      method: 'GET',
      url: '/sdk/status',
      bucket: 'general',
      handler: async (request) => {
        requireSubject(request);
        return {
          available: true,
          version: SDK_VERSION,
          documentation_url: 'https://docs.example.com/plugin-sdk',
          distribution_type: 'zip',
          github_connected: ctx.store.data.hosting.connected,
        };
      },
    },
    {
      method: 'GET',
      url: '/sdk/download',
      bucket: 'general',
      handler: async (request) => {
        requireSubject(request);
        return { url: new URL(`/__emulator/files/sdk/${SDK_FILE_NAME}`, ctx.origin()).toString(), version: SDK_VERSION };
      },
    },
  ];
}
