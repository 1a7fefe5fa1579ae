import { didYouMean } from '../../core/suggest.js';
import { invalidRequest } from '../errors.js';

/**
 * Unknown keys in a reporting or stats body are refused, not ignored: before this, a misspelt
 * filter (`filter.room` for `filter.rooms`, `filter.clients`) answered 200 with the whole
 * organisation, which looks like a correct answer to the wrong question (issue 27). The 400
 * names the key by its path and the closest known key when it is a plausible typo.
 */
export function refuseUnknownKeys(o: Record<string, unknown>, known: readonly string[], path: string): void {
  for (const key of Object.keys(o)) {
    if (known.includes(key)) continue;
    const at = path === '' ? key : `${path}.${key}`;
    throw invalidRequest(`unknown key ${at}${didYouMean(key, known)} (known here: ${known.join(', ')})`);
  }
}
