import type { Logger } from 'pino';
import { createOfflineRequest, importOfflineResponse, offlineFileName, offlineText } from '@plugin-license/licensing';
import type { LicenseRegistry } from './license-registry.js';
import type { LicenseStateWire } from './license-state.js';
import { hintOf } from './logger.js';
import type { OfflineRequestResult } from './protocol.js';

export interface OfflineExchangeOptions {
  registry: LicenseRegistry;
  logger: Logger;
  /** The namespace and home of the licenses served: the offline machine is this one. */
  paths: () => { namespace: string; home?: string };
  /** The import rules in effect (config.json). */
  rules: () => { offlinePublicKeys: string[]; offlineMaxDays: number; ticketKeys: string[] };
  now: () => number;
}

/**
 * The offline exchange run by the agent for a plugin (`offline_request`, `offline_import`):
 * the same library calls as `plugin-license offline request` and `offline import`, on the files
 * of the namespace the agent serves, so the result is in memory and pushed to subscribers at once.
 */
export class OfflineExchange {
  readonly #o: OfflineExchangeOptions;

  constructor(o: OfflineExchangeOptions) {
    this.#o = o;
  }

  /** Step 1: a request whose nonce is stored as pending before it is returned. */
  async request(projectId: string, code: string | undefined): Promise<OfflineRequestResult> {
    const { namespace, home } = this.#o.paths();
    const request = await createOfflineRequest({
      projectId,
      namespace,
      ...(home === undefined ? {} : { home }),
      ...(code === undefined ? {} : { code }),
      now: this.#o.now,
    });
    this.#o.logger.info({ projectId, codeHint: code === undefined ? null : hintOf(code) }, 'offline request made');
    return { document: offlineText(request), file_name: offlineFileName(namespace, request) };
  }

  /** Step 3: checks and stores a response, then answers the project's state from memory. */
  async import(document: string): Promise<LicenseStateWire> {
    const { namespace, home } = this.#o.paths();
    const rules = this.#o.rules();
    const status = await importOfflineResponse(document, {
      namespace,
      ...(home === undefined ? {} : { home }),
      offlinePublicKeys: rules.offlinePublicKeys,
      offlineMaxDays: rules.offlineMaxDays,
      ticketKeys: rules.ticketKeys,
      now: this.#o.now,
    });
    const projectId = status.projectId.toLowerCase();
    // The License held in memory reads the file the import wrote (the watcher would, within a second).
    await this.#o.registry.reload(projectId);
    this.#o.logger.info({ projectId, valid: status.valid, source: status.source, codeHint: status.codeHint }, 'offline response imported');
    return this.#o.registry.state(projectId);
  }
}
