import t from 'tap';
import { AppError, NotFoundError } from '../../../../plugins/app/errors.js';
import {
  ADMIN_ACTIONS,
  type AdminAction,
  authorize,
  hasAdminAccess,
  isAllowed,
  type Principal,
  requireAdminAccess,
  TEAM_ROLES,
  type TeamRole,
} from '../../../../plugins/app/auth/policy.js';

/**
 * The authorization matrix of plugins/app/auth/policy.ts as a table written out by
 * hand from the matrix comment, not computed from the code: every principal × every action × a
 * resource of team T, of team U, and of the platform (teamId null).
 */

const T = 'team-t';
const U = 'team-u';

const principal = (id: string, isAdmin: boolean, roles: Array<[string, TeamRole]> = []): Principal => ({
  id,
  isAdmin,
  teamRoles: new Map(roles),
});

const PRINCIPALS = {
  'platform admin': principal('root', true),
  'owner of T': principal('olive', false, [[T, 'owner']]),
  'editor of T': principal('ed', false, [[T, 'editor']]),
  'viewer of T': principal('vi', false, [[T, 'viewer']]),
  'owner of U (another team)': principal('uma', false, [[U, 'owner']]),
  'no role': principal('fan', false),
} as const;
type PrincipalName = keyof typeof PRINCIPALS;

type Resource = 'T' | 'U' | 'platform';
const RESOURCES: Record<Resource, { teamId: string | null }> = {
  T: { teamId: T },
  U: { teamId: U },
  platform: { teamId: null },
};

// [T, U, platform]
const Y = true;
const N = false;
type Row = Record<AdminAction, readonly [boolean, boolean, boolean]>;

/** Written by hand from the comment in policy.ts. */
const EXPECTED: Record<PrincipalName, Row> = {
  'platform admin': {
    'team:create': [Y, Y, Y],
    'members:read': [Y, Y, Y],
    'members:manage': [Y, Y, Y],
    'catalog:read': [Y, Y, Y],
    'catalog:write': [Y, Y, Y],
    'audit:read': [Y, Y, Y],
    'webhooks:manage': [Y, Y, Y],
  },
  'owner of T': {
    'team:create': [N, N, N],
    'members:read': [Y, N, N],
    'members:manage': [Y, N, N],
    'catalog:read': [Y, N, N],
    'catalog:write': [Y, N, N],
    'audit:read': [Y, N, N],
    'webhooks:manage': [Y, N, N],
  },
  'editor of T': {
    'team:create': [N, N, N],
    'members:read': [Y, N, N],
    'members:manage': [N, N, N],
    'catalog:read': [Y, N, N],
    'catalog:write': [Y, N, N],
    'audit:read': [Y, N, N],
    'webhooks:manage': [N, N, N],
  },
  'viewer of T': {
    'team:create': [N, N, N],
    'members:read': [Y, N, N],
    'members:manage': [N, N, N],
    'catalog:read': [Y, N, N],
    'catalog:write': [N, N, N],
    'audit:read': [Y, N, N],
    'webhooks:manage': [N, N, N],
  },
  'owner of U (another team)': {
    'team:create': [N, N, N],
    'members:read': [N, Y, N],
    'members:manage': [N, Y, N],
    'catalog:read': [N, Y, N],
    'catalog:write': [N, Y, N],
    'audit:read': [N, Y, N],
    'webhooks:manage': [N, Y, N],
  },
  'no role': {
    'team:create': [N, N, N],
    'members:read': [N, N, N],
    'members:manage': [N, N, N],
    'catalog:read': [N, N, N],
    'catalog:write': [N, N, N],
    'audit:read': [N, N, N],
    'webhooks:manage': [N, N, N],
  },
};

/** The read action whose denial hides a resource (policy.ts: "a resource the caller may not even read"). */
const READ_OF: Record<AdminAction, AdminAction> = {
  'team:create': 'catalog:read',
  'members:read': 'members:read',
  'members:manage': 'members:read',
  'catalog:read': 'catalog:read',
  'catalog:write': 'catalog:read',
  'audit:read': 'audit:read',
  'webhooks:manage': 'catalog:read',
};

const RESOURCE_INDEX: Record<Resource, 0 | 1 | 2> = { T: 0, U: 1, platform: 2 };
const expected = (who: PrincipalName, action: AdminAction, resource: Resource): boolean =>
  EXPECTED[who][action][RESOURCE_INDEX[resource]];

t.test('the table covers every action and every role', async (t) => {
  t.same(
    [...ADMIN_ACTIONS].sort(),
    Object.keys(EXPECTED['platform admin']).sort(),
    'ADMIN_ACTIONS are the actions of the table',
  );
  t.same([...TEAM_ROLES].sort(), ['editor', 'owner', 'viewer'], 'three team roles');
});

t.test('isAllowed: every principal × action × resource', async (t) => {
  let cells = 0;
  for (const [who, p] of Object.entries(PRINCIPALS) as Array<[PrincipalName, Principal]>) {
    for (const action of ADMIN_ACTIONS) {
      for (const resource of Object.keys(RESOURCES) as Resource[]) {
        const want = expected(who, action, resource);
        t.equal(
          isAllowed(p, action, RESOURCES[resource]),
          want,
          `${who} ${want ? 'may' : 'may not'} ${action} on a ${resource} resource`,
        );
        cells++;
      }
    }
  }
  t.equal(cells, 6 * 7 * 3, 'every cell checked');
});

