/*
 * A repricer in a process of its own: republishes stores `PREFIX0` … `PREFIX{count-1}` one after
 * another, and prints the wall-clock times (ms) it began and its last publication committed. The publish storm
 * of bench/figures/fleet-scale.ts runs it, so the bench process, which counts the server's
 * renders from its log, is never held up by the publications' synchronous SQLite work.
 *
 *   node --import tsx bench/lib/republish-stores.ts DATABASE_URL PREFIX COUNT ITEMS
 */
import { openDatabase } from '../../src/store/factory.js';
import { republish } from '../bench-data.js';

const [url, prefix, count, items] = process.argv.slice(2);
const db = await openDatabase(url, { startThreads: false });
console.log(`started ${Date.now()}`);
for (let i = 0; i < Number(count); i++) await republish(db, `${prefix}${i}`, Number(items));
console.log(`committed ${Date.now()}`);
await db.close();
