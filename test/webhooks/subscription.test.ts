import { describe, expect, it } from 'vitest';
import { AddressPolicy } from '../../src/webhooks/address-policy.js';
import { canonicalEventType } from '../../src/core/event-types.js';
import { parseEventTypes } from '../../src/webhooks/event-types.js';
import { isWebhookError } from '../../src/webhooks/errors.js';
import { matchesFilters, parseFilters } from '../../src/webhooks/filters.js';
import { checkOnePerType, validateCreate, validateUpdate, type CreateInput } from '../../src/webhooks/subscription.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const policy = new AddressPolicy(['127.0.0.1/8']);
const base: CreateInput = { name: 'occ', eventTypes: ['ROOM_OCCUPANCY'], url: 'http://127.0.0.1:9000/hook' };

function codeOf(f: () => unknown): string | null {
  try {
    f();
    return null;
  } catch (err) {
    if (isWebhookError(err)) return `${err.code} ${err.path}`;
    throw err;
  }
}

describe('webhook subscriptions', () => {
  it('accepts _1M and _1MIN spellings in any case and stores _1M', () => {
    expect(canonicalEventType('floor_occupancy_1min')).toBe('FLOOR_OCCUPANCY_1M');
    expect(canonicalEventType('ZONE_OCCUPANCY_1M')).toBe('ZONE_OCCUPANCY_1M');
    expect(canonicalEventType('DETECTIONS')).toBe('DETECTIONS');
    expect(canonicalEventType('TRAFFIC_OCCUPANCY')).toBeNull();
    expect(parseEventTypes(['ROOM_OCCUPANCY_1MIN', 'room_occupancy_1m', 'TRAFFIC'], 'p')).toEqual([
      'ROOM_OCCUPANCY_1M',
      'TRAFFIC',
    ]);
    expect(codeOf(() => parseEventTypes(['ROOM', 'X'], 'input[0].event_types'))).toBe(
      'WEBHOOK_INVALID input[0].event_types[0]',
    );
    expect(codeOf(() => parseEventTypes([], 'p'))).toBe('WEBHOOK_INVALID p');
  });

  it('creates an enabled subscription with defaults, the given secret and the normalised URL', () => {
    const s = validateCreate(policy, 'org_1', 'webhook_1', { ...base, secret: SECRET }, 'unused', 'input[0]');
    expect(s).toMatchObject({
      id: 'webhook_1',
      orgId: 'org_1',
      status: 'ENABLED',
      eventTypes: ['ROOM_OCCUPANCY'],
      sendOnValueChange: false,
      filters: {},
      secrets: [SECRET],
    });
    expect(s.endpoint).toEqual({
      url: 'http://127.0.0.1:9000/hook',
      httpTimeoutMs: 10_000,
      apiKey: null,
      basicAuth: null,
    });
  });

  it('names the place of every invalid field', () => {
    const bad: Array<[Partial<CreateInput>, string]> = [
      [{ url: 'http://169.254.169.254/' }, 'WEBHOOK_FORBIDDEN_ADDRESS input[0].endpoint_config.url'],
      [{ url: 'ftp://x/' }, 'WEBHOOK_BAD_URL input[0].endpoint_config.url'],
      [{ httpTimeoutS: 0 }, 'WEBHOOK_INVALID input[0].endpoint_config.http_timeout'],
      [{ apiKey: { key: 'X-Key\r\nInjected', value: 'v' } }, 'WEBHOOK_INVALID input[0].endpoint_config.api_key.key'],
      [{ apiKey: { key: 'webhook-id', value: 'v' } }, 'WEBHOOK_INVALID input[0].endpoint_config.api_key.key'],
      // Headers that frame or route the request: an api key there fails every attempt (issue 33 item 11).
      ...[
        'content-length',
        'Transfer-Encoding',
        'expect',
        'connection',
        'host',
        'TE',
        'upgrade',
        'keep-alive',
        'content-type',
      ].map((key): [Partial<CreateInput>, string] => [
        { apiKey: { key, value: '1' } },
        'WEBHOOK_INVALID input[0].endpoint_config.api_key.key',
      ]),
      [
        { basicAuth: { username: 'a:b', password: 'p' } },
        'WEBHOOK_INVALID input[0].endpoint_config.basic_auth.username',
      ],
      [{ filters: { room_ids: 'room_1' } }, 'WEBHOOK_INVALID input[0].filters.room_ids'],
      [{ filters: { hive_ids: [] } }, 'WEBHOOK_INVALID input[0].filters.hive_ids'],
      [{ secret: 'whsec_c2hvcnQ=' }, 'WEBHOOK_BAD_SECRET input[0].secret'],
    ];
    for (const [patch, expected] of bad)
      expect(
        codeOf(() => validateCreate(policy, 'org_1', 'webhook_1', { ...base, ...patch }, SECRET, 'input[0]')),
        expected,
      ).toBe(expected);
  });

  it('allows one subscription per event type per organisation', () => {
    const a = validateCreate(policy, 'org_1', 'webhook_1', base, SECRET, 'input[0]');
    const b = validateCreate(
      policy,
      'org_1',
      'webhook_2',
      { ...base, eventTypes: ['ROOM_OCCUPANCY', 'TRAFFIC'] },
      SECRET,
      'input[1]',
    );
    const c = validateCreate(policy, 'org_2', 'webhook_3', base, SECRET, 'input[0]');
    expect(codeOf(() => checkOnePerType([a], b, 'input[1]'))).toBe('WEBHOOK_DUPLICATE_EVENT_TYPE input[1].event_types');
    expect(codeOf(() => checkOnePerType([a], c, 'input[0]'))).toBeNull();
    expect(codeOf(() => checkOnePerType([a], a, 'input[0]'))).toBeNull();
  });

  it('re-enables an endpoint the engine disabled when the user sets it ENABLED, keeping a user disable on a URL change', () => {
    const s = validateCreate(policy, 'org_1', 'webhook_1', base, SECRET, 'input[0]');
    const failing = { ...s, status: 'DISABLED' as const, disabledReason: 'failing for 24 h', failingSinceMs: 5 };
    expect(validateUpdate(policy, failing, { id: s.id, status: 'ENABLED' }, 'input[0]')).toMatchObject({
      status: 'ENABLED',
      disabledReason: null,
      failingSinceMs: null,
    });
    expect(validateUpdate(policy, failing, { id: s.id, url: 'http://127.0.0.2/' }, 'input[0]')).toMatchObject({
      status: 'ENABLED',
    });
    const byUser = validateUpdate(policy, s, { id: s.id, status: 'DISABLED' }, 'input[0]');
    expect(validateUpdate(policy, byUser, { id: s.id, url: 'http://127.0.0.2/' }, 'input[0]').status).toBe('DISABLED');
  });

  it('rotates the secret so the new and the previous one both sign', () => {
    const s = validateCreate(policy, 'org_1', 'webhook_1', { ...base, secret: SECRET }, SECRET, 'input[0]');
    const next = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    expect(validateUpdate(policy, s, { id: s.id, rotateSecret: next }, 'input[0]').secrets).toEqual([next, SECRET]);
  });
});

describe('webhook filters', () => {
  const meta = { org_id: 'org_1', floor_id: 'space_1', room_id: 'room_1', mac_address: '00-17-0d-00-00-aa-bb-cc' };

  it("sends an event only when every given list holds the event's id", () => {
    expect(matchesFilters({}, meta)).toBe(true);
    expect(matchesFilters(parseFilters({ room_ids: ['room_1', 'room_2'] }, 'f'), meta)).toBe(true);
    expect(matchesFilters(parseFilters({ room_ids: ['room_2'] }, 'f'), meta)).toBe(false);
    expect(matchesFilters(parseFilters({ room_ids: ['room_1'], floor_ids: ['space_9'] }, 'f'), meta)).toBe(false);
    expect(matchesFilters(parseFilters({ zone_ids: ['zone_1'] }, 'f'), meta)).toBe(false);
    expect(matchesFilters(parseFilters({ mac_addresses: ['00-17-0D-00-00-AA-BB-CC'] }, 'f'), meta)).toBe(true);
    expect(matchesFilters(parseFilters({ room_ids: [] }, 'f'), meta)).toBe(true);
  });
});
