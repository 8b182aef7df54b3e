import type { ChangeEntry, ChangesMeta, ChangesWriter } from '../../model/changes-writer.js';
import { ymlOfferLayout } from '../yml.js';
import { renderText, UTF8_NO_BOM, type TextLayout } from '../text-writer.js';
import { printsAlike } from './same-shown.js';

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

export const ymlChangesWriter: ChangesWriter = {
  format: 'yml',
  extension: 'yml',
  needs: { fields: 'all', categories: true },
  contentType: () => 'application/xml; charset=utf-8',
  sameShown(meta) {
    const offers = ymlOfferLayout(meta);
    return printsAlike((item) => offers.row(item, 1));
  },
  render: (entries, meta) => renderText(entries, changesLayout(meta), UTF8_NO_BOM),
};
