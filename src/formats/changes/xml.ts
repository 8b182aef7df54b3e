import type { ChangeEntry, ChangesMeta, ChangesWriter } from '../../model/changes-writer.js';
import { escapeAttribute, XML_DECLARATION, xmlItemLayout, xmlWriter } from '../xml.js';
import type { TextLayout } from '../text-writer.js';
import { textChangesWriter } from './text-changes-writer.js';

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

export const xmlChangesWriter: ChangesWriter = textChangesWriter({
  format: 'xml',
  extension: 'xml',
  needs: xmlWriter.needs,
  contentType: (meta) => xmlWriter.contentType(meta),
  items: xmlItemLayout,
  changes: changesLayout,
});
