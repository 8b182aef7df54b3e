import type { Cents } from './money.js';

export interface Competitor {
  name: string;
  price: Cents;
  url: string | null;
  /** null when the repricer did not say. */
  available: boolean | null;
}

/**
 * One item of a published price list, normalized: money in minor units, `currency` and
 * `available` resolved (CONTRACT §2), absent optional values as null.
 */
export interface PriceItem {
  offer_id: string;
  name: string;
  price: Cents;
  old_price: Cents | null;
  purchase_price: Cents | null;
  currency: string;
  available: boolean;
  quantity: number | null;
  url: string | null;
  picture: string | null;
  vendor: string | null;
  vendor_code: string | null;
  barcode: string | null;
  description: string | null;
  /** Levels joined by ` / `, each level trimmed. */
  category: string | null;
  competitors: Competitor[] | null;
  attributes: Record<string, string> | null;
}

/** The scalar item fields a profile column may name (besides `attributes.<key>`), with their kind. */
export const ITEM_FIELDS = {
  offer_id: 'text',
  name: 'text',
  price: 'money',
  old_price: 'money',
  purchase_price: 'money',
  currency: 'text',
  available: 'boolean',
  quantity: 'integer',
  url: 'text',
  picture: 'text',
  vendor: 'text',
  vendor_code: 'text',
  barcode: 'text',
  description: 'text',
  category: 'text',
} as const;

export type ItemField = keyof typeof ITEM_FIELDS;
export type ValueKind = (typeof ITEM_FIELDS)[ItemField];

export const isItemField = (name: string): name is ItemField => Object.hasOwn(ITEM_FIELDS, name);
