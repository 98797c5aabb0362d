import type { App } from '../../app.js';
import { bearer } from './app.js';
import { ADMIN, expectStatus } from './catalog.js';

/** Rewards and grants through the admin API. */

type Json = Record<string, unknown>;

export interface RewardView {
  id: string;
  teamId: string | null;
  name: string;
  coins: number;
  packs: { packId: string; count: number }[];
  collectibles: { collectibleId: string; count: number }[];
  createdAt: string;
}

export interface GrantView {
  id: string;
  sourceKey: string;
  userId: string;
  rewardId: string;
  status: 'granted' | 'revoked';
  coinsTakenBack: number;
  coinsUncollected: number;
  packsTakenBack: number;
  packsKept: number;
  collectiblesKept: number;
  serials: { collectibleId: string; serialNumber: number; serverSeed: string; serverSeedHash: string }[];
  [key: string]: unknown;
}

export function createRewardRequest(app: App, body: Json, token: string = ADMIN) {
  return app.inject({
    method: 'POST',
    url: '/api/admin/rewards',
    headers: bearer(token),
    payload: { name: 'Reward', ...body },
  });
}

export async function createReward(app: App, body: Json, token: string = ADMIN): Promise<RewardView> {
  const res = await createRewardRequest(app, body, token);
  expectStatus(res, 201, 'create reward');
  return res.json().data;
}

export function adminGrantRequest(app: App, rewardId: string, body: Json, token: string = ADMIN) {
  return app.inject({
    method: 'POST',
    url: `/api/admin/rewards/${encodeURIComponent(rewardId)}/grants`,
    headers: bearer(token),
    payload: { reason: 'test grant', ...body },
  });
}

export function revokeRequest(app: App, grantId: string, body: Json = { reason: 'test revoke' }, token = ADMIN) {
  return app.inject({
    method: 'POST',
    url: `/api/admin/grants/${encodeURIComponent(grantId)}/revoke`,
    headers: bearer(token),
    payload: body,
  });
}
