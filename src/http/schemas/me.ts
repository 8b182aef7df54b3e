import { Type } from 'typebox';
import { PUBLIC_ERROR_CODES } from '../../errors/codes.js';
import { KEY_ADDRESSES } from '../../model/key-scopes.js';
import { problemResponses } from './problem.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const MeSchema = Type.Object(
  {
    store: Type.Object({ id: Type.String(), name: Type.String(), currency: Type.String() }),
    key: Type.Object({
      id: Type.String(),
      label: Nullable(Type.String()),
      prefix: Type.String({ description: 'The first characters of the key, to tell keys apart' }),
      created_at: Type.String({ format: 'date-time' }),
      last_used_at: Nullable(Type.String({ format: 'date-time' })),
      scopes: Type.Object(
        {
          addresses: Nullable(Type.Array(Type.String({ enum: [...KEY_ADDRESSES] }))),
          formats: Nullable(Type.Array(Type.String())),
          profiles: Nullable(Type.Array(Type.Integer())),
        },
        { description: 'What the key opens; null in a dimension: not limited. Outside them the key gets 403 key_scope.' },
      ),
      expires_at: Nullable(Type.String({ format: 'date-time', description: 'From this time on the key gets 401 expired_key; null: never' })),
    }),
    price_list: Nullable(
      Type.Object({
        version: Type.Integer(),
        published_at: Type.String({ format: 'date-time' }),
        item_count: Type.Integer(),
        available_count: Type.Integer(),
      }),
    ),
    versions: Type.Array(
      Type.Object({
        version: Type.Integer(),
        published_at: Type.String({ format: 'date-time' }),
        item_count: Type.Integer(),
        available_count: Type.Integer(),
        state: Type.Union([Type.Literal('latest'), Type.Literal('retained'), Type.Literal('held')], {
          description: '`latest`: served by default; `retained`: served with `version=N`; `held`: stopped by the publication guard, not served',
        }),
        source: Type.Union([Type.Literal('publish'), Type.Literal('rollback')]),
      }),
      { description: 'The retained and held versions, newest first (CONTRACT §10). Export a retained one with `version=N`.' },
    ),
    profiles: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String() })),
    formats: Type.Array(Type.String()),
    consumers: Type.Array(Type.Ref('Consumer'), {
      description: 'One entry per (client class, client address) that fetched an export in the last LEDGER_DAYS days, most recent first (at most 100)',
    }),
    exports: Type.Object(
      {
        campaign_data: Type.Optional(Type.String()),
        export_latest: Type.Optional(Type.String()),
        summary: Type.Optional(Type.String()),
        changes: Type.Optional(Type.String({ description: 'The changes feed (CONTRACT §11); replace {version} with the version you hold.' })),
      },
      { description: 'Address templates; replace {api_key} with the key. Add format, only_available, profile_id as query parameters. Only the addresses the key opens are listed; `profiles` and `formats` too list only what the key may use.' },
    ),
  },
  { $id: 'Me', title: 'Me' },
);

export const meSchema = {
  operationId: 'getMe',
  tags: ['Account'],
  summary: "The key's own account: store, key, latest price list, profiles, export addresses",
  description: 'Never returns the key itself or its hash.',
  security: [{ ApiKey: [] }, { Basic: [] }] as Record<string, string[]>[],
  response: { 200: Type.Ref('Me'), ...problemResponses(PUBLIC_ERROR_CODES.filter((c) => !['invalid_parameter', 'profile_not_found', 'price_list_not_found'].includes(c))) },
};
