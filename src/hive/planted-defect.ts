/**
 * TEST-ONLY: a defect planted in the product on purpose, to show that `occusim explore` finds
 * a real one (issue #30 item 5; test/explore/planted-defect.slow.test.ts; docs/explore.md).
 * Off unless the process is started with `OCCUSIM_PLANTED_DEFECT=restart-in-outage`; read
 * here only, once. When on, a hive whose uplink is down while the broker restarts takes the
 * restart for an acknowledgement of its oldest buffered batch and forgets it: the batch's
 * packets are lost and no counter of the delivery ledger says so.
 */
export const PLANTED_DEFECT_ENV = 'OCCUSIM_PLANTED_DEFECT';
export const PLANTED_DEFECT = 'restart-in-outage';

export const restartInOutageDropsBatch: boolean = process.env[PLANTED_DEFECT_ENV] === PLANTED_DEFECT;
