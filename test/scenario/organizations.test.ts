import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/scenario/diagnostics.js';
import { loadScenarioFile, loadScenarioText } from '../../src/scenario/load.js';
import { MAX_ORGANISATIONS } from '../../src/scenario/schema.js';

/** Scenario files of several organisations (issue 16, finding 11). */
const floor = (name: string) => `
            - name: ${name}
              level: 0
              rooms:
                - { name: Office, polygon: [[0, 0], [14, 0], [14, 8], [0, 8]] }
              hives:
                - { name: H, position: [8, 4] }
              sensors:
                - { name: S1, mode: presence, room: Office, center: [8, 4] }`;
const org = (name: string, extra = '', site = 'HQ') => `
  - name: ${name}${extra}
    sites:
      - name: ${site}
        timezone: Europe/Paris
        buildings:
          - name: Main
            floors:${floor('Ground')}`;
const FILE = (orgs: string, head = '') => `version: 1
name: tenants
start: "2026-03-02T08:00"
duration: 2m
${head}organizations:${orgs}
`;

function located(text: string): string[] {
  const r = loadScenarioText(text, 'tenants.yaml');
  expect(r.ok).toBe(false);
  return r.ok ? [] : r.diagnostics.filter((d) => d.severity === 'error').map(formatDiagnostic);
}

