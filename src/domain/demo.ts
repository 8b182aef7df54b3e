import { Readable } from 'node:stream';
import type { PriceListRecord, Database } from '../store/types.js';
import type { Profile } from '../model/profile.js';
import { DEMO_ITEMS, DEMO_PROFILE, DEMO_STORE } from './demo-data.js';
import { issueKey } from './keys.js';
import { putProfile } from './profiles.js';
import { publishPriceList, readPublication } from './publishing.js';
import { createStore } from './stores.js';

export interface DemoSetup {
  storeId: string;
  key: string;
  profile: Profile;
  priceList: PriceListRecord;
}

/** Creates (or refreshes) the demo store: a new key, the sample profile, the sample list published. */
export async function setUpDemo(db: Database): Promise<DemoSetup> {
  if (!(await db.stores.get(DEMO_STORE.id))) await createStore(db, { ...DEMO_STORE });
  const { value } = await issueKey(db, DEMO_STORE.id, 'demo');
  const existing = (await db.profiles.list(DEMO_STORE.id)).find((p) => p.name === DEMO_PROFILE.name);
  const profile = await putProfile(db, DEMO_STORE.id, DEMO_PROFILE, existing?.id);
  const source = Readable.from([JSON.stringify(DEMO_ITEMS)]);
  const priceList = await publishPriceList(db, DEMO_STORE.id, readPublication(db, source, 'json'));
  return { storeId: DEMO_STORE.id, key: value, profile, priceList };
}

/** The addresses a newcomer can paste into curl. */
export function demoAddresses(base: string, key: string, profileId: number): string[] {
  return [
    `${base}/WebApi/CampaignDataLatestGet/${key}`,
    `${base}/api/export/latest?key=${key}&format=xlsx`,
    `${base}/api/export/latest?key=${key}&format=yml&only_available=true`,
    `${base}/api/export/latest?key=${key}&format=csv&profile_id=${profileId}`,
    `${base}/WebApi/SummaryExportLatestGet/${key}`,
    `curl -H 'X-Api-Key: ${key}' ${base}/api/me`,
  ];
}
