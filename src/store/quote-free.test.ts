/**
 * quote_free's CSV and XML bits, worked out with a shortcut for the common text (one test for
 * all nine bits of a field), against each bit's own definition for hostile texts. The records
 * built from the bits are checked byte for byte by the *-records contract tests.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { plainItem } from '../../test/support/format-items.js';
import { quoteFree, quoteFreeBit, TEXT_FIELDS, xmlPlainBit } from './quote-free.js';
import { XML_ILLEGAL, XML_REFERENCES } from './xml-text.js';

const DELIMITERS = [',', ';', '\t', '|'];

/** The CSV writer's rule for one delimiter, and XML text's "nothing to escape", spelled out. */
const needsQuoting = (value: string, delimiter: string): boolean => value.includes(delimiter) || /["\r\n]/.test(value) || value.startsWith(' ') || value.endsWith(' ');
const needsEscaping = (value: string): boolean => [...XML_REFERENCES.map(([c]) => c), ...XML_ILLEGAL].some((c) => value.includes(c));

describe('quote_free', () => {
  it("each CSV and XML bit says what its definition says, for any texts", () => {
    const char = fc.constantFrom(',', ';', '\t', '|', '"', '\r', '\n', ' ', '&', '<', '>', '\u0001', '\u001f', '\uFFFE', '\uFFFF', "'", 'a', 'Я', '😀');
    const text = fc.string({ unit: char, maxLength: 6 });
    fc.assert(
      fc.property(text, text, text, fc.option(text), (offer, name, currency, url) => {
        const item = plainItem({ offer_id: `x${offer}`, name, currency, url });
        const bits = quoteFree(item);
        // The CSV and XML bits are the low 20: below 2^31, so `&` reads them.
        for (const field of TEXT_FIELDS) {
          const value = item[field] as string | null;
          for (const delimiter of DELIMITERS) {
            assert.equal((bits & quoteFreeBit(field, delimiter)) !== 0, value === null || !needsQuoting(value, delimiter), `${field} with ${JSON.stringify(delimiter)}: ${JSON.stringify(value)}`);
          }
          assert.equal((bits & xmlPlainBit(field)!) !== 0, value === null || !needsEscaping(value), `${field} as XML text: ${JSON.stringify(value)}`);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