t.test('isAllowed: a role in one team says nothing about another', async (t) => {
  const mixed = principal('mix', false, [
    [T, 'owner'],
    [U, 'viewer'],
  ]);
  t.ok(isAllowed(mixed, 'members:manage', { teamId: T }));
  t.notOk(isAllowed(mixed, 'members:manage', { teamId: U }), 'viewer of U: no member management there');
  t.ok(isAllowed(mixed, 'catalog:read', { teamId: U }));
  t.notOk(isAllowed(mixed, 'catalog:write', { teamId: U }), 'viewer of U: no catalog writes there');
  t.notOk(isAllowed(mixed, 'catalog:read', { teamId: 'team-x' }), 'no role in X');
  t.notOk(isAllowed(mixed, 'catalog:read', { teamId: null }), 'platform resources are the platform admins’ alone');
  t.notOk(isAllowed(mixed, 'team:create', { teamId: null }), 'only platform admins create teams');
  t.notOk(
    isAllowed(principal('o', false, [[T, 'owner']]), 'catalog:read', { teamId: T.toUpperCase() }),
    'team ids match exactly',
  );
  // A platform admin who also holds a small team role keeps every power.
  const adminViewer = principal('av', true, [[T, 'viewer']]);
  for (const action of ADMIN_ACTIONS) {
    t.ok(isAllowed(adminViewer, action, { teamId: T }), `platform admin and viewer of T: ${action} on T`);
    t.ok(isAllowed(adminViewer, action, { teamId: null }), `platform admin and viewer of T: ${action} on the platform`);
  }
});

t.test('hasAdminAccess and requireAdminAccess', async (t) => {
  const want: Record<PrincipalName, boolean> = {
    'platform admin': true,
    'owner of T': true,
    'editor of T': true,
    'viewer of T': true,
    'owner of U (another team)': true,
    'no role': false,
  };
  for (const [who, p] of Object.entries(PRINCIPALS) as Array<[PrincipalName, Principal]>) {
    t.equal(hasAdminAccess(p), want[who], `hasAdminAccess: ${who}`);
    if (want[who]) {
      t.doesNotThrow(() => requireAdminAccess(p), `requireAdminAccess lets ${who} through`);
    } else {
      t.throws(
        () => requireAdminAccess(p),
        { statusCode: 403, code: 'forbidden' },
        `requireAdminAccess refuses ${who} with 403`,
      );
    }
  }
});

t.test('authorize: allowed, 403 when the caller can read the resource, else the given notFound', async (t) => {
  const sentinel = () => new NotFoundError('sentinel_not_found', 'hidden');
  for (const [who, p] of Object.entries(PRINCIPALS) as Array<[PrincipalName, Principal]>) {
    for (const action of ADMIN_ACTIONS) {
      for (const resource of Object.keys(RESOURCES) as Resource[]) {
        const label = `${who}: ${action} on a ${resource} resource`;
        let calls = 0;
        const notFound = () => {
          calls++;
          return sentinel();
        };
        let thrown: unknown;
        try {
          authorize(p, action, RESOURCES[resource], notFound);
        } catch (error) {
          thrown = error;
        }
        if (expected(who, action, resource)) {
          t.equal(thrown, undefined, `${label}: allowed`);
          t.equal(calls, 0, `${label}: notFound not built`);
        } else if (expected(who, READ_OF[action], resource)) {
          t.ok(thrown instanceof AppError, `${label}: an AppError`);
          t.match(thrown, { statusCode: 403, code: 'forbidden' }, `${label}: 403 (the caller can see it)`);
        } else {
          t.match(
            thrown,
            { statusCode: 404, code: 'sentinel_not_found' },
            `${label}: the given notFound (existence hidden)`,
          );
        }
      }
    }
  }
});

t.test('authorize: the cases the services rely on, spelled out', async (t) => {
  const notFound = () => new NotFoundError('team_not_found', 'No team with this id.');
  const {
    'editor of T': editor,
    'viewer of T': viewer,
    'owner of U (another team)': other,
    'owner of T': owner,
  } = PRINCIPALS;
  t.throws(
    () => authorize(editor, 'members:manage', { teamId: T }, notFound),
    { statusCode: 403, code: 'forbidden' },
    'editor managing members of its team: 403',
  );
  t.throws(
    () => authorize(viewer, 'catalog:write', { teamId: T }, notFound),
    { statusCode: 403, code: 'forbidden' },
    'viewer writing its team’s catalog: 403',
  );
  t.throws(
    () => authorize(other, 'members:read', { teamId: T }, notFound),
    { statusCode: 404, code: 'team_not_found' },
    'another team’s members: hidden',
  );
  t.throws(
    () => authorize(other, 'catalog:write', { teamId: T }, notFound),
    { statusCode: 404, code: 'team_not_found' },
    'another team’s catalog: hidden',
  );
  t.throws(
    () => authorize(owner, 'catalog:read', { teamId: null }, notFound),
    { statusCode: 404, code: 'team_not_found' },
    'a platform resource read by an owner: hidden',
  );
  t.doesNotThrow(() => authorize(owner, 'members:manage', { teamId: T }, notFound), 'owner manages its members');
  t.doesNotThrow(
    () => authorize(PRINCIPALS['platform admin'], 'team:create', { teamId: null }, notFound),
    'platform admin creates teams',
  );
});
