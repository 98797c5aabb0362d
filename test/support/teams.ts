import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../../app.js';
import { bearer, tokenFor } from './app.js';
import { ADMIN, type AuditEntry, expectStatus } from './catalog.js';

/**
 * Team fixtures made through the API (POST /api/admin/teams, .../members), so tests exercise the
 * same paths as a real admin. Users exist from their first authenticated request: `signIn`
 * provisions one and answers its token.
 */

export interface TeamView {
  id: string;
  name: string;
  slug: string;
  createdAt: string;
}

export interface TeamAdminView {
  teamId: string;
  userId: string;
  role: 'owner' | 'editor' | 'viewer';
  createdAt: string;
  addedBy: string;
}

export type TeamRoleName = TeamAdminView['role'];

export const TEAM_KEYS = ['createdAt', 'id', 'name', 'slug'];
export const TEAM_ADMIN_KEYS = ['addedBy', 'createdAt', 'role', 'teamId', 'userId'];
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Json = Record<string, unknown>;

/** Any request, with the caller's token (none when null). */
export function call(
  app: App,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  token: string | null,
  options: { payload?: unknown; query?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return app.inject({
    method,
    url,
    headers: token === null ? {} : bearer(token),
    ...(options.query ? { query: options.query } : {}),
    ...(options.payload !== undefined ? { payload: options.payload as Json } : {}),
  });
}

/** Provisions the user `sub` (its first authenticated request) and answers its token. */
export async function signIn(app: App, sub: string, claims: Json = {}): Promise<string> {
  const token = tokenFor(sub, claims);
  const res = await call(app, 'GET', '/api/user', token);
  expectStatus(res, 200, `sign in ${sub}`);
  return token;
}

/** The caller's team roles, as GET /api/user answers them. */
export async function teamsOf(app: App, token: string): Promise<Array<{ teamId: string; role: TeamRoleName }>> {
  const res = await call(app, 'GET', '/api/user', token);
  expectStatus(res, 200, 'GET /api/user');
  return res.json().data.teams;
}

let teamCounter = 0;

/** A team created by the platform admin; `ownerUserId` must have signed in. */
export async function createTeam(app: App, body: Json = {}, token: string = ADMIN): Promise<TeamView> {
  teamCounter++;
  const res = await call(app, 'POST', '/api/admin/teams', token, {
    payload: { name: `Team ${process.pid} ${teamCounter}`, ...body },
  });
  expectStatus(res, 201, 'create team');
  return res.json().data;
}

export const membersUrl = (teamId: string, userId?: string) =>
  `/api/admin/teams/${encodeURIComponent(teamId)}/members${userId === undefined ? '' : `/${encodeURIComponent(userId)}`}`;

export function addMemberRequest(
  app: App,
  teamId: string,
  body: Json,
  token: string | null = ADMIN,
): Promise<LightMyRequestResponse> {
  return call(app, 'POST', membersUrl(teamId), token, { payload: body });
}

/** Adds a member (must answer 201); the TeamAdmin. */
export async function addMember(
  app: App,
  teamId: string,
  userId: string,
  role: TeamRoleName,
  token: string = ADMIN,
): Promise<TeamAdminView> {
  const res = await addMemberRequest(app, teamId, { userId, role }, token);
  expectStatus(res, 201, `add ${userId} as ${role}`);
  return res.json().data;
}

export function patchMember(app: App, teamId: string, userId: string, body: Json, token: string | null = ADMIN) {
  return call(app, 'PATCH', membersUrl(teamId, userId), token, { payload: body });
}

export function deleteMember(app: App, teamId: string, userId: string, token: string | null = ADMIN) {
  return call(app, 'DELETE', membersUrl(teamId, userId), token);
}

/** Every member of the team as the platform admin sees them (all pages), sorted by userId. */
export async function membersOf(app: App, teamId: string): Promise<TeamAdminView[]> {
  const members: TeamAdminView[] = [];
  let cursor: string | null = null;
  do {
    const res: LightMyRequestResponse = await call(app, 'GET', membersUrl(teamId), ADMIN, {
      query: { limit: '200', ...(cursor ? { cursor } : {}) },
    });
    expectStatus(res, 200, 'list members');
    members.push(...res.json().data);
    cursor = res.json().nextCursor;
  } while (cursor);
  return members.sort((a, b) => a.userId.localeCompare(b.userId));
}

/** `{ userId: role }` of the team's members: a compact view of the stored rows. */
export async function rolesOf(app: App, teamId: string): Promise<Record<string, TeamRoleName>> {
  return Object.fromEntries((await membersOf(app, teamId)).map((member) => [member.userId, member.role]));
}

/** The audit entries of a team (all pages, newest first), read by `token`. */
export async function teamAudit(app: App, teamId: string, token: string = ADMIN): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let cursor: string | null = null;
  do {
    const res: LightMyRequestResponse = await call(app, 'GET', '/api/admin/audit-log', token, {
      query: { teamId, limit: '200', ...(cursor ? { cursor } : {}) },
    });
    expectStatus(res, 200, 'team audit log');
    entries.push(...res.json().data);
    cursor = res.json().nextCursor;
  } while (cursor);
  return entries;
}

export interface StaffedTeam {
  team: TeamView;
  owner: string;
  editor: string;
  viewer: string;
}

/**
 * A team with an owner, an editor and a viewer (user ids `<prefix>-owner` ...), each signed in;
 * the answer holds their tokens.
 */
export async function staffedTeam(app: App, prefix: string): Promise<StaffedTeam> {
  const owner = await signIn(app, `${prefix}-owner`);
  const editor = await signIn(app, `${prefix}-editor`);
  const viewer = await signIn(app, `${prefix}-viewer`);
  const team = await createTeam(app, {
    name: `${prefix} team`,
    slug: `${prefix}-team`,
    ownerUserId: `${prefix}-owner`,
  });
  await addMember(app, team.id, `${prefix}-editor`, 'editor');
  await addMember(app, team.id, `${prefix}-viewer`, 'viewer');
  return { team, owner, editor, viewer };
}

/** The error code of a failed response (undefined for a success). */
export const codeOf = (res: LightMyRequestResponse): string | undefined =>
  res.statusCode >= 400 ? res.json().error?.code : undefined;

/** The paths named by a 400's details. */
export const detailPaths = (res: LightMyRequestResponse): string[] =>
  ((res.json().error?.details ?? []) as Array<{ path: string }>).map((detail) => detail.path);
