import { Type } from 'typebox';

/**
 * Request schemas of the admin API. They check shapes and sizes; the domain functions check
 * meaning (a store id's slug, a currency code, a profile's columns) and list every problem,
 * exactly as they do for the command line.
 */

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const OptionalNullable = (maxLength: number) => Type.Optional(Type.Union([Text(maxLength), Type.Null()]));

const StoreIdParams = Type.Object({ id: Text(64) });

export const createStoreSchema = {
  body: Type.Object(
    {
      id: Text(64),
      name: Text(500),
      currency: Type.Optional(Type.String({ minLength: 3, maxLength: 3 })),
      url: OptionalNullable(2000),
      company: OptionalNullable(500),
    },
    { additionalProperties: false },
  ),
};

export const storeSchema = { params: StoreIdParams };

export const issueKeySchema = {
  params: StoreIdParams,
  body: Type.Object({ label: OptionalNullable(200) }, { additionalProperties: false }),
};

export const importKeySchema = {
  params: StoreIdParams,
  // Length only: the domain checks the legacy key alphabet and names the rule in its answer.
  body: Type.Object({ value: Text(256), label: OptionalNullable(200) }, { additionalProperties: false }),
};

export const revokeKeySchema = { params: Type.Object({ id: Text(64) }) };

const Column = Type.Object({
  field: Type.Optional(Text(200)),
  value: Type.Optional(Type.String({ maxLength: 1000 })),
  title: Text(200),
  key: Type.Optional(Text(200)),
});

/** The same document `profile put --file` takes (contract/profile-sample.json); other keys are ignored there too. */
const ProfileBody = Type.Object({
  name: Text(200),
  columns: Type.Array(Column, { minItems: 1, maxItems: 500 }),
  delimiter: Type.Optional(Type.String()),
  decimal_separator: Type.Optional(Type.String()),
  header: Type.Optional(Type.Boolean()),
  bom: Type.Optional(Type.Boolean()),
  encoding: Type.Optional(Type.String()),
  escape_formulas: Type.Optional(Type.Boolean()),
  price_type_id: Type.Optional(Type.String()),
  price_type_name: Type.Optional(Type.String()),
});

export const createProfileSchema = { params: StoreIdParams, body: ProfileBody };

export const replaceProfileSchema = {
  // A positive integer of up to 18 digits, like the public profile_id (CONTRACT §3).
  params: Type.Object({ id: Text(64), profileId: Type.String({ pattern: '^[1-9][0-9]{0,17}$' }) }),
  body: ProfileBody,
};

export const publishSchema = { params: StoreIdParams };
