import type { TSchema } from '@sinclair/typebox';
import { AuditEntry } from './audit.js';
import { Collectible, CreateCollectibleBody, PublicCollectible, UpdateCollectibleBody } from './collectibles.js';
import { LedgerKind, PackActionName, PackStatus, PurchaseStatus, Rarity, TeamRole, UserRole } from './enums.js';
import {
  AddCollectibleAction,
  AdminPack,
  AdminPackSummary,
  ArchiveAction,
  CreatePackBody,
  PackActionBody,
  PackOdds,
  PoolEntry,
  PublicPack,
  PublishAction,
  RemoveCollectibleAction,
  RestoreAction,
  UpdatePackBody,
} from './packs.js';
import {
  CompletedPurchase,
  CompletePurchaseBody,
  DrawStep,
  FairnessPoolEntry,
  FairnessProof,
  LockerRoomTotals,
  OpenedItem,
  OpenPackBody,
  OpenResult,
  Pull,
  Purchase,
  UserPack,
} from './purchases.js';
import { AddMemberBody, CreateTeamBody, Team, TeamAdmin, UpdateMemberBody } from './teams.js';
import { AdminUser, CurrentUser, UpdateCurrentUserBody } from './user.js';
import { LedgerEntry, Wallet, WalletAdjustmentBody } from './wallets.js';

/**
 * Every named schema, registered once with `addSchema` (app.ts) and referenced by `$id`: the
 * OpenAPI document lists them under components.schemas, so generated clients get named types.
 * (The error envelope's are registered by the errors plugin, which every route's errors use.)
 */
export const SHARED_SCHEMAS: TSchema[] = [
  PackStatus,
  PackActionName,
  Rarity,
  TeamRole,
  UserRole,
  PublicCollectible,
  Collectible,
  CreateCollectibleBody,
  UpdateCollectibleBody,
  PublicPack,
  PoolEntry,
  PackOdds,
  AdminPack,
  AdminPackSummary,
  CreatePackBody,
  UpdatePackBody,
  PublishAction,
  ArchiveAction,
  RestoreAction,
  AddCollectibleAction,
  RemoveCollectibleAction,
  PackActionBody,
  Team,
  TeamAdmin,
  CreateTeamBody,
  AddMemberBody,
  UpdateMemberBody,
  CurrentUser,
  UpdateCurrentUserBody,
  AdminUser,
  AuditEntry,
  PurchaseStatus,
  LedgerKind,
  Wallet,
  LedgerEntry,
  WalletAdjustmentBody,
  Purchase,
  UserPack,
  CompletedPurchase,
  CompletePurchaseBody,
  OpenPackBody,
  FairnessPoolEntry,
  DrawStep,
  FairnessProof,
  OpenedItem,
  OpenResult,
  LockerRoomTotals,
  Pull,
];
