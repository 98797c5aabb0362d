/** Pure authorization rules (DESIGN.md §5), kept apart from HTTP so they can be tested alone. */

export interface AdminPolicy {
  adminUserIds: ReadonlySet<string>;
  adminClaim?: { name: string; value: string };
}

/** A claim by name; a dotted name reaches into objects (`realm_access.roles`). */
export function readClaim(claims: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  let value: unknown = claims;
  for (const part of name.split('.')) {
    if (!value || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A claim matches `name=value` when it equals the value or, for an array claim, contains it. */
export function claimMatches(claims: Record<string, unknown>, claim: { name: string; value: string }): boolean {
  const value = readClaim(claims, claim.name);
  if (Array.isArray(value)) return value.some((item) => String(item) === claim.value);
  return value !== undefined && value !== null && String(value) === claim.value;
}

/** Platform admin: listed in ADMIN_USER_IDS, or role admin in our users table, or the admin claim. */
export function isPlatformAdmin(
  subject: { id: string; role: string; claims: Record<string, unknown> },
  policy: AdminPolicy,
): boolean {
  return (
    policy.adminUserIds.has(subject.id) ||
    subject.role === 'admin' ||
    (policy.adminClaim !== undefined && claimMatches(subject.claims, policy.adminClaim))
  );
}

export const MAX_DISPLAY_NAME_LENGTH = 100;

/** Control characters removed (PostgreSQL text cannot hold NUL), trimmed, cut to 100 code points. */
export function cleanDisplayName(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  const cleaned = value.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return Array.from(cleaned).slice(0, MAX_DISPLAY_NAME_LENGTH).join('').trim();
}

/** A display name from the usual identity-provider claims, else the subject itself. */
export function displayNameFromClaims(sub: string, claims: Record<string, unknown>): string {
  for (const name of ['name', 'preferred_username', 'nickname', 'email']) {
    const value = claims[name];
    if (typeof value === 'string') {
      const cleaned = cleanDisplayName(value);
      if (cleaned !== '') return cleaned;
    }
  }
  return sub;
}
