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

/**
 * A key's scopes and expiry (CONTRACT §15): each list absent or null means "not limited";
 * the domain checks the names and that the profiles are the store's.
 */
const ScopeList = (items: ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>) => Type.Optional(Type.Union([Type.Array(items, { maxItems: 100 }), Type.Null()]));
const KeyAccess = {
  addresses: ScopeList(Type.String({ maxLength: 20 })),
  formats: ScopeList(Type.String({ maxLength: 20 })),
  profiles: ScopeList(Type.Integer({ minimum: 1 })),
  expires_at: Type.Optional(Type.Union([Type.String({ maxLength: 40 }), Type.Null()])),
};

export const issueKeySchema = {
  params: StoreIdParams,
  body: Type.Object({ label: OptionalNullable(200), ...KeyAccess }, { additionalProperties: false }),
};

export const updateKeySchema = {
  params: Type.Object({ id: Text(64) }),
  body: Type.Object(KeyAccess, { additionalProperties: false }),
};

export const rotateKeySchema = {
  params: Type.Object({ id: Text(64) }),
  body: Type.Object({ overlap: Type.Optional(Type.String({ maxLength: 20 })) }, { additionalProperties: false }),
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

/** `?force=true` skips the publication guard (CONTRACT §10). */
export const publishQuery = Type.Object({ force: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('1'), Type.Literal('0')])) });

const VersionParams = Type.Object({ id: Text(64), version: Type.String({ pattern: '^[1-9][0-9]{0,8}$' }) });

export const versionSchema = { params: VersionParams };

export const rollbackSchema = {
  params: StoreIdParams,
  body: Type.Object({ to: Type.Optional(Type.Integer({ minimum: 1, maximum: 999_999_999 })) }, { additionalProperties: false }),
};

/** Values are checked by the domain, which names every one out of range (invalid_guard). */
export const guardSchema = {
  params: StoreIdParams,
  body: Type.Object(
    {
      max_removed_pct: Type.Optional(Type.Unknown()),
      max_price_drop_pct: Type.Optional(Type.Unknown()),
      max_price_rise_pct: Type.Optional(Type.Unknown()),
      min_items: Type.Optional(Type.Unknown()),
      zero_price: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: false },
  ),
};

export const quarantineReleaseSchema = {
  params: StoreIdParams,
  body: Type.Object(
    { offers: Type.Optional(Type.Array(Text(120), { minItems: 1, maxItems: 10_000 })), all: Type.Optional(Type.Literal(true)) },
    { additionalProperties: false },
  ),
};
