import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WebhookErrorCodes } from '../../src/webhooks/errors.js';

describe('webhook error codes', () => {
  it('are every one documented in docs/webhooks.md', () => {
    const doc = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
    const undocumented = Object.values(WebhookErrorCodes).filter((c) => !doc.includes(`\`${c}\``));
    expect(undocumented).toEqual([]);
  });
});
