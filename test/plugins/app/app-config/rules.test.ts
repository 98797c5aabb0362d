import t from 'tap';
import { DEFAULT_APP_CONFIG, isCurrentEdit, settingsOf, supersedes } from '../../../../plugins/app/app-config/rules.js';

t.test('the default supports every app release and turns nothing on', async (t) => {
  t.same(DEFAULT_APP_CONFIG, {
    minimumVersions: { ios: '0', android: '0' },
    featureFlags: {},
    supportLinks: {},
    version: 0,
    updatedAt: null,
  });
  t.same(settingsOf(DEFAULT_APP_CONFIG), {
    minimumVersions: { ios: '0', android: '0' },
    featureFlags: {},
    supportLinks: {},
  });
});

t.test('an older read never replaces a newer configuration', async (t) => {
  const at = (version: number) => ({ ...DEFAULT_APP_CONFIG, version, updatedAt: '2026-11-27T00:00:00.000Z' });
  t.ok(supersedes(at(1), DEFAULT_APP_CONFIG), 'the first saved one replaces the default');
  t.ok(supersedes(at(3), at(2)));
  t.notOk(supersedes(at(2), at(2)), 'the same version: nothing to do');
  t.notOk(supersedes(at(1), at(2)), 'a read that finished late');
});

t.test('an edit must be made from the stored version', async (t) => {
  t.ok(isCurrentEdit(0, 0));
  t.ok(isCurrentEdit(5, 5));
  t.notOk(isCurrentEdit(4, 5), 'made from an older read');
  t.notOk(isCurrentEdit(6, 5), 'from a version never saved');
});
