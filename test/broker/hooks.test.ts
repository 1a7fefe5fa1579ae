import { describe, expect, it } from 'vitest';
import { clientIdRefusal } from '../../src/broker/hooks.js';

describe('broker hooks: a login fixes its client id', () => {
  const hive = { role: 'hive', serial: 'HV0000000001' } as const;
  const cloud = { role: 'cloud', username: 'occusim-cloud' } as const;

  it('lets a hive connect as hive-{serial}, or with an id the broker assigns', () => {
    expect(clientIdRefusal(hive, 'hive-HV0000000001', false)).toBeNull();
    expect(clientIdRefusal(hive, 'aedes_Zx81', true)).toBeNull();
  });

  it("refuses a hive any other id: another hive's, the cloud's, or one of its own choosing", () => {
    for (const id of ['hive-HV0000000002', 'occusim-cloud-1a2b', 'HV0000000001', 'hive-HV00000000011', '']) {
      expect(clientIdRefusal(hive, id, false)).toMatch(/must connect with client id hive-HV0000000001/);
    }
  });

  it('keeps hive-… ids from every login that is not that hive', () => {
    expect(clientIdRefusal(cloud, 'hive-HV0000000001', false)).toMatch(/reserved for hives/);
    expect(clientIdRefusal(cloud, 'occusim-cloud-1a2b', false)).toBeNull();
  });
});
