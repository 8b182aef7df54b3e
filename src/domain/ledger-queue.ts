import type { DeliveryRecord } from '../store/types.js';

/**
 * The ledger's queue, kept as columns: a record waits here up to a second, and as objects
 * 25,000 a second of them outlived the young generation and were promoted, so the old
 * generation's collections paid for every answer (bench/RESULTS.md, "The ledger's runs").
 * Columns of numbers and of strings the request already held (the store's and key's ids, the
 * client's address) keep nothing new alive; the records are built again when the batch goes.
 */
export class LedgerQueue {
  private storeId: string[] = [];
  private keyId: string[] = [];
  private at: number[] = [];
  private address: string[] = [];
  private format: (string | null)[] = [];
  private profileId: (number | null)[] = [];
  private onlyAvailable: (boolean | null)[] = [];
  private version: (number | null)[] = [];
  private status: number[] = [];
  private bytesSent: number[] = [];
  private finished: boolean[] = [];
  private durationMs: number[] = [];
  private clientClass: string[] = [];
  private clientAddress: string[] = [];

  get length(): number {
    return this.at.length;
  }

  push(r: DeliveryRecord): void {
    this.storeId.push(r.store_id);
    this.keyId.push(r.key_id);
    this.at.push(r.at.getTime());
    this.address.push(r.address);
    this.format.push(r.format);
    this.profileId.push(r.profile_id);
    this.onlyAvailable.push(r.only_available);
    this.version.push(r.version);
    this.status.push(r.status);
    this.bytesSent.push(r.bytes_sent);
    this.finished.push(r.finished);
    this.durationMs.push(r.duration_ms);
    this.clientClass.push(r.client_class);
    this.clientAddress.push(r.client_address);
  }

  /** Everything queued, as records, oldest first; the queue is left empty. */
  drain(): DeliveryRecord[] {
    const records: DeliveryRecord[] = [];
    for (let i = 0; i < this.at.length; i++) {
      records.push({
        store_id: this.storeId[i], key_id: this.keyId[i], at: new Date(this.at[i]), address: this.address[i], format: this.format[i],
        profile_id: this.profileId[i], only_available: this.onlyAvailable[i], version: this.version[i], status: this.status[i],
        bytes_sent: this.bytesSent[i], finished: this.finished[i], duration_ms: this.durationMs[i], client_class: this.clientClass[i],
        client_address: this.clientAddress[i],
      });
    }
    for (const column of [this.storeId, this.keyId, this.at, this.address, this.format, this.profileId, this.onlyAvailable, this.version,
      this.status, this.bytesSent, this.finished, this.durationMs, this.clientClass, this.clientAddress] as unknown[][]) column.length = 0;
    return records;
  }
}
