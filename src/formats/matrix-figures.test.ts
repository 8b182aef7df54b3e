import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  compareToOurs,
  distinctCompetitors,
  MatrixSummaryBuilder,
  percentOf,
  priceDifference,
  productFigures,
} from './matrix-figures.js';
import type { Competitor, PriceItem } from '../model/price-item.js';

const offer = (name: string, price: number, available: boolean | null = null): Competitor => ({ name, price, url: null, available });

function item(offerId: string, price: number, competitors: Competitor[] | null): PriceItem {
  return {
    offer_id: offerId, name: offerId, price, old_price: null, purchase_price: null, currency: 'RUB', available: true,
    quantity: null, url: null, picture: null, vendor: null, vendor_code: null, barcode: null, description: null,
    category: null, competitors, attributes: null,
  };
}

describe('compareToOurs', () => {
  it('says how their price stands against ours', () => {
    assert.equal(compareToOurs(99, 100), 'cheaper');
    assert.equal(compareToOurs(100, 100), 'equal');
    assert.equal(compareToOurs(101, 100), 'dearer');
  });
});

describe('percentOf', () => {
  it('rounds to two decimals, half away from zero, exactly', () => {
    assert.equal(percentOf(1, 3), 33.33);
    assert.equal(percentOf(2, 3), 66.67);
    assert.equal(percentOf(201, 20_000), 1.01); // 1.005 % → 1.01, where float arithmetic gives 1.00
    assert.equal(percentOf(-201, 20_000), -1.01);
    assert.equal(percentOf(-1, 1_000_000_000), 0);
    assert.ok(!Object.is(percentOf(-1, 1_000_000_000), -0));
    assert.equal(percentOf(5, 0), null);
    assert.equal(percentOf(0, 7), 0);
  });

  it('stays exact for prices near the largest a list holds', () => {
    assert.equal(percentOf(99_999_999_999, 100_000_000_000), 100);
    assert.equal(percentOf(1, 99_999_999_999), 0);
  });
});

describe('productFigures', () => {
  it('gives min, avg, max, rank and the gap to the cheapest', () => {
    const figures = productFigures(10_000, [offer('a', 9_000), offer('b', 10_000), offer('c', 12_500, false)]);
    assert.deepEqual(figures, { count: 3, min: 9_000, max: 12_500, avg: 31_500 / 3, rank: 2, gapToMinPercent: 11.11 });
  });

  it('lets equal prices share a rank', () => {
    assert.equal(productFigures(10_000, [offer('a', 10_000), offer('b', 10_000)]).rank, 1);
    assert.equal(productFigures(10_000, [offer('a', 9_999), offer('b', 9_999), offer('c', 10_000)]).rank, 3);
  });

  it('counts every price whatever its availability', () => {
    assert.equal(productFigures(100, [offer('a', 50, false), offer('b', 70, null)]).min, 50);
  });

  it('gives a negative gap when we are the cheapest', () => {
    assert.equal(productFigures(9_000, [offer('a', 10_000)]).gapToMinPercent, -10);
  });

  it('leaves everything empty without competitors, and the gap empty when min is 0', () => {
    assert.deepEqual(productFigures(100, []), { count: 0, min: null, max: null, avg: null, rank: null, gapToMinPercent: null });
    const free = productFigures(100, [offer('a', 0), offer('b', 50)]);
    assert.equal(free.gapToMinPercent, null);
    assert.equal(free.rank, 3);
  });
});

describe('priceDifference', () => {
  it('is ours − theirs, in cents and in percent of theirs', () => {
    assert.deepEqual(priceDifference(19_990, 19_490), { amount: 500, percent: 2.57 });
    assert.deepEqual(priceDifference(19_990, 20_500), { amount: -510, percent: -2.49 });
    assert.deepEqual(priceDifference(100, 0), { amount: 100, percent: null });
  });
});

describe('distinctCompetitors', () => {
  it('keeps the first entry of a competitor named twice', () => {
    const list = distinctCompetitors(item('x', 100, [offer('a', 90), offer('b', 95), offer('a', 80)]));
    assert.deepEqual(list.map((c) => [c.name, c.price]), [['a', 90], ['b', 95]]);
    assert.deepEqual(distinctCompetitors(item('y', 100, null)), []);
  });
});

describe('MatrixSummaryBuilder', () => {
  it('orders competitors by products priced, then by name', () => {
    const builder = new MatrixSummaryBuilder();
    builder.add(item('1', 100, [offer('zeta', 90), offer('beta', 100)]));
    builder.add(item('2', 100, [offer('alpha', 110), offer('zeta', 120)]));
    builder.add(item('3', 100, [offer('gamma', 100)]));
    assert.deepEqual(builder.result().competitors.map((c) => c.name), ['zeta', 'alpha', 'beta', 'gamma']);
  });

  it('tallies each competitor and the store', () => {
    const builder = new MatrixSummaryBuilder();
    builder.add(item('1', 10_000, [offer('b', 9_000), offer('c', 12_000)])); // rank 2
    builder.add(item('2', 20_000, [offer('b', 20_000)])); // rank 1
    builder.add(item('3', 0, [offer('b', 500), offer('c', 0)])); // ours 0: no index for b or c; rank 1
    builder.add(item('4', 5_000, null));
    const { competitors, store } = builder.result();
    assert.deepEqual(competitors, [
      { name: 'b', productsPriced: 3, cheaper: 1, equal: 1, dearer: 1, priceIndex: (90 + 100) / 2 },
      { name: 'c', productsPriced: 2, cheaper: 0, equal: 1, dearer: 1, priceIndex: 120 },
    ]);
    // Market index: product 1 → 10 000 ÷ 10 500, product 2 → 20 000 ÷ 20 000, product 3 → 0 ÷ 250.
    assert.equal(store.products, 4);
    assert.equal(store.productsWithCompetitorPrices, 3);
    assert.equal(store.productsRankedFirst, 2);
    assert.ok(Math.abs(store.marketIndex! - ((10_000 / 10_500) * 100 + 100 + 0) / 3) < 1e-9);
  });

  it('leaves the market index out for products whose competitors all price at 0', () => {
    const builder = new MatrixSummaryBuilder();
    builder.add(item('1', 100, [offer('a', 0)]));
    assert.equal(builder.result().store.marketIndex, null);
    assert.equal(builder.result().competitors[0]!.priceIndex, 0);
  });

  it('gives empty figures for a list without competitors', () => {
    const builder = new MatrixSummaryBuilder();
    builder.add(item('1', 100, []));
    assert.deepEqual(builder.result(), {
      competitors: [],
      store: { products: 1, productsWithCompetitorPrices: 0, productsRankedFirst: 0, marketIndex: null },
    });
  });

  it('counts a competitor named twice on a product once', () => {
    const builder = new MatrixSummaryBuilder();
    builder.add(item('1', 100, [offer('a', 90), offer('a', 200)]));
    assert.deepEqual(builder.result().competitors[0], { name: 'a', productsPriced: 1, cheaper: 1, equal: 0, dearer: 0, priceIndex: 90 });
  });
});
