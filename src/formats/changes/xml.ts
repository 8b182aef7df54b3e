import type { ChangeEntry, ChangesMeta, ChangesWriter } from '../../model/changes-writer.js';
import { escapeAttribute, XML_DECLARATION, xmlItemLayout } from '../xml.js';
import { renderText, UTF8_NO_BOM, type TextLayout } from '../text-writer.js';
import { printsAlike } from './same-shown.js';

/*
 * CONTRACT §11, xml: <changes since version store published_at> with the changed items as
 * §6's <item> elements, then one <removed offer_id="…"/> per removed offer.
 */

function changesLayout(meta: ChangesMeta): TextLayout<ChangeEntry> {
  const items = xmlItemLayout(meta);
  const { store, priceList } = meta;
  return {
    header:
      XML_DECLARATION +
      `<changes since="${meta.since}" version="${priceList.version}" store="${escapeAttribute(store.id)}"` +
      ` published_at="${priceList.publishedAt.toISOString()}">\n`,
    row: (entry, index) =>
      entry.action === 'upsert' ? items.row(entry.item, index) : `<removed offer_id="${escapeAttribute(entry.item.offer_id)}"/>\n`,
    footer: '</changes>\n',
  };
}

export const xmlChangesWriter: ChangesWriter = {
  format: 'xml',
  extension: 'xml',
  needs: { fields: 'columns', categories: false },
  contentType: () => 'application/xml; charset=utf-8',
  sameShown(meta) {
    const items = xmlItemLayout(meta);
    return printsAlike((item) => items.row(item, 1));
  },
  render: (entries, meta) => renderText(entries, changesLayout(meta), UTF8_NO_BOM),
};
