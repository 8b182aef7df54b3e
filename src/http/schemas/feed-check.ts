import { Type } from 'typebox';
import { PUBLIC_ERROR_CODES } from '../../errors/codes.js';
import { FEED_CHECK_TARGETS } from '../../model/feed-rules.js';
import { DEFAULT_PRICE_TYPE_ID } from '../../model/profile.js';
import { problemResponses } from './problem.js';

const Offender = Type.Object({
  offer_id: Type.Union([Type.String(), Type.Null()], { description: 'null for a rule about the store itself (the YML shop name)' }),
  value: Type.String({ description: 'The offending value; text longer than 200 characters is cut, with its length shown' }),
});

export const FeedCheckSchema = Type.Object(
  {
    format: Type.Union(FEED_CHECK_TARGETS.map((target) => Type.Literal(target))),
    version: Type.Integer({ description: 'The price list version checked' }),
    checked: Type.Integer({ description: 'Items checked, after the filter' }),
    rules: Type.Array(
      Type.Object({
        rule: Type.String(),
        description: Type.String(),
        count: Type.Integer({ description: 'Items (or 1 for the store) that break the rule' }),
        offenders: Type.Array(Offender, { maxItems: 20, description: 'The first 20, in list order' }),
      }),
    ),
  },
  { $id: 'FeedCheck', title: 'FeedCheck' },
);

export const feedCheckSchema = {
  operationId: 'exportCheck',
  tags: ['Exports'],
  summary: "Feed check: the target's known limits over the latest list",
  description:
    'Runs the rules of one target over the latest price list, as that export reads it (profile and filter as for the export): ' +
    'YML — shop name ≤ 20, offer name ≤ 150, description ≤ 3000, barcode of 8/12/13 digits, discount 5–95 %, offer id ≤ 80 of letters, digits and `. , / \\ ( ) [ ] - = _`, currency in shops.dtd; ' +
    'Google — id ≤ 50, title ≤ 150, description ≤ 5000, link and image_link present, gtin check digit; ' +
    'CommerceML (the 2.08 schema’s limits; the contract names none) — Ид ≤ 80, Наименование ≤ 255; ' +
    'XLSX — cell text ≤ 32,767 characters, rows ≤ 1,048,575 a sheet. ' +
    'Each rule gives the count of offending items and the first 20 with the offending value. It warns; exports are never refused for it, and `publish` prints the same counts. ' +
    `CommerceML's price type: a profile's \`price_type_id\` and \`price_type_name\`, by default \`${DEFAULT_PRICE_TYPE_ID}\` and \`Розничная\`. ` +
    'Checks run in this order: method (405), key (401), parameters (400; `format` is required), profile (404), price list (404).',
  querystring: Type.Object({
    key: Type.String({ description: 'The API key' }),
    format: Type.String({ enum: [...FEED_CHECK_TARGETS], description: `The target: one of ${FEED_CHECK_TARGETS.join(', ')}, any case. Required.` }),
    only_available: Type.Optional(Type.String({ enum: ['true', 'false', '1', '0', 'yes', 'no'], description: 'Check only items with available = true.' })),
    profile_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$', description: "An export profile of this key's store (XLSX reads its columns)." })),
  }),
  response: {
    200: Type.Ref('FeedCheck'),
    ...problemResponses(PUBLIC_ERROR_CODES),
  },
};
