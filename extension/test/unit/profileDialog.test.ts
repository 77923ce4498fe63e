import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROFILE_KINDS, pickProfile, profileDialogOptions } from '../../src/profileDialog';
import { FakeVsCode } from '../support/fakeVscode';

describe('Load Profile dialog', () => {
  it('picks a Parquet output folder itself (folders only: choosing one picks it, it is not entered)', () => {
    const folder = profileDialogOptions('folder');
    assert.equal(folder.canSelectFolders, true);
    assert.equal(folder.canSelectFiles, false);
  });

  it('lists profile files, not Python sources', () => {
    const file = profileDialogOptions('file');
    assert.equal(file.canSelectFolders, false);
    const [first] = Object.values(file.filters ?? {});
    assert.ok(first.includes('json') && first.includes('pftrace'));
    assert.ok(!first.includes('py'));
  });

  it('asks which kind first, then opens the dialog for that kind', async () => {
    const fake = new FakeVsCode();
    fake.quickPickAnswer = (items) => (items as typeof PROFILE_KINDS)[0];
    fake.openDialogAnswer = [{ toString: () => 'file:///runs/profile_out' }];
    const picked = await pickProfile(fake.api());
    assert.equal(picked?.toString(), 'file:///runs/profile_out');
    assert.equal(fake.openDialogs[0].canSelectFolders, true);
    fake.quickPickAnswer = () => undefined; // cancelled: no dialog
    assert.equal(await pickProfile(fake.api()), undefined);
    assert.equal(fake.openDialogs.length, 1);
  });
});
