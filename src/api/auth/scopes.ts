/** Scopes on access tokens: read|write|delete × spaces|rooms|sensors|hives (spec §4.5 rule 2). */
export const ACTIONS = ['read', 'write', 'delete'] as const;
export const RESOURCES = ['spaces', 'rooms', 'sensors', 'hives'] as const;
export type Action = (typeof ACTIONS)[number];
export type Resource = (typeof RESOURCES)[number];
export type Scope = `${Action}:${Resource}`;

export const ALL_SCOPES: readonly Scope[] = ACTIONS.flatMap((a) => RESOURCES.map((r) => `${a}:${r}` as Scope));

export function parseScopes(text: string): Set<string> {
  return new Set(text.split(/\s+/).filter((s) => s.length > 0));
}

export function formatScopes(scopes: Iterable<string>): string {
  return [...scopes].join(' ');
}
