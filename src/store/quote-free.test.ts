/**
 * quote_free's CSV, XML, JSON and XLSX bits, worked out with a shortcut for the common text (one
 * test for all ten bits of a field), against each bit's own definition for hostile texts (the
 * JSON bit against JSON.stringify itself, the XLSX bit against the writer's text cell). The records
 * built from the bits are checked byte for byte by the *-records contract tests.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { plainItem } from '../../test/support/format-items.js';
import { MAX_CELL_TEXT, TEXT_CELL_CLOSE, textCellTail } from '../model/sheet-row.js';
import { cellPlainBit, jsonPlainBit, quoteFree, quoteFreeBit, TEXT_FIELDS, xmlPlainBit } from './quote-free.js';
import { XML_ILLEGAL, XML_REFERENCES } from './xml-text.js';

const DELIMITERS = [',', ';', '\t', '|'];

/** The CSV writer's rule for one delimiter, and XML text's "nothing to escape", spelled out. */
const needsQuoting = (value: string, delimiter: string): boolean => value.includes(delimiter) || /["\r\n]/.test(value) || value.startsWith(' ') || value.endsWith(' ');
const needsEscaping = (value: string): boolean => [...XML_REFERENCES.map(([c]) => c), ...XML_ILLEGAL].some((c) => value.includes(c));
const stringified = (value: string): boolean => JSON.stringify(value) !== `"${value}"`;
/** Whether the XLSX writer's text cell holds the value as it is (an empty text is no cell). */
const plainCell = (value: string): boolean => value !== '' && textCellTail(value, '<open>', '<preserved>') === `<open>${value}${TEXT_CELL_CLOSE}`;
/** Whether `bits` (up to 53 bits: `&` would read only the low 32) holds `bit`, a power of two. */
const has = (bits: number, bit: number): boolean => Math.floor(bits / bit) % 2 === 1;

describe('quote_free', () => {
  it('each CSV, XML, JSON and XLSX bit says what its definition says, for any texts', () => {
    const char = fc.constantFrom(',', ';', '\t', '|', '"', '\\', '\r', '\n', ' ', '&', '<', '>', '\b', '\u0001', '\u001f', '\u007f', '\u2028', '\uFFFE', '\uFFFF', "'", '/', 'a', 'Я', '😀');
    // Excel's escaped characters (`_x005F_`) and texts about as long as a cell holds.
    const escapedCharacter = fc.constantFrom('_x005F_', '_x00e9_', '_x12_', '_X0041_', '_x', '_');
    const long = fc.tuple(fc.integer({ min: MAX_CELL_TEXT - 2, max: MAX_CELL_TEXT + 2 }), fc.constantFrom('a', ' ')).map(([length, end]) => 'я'.repeat(length - 1) + end);
    const text = fc.oneof({ weight: 8, arbitrary: fc.string({ unit: char, maxLength: 6 }) }, fc.string({ unit: fc.oneof(char, escapedCharacter), maxLength: 4 }), long);
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
          assert.equal(has(bits, cellPlainBit(field)!), value !== null && plainCell(value), `${field} as a cell: ${JSON.stringify(value?.slice(0, 40))}`);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
