/** Pure authorization rules, kept apart from HTTP so they can be tested alone. */

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

/** Subjects become user ids, which are path ids of 1–128 characters. */
export const MAX_SUBJECT_LENGTH = 128;
/** Control, format (U+FEFF, bidi overrides, zero-width), private-use and unassigned characters, line and paragraph separators. */
const UNPRINTABLE = /[\p{C}\p{Zl}\p{Zp}]/u;

/**
 * Why a token's `sub` cannot be a user id, if it cannot. A subject is an identity: it must read
 * the same to people, to PostgreSQL and to every client, so anything invisible or malformed in it
 * is refused rather than cleaned (cleaning would map two subjects onto one user).
 */
export function subjectProblem(sub: unknown): string | undefined {
  if (typeof sub !== 'string' || sub.length === 0) return 'the subject is missing or not a string';
  if (sub.length > MAX_SUBJECT_LENGTH) return `the subject is longer than ${MAX_SUBJECT_LENGTH} characters`;
  if (!sub.isWellFormed()) return 'the subject holds a lone surrogate';
  if (UNPRINTABLE.test(sub))
    return 'the subject holds an invisible character (control, format such as U+FEFF, or unassigned)';
  if (sub.trim() !== sub) return 'the subject starts or ends with white space';
  return undefined;
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
