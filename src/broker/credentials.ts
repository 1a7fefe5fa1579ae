import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError, ErrorCodes } from '../core/errors.js';
import { isValidSerial } from '../core/topics.js';

/** Who an authenticated connection is; the ACL decides on this alone. */
export type Principal =
  { readonly role: 'hive'; readonly serial: string } | { readonly role: 'cloud'; readonly username: string };

interface Account {
  readonly principal: Principal;
  /** SHA-256 of the password: fixed length, so timingSafeEqual never sees unequal lengths. */
  readonly passwordHash: Buffer;
}

/** Login table of the embedded broker: hives log in with serial + password, services by name. */
export interface CredentialTable {
  /** The principal for a username/password pair, or null. Constant time in the password. */
  verify(username: string | undefined, password: Buffer | undefined): Principal | null;
}

const sha256 = (bytes: Buffer | string): Buffer => createHash('sha256').update(bytes).digest();

/** Compared against when the username is unknown, so a miss costs the same as a wrong password. */
const DUMMY_HASH = sha256('occusim:no-such-account');

/**
 * Builds the table. A serial must be a valid topic level, and a name may not be both a hive
 * and a service (the ACL would be ambiguous).
 */
export function buildCredentialTable(
  hives: ReadonlyArray<{ serial: string; password: string }>,
  services: ReadonlyArray<{ username: string; password: string; role: 'cloud' }>,
): CredentialTable {
  const accounts = new Map<string, Account>();
  const add = (username: string, password: string, principal: Principal): void => {
    if (accounts.has(username)) {
      throw new AppError(ErrorCodes.BROKER_FAILED, `broker: duplicate login name ${JSON.stringify(username)}`);
    }
    accounts.set(username, { principal, passwordHash: sha256(password) });
  };
  for (const h of hives) {
    if (!isValidSerial(h.serial)) {
      throw new AppError(ErrorCodes.BROKER_FAILED, `broker: invalid hive serial ${JSON.stringify(h.serial)}`);
    }
    add(h.serial, h.password, { role: 'hive', serial: h.serial });
  }
  for (const s of services) add(s.username, s.password, { role: s.role, username: s.username });
  return { verify: (username, password) => verifyLogin(accounts, username, password) };
}

function verifyLogin(
  accounts: ReadonlyMap<string, Account>,
  username: string | undefined,
  password: Buffer | undefined,
): Principal | null {
  const account = username === undefined ? undefined : accounts.get(username);
  const given = sha256(password ?? Buffer.alloc(0));
  const equal = timingSafeEqual(given, account?.passwordHash ?? DUMMY_HASH);
  // A missing password never matches, even an account whose password is the empty string.
  return account !== undefined && password !== undefined && equal ? account.principal : null;
}
