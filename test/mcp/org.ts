import { DEFAULT_AUDIENCE } from '../../src/api/server.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

/** The stdio server's settings for an organisation of `twoOrganisations()` (served.ts). */
export const envOf = (m: ScenarioModel, api: string): Record<string, string> => ({
  SERVICE_CLIENT_ID: m.clients[0]?.clientId ?? '',
  SERVICE_CLIENT_SECRET: m.clients[0]?.secret ?? '',
  SERVICE_BASE_URL: api,
  SERVICE_AUDIENCE: DEFAULT_AUDIENCE,
});
