/** What a reference server of bench/reference-server.ts is built from (kept apart so that it loads nothing else). */
export const REFERENCE_KINDS = ['node', 'fastify', 'fastify-rate-limit', 'fastify-many-routes'] as const;
export type ReferenceKind = (typeof REFERENCE_KINDS)[number];
