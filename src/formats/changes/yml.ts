import type { ChangeEntry, ChangesMeta, ChangesWriter } from '../../model/changes-writer.js';
import { ymlOfferLayout, ymlWriter } from '../yml.js';
import type { TextLayout } from '../text-writer.js';
import { textChangesWriter } from './text-changes-writer.js';

/*
 * CONTRACT §11, yml: a whole YML document (valid against shops.dtd like the full feed) of the
 * changed offers; a removed offer appears as <offer available="false"> with the values version
 * `since` served, so a marketplace that merges feeds stops selling it. The domain declares the
 * categories and currencies of both versions' offers in the header.
 */

function changesLayout(meta: ChangesMeta): TextLayout<ChangeEntry> {
  const offers = ymlOfferLayout(meta);
  return {
    header: offers.header,
    row: (entry, index) => offers.row(entry.action === 'upsert' ? entry.item : { ...entry.item, available: false }, index),
    footer: offers.footer,
  };
}

export const ymlChangesWriter: ChangesWriter = textChangesWriter({
  format: 'yml',
  extension: 'yml',
  needs: ymlWriter.needs,
  contentType: (meta) => ymlWriter.contentType(meta),
  items: ymlOfferLayout,
  changes: changesLayout,
});
