/** Pure rules of teams: slugs. */

/** A slug from a team name: "FC Köln 1948" → "fc-koln-1948". */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/-+$/, '');
  return slug || 'team';
}

export const MAX_SLUG_LENGTH = 60;
/** Tries at a free slug made from a name before giving up. */
export const SLUG_ATTEMPTS = 5;

/** `base` with a suffix, cut so the whole stays within the slug's length: "team" → "team-3fa9". */
export function withSlugSuffix(base: string, suffix: string): string {
  return `${base.slice(0, MAX_SLUG_LENGTH - suffix.length - 1).replace(/-+$/, '')}-${suffix}`;
}