describe('scenario organizations', () => {
  it(`refuses more than ${MAX_ORGANISATIONS} organizations with one clear error, before resolving any`, () => {
    const many = Array.from({ length: MAX_ORGANISATIONS + 1 }, (_, i) => org(`Org ${i}`)).join('');
    const c0 = process.cpuUsage(); // CPU, not wall: other test files share the cores
    expect(located(FILE(many))).toEqual([
      `tenants.yaml:6:3 organizations: ${MAX_ORGANISATIONS + 1} organizations: a file declares at most ${MAX_ORGANISATIONS} (each is served by this one process)`,
    ]);
    const used = process.cpuUsage(c0);
    expect((used.user + used.system) / 1000).toBeLessThan(10_000);
    const r = loadScenarioText(FILE(Array.from({ length: 3 }, (_, i) => org(`Org ${i}`)).join('')), 'tenants.yaml');
    expect(r.ok).toBe(true);
  });

  it('gives each organisation its own sites, users and clients, with distinct ids for equal names', () => {
    const users = (u: string) => `\n    users: [{ username: ${u} }]\n    clients: [{ name: ci-bot }]`;
    const r = loadScenarioText(
      FILE(org('Acme', users('alice@acme.test')) + org('Globex', users('bob@globex.test'))),
      'tenants.yaml',
    );
    if (!r.ok) throw new Error(r.diagnostics.map(formatDiagnostic).join('\n'));
    const m = r.model;
    expect(m.organisations?.map((o) => o.name)).toEqual(['Acme', 'Globex']);
    expect(m.org.name).toBe('Acme');
    const [a, g] = m.organisations!;
    expect(a!.siteIds).toHaveLength(1);
    expect(g!.siteIds).toHaveLength(1);
    expect(a!.siteIds[0]).not.toBe(g!.siteIds[0]);
    expect(m.sites.map((s) => s.name)).toEqual(['HQ', 'HQ']);
    expect(new Set(m.hives.map((h) => h.serial)).size).toBe(2);
    expect(new Set(m.sensors.map((s) => s.mac)).size).toBe(2);
    expect(m.clients.map((c) => c.name)).toEqual(['ci-bot', 'ci-bot']);
    expect(a!.clientIds).toEqual([m.clients[0]!.clientId]);
    expect(g!.clientIds).toEqual([m.clients[1]!.clientId]);
    expect(m.clients[0]!.clientId).not.toBe(m.clients[1]!.clientId);
    expect(m.clients[0]!.secret).not.toBe(m.clients[1]!.secret);
    expect(g!.userIds).toEqual([m.users[1]!.id]);
    expect(g!.src).toBe('/organizations/1');
  });

  it('keeps single-organisation files as they were: no organisations list, the same ids', () => {
    const r = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
    if (!r.ok) throw new Error('quickstart does not load');
    expect(r.model.organisations).toBeUndefined();
    expect(r.model.org.name).toBe('Acme');
  });

  it('locates a duplicate organisation name at the second one', () => {
    expect(located(FILE(org('Acme') + org('Acme')))).toEqual([
      expect.stringMatching(
        /^tenants\.yaml:21:11 organizations\[1\]\.name: duplicate organization name `Acme` in the file/,
      ),
    ]);
  });

  it('refuses a user name used by another organisation, ignoring case, where the second is declared', () => {
    const errs = located(
      FILE(
        org('Acme', '\n    users: [{ username: ops@x.test }]') +
          org('Globex', '\n    users: [{ username: OPS@x.test }]'),
      ),
    );
    expect(errs).toEqual([
      expect.stringMatching(
        /organizations\[1\]\.users\[0\]\.username: user name `OPS@x\.test` is already used by a user of organization `Acme`/,
      ),
    ]);
  });

  it('refuses a file that mixes organization/sites with organizations, and one with neither', () => {
    const both = located(FILE(org('Acme'), 'organization: { name: Solo }\n'));
    expect(both.some((e) => /organizations: a file gives either `organization` and `sites`/.test(e))).toBe(true);
    const neither = located('version: 1\nname: x\nstart: "2026-03-02T08:00"\nduration: 2m\n');
    expect(neither).toEqual([
      expect.stringMatching(/organization: missing required field `organization` \(or `organizations`/),
      expect.stringMatching(/sites: missing required field `sites`/),
    ]);
  });

  it("checks each organisation's sites as in a single file, located under its entry", () => {
    const errs = located(FILE(org('Acme').replace('Europe/Paris', 'Mars/Olympus')));
    expect(errs).toEqual([expect.stringMatching(/organizations\[0\]\.sites\[0\]\.timezone: unknown IANA time zone/)]);
  });

  it('refuses top-level webhooks in a file of several organisations, saying why', () => {
    const errs = located(
      FILE(org('Acme'), 'webhooks: [{ url: "https://example.com/h", event_types: [DETECTIONS] }]\n'),
    );
    expect(errs).toEqual([
      expect.stringMatching(/webhooks: a file of several organizations cannot declare webhooks yet/),
    ]);
  });

  it("reads every organisation's floors whole, warm objects included (per-file state stays the file's)", () => {
    const warm =
      '\n              warm_objects: [{ name: Radiator, kind: radiator, position: [1, 1], size: [1, 0.2], temperature: 45 }]';
    const r = loadScenarioText(
      FILE(org('Acme') + org('Globex').replace('level: 0', `level: 0${warm}`)),
      'tenants.yaml',
    );
    if (!r.ok) throw new Error(r.diagnostics.map(formatDiagnostic).join('\n'));
    expect(r.model.thermal?.objects.map((o) => o.name)).toEqual(['Radiator']);
  });

  it('lets organisations repeat like any item list', () => {
    const r = loadScenarioText(FILE(org('Tenant ${i}', '\n    repeat: 3', 'Site ${i}')), 'tenants.yaml');
    if (!r.ok) throw new Error(r.diagnostics.map(formatDiagnostic).join('\n'));
    expect(r.model.organisations?.map((o) => o.name)).toEqual(['Tenant 0', 'Tenant 1', 'Tenant 2']);
  });

  it('loads the shipped two-tenants scenario', () => {
    const r = loadScenarioFile(new URL('../../scenarios/two-tenants.yaml', import.meta.url).pathname);
    if (!r.ok) throw new Error(r.diagnostics.map(formatDiagnostic).join('\n'));
    expect(r.model.organisations?.map((o) => [o.name, o.siteIds.length, o.userIds.length, o.clientIds.length])).toEqual(
      [
        ['Acme', 1, 1, 1],
        ['Globex', 1, 1, 1],
      ],
    );
  });
});
