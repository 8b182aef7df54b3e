/**
 * The demo store that `npm start` seeds on an empty database and `price-export demo` (re)creates:
 * the contract's legacy sample list (so the demo CSV is the frozen legacy bytes), with a few
 * attributes for the sample profile.
 */
export const DEMO_STORE = {"id": "demo-shop", "name": "Demo Shop", "currency": "RUB", "url": "https://demo-shop.example"} as const;

export const DEMO_ITEMS: readonly Record<string, unknown>[] = [
  {
    "offer_id": "A-100",
    "name": "Смартфон «Галактика» 128 ГБ",
    "price": 19990,
    "old_price": 21990,
    "quantity": 7,
    "url": "https://demo-shop.example/p/a-100",
    "vendor": "Galaktika",
    "category": "Электроника / Смартфоны",
    "barcode": "4601234567890",
    "competitors": [
      {
        "name": "shop-b.example",
        "price": 19490,
        "available": true
      },
      {
        "name": "shop-c.example",
        "price": 20500
      }
    ],
    "attributes": {
      "color": "black"
    }
  },
  {
    "offer_id": "A-101",
    "name": "Case, black",
    "price": "799.5",
    "quantity": 0,
    "category": "Электроника / Аксессуары",
    "competitors": [
      {
        "name": "shop-b.example",
        "price": 790
      }
    ],
    "attributes": {
      "color": "black"
    }
  },
  {
    "offer_id": "A-102",
    "name": "Cable 2\" USB-C",
    "price": 349.9,
    "available": true,
    "url": "https://demo-shop.example/p/a-102",
    "attributes": {
      "color": "white"
    }
  },
  {
    "offer_id": "A-103",
    "name": "Multi\nline name",
    "price": 1200,
    "old_price": 1500
  },
  {
    "offer_id": "A-104",
    "name": " leading space",
    "price": 10
  },
  {
    "offer_id": "A-105",
    "name": "trailing space ",
    "price": 10.05
  },
  {
    "offer_id": "A-106",
    "name": "Tab\there",
    "price": 0.5,
    "currency": "USD"
  },
  {
    "offer_id": "A-107",
    "name": "=HYPERLINK(\"http://x\")",
    "price": 1
  },
  {
    "offer_id": "A-108",
    "name": "Fridge; 300 L",
    "price": 1234567.89,
    "old_price": 1299999,
    "available": false,
    "quantity": 5,
    "vendor": "Frost",
    "category": "Бытовая техника / Холодильники",
    "competitors": [
      {
        "name": "shop-c.example",
        "price": 1250000,
        "available": true
      },
      {
        "name": "shop-d.example",
        "price": 1199000
      }
    ],
    "attributes": {
      "color": "silver"
    }
  },
  {
    "offer_id": "A-109",
    "name": "Чехол 📱 для телефона",
    "price": "0",
    "quantity": 12
  },
  {
    "offer_id": "B/200",
    "name": "Carriage\rreturn",
    "price": 99.99
  },
  {
    "offer_id": "B-201",
    "name": "Plain item",
    "price": 2500,
    "old_price": null,
    "quantity": null,
    "url": null
  }
];

export const DEMO_PROFILE = {
  "name": "1C import (windows-1251)",
  "columns": [
    {
      "field": "offer_id",
      "title": "Артикул",
      "key": "sku"
    },
    {
      "field": "name",
      "title": "Наименование"
    },
    {
      "field": "price",
      "title": "Цена"
    },
    {
      "field": "attributes.color",
      "title": "Цвет",
      "key": "color"
    },
    {
      "value": "да",
      "title": "Выгружать"
    }
  ],
  "delimiter": ";",
  "decimal_separator": ",",
  "header": true,
  "bom": false,
  "encoding": "windows-1251"
};
