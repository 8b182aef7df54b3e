/**
 * quote_free's CSV, XML and JSON bits, worked out with a shortcut for the common text (one
 * test for all ten bits of a field), against each bit's own definition for hostile texts (the
 * JSON bit against JSON.stringify itself). The records
 * built from the bits are checked byte for byte by the *-records contract tests.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { plainItem } from '../../test/support/format-items.js';
import { jsonPlainBit, quoteFree, quoteFreeBit, TEXT_FIELDS, xmlPlainBit } from './quote-free.js';
import { XML_ILLEGAL, XML_REFERENCES } from './xml-text.js';

const DELIMITERS = [',', ';', '\t', '|'];

/** The CSV writer's rule for one delimiter, and XML text's "nothing to escape", spelled out. */
const needsQuoting = (value: string, delimiter: string): boolean => value.includes(delimiter) || /["\r\n]/.test(value) || value.startsWith(' ') || value.endsWith(' ');
const needsEscaping = (value: string): boolean => [...XML_REFERENCES.map(([c]) => c), ...XML_ILLEGAL].some((c) => value.includes(c));
const stringified = (value: string): boolean => JSON.stringify(value) !== `"${value}"`;
/** Whether `bits` (up to 53 bits: `&` would read only the low 32) holds `bit`, a power of two. */
const has = (bits: number, bit: number): boolean => Math.floor(bits / bit) % 2 === 1;

describe('quote_free', () => {
  it('each CSV, XML and JSON bit says what its definition says, for any texts', () => {
    const char = fc.constantFrom(',', ';', '\t', '|', '"', '\\', '\r', '\n', ' ', '&', '<', '>', '\b', '\u0001', '\u001f', '\u007f', '\u2028', '\uFFFE', '\uFFFF', "'", '/', 'a', 'Я', '😀');
    const text = fc.string({ unit: char, maxLength: 6 });
    fc.assert(
      fc.property(text, text, text, fc.option(text), (offer, name, currency, url) => {
        const item = plainItem({ offer_id: `x${offer}`, name, currency, url });
        const bits = quoteFree(item);
        for (const field of TEXT_FIELDS) {
          const value = item[field] as string | null;
          for (const delimiter of DELIMITERS) {
            assert.equal(has(bits, quoteFreeBit(field, delimiter)), value === null || !needsQuoting(value, delimiter), `${field} with ${JSON.stringify(delimiter)}: ${JSON.stringify(value)}`);
          }
          assert.equal(has(bits, xmlPlainBit(field)!), value === null || !needsEscaping(value), `${field} as XML text: ${JSON.stringify(value)}`);
          // A JSON null is no quoted text: a null field has no JSON bit.
          assert.equal(has(bits, jsonPlainBit(field)!), value !== null && !stringified(value), `${field} as JSON: ${JSON.stringify(value)}`);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
