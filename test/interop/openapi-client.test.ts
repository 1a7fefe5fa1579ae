import SwaggerParser from '@apidevtools/swagger-parser';
import { createConfig, lint } from '@redocly/openapi-core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import ts from 'typescript';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callEveryRoute } from './openapi/every-route.js';
import { serveQuickstart, type ServedQuickstart } from './served-quickstart.js';

/**
 * Other people's tools judge the served OpenAPI document (issue 27, item 2): Swagger Parser
 * validates it against the OpenAPI 3.1 schema, Redocly lints it with its recommended rules,
 * openapi-typescript turns it into the `paths` type that `openapi/occusim-api.d.ts` holds
 * (regenerate it with `npx vitest run test/interop/openapi-client.test.ts -u` after a
 * route-schemas.ts change), `tsc` compiles a program written against that type alone
 * (`openapi/every-route.ts`, openapi-fetch), and that program calls every route of a served
 * quickstart, each answer held against the response schema the document gives for its status.
 */
const here = new URL('./', import.meta.url).pathname;
type Operation = {
  operationId: string;
  responses: Record<string, { content?: { 'application/json'?: { schema: object } } }>;
};
type Document = { paths: Record<string, Record<string, Operation>> };

let served: ServedQuickstart;
let doc: Document;
beforeAll(async () => {
  served = await serveQuickstart();
  doc = (await (await fetch(`${served.api}/api/openapi.json`)).json()) as Document;
}, 120_000);
afterAll(async () => {
  await served?.stop();
});

describe('the served OpenAPI document, judged by third-party tools', () => {
  it('passes Swagger Parser validation and Redocly lint (recommended) with no problem', async () => {
    // Swagger Parser dereferences in place: it gets a copy.
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
    const file = join(mkdtempSync(join(tmpdir(), 'occusim-openapi-')), 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const problems = await lint({ ref: file, config: await createConfig({ extends: ['recommended'] }) });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`)).toEqual(
      [],
    );
  });

  it('generates, with openapi-typescript, the client types committed beside this test', async () => {
    const generated = COMMENT_HEADER + astToString(await openapiTS(doc as never));
    await expect(generated).toMatchFileSnapshot('./openapi/occusim-api.d.ts');
  });

  it('compiles, with tsc in strict mode, a program that calls every route through those types', () => {
    const program = ts.createProgram([join(here, 'openapi/every-route.ts')], {
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ['node'],
      skipLibCheck: true,
    });
    const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(errors).toEqual([]);
  });

  it('answers every operation of the document with a documented status and a body its schema accepts', async () => {
    const m = served.model;
    const room = m.rooms[0];
    if (!room) throw new Error('quickstart has no room');
    const zone = m.sites[0]?.timezone ?? 'UTC';
    const day = DateTime.fromMillis(m.startMs, { zone });
    const log = await callEveryRoute({
      baseUrl: served.api,
      audience: served.audience,
      client: served.client,
      user: served.user,
      roomId: room.id,
      floorId: room.floorId,
      date: day.toISODate() as string,
      nextDate: day.plus({ days: 1 }).toISODate() as string,
    });
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const met = new Set<string>();
    for (const x of log) {
      const op = doc.paths[x.path]?.[x.method];
      const where = `${x.method.toUpperCase()} ${x.path} → ${x.status} ${JSON.stringify(x.body)}`;
      expect(op?.operationId, where).toBe(x.operation);
      const response = op?.responses[String(x.status)];
      expect(response, `${where}: status not documented`).toBeDefined();
      const schema = response?.content?.['application/json']?.schema;
      if (schema) {
        expect(x.contentType ?? 'no content-type', where).toMatch(/^application\/json/);
        const validate = ajv.compile(schema);
        expect(validate(x.body) ? [] : validate.errors, where).toEqual([]);
      }
      met.add(`${x.operation} ${x.status}`);
    }
    // Every documented status was met, except 429: provoking the login rate limit would lock
    // the client out for the rest of the file (test/api/auth covers it); and 500: client
    // management's store-failure codes need a store that refuses a step
    // (test/api/clients/client-routes.test.ts makes SQLite refuse with triggers).
    const documented = Object.values(doc.paths)
      .flatMap((ops) => Object.values(ops))
      .flatMap((op) => Object.keys(op.responses).map((s) => `${op.operationId} ${s}`))
      .filter((k) => !k.endsWith(' 429') && !k.endsWith(' 500'));
    expect([...met].sort()).toEqual(documented.sort());
  });
});
