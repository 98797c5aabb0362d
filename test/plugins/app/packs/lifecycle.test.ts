import t from 'tap';
import {
  allowedFrom,
  nextStatus,
  PACK_ACTIONS,
  PACK_STATUSES,
  type PackAction,
  type PackStatus,
} from '../../../../plugins/app/packs/lifecycle.js';

// Every cell of the 5 actions x 3 states table (docs/packs.md), written out by hand.
const EXPECTED: Record<PackAction, Record<PackStatus, PackStatus | undefined>> = {
  publish: { draft: 'active', active: undefined, archived: undefined },
  archive: { draft: 'archived', active: 'archived', archived: undefined },
  restore: { draft: undefined, active: undefined, archived: 'draft' },
  addCollectible: { draft: 'draft', active: undefined, archived: undefined },
  removeCollectible: { draft: 'draft', active: undefined, archived: undefined },
};

t.test('the transition table, cell by cell', async (t) => {
  let cells = 0;
  for (const action of PACK_ACTIONS) {
    for (const status of PACK_STATUSES) {
      t.equal(nextStatus(status, action), EXPECTED[action][status], `${action} from ${status}`);
      cells++;
    }
  }
  t.equal(cells, 15);
});

t.test('allowedFrom lists the starting states of an action', async (t) => {
  t.same(allowedFrom('publish'), ['draft']);
  t.same(allowedFrom('archive'), ['draft', 'active']);
  t.same(allowedFrom('restore'), ['archived']);
  t.same(allowedFrom('addCollectible'), ['draft']);
});
